"""`explore`: bounded exploration of interleavings, with deadlock witnesses and races."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..analyses.sim.deadlock import _classify
from ..analyses.sim.explore import ExploreResult, explore, not_judged, race_findings, tmem_not_judged
from ..analyses.model.findings import Finding
from ..analyses.sim.schedule import POLICIES
from ..analysis import Analysis
from .check_cmd import named_bound
from ..render.console import print_lines
from ..schemas import InputRef
from ..session import Selection


class ExploreDoc(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")
    schema_: str = Field("barrier-viz/explore/v1", alias="schema")
    input: InputRef
    result: str
    findings: list[Finding]
    states: int
    seconds: float
    bounds: dict[str, Any]
    schedules: list[dict[str, Any]]
    reason: str = ""
    # Per loop holding barrier operations: the most iterations one entry reached in any schedule
    # and how often the loop finished, so "clean within bounds" says what the bounds covered.
    loops: list[dict[str, Any]] = []
    warnings: list[str] = []


def explore_document(sel: Selection, *, trips: int | None = None, max_states: int = 200_000, timeout: float = 10.0,
                     steps: int | None = None, warnings: list[str] | None = None, launch=None) -> ExploreDoc:
    """`launch` (`--args/--pid/--grid`, a `Launch`): explore at the user's launch, as `check` does."""
    if sel.function is None:
        res = ExploreResult("not_simulated", None, trips or 0, reason="no function in scope")  # type: ignore[arg-type]
        return ExploreDoc(input=InputRef(**sel.input_ref()), result=res.result, findings=[], states=0, seconds=0.0,
                          bounds={}, schedules=[], reason=res.reason, warnings=warnings or [])
    from ..analyses.launch.input_points import admissible, model_of
    from ..analyses.launch.trip_mismatch import refine as name_trip_mismatch

    model = model_of(Analysis(sel))
    res = explore(sel.function, trips=trips, max_states=max_states, timeout=timeout, steps=steps,
                  adjust=_adjust(sel, model, launch))
    findings: list[Finding] = []
    result = res.result
    if res.deadlock is not None:
        analysis = Analysis(sel)
        favorable = next((r for r in res.runs if r.policy == "favorable"), None)
        friendly_ok = favorable is not None and not favorable.deadlocked
        # Same verdict rules as `check`: a hang only a runaway producer (or consumer) can cause
        # is reported as the race that allows it.
        findings += name_trip_mismatch(_classify(res.deadlock, analysis.arrivers, adversarial_only=friendly_ok,
                                                 gated=analysis.arrival_gated), res.deadlock, analysis)
        if res.deadlock.policy not in POLICIES:  # the bound `check` states: its schedules, not this one
            for f in findings:
                f.message += f" Seen on the {res.deadlock.policy} schedule, beyond the schedules `check` runs."
        if not any(f.kind.startswith("deadlock.") for f in findings):
            result = "race"
    races = not_judged(race_findings(res.races), res.paced)
    if races:
        from ..analyses.structure.coverage import coverage_findings

        races = tmem_not_judged(races, coverage_findings(Analysis(sel)))  # as `check` judges them
    findings += races
    bounds = _launch_bounds(sel, model, named_bound(sel.function, res.bounds()), launch)
    if findings:
        from ..analyses.verdicts import demote_unresolved, outside_contract

        findings = demote_unresolved(findings, Analysis(sel))
        if bounds.get("outside_contract"):  # the user's launch breaks an inferred assumption: as `check` says it
            outside_contract([f for f in findings if f.severity.value != "info"], bounds["_broken"])
        if result in ("deadlock", "race") and not any(f.severity.value == "error" for f in findings):
            result = "not_judged"  # every finding rested on an unsoundly defined value, or is outside the contract
    return ExploreDoc(
        input=InputRef(**sel.input_ref()),
        result=result,
        findings=findings,
        states=res.states,
        seconds=round(res.seconds, 3),
        bounds={k: v for k, v in bounds.items() if k != "_broken"},
        schedules=[{"policy": r.policy, "outcome": r.outcome, "steps": r.steps} for r in res.runs],
        reason=res.reason,
        loops=explored_loops(sel.function, res),
        warnings=warnings or [],
    )


