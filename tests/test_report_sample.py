"""The sample report in docs/samples is the tool's own output on the FA forward persistent
TTGIR: it must regenerate byte for byte (same input, same bytes out), and read as a report."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cli_support import run_cli
from corpus_units import CORPUS

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "docs" / "samples" / "fa_fwd_persist_sm100.report.md"


def _input_of(sample: str) -> str:
    m = re.search(r"^Input: `(\S+) \(unit", sample, re.M)
    assert m, "the sample names its input"
    return m.group(1)


def test_sample_report_regenerates_identically(monkeypatch):
    text = SAMPLE.read_text()
    source = _input_of(text)  # as scripts/gen_samples.sh names it: ../shared/corpus/<rel>
    monkeypatch.chdir(ROOT)
    path = CORPUS / source.split("corpus/", 1)[1]  # the same file wherever BARRIER_VIZ_CORPUS puts it
    if not path.exists():
        pytest.skip(f"{path} (the shared corpus) is not present (set BARRIER_VIZ_CORPUS)")
    if (ROOT / source).resolve() == path.resolve():
        # The path as the sample names it: prose wraps at a width, so the path's length matters.
        r = run_cli("report", source)
        assert r.exit_code == 0, r.stderr
        assert r.stdout == text, "docs/samples is stale: rerun scripts/gen_samples.sh"
    else:  # a corpus elsewhere: its path wraps differently; compare the words
        r = run_cli("report", str(path))
        assert r.exit_code == 0, r.stderr
        assert r.stdout.replace(str(path), source).split() == text.split(), \
            "docs/samples is stale: rerun scripts/gen_samples.sh"


def test_sample_report_has_every_section():
    text = SAMPLE.read_text()
    for heading in ("## 1. Partition summary", "## 2. Barrier dependency graph", "## 3. Index and phase analysis",
                    "## 4. Shared data map", "## 5. SSA value to barrier map", "## Coverage tables", "## Findings"):
        assert heading in text
    assert "Column-packed TMEM overwrite coverage" in text and "Operand-D accumulator init coverage" in text
    assert "deadlock." not in text.split("## Findings", 1)[1], "no deadlock on unmodified compiler output"
