"""Every finding carries one headline outcome (hang / wrong results / timing-dependent / harmless).

The outcome is derived in one place (analyses/model/outcome.py) from the kind and the evidence; these
tests check it on mutants of the hand-written persistent GEMM (each made by locating the op to
change through the parser) and that text, JSON and the compact digest all show it.
"""

from __future__ import annotations

import json
from pathlib import Path

from barrier_viz.analyses.model.outcome import EITHER, HANG, HARMLESS, OUTCOMES, WRONG, outcome_of

from cli_support import run_cli
from test_check import FIXTURE, _ops, _replace_line

BASE = FIXTURE.read_text()


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "k.ttgir"
    path.write_text(text)
    return path


def _json(path: Path) -> dict:
    r = run_cli("check", str(path), "--format", "json")
    assert r.exception is None
    return json.loads(r.stdout)


def _dropped_release() -> str:
    mma = _ops(BASE, "ttng.tc_gen5_mma", "partition0")[0]
    line = BASE.splitlines()[mma.line - 1]
    return _replace_line(BASE, mma.line, line.replace(f", {mma.operands[-2]}[{mma.operands[-1]}]", ""))


def test_every_finding_has_one_of_the_four_outcomes(tmp_path):
    wait = _ops(BASE, "ttng.wait_barrier", "partition0")[-1]
    for text in (_dropped_release(), _replace_line(BASE, wait.line, [])):
        doc = _json(_write(tmp_path, text))
        assert doc["findings"]
        assert all(f["outcome"] in OUTCOMES for f in doc["findings"])


def test_a_missing_producer_is_a_hang_in_text_json_and_digest(tmp_path):
    path = _write(tmp_path, _dropped_release())
    hang = [f for f in _json(path)["findings"] if f["kind"] == "deadlock.no_producer"]
    assert hang and hang[0]["outcome"] == HANG
    assert "deadlock.no_producer -> hang " in run_cli("check", str(path)).stdout
    assert "deadlock.no_producer -> hang " in run_cli("report", str(path), "--format", "compact").stdout


def test_a_dropped_full_wait_gives_wrong_results(tmp_path):
    wait = _ops(BASE, "ttng.wait_barrier", "partition0")[-1]
    doc = _json(_write(tmp_path, _replace_line(BASE, wait.line, [])))
    static = [f for f in doc["findings"] if f["kind"] == "race.unsynchronized_read" and not f["evidence"].get("blocked")]
    assert static and all(f["outcome"] == WRONG for f in static)


def test_a_race_whose_witness_blocks_only_adversarially_depends_on_timing(tmp_path):
    """The dropped producer acquire: the favorable schedule covers the loops, the in-order one
    blocks every partition. Neither a plain race nor a plain hang: it depends on timing."""
    wait = _ops(BASE, "ttng.wait_barrier", "partition1")[0]
    doc = _json(_write(tmp_path, _replace_line(BASE, wait.line, [])))
    witnessed = [f for f in doc["findings"] if f["kind"] == "race.missing_acquire" and f["evidence"].get("witness")]
    assert witnessed and witnessed[0]["evidence"]["witness"]["policy"] != "favorable"
    assert witnessed[0]["outcome"] == EITHER


def test_a_constant_parity_depends_on_timing_and_a_duplicated_wait_is_harmless(tmp_path):
    wait = _ops(BASE, "ttng.wait_barrier", "partition0")[-1]
    line = BASE.splitlines()[wait.line - 1]
    indent = line[: len(line) - len(line.lstrip())]
    const = _replace_line(BASE, wait.line, [f"{indent}%const_phase = arith.constant 0 : i32",
                                            line.replace(f"{wait.operands[0]}, {wait.operands[1]}", f"{wait.operands[0]}, %const_phase")])
    doc = _json(_write(tmp_path, const))
    assert {f["outcome"] for f in doc["findings"] if f["kind"] == "phase.constant_in_loop"} == {EITHER}
    doc = _json(_write(tmp_path, _replace_line(BASE, wait.line, [line, line])))
    assert {f["outcome"] for f in doc["findings"] if f["kind"] == "wait.redundant"} == {HARMLESS}


def test_the_witness_schedule_decides_between_hang_and_timing():
    blocked = [{"partition": "default", "line": 3}]
    assert outcome_of("race.missing_acquire", "error", {"witness": {"policy": "favorable", "blocked": blocked}}) == HANG
    assert outcome_of("race.missing_acquire", "error", {"witness": {"policy": "reverse", "blocked": blocked}}) == EITHER
    assert outcome_of("race.missing_acquire", "error", {}) == WRONG
    assert outcome_of("race.redundant_zero_store", "warning", {}) == HARMLESS


def test_a_stated_limit_is_not_judged_rather_than_harmless():
    """A `model.limit` (an op or a cluster the model does not cover) or an unresolved value says
    nothing about the kernel: calling it harmless would be a verdict the tool cannot give."""
    from barrier_viz.analyses.model.outcome import NOT_JUDGED

    assert outcome_of("model.limit", "info", {}) == NOT_JUDGED
    assert outcome_of("limit.unresolved_value", "info", {}) == NOT_JUDGED
    assert outcome_of("buffer.single_copy", "info", {}) == HARMLESS


def test_an_info_never_carries_a_hang_or_wrong_results():
    """Severity follows outcome (issue 22): an explanation whose consequence is a hang (an
    unpaired arrive that leaves a wait with no arrival) is reported as a warning, never an info;
    a harmless one stays an info; a run's verdict taken back (a launch the IR excludes) is an
    info that is not judged, not a harmless one and not a hang."""
    from barrier_viz.analyses.model.findings import Kind, Severity, finding
    from barrier_viz.analyses.model.outcome import NOT_JUDGED

    hang = finding(Kind.ARRIVE_UNPAIRED, Severity.info, "m", evidence={"consequence": HANG})
    assert (hang.severity, hang.outcome) == (Severity.warning, HANG)
    fine = finding(Kind.ARRIVE_UNPAIRED, Severity.info, "m", evidence={"consequence": HARMLESS})
    assert (fine.severity, fine.outcome) == (Severity.info, HARMLESS)
    taken_back = finding(Kind.DEADLOCK_CYCLE, Severity.info, "m", evidence={"not_judged": "a launch the IR excludes"})
    assert (taken_back.severity, taken_back.outcome) == (Severity.info, NOT_JUDGED)
