"""scripts/record_outputs.py, the "same bytes out" recorder of refactors (issues 27 and 28).

It must be deterministic (two recordings of one tree compare equal) and it must see a change
(one changed byte in one record is reported, exit 1): otherwise a refactor that changes output
would pass its check. Recorded on one small fixture (three CLI subprocesses per recording).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
FIXTURE = "peeled_last_read.ttgir"


def _load():
    spec = importlib.util.spec_from_file_location("record_outputs", REPO / "scripts" / "record_outputs.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


recorder = _load()


def _record(out: Path) -> None:
    argv = ["--tree", str(REPO), "--corpus", str(FIXTURES), "--out", str(out), "--only", FIXTURE,
            "--python", sys.executable, "--jobs", "2"]
    assert recorder.main(argv) == 0


@pytest.fixture(scope="module")
def two_recordings(tmp_path_factory):
    a, b = tmp_path_factory.mktemp("rec_a"), tmp_path_factory.mktemp("rec_b")
    _record(a)
    _record(b)
    return a, b


def test_two_recordings_of_one_tree_are_the_same(two_recordings, capsys):
    a, b = two_recordings
    names = sorted(recorder.records(a))
    assert names == [f"{FIXTURE}/check", f"{FIXTURE}/explore", f"{FIXTURE}/report"]
    explore = (a / FIXTURE / "explore").read_text()
    assert explore.startswith(f"$ barrier-viz explore --format json --timeout 3600 {FIXTURE}\nexit ")
    assert '"seconds": "<time>"' in explore and '"schema": "barrier-viz/explore/v1"' in explore
    assert recorder.compare(a, b) == 0
    assert "0 of 3 records differ" in capsys.readouterr().out


def test_a_changed_byte_is_reported(two_recordings, tmp_path, capsys):
    a, b = two_recordings
    changed = tmp_path / "changed"
    for name, path in recorder.records(b).items():
        (changed / name).parent.mkdir(parents=True, exist_ok=True)
        (changed / name).write_bytes(path.read_bytes())
    (changed / recorder.META).write_bytes((b / recorder.META).read_bytes())
    record = changed / FIXTURE / "report"
    lines = record.read_text().split("\n")
    k = next(i for i, line in enumerate(lines) if '"schema"' in line)
    lines[k] = lines[k].replace("report", "rePort")
    record.write_text("\n".join(lines))
    (changed / FIXTURE / "check").unlink()
    assert recorder.main(["--compare", str(a), str(changed)]) == 1
    out = capsys.readouterr().out
    assert f"DIFF {FIXTURE}/report: line {k + 1}" in out
    assert f"only in {a}: {FIXTURE}/check" in out
    assert "2 of 3 records differ" in out
    assert recorder.main(["--compare", str(a), str(changed), "--common"]) == 1  # the change still counts
    out = capsys.readouterr().out
    assert "1 record(s) held by one side only, not compared" in out and "1 of 2 records differ" in out


def test_only_clock_readings_are_normalized():
    tree, corpus = Path("/x/tree"), Path("/x/corpus")
    text = ('{"seconds": 1.234, "bounds_seconds": 0.5, "spent_seconds": 2e-05, "steps": 1234, '
            '"max_seconds_note": 3, "path": "/x/tree/evals/cases/a"}')
    assert recorder.normalize(text, tree, corpus) == (
        '{"seconds": "<time>", "bounds_seconds": "<time>", "spent_seconds": "<time>", "steps": 1234, '
        '"max_seconds_note": 3, "path": "<TREE>/evals/cases/a"}')
