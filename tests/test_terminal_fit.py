"""Terminal fit: text outputs wrap at COLUMNS (on a terminal or piped), between words only;
tables never split an identifier; the report stays within 100 columns at COLUMNS=100."""

from __future__ import annotations

from pathlib import Path

import pytest

from barrier_viz.render.console import wrap_line

from cli_support import run_cli

FIXTURES = Path(__file__).parent / "fixtures"
GEMM = FIXTURES / "gemm_ws_persistent.ttgir"
PACKED = FIXTURES / "coverage" / "fa_packed_persistent.ttgir"
TEXT_COMMANDS = ("check", "phases", "barriers", "coverage", "buffers", "graph", "partitions", "inputs", "ops", "explore")


@pytest.mark.parametrize("command", TEXT_COMMANDS)
def test_text_output_fits_80_columns(command, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    for path in (GEMM, PACKED):
        r = run_cli(command, str(path))
        assert r.exit_code in (0, 1), r.stderr
        long = [line for line in r.stdout.splitlines() if len(line) > 80]
        assert not long, long[:2]


def test_the_report_stays_within_100_columns(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    text = run_cli("report", str(PACKED)).stdout
    long = [line for line in text.splitlines() if len(line) > 100 and not line.startswith("|")]
    assert not long, long[:2]


def test_tables_keep_identifiers_whole(monkeypatch):
    for width in ("80", "200"):
        monkeypatch.setenv("COLUMNS", width)
        ops = run_cli("ops", str(GEMM), "--format", "json").json()["ops"]
        text = run_cli("ops", str(GEMM)).stdout
        for op in ops:
            assert op["name"] in text, (width, op["name"])
            if op["partition"]:
                assert op["partition"] in text
        parts = run_cli("partitions", str(GEMM)).stdout
        for name in ("default", "partition0", "partition1"):
            assert name in parts, (width, name)


def test_wrapping_is_between_words_with_a_hanging_indent():
    line = "  " + " ".join(["%barrier_name_12"] * 12)
    wrapped = wrap_line(line, 40)
    assert all(len(w) <= 40 for w in wrapped)
    assert all(w.startswith("      ") for w in wrapped[1:])
    assert " ".join(w.strip() for w in wrapped) == line.strip()
    assert wrap_line("x" * 50, 40) == ["x" * 50], "a word longer than the width stays whole"
