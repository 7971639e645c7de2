"""`report`: the debug_helper files of `--out`, the sections of `--format json` and `md`, and the
agent digest of `--format compact` (the output the skill's workflow reads)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from barrier_viz.agent.outputs import INSIGHT_PREFIX, NO_ISSUES, validate_outputs
from barrier_viz.agent.registry import REGISTRY
from barrier_viz.cli import app
from barrier_viz.commands.digest import DigestDoc, digest_text

FIX = Path(__file__).parent / "fixtures" / "coverage"
BUGGY = str(FIX / "gemm_while_zero_store.ttgir")  # a redundant zero store: coverage ✗ and a hang
CLEAN = str(FIX / "fa_packed_persistent.ttgir")  # packed TMEM, every back-edge present (one info)

SECTION_COMMANDS = ("partitions", "graph", "phases", "buffers", "barriers", "coverage")
MD_HEADINGS = (
    "## 1. Partition summary",
    "## 2. Barrier dependency graph",
    "## 3. Index and phase analysis",
    "## 4. Shared data map",
    "## 5. SSA value to barrier map",
    "## Coverage tables",
    "## Findings",
)


def cli(*args: str):
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result


# -- --out: the debug_helper contract -----------------------------------------------------------


def test_out_files_validate_and_carry_one_insight_per_error(tmp_path: Path) -> None:
    out = tmp_path / "bv"
    shown = cli("report", BUGGY, "--out", str(out))
    status = validate_outputs(out)
    assert status.status == "success"
    assert status.suggested_next_modes == ["agent"]
    assert "2 error finding(s)" in status.reason
    assert Path(status.report_path) == out / "report.md" and Path(status.logs_path) == out / "insights.log"
    assert (out / "report.md").read_text(encoding="utf-8") == shown.stdout.rstrip("\n") + "\n"
    insights = (out / "insights.log").read_text(encoding="utf-8").splitlines()
    assert [line.split()[2] for line in insights] == ["deadlock.parity_cadence", "race.redundant_zero_store"]
    assert all(line.startswith(INSIGHT_PREFIX + "error ") for line in insights)


def test_out_files_for_a_clean_kernel_say_no_issues(tmp_path: Path) -> None:
    out = tmp_path / "bv"
    cli("report", CLEAN, "--out", str(out))
    status = validate_outputs(out)
    assert status.status == "success" and status.suggested_next_modes == []
    # the one finding is an info (single-copy buffer): not an issue for debug_helper
    assert (out / "insights.log").read_text(encoding="utf-8").splitlines() == [NO_ISSUES]


def test_validator_rejects_a_report_dir_whose_insights_were_tampered_with(tmp_path: Path) -> None:
    out = tmp_path / "bv"
    cli("report", CLEAN, "--out", str(out))
    (out / "insights.log").write_text("no barrier issues\n", encoding="utf-8")
    with pytest.raises(ValueError, match="INSIGHT"):
        validate_outputs(out)


# -- --format json and md -----------------------------------------------------------------------


def test_json_has_every_section_and_each_equals_its_command(tmp_path: Path) -> None:
    doc = json.loads(cli("report", BUGGY, "--format", "json").stdout)
    assert doc["schema"] == "barrier-viz/report/v1"
    for key in (*SECTION_COMMANDS, "findings", "summary", "input"):
        assert key in doc, key
    for name in SECTION_COMMANDS:
        alone = json.loads(cli(name, BUGGY, "--format", "json").stdout)
        for key in ("schema", "input", "warnings"):
            alone.pop(key, None)
        assert doc[name] == alone, f"report's {name} section differs from `barrier-viz {name}`"
    assert doc["summary"]["errors"] == 2
    assert {f["kind"] for f in doc["findings"]} >= {"race.redundant_zero_store"}


def test_markdown_has_the_five_sections_coverage_and_findings_in_order() -> None:
    text = cli("report", CLEAN).stdout
    positions = [text.find(h + "\n") for h in MD_HEADINGS]
    assert all(p >= 0 for p in positions), [h for h, p in zip(MD_HEADINGS, positions) if p < 0]
    assert positions == sorted(positions)
    coverage = text[positions[5]:positions[6]]
    assert "Column-packed TMEM overwrite coverage" in coverage and "Operand-D accumulator init coverage" in coverage


# -- --format compact: the digest the skill reads -----------------------------------------------


def test_compact_digest_is_what_the_report_tool_returns_and_keeps_every_section() -> None:
    text = cli("report", BUGGY, "--format", "compact").stdout
    tool = REGISTRY.get("report").call_json({"input": BUGGY, "compact": True})
    assert digest_text(DigestDoc.model_validate(tool)) == text
    assert text.startswith(f"barrier-viz digest: {BUGGY} unit 0 of 1 @gemm_while | findings: 2 error, 0 warning")
    for heading in ("## 1 partitions", "## 2 graph", "## 3 phases", "## 4 buffers", "## 5 aliases", "## coverage", "## findings"):
        assert f"\n{heading}" in text, heading
    assert "packed TMEM: no allocation has column-packed members" in text  # an empty table still prints
    assert "accD id=3 acc L21 |" in text and "✗ redundant_unordered" in text
    assert "ERROR race.redundant_zero_store -> wrong results L37,61 [default,partition0]" in text


def test_compact_digest_shows_packed_rows_and_is_much_smaller_than_the_markdown() -> None:
    text = cli("report", CLEAN, "--format", "compact").stdout
    rows = [line for line in text.splitlines() if line.startswith("  cols ")]
    assert rows[0].split()[2] == "qk"
    assert [r.split(" -> ")[0].split(None, 2)[2] for r in rows[1:]] == [
        f"128x1xf32 view (loc {n})" for n in ("alpha", "m_ij", "l_i0")]
    assert all(" ✓ " in r for r in rows)
    assert len(text) < 0.6 * len(cli("report", CLEAN).stdout)


def test_compact_digest_prints_a_deadlock_witness() -> None:
    text = cli("report", BUGGY, "--format", "compact").stdout
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("ERROR deadlock.parity_cadence"))
    assert lines[at + 1].startswith("  witness (") and "stuck at L" in lines[at + 1]
