"""The eval harness: cases, mutation engine, scoring, agent-mode scoring, and the CI gate.

The CI gate runs the deterministic eval over the committed cases (evals/cases) and, when it is
there, over the shared GPU-observed corpus (CORPUS/gpu, see tests/corpus_units.py; each set's truth.json), and
asserts issue 6's thresholds. Misses the rules are known to have are listed with their reason
in evals/config.yaml `known_misses`; the failing set must equal that list exactly, so a new miss
fails CI and a fixed one must be struck from the list.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from barrier_viz.cli import app
from corpus_units import CORPUS
from barrier_viz.evals.cases import Case, discover, load_case, write_case
from barrier_viz.evals.mutate import Source, mutants
from barrier_viz.evals.runner import load_config, parse_agent_output, parse_insight, run_agent_cases, run_deterministic
from barrier_viz.evals.scoring import Reported, check_thresholds, score_case, summarize

REPO = Path(__file__).resolve().parent.parent
CASES = REPO / "evals" / "cases"
CONFIG = REPO / "evals" / "config.yaml"
GPU_CORPUS = CORPUS / "gpu"


def _read(path: Path) -> str:
    return gzip.decompress(path.read_bytes()).decode() if path.name.endswith(".gz") else path.read_text()


@pytest.fixture(scope="module")
def committed():
    cases = discover([CASES])
    scores = run_deterministic(cases, jobs=2)
    return cases, scores


@pytest.fixture(scope="module")
def config():
    return yaml.safe_load(CONFIG.read_text())


# -- the corpus ---------------------------------------------------------------------------------
def test_corpus_breadth(committed):
    """Issue 6: >= 150 cases from >= 6 distinct kernels, both targets, both compilers."""
    cases, _ = committed
    assert len(cases) >= 150
    kernels = {c.source.get("kernel") for c in cases}
    targets = {c.source.get("target") for c in cases}
    compilers = {str(c.source.get("compiler", "")).split("-")[0] for c in cases}
    assert len(kernels - {None}) >= 6, kernels
    assert {"cuda:90", "cuda:100"} <= targets
    assert {"triton", "fbtriton"} <= compilers
    for c in cases:
        assert c.notes, f"{c.name}: every case says where its truth comes from"
        assert c.findings or c.absent, f"{c.name}: a case must expect something"


def test_every_mutant_differs_from_its_base_and_parses():
    """A mutant is a real edit of real IR: it differs from its base and re-parses cleanly."""
    from barrier_viz.ir.parse import parse_ir

    bases = {p.name.rsplit(".base", 1)[0]: p for p in CASES.iterdir() if p.name.endswith(".base")}
    checked = 0
    for folder in sorted(CASES.iterdir()):
        prefix = folder.name.rsplit(".", 1)[0]
        if folder.name.endswith(".base") or prefix not in bases:
            continue
        case = load_case(folder)
        text = _read(case.input)
        assert text != _read(load_case(bases[prefix]).input), folder.name
        assert not parse_ir(text).diagnostics, folder.name
        checked += 1
    assert checked >= 100


# -- the gate -----------------------------------------------------------------------------------
def test_failures_are_exactly_the_known_misses(committed, config):
    """Refresh the list with `python evals/gen/known_misses.py --write`, then judge each new one."""
    _, scores = committed
    misses = config.get("known_misses") or {}
    unjudged = [n for n, why in misses.items() if not why or str(why).startswith("TODO")]
    assert not unjudged, f"known misses without a judged reason: {unjudged}"
    known = set(misses)
    failing = {s.case.name for s in scores if not s.passed}
    assert not any(s.error for s in scores), [(s.case.name, s.error) for s in scores if s.error]
    new = sorted(failing - known)
    fixed = sorted(known - failing)
    assert not new, f"new misses (regressions, or add them with a reason to known_misses): {new}"
    assert not fixed, f"these known misses now pass; remove them from evals/config.yaml: {fixed}"


def test_thresholds_hold_outside_known_misses(committed, config):
    """Issue 6's thresholds, over every case except the documented misses (whose effect on the
    full-corpus numbers `barrier-viz eval` prints)."""
    _, scores = committed
    known = set((config.get("known_misses") or {}).keys())
    summary = summarize([s for s in scores if s.case.name not in known])
    failures = check_thresholds(summary, config["thresholds"])
    assert not failures, (failures, summarize(scores))
    assert summary["false_deadlocks"] == 0


def _infos_with_a_severe_outcome(scores) -> list:
    from barrier_viz.analyses.model.outcome import SEVERE

    return [(s.case.name, r.kind, r.lines, r.outcome) for s in scores for r in s.reported
            if r.severity == "info" and r.outcome in SEVERE]


def test_severity_follows_outcome_on_every_case(committed):
    """Issue 22: no finding whose outcome is a hang or wrong results is an info, on any of the
    committed cases (every eval kernel, each base and mutant)."""
    _, scores = committed
    assert all(r.outcome for s in scores for r in s.reported), "check gives every finding its outcome"
    assert _infos_with_a_severe_outcome(scores) == []


def test_no_false_deadlock_on_unmodified_kernels(committed):
    """Unmodified compiler output (the .base cases) must never be called a deadlock, unless the
    case itself expects that hang: a latent bug of the compiler judged by hand in its notes."""
    _, scores = committed
    bad = [s.case.name for s in scores if s.case.name.endswith(".base") and s.hang_reported
           and not s.case.expects_deadlock]
    assert not bad


@pytest.mark.skipif(not GPU_CORPUS.is_dir(), reason=f"{GPU_CORPUS} not present (set BARRIER_VIZ_CORPUS)")
def test_gpu_observed_corpus():
    """What the H200 did: every hang gets a hang-kind error, no completed run gets one."""
    cases = discover([GPU_CORPUS])
    assert cases
    scores = run_deterministic(cases, jobs=2)
    summary = summarize(scores)
    assert summary["deadlock_recall"] == 1.0, [s.case.name for s in scores if s.case.expects_deadlock and not s.hang_reported]
    assert summary["false_deadlocks"] == 0, [s.case.name for s in scores if s.case.known_good and s.hang_reported]
    assert _infos_with_a_severe_outcome(scores) == []  # severity follows outcome (issue 22)


# -- the mutation engine ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def hopper_base() -> str:
    return _read(load_case(CASES / "triton.gemm_persistent_v0.sm90.base").input)


def test_drop_only_arrival_removes_the_only_arrival(hopper_base):
    ms = mutants(hopper_base, operators=["drop_only_arrival"])
    assert ms
    for m in ms:
        before = Source(hopper_base)
        after = Source(m.text)
        assert len(after.ops) == len(before.ops) - 1
        # the barrier that lost its arrival now has none, and is still waited on
        counts = {b.line: len({id(u.op) for u in after.arrivals(b)}) for b in after.barriers}
        orphaned = [b for b in after.barriers if counts[b.line] == 0 and after.waits(b)]
        assert orphaned, m.name
        assert m.findings == [{"kind": "deadlock.no_producer"}]


def test_operators_record_truth_and_context(hopper_base):
    ms = mutants(hopper_base)
    ops = {m.operator for m in ms}
    assert {"drop_only_arrival", "const_phase", "flip_parity", "init_count", "expect_bytes", "dup_wait",
            "drop_wait"} <= ops
    for m in ms:
        assert m.why and m.line > 0
        assert m.findings or m.absent
    flip = next(m for m in ms if m.operator == "flip_parity")
    assert "arith.xori" in flip.text and "%mut_flip" in flip.text
    benign = next(m for m in ms if m.operator == "dup_wait")
    assert "deadlock.*" in benign.absent and benign.findings == [{"kind": "wait.redundant"}]
    dropped = [m for m in ms if m.operator == "drop_wait"]
    assert {m.extra["wait_kind"] for m in dropped} == {"data", "release"}
    for m in dropped:
        # a dropped wait races by construction; a hang (parity aliasing) is possible, so unjudged
        assert m.findings[0]["kind"].startswith("race.") and not any(a.startswith("deadlock") for a in m.absent)


def test_mutants_are_deterministic(hopper_base):
    a = [(m.name, m.text) for m in mutants(hopper_base, limit_per_operator=1, rotate=3)]
    b = [(m.name, m.text) for m in mutants(hopper_base, limit_per_operator=1, rotate=3)]
    assert a == b and a


def test_dup_arrive_requires_a_repeating_arrive():
    """A once-only arrive after the last wait is not duplicated: its extra completion is never
    awaited, so no hang could be claimed."""
    from barrier_viz.facts.barriers import Role

    text = _read(load_case(CASES / "fbtriton-metaws.gemm_tile_v0.sm100.base").input)
    src = Source(text)
    once_only = [u.line for b in src.barriers for u in src.arrivals(b)
                 if u.role is Role.ARRIVE and u.loop_depth == 0 and len(src.arrivals(b)) == 1 and src.waits(b)]
    assert once_only, "the fixture kernel must have a once-only arrive for this test to mean anything"
    lines = {m.line for m in mutants(text, operators=["dup_arrive"])}
    assert not lines & set(once_only)
    for line in lines:
        use = next(u for b in src.barriers for u in b.uses if u.line == line)
        assert use.loop_depth >= 1


# -- scoring ------------------------------------------------------------------------------------
def _case(**kw) -> Case:
    return Case(name=kw.pop("name", "c"), input=Path("x.ttgir"), **kw)


def test_matching_rules():
    hang = Reported("deadlock.cycle", "error", [10], ["partition0"])
    warn = Reported("phase.constant_in_loop", "warning", [5])
    s = score_case(_case(findings=[{"kind": "hang"}], absent=["race.*"]), [hang])
    assert s.passed and s.matched == [{"kind": "hang"}]
    # a warning is not a verdict for an error-kind expectation
    s = score_case(_case(findings=[{"kind": "phase.constant_in_loop"}]), [warn])
    assert s.missed
    # keys narrow the match
    s = score_case(_case(findings=[{"kind": "deadlock.cycle", "partition": "partition1"}]), [hang])
    assert s.missed
    s = score_case(_case(findings=[{"kind": "deadlock.cycle", "line": 10}]), [hang])
    assert s.passed
    # absent families
    s = score_case(_case(absent=["deadlock.*"]), [hang])
    assert s.false and not s.passed
    s = score_case(_case(absent=["deadlock.*"]), [Reported("wait.redundant", "info")])
    assert s.passed
    # a verdict family's warning (e.g. a redundant but ordered zero store) is no verdict
    s = score_case(_case(absent=["race.*"]), [Reported("race.redundant_zero_store", "warning")])
    assert s.passed
    s = score_case(_case(absent=["race.*"]), [Reported("race.redundant_zero_store", "error")])
    assert not s.passed


def test_summary_numbers():
    good = _case(name="good", absent=["deadlock.*"])
    bad = _case(name="bad", findings=[{"kind": "deadlock.no_producer"}])
    race = _case(name="race", findings=[{"kind": "race.missing_acquire"}], absent=["deadlock.*"])
    scores = [
        score_case(good, [Reported("deadlock.cycle")]),
        score_case(bad, [Reported("deadlock.no_producer")]),
        score_case(race, []),
    ]
    s = summarize(scores)
    assert s["deadlock_recall"] == 1.0 and s["false_deadlocks"] == 1 and s["race_recall"] == 0.0
    assert s["per_kind"]["deadlock.no_producer"] == {"recall": 1.0, "precision": 1.0, "support": 1, "false_positives": 0}
    assert s["per_kind"]["deadlock.cycle"]["precision"] == 0.0
    assert check_thresholds(s, {"deadlock_recall": 0.95, "false_deadlocks": 0, "race_recall": 0.9}) == [
        "false_deadlocks 1 > 0", "race_recall 0.0 < 0.9"]


# -- agent mode ---------------------------------------------------------------------------------
def test_parse_insight_lines():
    got = parse_insight("INSIGHT: deadlock.no_producer on %acc[0]: partition1 waits at line 151 (lines 122, 151)")
    assert [(r.kind, r.severity) for r in got] == [("deadlock.no_producer", "error")]
    assert {122, 151} <= set(got[0].lines) and got[0].partitions == ["partition1"]
    assert parse_insight("INSIGHT: no barrier issues found") == []
    assert parse_insight("INSIGHT: wait.redundant at L12")[0].severity == "info"


def _write_agent(folder: Path, insights: list[str], report: str = "# report\n") -> None:
    folder.mkdir(parents=True)
    (folder / "insights.log").write_text("".join(x + "\n" for x in insights))
    (folder / "report.md").write_text(report)


def test_agent_mode_scores_canned_outputs(tmp_path):
    names = ["triton.gemm_tile_v0.sm90.base", "triton.gemm_tile_v0.sm90.drop_only_arrival_L212",
             "triton.gemm_tile_v0.sm90.drop_wait_release_L144"]
    cases = [load_case(CASES / n) for n in names]
    out = tmp_path / "agent"
    _write_agent(out / names[0], ["INSIGHT: no barrier issues found"])
    # the agent names the right kind in an INSIGHT line
    _write_agent(out / names[1], ["INSIGHT: deadlock.no_producer: the barrier at line 212 never gets its arrive"])
    # JSON findings block wins over INSIGHT lines; here the agent gets the kind wrong
    block = "```json\n" + json.dumps({"findings": [{"kind": "race.unsynchronized_read", "severity": "error",
                                                     "partitions": ["default"], "lines": [144]}]}) + "\n```\n"
    _write_agent(out / names[2], ["INSIGHT: race.missing_acquire in default"], report="# r\n" + block)
    scores = run_agent_cases(cases, out)
    verdict = {s.case.name: s.passed for s in scores}
    assert verdict == {names[0]: True, names[1]: True, names[2]: False}
    assert parse_agent_output(out / names[2])[0].kind == "race.unsynchronized_read"
    # a case without output is a scored failure, not a crash
    (out / names[0] / "insights.log").unlink()
    (out / names[0] / "report.md").unlink()
    assert run_agent_cases(cases[:1], out)[0].error


def test_agent_mode_runner_hook(tmp_path):
    case = load_case(CASES / "triton.gemm_tile_v0.sm90.drop_only_arrival_L212")
    calls = []

    def fake_agent(c: Case, folder: Path) -> None:
        calls.append(c.name)
        _write_agent(folder, ["INSIGHT: deadlock.parity_cadence at line 212"])

    [s] = run_agent_cases([case], tmp_path, fake_agent)
    assert calls == [case.name] and not s.passed and s.reported[0].kind == "deadlock.parity_cadence"


# -- the command --------------------------------------------------------------------------------
def test_eval_command_json_and_exit_codes(tmp_path):
    runner = CliRunner()
    good = str(CASES / "triton.gemm_tile_v0.sm90.base")
    hang = str(CASES / "triton.gemm_tile_v0.sm90.drop_only_arrival_L212")
    res = runner.invoke(app, ["eval", good, hang, "--format", "json", "-j", "1"])
    doc = json.loads(res.stdout)
    assert doc["schema"] == "barrier-viz/eval/v1"
    assert set(doc["summary"]) >= {"cases", "deadlock_recall", "false_deadlocks", "per_kind"}
    assert doc["summary"]["cases"] == 2 and len(doc["cases"]) == 2
    assert res.exit_code == (0 if not doc["threshold_failures"] else 1)
    # a case whose expectation cannot be met -> thresholds missed -> exit 1, miss printed
    bad = tmp_path / "bad"
    write_case(bad, _read(load_case(Path(good)).input), findings=[{"kind": "deadlock.cycle"}], absent=[],
               notes="deliberately wrong expectation", compress=False)
    res = runner.invoke(app, ["eval", str(bad), "-j", "1"])
    assert res.exit_code == 1
    assert "missed kind=deadlock.cycle" in res.stdout and "deadlock recall: 0.0" in res.stdout
    res = runner.invoke(app, ["eval", str(tmp_path / "nowhere")])
    assert res.exit_code == 2
    # agent mode: a case without agent output cannot be scored -> exit 1
    res = runner.invoke(app, ["eval", good, "--mode", "agent", "--agent-out", str(tmp_path / "empty")])
    assert res.exit_code == 1 and "no output to score" in res.stdout


def test_config_defaults(tmp_path):
    assert load_config(None)["thresholds"]["false_deadlocks"] == 0
    p = tmp_path / "c.yaml"
    p.write_text("thresholds:\n  deadlock_recall: 0.5\n")
    assert load_config(p)["thresholds"] == {"deadlock_recall": 0.5}