def _adjust(sel: Selection, model, launch):
    """The launch every schedule runs: the tool's admitted values, with the user's on top (checked
    against the IR's facts like `check`: a bad value is a one-line error)."""
    from ..analyses.launch.input_points import LaunchError, admissible, apply_launch

    if model is None:
        return None
    if launch is None:
        return lambda p: admissible(model, p)
    from ..analyses.sim.state import Params
    from ..errors import InputError

    try:
        apply_launch(model, Params(), launch)  # a value the IR refuses: said before exploring
    except LaunchError as exc:
        raise InputError(sel.inputs.display, str(exc)) from None
    return lambda p: apply_launch(model, admissible(model, p), launch)


def _launch_bounds(sel: Selection, model, bounds: dict[str, Any], launch) -> dict[str, Any]:
    """The user's launch in the bounds (its program ids and counts), and the inferred launch
    assumptions it breaks (`launch.contract`): explored anyway, said here."""
    if launch is None or model is None:
        return bounds
    from ..analyses.launch.contract import broken_by, given_names
    from ..analyses.launch.input_points import Point

    names = {a.name: a.position for a in model.args}
    point = Point(tuple(sorted((names[n], v) for n, v in launch.args.items() if n in names)),
                  tuple(((list(launch.pids) if launch.pids else []) + [0, 0, 0])[:3]),  # type: ignore[arg-type]
                  tuple(((list(launch.grid) if launch.grid else []) + [1, 1, 1])[:3]))  # type: ignore[arg-type]
    out = {**bounds, **({"program_ids": list(launch.pids)} if launch.pids is not None else {}),
           **({"grid": list(launch.grid)} if launch.grid is not None else {})}
    broken = broken_by(model, point, given_names(launch))
    if broken:
        out["outside_contract"] = [a.statement for a in broken]
        out["_broken"] = broken  # for the findings (not printed)
    return out


_BARRIER_OPS = ("ttng.wait_barrier", "ttng.arrive_barrier", "ttng.barrier_expect", "ttng.tc_gen5_commit",
                "ttng.async_tma_copy_global_to_local", "ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled")


def explored_loops(function, res: ExploreResult) -> list[dict[str, Any]]:
    """Each loop holding barrier operations, in written order, with the most iterations one of
    its entries reached over all schedules run (`trips`) and the most times it finished in one
    schedule (`exits`)."""
    machines = [r.machine for r in res.runs if r.machine is not None]
    out = []
    for op in function.walk():
        if op.name not in ("scf.for", "scf.while") or not any(o.name in _BARRIER_OPS for o in op.walk()):
            continue
        key = id(op)
        out.append({"line": op.line, "op": op.name,
                    "trips": max((m.loop_trips.get(key, 0) for m in machines), default=0),
                    "exits": max((m.loop_exits.get(key, 0) for m in machines), default=0)})
    return out


def render_explore_text(doc: ExploreDoc) -> None:
    out: list[str] = []
    out.append(f"{doc.input.path} [unit {doc.input.unit_index}: {doc.input.unit}]"
              + (f" @{doc.input.function}" if doc.input.function else ""))
    b = doc.bounds
    out.append(f"result: {doc.result}" + (f" ({doc.reason})" if doc.reason else ""))
    out.append(f"{len(doc.schedules)} schedule(s), {doc.states} distinct state(s), {doc.seconds:.2f} s; bounds: "
              + ", ".join(f"{k}={v}" for k, v in b.items()))
    if doc.loops:
        out.append(f"trips explored (required {doc.bounds.get('trips')} per loop): "
                  + "; ".join(f"{lp['op']} line {lp['line']}: {lp['trips']}" for lp in doc.loops))
    for f in doc.findings:
        out.append(f"\n{f.severity.value.upper()} {f.kind} -> {f.outcome}  lines {', '.join(map(str, f.lines))}")
        out.append(f"  {f.message}")
        for blk in f.evidence.get("blocked", []):
            it = ",".join(map(str, blk["iteration"])) or "-"
            out.append(f"    {blk['partition']} stuck at line {blk['line']} (iteration {it}) awaiting parity "
                      f"{blk['parity_awaited']}; slot completed {blk['completions']} phase(s)")
            for last in blk.get("last_ops", [])[-3:]:
                out.append(f"      after line {last['line']} {last['op']} (iteration {','.join(map(str, last['iteration'])) or '-'})")
    print_lines(out)
