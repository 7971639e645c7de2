"""The CLI at its edges (issue 14): progress on long runs, usage errors in one line, explore's
options, `skill install`, and what the README promises about formats, eval and input units."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cli_support import FIXTURES, run_cli

REPO = Path(__file__).resolve().parents[1]
WS_FINAL = FIXTURES / "gemm_ws_persistent.ttgir"
DUMP = FIXTURES / "copy_ws_dump.txt"
LIT = FIXTURES / "ws_lit_splits.mlir"
ZERO_STORE = FIXTURES / "coverage" / "gemm_while_zero_store.ttgir"
SMALL_CASE = REPO / "evals" / "cases" / "fbtriton.gemm_tile_v0.sm90.base"
USAGE_LINE = re.compile(r"^barrier-viz: error: \S.*$")


def _one_usage_line(run) -> str:
    assert run.exception is None, run.exception
    assert run.exit_code == 2, (run.exit_code, run.stdout, run.stderr)
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    assert USAGE_LINE.match(lines[0]), lines[0]
    assert "╭" not in run.stderr and "Traceback" not in run.stderr
    return lines[0]


# -- progress ------------------------------------------------------------------------------------
@pytest.fixture
def fake_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """stderr reads as a terminal and the bar shows at once (no delay)."""
    monkeypatch.setattr("barrier_viz.progress._stderr_is_terminal", lambda: True)
    monkeypatch.setattr("barrier_viz.progress.DELAY_S", 0.0)


def test_explore_shows_a_bar_on_a_terminal(fake_terminal) -> None:
    run = run_cli("explore", str(WS_FINAL), "--timeout", "5", "--format", "json")
    assert run.exit_code in (0, 1), run.stderr
    assert "barrier-viz: schedule " in run.stderr  # one update per schedule run
    assert run.json()["schema"] == "barrier-viz/explore/v1", "the bar never reaches stdout"


def test_check_with_simulation_shows_a_bar_on_a_terminal(fake_terminal) -> None:
    run = run_cli("check", str(WS_FINAL))
    assert "barrier-viz: schedule favorable" in run.stderr


def test_inputs_shows_a_bar_per_scanned_chunk(fake_terminal, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("barrier_viz.inputs._PROGRESS_CHUNK", 256)
    run = run_cli("inputs", str(DUMP))
    assert run.exit_code == 0
    assert f"scanning {DUMP.name}" in run.stderr


@pytest.mark.skipif(not SMALL_CASE.is_dir(), reason="the committed eval cases are not present")
def test_eval_shows_a_bar_per_case(fake_terminal) -> None:
    run = run_cli("eval", str(SMALL_CASE))
    assert f"barrier-viz: {SMALL_CASE.name}" in run.stderr


def test_no_bar_when_stderr_is_not_a_terminal() -> None:
    run = run_cli("explore", str(WS_FINAL), "--timeout", "5")
    assert run.stderr == ""
    # The console script with stderr piped: nothing either.
    proc = subprocess.run([sys.executable, "-m", "barrier_viz", "check", str(WS_FINAL)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1) and proc.stderr == ""


# -- usage errors --------------------------------------------------------------------------------
USAGE = [
    (["explore", str(WS_FINAL), "--bogus"], r"^barrier-viz: error: explore: No such option: --bogus"),
    (["report"], r"^barrier-viz: error: report: Missing argument"),
    (["graph", str(WS_FINAL), "--format", "png"], r"^barrier-viz: error: graph: Invalid value for '--format'"),
    (["check", str(WS_FINAL), "--format", "yaml"], r"^barrier-viz: error: check: Invalid value for '--format'"),
    (["skill", "install", "--nope"], r"^barrier-viz: error: skill install: No such option: --nope"),
    (["nosuchcommand"], r"^barrier-viz: error: usage: No such command|^barrier-viz: error: .*No such command"),
    (["explore", str(WS_FINAL), "--trips", "0"], r"explore: Invalid value for '--trips'"),
    (["explore", str(WS_FINAL), "--trips", "-3"], r"explore: Invalid value for '--trips'"),
    (["explore", str(WS_FINAL), "--trips", "two"], r"explore: Invalid value for '--trips'"),
    (["explore", str(WS_FINAL), "--timeout", "-1"], r"explore: --timeout -1.0: must be more than 0 seconds"),
    (["explore", str(WS_FINAL), "--timeout", "0"], r"explore: --timeout 0.0: must be more than 0 seconds"),
    (["explore", str(WS_FINAL), "--max-states", "0"], r"explore: Invalid value for '--max-states'"),
]


@pytest.mark.parametrize(("args", "message"), USAGE, ids=[" ".join(a[:1] + a[2:]) for a, _ in USAGE])
def test_usage_errors_are_one_line_exit_2(args: list[str], message: str) -> None:
    line = _one_usage_line(run_cli(*args))
    assert re.search(message, line), line
    assert line.count("\n") == 0


def test_usage_error_in_a_real_process() -> None:
    proc = subprocess.run([sys.executable, "-m", "barrier_viz", "ops", str(WS_FINAL), "--no-such-flag"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "barrier-viz: error: ops: No such option: --no-such-flag (see `barrier-viz ops --help`)"]


def test_help_still_prints_help() -> None:
    run = run_cli("explore", "--help")
    assert run.exit_code == 0 and "--trips" in run.stdout


def test_report_out_that_is_a_file_or_cannot_be_made(tmp_path: Path) -> None:
    existing = tmp_path / "report.md"
    existing.write_text("mine\n")
    line = _one_usage_line(run_cli("report", str(WS_FINAL), "--out", str(existing)))
    assert line == f"barrier-viz: error: {existing}: --out: exists and is not a folder"
    assert existing.read_text() == "mine\n"
    blocker = tmp_path / "file"
    blocker.write_text("")
    line = _one_usage_line(run_cli("report", str(WS_FINAL), "--out", str(blocker / "sub")))
    assert f"{blocker / 'sub'}: --out: cannot write there" in line
    good = run_cli("report", str(WS_FINAL), "--out", str(tmp_path / "new" / "dir"))
    assert good.exit_code == 0 and (tmp_path / "new" / "dir" / "status.json").is_file()


def test_eval_config_missing_or_malformed(tmp_path: Path) -> None:
    line = _one_usage_line(run_cli("eval", str(SMALL_CASE), "--config", str(tmp_path / "nope.yaml")))
    assert line.endswith(f"--config {tmp_path / 'nope.yaml'}: no such file")
    for text, what in (("thresholds: [\n", "not a readable YAML config"), ("- 1\n", "must be a mapping"),
                       ("thresholds:\n  race_recall: high\n", "must map names to numbers")):
        bad = tmp_path / "bad.yaml"
        bad.write_text(text)
        assert what in _one_usage_line(run_cli("eval", str(SMALL_CASE), "--config", str(bad)))


# -- explore's options ---------------------------------------------------------------------------
def test_explore_help_states_the_default_trips_it_uses() -> None:
    from barrier_viz.analyses.sim.schedule import OUTER_TRIPS, default_trips
    from barrier_viz.session import select

    help_text = " ".join(run_cli("explore", "--help").stdout.split())
    m = re.search(r"\(default (\d+):", help_text)
    assert m, help_text
    assert int(m.group(1)) == OUTER_TRIPS == default_trips(select(str(WS_FINAL), require_function=True).function)
    doc = run_cli("explore", str(WS_FINAL), "--format", "json").json()
    assert doc["bounds"]["trips"] == OUTER_TRIPS


def test_explore_reports_trips_per_loop() -> None:
    doc = run_cli("explore", str(WS_FINAL), "--trips", "3", "--format", "json").json()
    assert doc["bounds"]["trips"] == 3
    loops = doc["loops"]
    fixture_lines = WS_FINAL.read_text().splitlines()
    assert loops, "the fixture has loops with barrier operations"
    for lp in loops:
        assert lp["op"] in fixture_lines[lp["line"] - 1]
        assert lp["trips"] >= 1
    # Clean within bounds: every barrier loop reached the required trips or finished twice.
    if doc["result"] == "clean_within_bounds":
        assert all(lp["trips"] >= 3 or lp["exits"] >= 2 for lp in loops)
    text = run_cli("explore", str(WS_FINAL), "--trips", "3").stdout
    first = loops[0]
    assert f"trips explored (required 3 per loop): {first['op']} line {first['line']}: {first['trips']}" in text


# -- README vs behaviour -------------------------------------------------------------------------
def test_format_text_is_accepted_by_report_and_graph() -> None:
    assert run_cli("report", str(WS_FINAL), "--format", "text").stdout == run_cli("report", str(WS_FINAL)).stdout
    assert run_cli("graph", str(WS_FINAL), "--format", "text").stdout == run_cli("graph", str(WS_FINAL)).stdout


@pytest.mark.skipif(not SMALL_CASE.is_dir(), reason="the committed eval cases are not present")
def test_eval_document_input_key_and_unmeasured_thresholds() -> None:
    run = run_cli("eval", str(SMALL_CASE), "--format", "json")
    doc = json.loads(run.stdout)
    assert list(doc)[:3] == ["schema", "input", "mode"]
    assert doc["input"]["cases"] == [str(SMALL_CASE)]
    assert doc["summary"]["race_expectations"] == 0 and doc["summary"]["race_recall"] is None
    assert "race_recall" in doc["thresholds_not_measured"]
    text = run_cli("eval", str(SMALL_CASE)).stdout
    assert "race recall: not measured over 0 race expectations" in text
    met = next(line for line in text.splitlines() if line.startswith("thresholds met"))
    assert "race_recall" not in met
    assert "thresholds not measured (no cases of that kind): " in text and "race_recall=0.9" in text


def test_notes_are_not_units(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.txt").write_text("Look at the wait in partition1.\ne.g. the phase of %bar flips twice.\n")
    (notes / "readme.md").write_text("# notes\n")
    inputs, report = run_cli("inputs", str(notes)), run_cli("report", str(notes))
    assert inputs.exit_code == report.exit_code == 2
    assert inputs.stderr == report.stderr and "no readable IR files" in inputs.stderr
    (notes / "kernel.ttgir").write_bytes(WS_FINAL.read_bytes())
    listed = run_cli("inputs", str(notes), "--format", "json").json()
    assert [u["label"] for u in listed["units"]] == ["kernel.ttgir"]
    assert run_cli("report", str(notes)).exit_code == 0


def test_unit_labels_count_from_zero_like_indices() -> None:
    units = run_cli("inputs", str(LIT), "--format", "json").json()["units"]
    assert [(u["index"], u["label"].split(" (")[0]) for u in units] == [(0, "split 0"), (1, "split 1"), (2, "split 2")]
    by_label = run_cli("ops", str(LIT), "--unit", "split 1", "--format", "json").json()
    assert by_label["input"]["unit_index"] == 1


def test_counted_nouns_agree_with_their_number() -> None:
    text = run_cli("check", str(ZERO_STORE)).stdout
    assert "completed 1 phase while this partition passed 0 waits" in text
    assert not re.search(r"\b1 (phases|waits)\b", text)


# -- tests find the corpus in one place ----------------------------------------------------------
def test_every_corpus_reading_test_uses_the_one_helper() -> None:
    """tests/corpus_units.py's CORPUS honours BARRIER_VIZ_CORPUS; a test computing its own path
    would ignore it."""
    offenders = []
    for path in sorted((REPO / "tests").glob("*.py")):
        if path.name == "corpus_units.py":
            continue
        text = path.read_text()
        if re.search(r'"shared"\s*/\s*"corpus"|environ(?:\.get)?\(\s*"BARRIER_VIZ_CORPUS"|\.\./shared/corpus/\w', text):
            offenders.append(path.name)
    assert offenders == []


def test_skill_install_into_a_file_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("")
    line = _one_usage_line(run_cli("skill", "install", "--dest", "afile"))
    assert line.endswith("cannot write the skill there: Not a directory")
