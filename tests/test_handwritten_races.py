"""Issue 22, points 3-5, on our hand-written kernels (evals/gen/handwritten_races.py).

* Predicates are part of the program: a wait on a first-iteration flag (or `k == 0`) runs once
  per loop entry, so its constant parity is no lost flip and the unconditional wait after the
  loop is no repeat of it; the same wait with the flag never cleared runs every iteration and
  is still an error.
* The async store path: a TMA store reads its SMEM source until a store wait retires it. A
  rewrite before that wait (or with `pendings` that leaves the reading store in flight), and an
  exit with a store in flight in a one-tile-per-program kernel, are races, statically and in
  the interpreter's happens-before check; the correct forms (wait 0, double buffer with
  pendings 1, token waits) are clean.
* Suggestions that hold: the zero-store warning states the launch condition under which its
  self-zeroing MMA runs (`K >= 64` for an MMA predicated on `K / 64 > 0`).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from barrier_viz.analyses.sim.explore import explore, race_findings
from barrier_viz.analyses.program.predicates import AFTER_FIRST, ALWAYS, FIRST, INVARIANT, iteration_runs
from barrier_viz.analyses.program.order import innermost_loop
from barrier_viz.analyses.verdicts import check
from barrier_viz.analysis import Analysis
from barrier_viz.session import select

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("handwritten_races", REPO / "evals" / "gen" / "handwritten_races.py")
hw = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hw)


def _analysis(tmp_path: Path, text: str) -> Analysis:
    path = tmp_path / "k.ttgir"
    path.write_text(text)
    return Analysis(select(str(path), None, None, require_function=True))


def _static(tmp_path: Path, text: str):
    return check(_analysis(tmp_path, text), simulate=False).findings


def _line(text: str, needle: str) -> int:
    return hw._line(text, needle)


# -- point 3: predicates ------------------------------------------------------------------------
def test_first_iteration_flag_wait_is_neither_constant_phase_nor_redundant(tmp_path):
    """A one-phase barrier (Q lands once) waited with parity 0 inside the loop, only while the
    loop-carried flag is still true (the first iteration), and once more after the loop."""
    for pred in ("flag", "iv"):
        found = _static(tmp_path, hw.first_flag_kernel(pred))
        assert not [f for f in found if f.kind in ("phase.constant_in_loop", "wait.redundant")], pred


def test_flag_never_cleared_is_still_a_constant_phase_in_the_loop(tmp_path):
    """Yield the flag back unchanged: the wait runs every iteration on parity 0, which the rule
    exists to catch."""
    text = hw.first_flag_kernel("flag").replace("scf.yield %false, %nidx, %nph", "scf.yield %first, %nidx, %nph")
    found = _static(tmp_path, text)
    assert [f.lines for f in found if f.kind == "phase.constant_in_loop"] == [
        sorted([_line(text, "ttng.wait_barrier %q_full, %c0_i32, %first"), _line(text, "scf.for %k")])]


def test_iteration_runs_reads_flags_iv_tests_and_invariants(tmp_path):
    text = hw.first_flag_kernel("flag")
    a = _analysis(tmp_path, text)
    wait = next(o for o in a.ops if o.name == "ttng.wait_barrier" and "%first" in o.operands)
    loop = innermost_loop(wait)
    assert iteration_runs(a, wait, "%first", loop) == FIRST
    assert iteration_runs(a, wait, "%true", loop) == ALWAYS
    assert iteration_runs(a, wait, None, loop) == ALWAYS
    text = hw.first_flag_kernel("iv").replace("%is_first = arith.cmpi eq, %k, %c0_i32",
                                              "%is_first = arith.cmpi ne, %k, %c0_i32")
    a = _analysis(tmp_path, text)
    wait = next(o for o in a.ops if o.name == "ttng.wait_barrier" and "%is_first" in o.operands)
    assert iteration_runs(a, wait, "%is_first", innermost_loop(wait)) == AFTER_FIRST
    # A launch-time value (the loop bound itself, compared outside the loop) is the same every iteration.
    assert iteration_runs(a, wait, "%nk", innermost_loop(wait)) == INVARIANT


# -- point 4: the async store path --------------------------------------------------------------
def _store_races(found):
    return [f for f in found if f.kind == "race.tma_store_reuse"]


def test_staging_buffer_rewritten_before_store_wait_is_a_race(tmp_path):
    for wait in ("", hw.WAIT1):
        text = hw.epilogue_kernel(wait, hw.EXIT0)
        (f,) = _store_races(_static(tmp_path, text))
        assert f.severity.value == "error"
        assert f.lines == sorted([_line(text, "ttng.async_tma_copy_local_to_global"),
                                  _line(text, "ttg.local_store %y, %y_smem")])


def test_retired_or_double_buffered_staging_is_clean(tmp_path):
    for text in (hw.epilogue_kernel(hw.WAIT0, hw.EXIT0), hw.epilogue_kernel(hw.WAIT1, hw.EXIT0, double_buffer=True),
                 hw.one_tile_kernel(hw.EXIT0)):
        found = _static(tmp_path, text)
        assert not _store_races(found)
        assert not [f for f in found if f.kind == "model.limit" and "TMA store" in f.message]


def test_exit_with_a_store_in_flight(tmp_path):
    """One tile per program: an error. A persistent kernel (tile loop stepping by the program
    count) keeps its SMEM to the end of the grid's work: a stated limit, not a verdict."""
    text = hw.one_tile_kernel("")
    (f,) = _store_races(_static(tmp_path, text))
    assert f.severity.value == "error" and f.evidence["at_exit"]
    assert f.lines == [_line(text, "ttng.async_tma_copy_local_to_global")]
    found = _static(tmp_path, hw.epilogue_kernel(hw.WAIT0, ""))
    assert not _store_races(found)
    (limit,) = [f for f in found if f.kind == "model.limit" and "TMA store" in f.message]
    assert limit.severity.value == "info" and "persistent" in limit.message


def _explore_races(tmp_path: Path, text: str):
    a = _analysis(tmp_path, text)
    result = explore(a.sel.function, timeout=10)
    return [f for f in race_findings(result.races)]


def test_interpreter_store_read_ends_at_the_retiring_wait(tmp_path):
    text = hw.epilogue_kernel("", hw.EXIT0)
    races = _explore_races(tmp_path, text)
    assert [(f.kind, f.lines) for f in races] == [("race.tma_store_reuse", sorted([
        _line(text, "ttng.async_tma_copy_local_to_global"), _line(text, "ttg.local_store %y, %y_smem")]))]
    assert not _explore_races(tmp_path, hw.epilogue_kernel(hw.WAIT0, hw.EXIT0))
    assert not _explore_races(tmp_path, hw.epilogue_kernel(hw.WAIT1, hw.EXIT0, double_buffer=True))
    assert _explore_races(tmp_path, hw.epilogue_kernel(hw.WAIT1, hw.EXIT0))


def test_interpreter_store_token_wait_retires_its_store(tmp_path):
    """AutoWS form: the store returns a token and `async_tma_store_token_wait %tok` retires it."""
    text = hw.epilogue_kernel(hw.WAIT0, hw.EXIT0)
    text = text.replace("        ttng.async_tma_store_wait {pendings = 0 : i32}\n", "")
    store = next(x for x in text.split("\n") if "ttng.async_tma_copy_local_to_global" in x)
    tokened = store.replace("ttng.async_tma_copy_local_to_global", "%tok = ttng.async_tma_copy_local_to_global") \
        + " -> !ttg.async.token\n        ttng.async_tma_store_token_wait %tok : !ttg.async.token"
    text = text.replace(store, tokened)
    assert not _explore_races(tmp_path, text)
    assert not _store_races(_static(tmp_path, text))


# -- point 5: suggestions that hold -------------------------------------------------------------
def _zero_store(tmp_path: Path, text: str):
    (f,) = [f for f in _static(tmp_path, text) if f.kind == "race.redundant_zero_store"]
    return f


def test_zero_store_suggestion_states_the_k_condition(tmp_path):
    """The MMA that would make the store redundant is predicated on K / 64 > 0: with K < 64 no
    MMA runs and the epilogue reads exactly these zeros, so "remove the store" holds only for
    K >= 64, and the warning says so."""
    f = _zero_store(tmp_path, hw.zero_store_kernel("pred"))
    assert f.severity.value == "warning"
    assert "K >= 64" in f.suggestion and "only if" in f.suggestion and "K >= 64" in f.message
    loop = _zero_store(tmp_path, hw.zero_store_kernel("loop"))
    assert "K >= 64" in loop.suggestion and "trip count of the loop" in loop.suggestion


def test_condition_every_launch_meets_is_no_condition(tmp_path):
    """A K loop over cdiv(K, 64) tiles runs for every K >= 1, and a size is never 0 at launch:
    the MMA always runs, the plain suggestion holds."""
    text = hw.zero_store_kernel("loop").replace(
        "%kt = arith.divsi %K_g, %c64_g : i32",
        "%k63 = arith.addi %K_g, %c63_g : i32\n        %kt = arith.divsi %k63, %c64_g : i32")
    f = _zero_store(tmp_path, text)
    assert f.evidence["row"]["init_condition"] is None and f.suggestion.startswith("Remove the zero tmem_store;")


def test_unguarded_self_zeroing_mma_keeps_the_plain_suggestion(tmp_path):
    text = hw.zero_store_kernel("pred").replace("%false_g, %has_k :", "%false_g, %true_g :")
    f = _zero_store(tmp_path, text)
    assert f.suggestion.startswith("Remove the zero tmem_store;")
    assert f.evidence["row"]["init_condition"] is None


# -- point 6: the eval keys these cases need ------------------------------------------------------
def test_expectation_severity_and_says():
    """A warning matches only an expectation that names its severity, and `says` needs the text
    in the message or the suggestion; such warnings do not count as race recall."""
    from barrier_viz.evals.cases import Case
    from barrier_viz.evals.scoring import Reported, expectation_matches, score_case, summarize

    warn = Reported("race.redundant_zero_store", "warning", suggestion="Remove it only if K >= 64 holds")
    assert not expectation_matches({"kind": "race.redundant_zero_store"}, warn)
    e = {"kind": "race.redundant_zero_store", "severity": "warning", "says": ["K >= 64"]}
    assert expectation_matches(e, warn)
    assert not expectation_matches(dict(e, says=["K >= 128"]), warn)
    assert not expectation_matches(dict(e, severity="error"), warn)
    case = Case(name="c", input=Path("x"), findings=[e], group="handwritten-races")
    summary = summarize([score_case(case, [warn])])
    assert summary["race_expectations"] == 0 and summary["per_group"]["handwritten-races"]["passed"] == 1


def test_constant_trip_k_loop_needs_no_condition(tmp_path):
    text = hw.zero_store_kernel("loop").replace("scf.for %k = %c0_g to %kt step", "scf.for %k = %c0_g to %c63_g step")
    f = _zero_store(tmp_path, text)
    assert f.evidence["row"]["init_condition"] is None and f.suggestion.startswith("Remove the zero tmem_store;")
