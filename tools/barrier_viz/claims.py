"""Claims about one op, checked by the simulator: "this wait is redundant" holds only if a copy of
the kernel without that wait runs the same.

Why: a `wait.redundant` info tells an engineer an op can go. Read from the IR's shape alone
(same slot, same or flipped parity, no arrive between), it can name the wrong one of two waits:
in a 2-CTA FA backward the wait that is "served by the previous flip" was the one that keeps the
dQ MMA from overwriting TMEM the softmax partition still reads, and an engineer who deleted it
on that advice would have made a race. So every such claim is tried: the op it names is deleted
in a copy of the unit (its line blanked, so every other line keeps its number), the copy is
parsed and its static rules and every `check` schedule are run at the same launch, with
happens-before ordering recorded for every cross-partition pair of accesses to one storage
(`sim.hb.HappensBefore.order`). The claim stands only if nothing changes: the same outcome in
every schedule (completed and covered alike: both ran without blocking), no access pair that
both runs reached and the original always ordered now unordered, no new race and no new error
or warning. Otherwise the other wait of the pair is tried the same way; if it is the redundant one,
the claim is rewritten to name it (and says why the first is needed); if neither is, the claim
is dropped. The suggested fix ("drop the wait at line N") is the deletion just checked, and says so.

Cost: only kernels with such a claim pay, at most `MAX_CLAIMS` claims, each at most two copies;
every run keeps `check`'s own step bound (`Params.max_steps`). Claims are checked at the launch
`check` chooses itself (rings wrap), also when the user gives one (`check --args`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .analyses.model.findings import Finding, Kind

MAX_CLAIMS = 8  # wait.redundant claims checked per kernel; the rest say they were not checked


@dataclass(frozen=True)
class RunShape:
    """What one schedule of one copy did, as far as a deleted op can change it."""

    policy: str
    outcome: str
    unordered: frozenset  # (line, line) access pairs seen unordered at least once
    ordered: frozenset  # (line, line) access pairs seen, and ordered every time
    races: frozenset  # (line, line) race pairs


@dataclass(frozen=True)
class Shape:
    runs: tuple[RunShape, ...]
    findings: frozenset  # (kind, lines) of the static rules' errors and warnings


def check_claims(analysis, result) -> None:
    """Check every `wait.redundant` finding of `result` (a `verdicts.CheckResult`) in place:
    confirmed (evidence `checked`), re-aimed at the other wait, or dropped."""
    claims = [f for f in result.findings if f.kind == Kind.WAIT_REDUNDANT.value]
    if not claims:
        return
    dyn = result.deadlocks
    if dyn is None or not dyn.simulated:
        for f in claims:
            f.evidence["checked"] = {"result": "not checked", "why": "the kernel was not simulated"}
        return
    # A claim is about the kernel, not one launch: with the user's launch (which may hang, or run
    # a loop once, where a deletion shows nothing) it is checked at the launch `check` chooses
    # on its own, where every barrier loop runs enough iterations for its rings to wrap.
    params = dyn.params if result.launch is None else _own_launch(analysis, dyn.trips)
    base = _shape(analysis, params, dyn.trips, None) if params is not None else None
    if base is None or not _concluded(base):
        for f in claims:
            f.evidence["checked"] = {"result": "not checked",
                                     "why": "the simulated launch does not run to its end, so a deletion shows nothing"}
        return
    dyn = replace(dyn, params=params)
    for k, f in enumerate(claims):
        if k >= MAX_CLAIMS:
            f.evidence["checked"] = {"result": "not checked", "why": f"only the first {MAX_CLAIMS} claims are checked"}
            continue
        earlier, later = f.lines[0], f.lines[-1]
        try:
            named = _try(analysis, dyn, base, later)
            if named is None:
                _confirm(f, later)
                continue
            other = _try(analysis, dyn, base, earlier) if earlier != later else named
        except NotChecked as exc:
            f.evidence["checked"] = {"result": "not checked", "why": str(exc)}
            continue
        if other is None:
            _reaim(f, earlier, later, named)
        else:
            result.findings.remove(f)  # neither wait can go: the claim was wrong


class NotChecked(Exception):
    """The copy without the op could not be built or simulated: the claim stays, unchecked."""


def _try(analysis, dyn, base: Shape, line: int) -> str | None:
    """None when deleting the op at `line` changes nothing; else what it changes, in words."""
    copy = _without_line(analysis, line)
    shape = _shape(copy, dyn.params, dyn.trips, line) if copy is not None else None
    if shape is None:
        raise NotChecked(f"a copy without line {line} could not be {'built' if copy is None else 'simulated'}")
    return _difference(base, shape)


def _concluded(shape: Shape) -> bool:
    return all(r.outcome == "ran" for r in shape.runs)


def _said(outcome: str) -> str:
    return "without blocking" if outcome == "ran" else outcome


def _ran(outcome: str) -> str:
    """`completed` and `covered` both ran without blocking (one wait fewer can move the step at
    which every loop reached its trips: the same verdict)."""
    return "ran" if outcome in ("completed", "covered") else outcome


def _own_launch(analysis, trips: int):
    """The launch `check` chooses without the user's values (`schedule.choose_params`: every
    barrier loop runs `trips` times, so rings wrap), moved to the launches the kernel admits."""
    from .analyses.launch.input_points import admissible, model_of
    from .analyses.sim.schedule import choose_params
    from .analyses.sim.state import Params

    model = model_of(analysis)
    if model is None or analysis.sel.function is None:
        return None
    return choose_params(analysis.sel.function, Params(max_steps=60_000), min_trips=trips,
                         adjust=lambda p: admissible(model, p))


def _confirm(f: Finding, line: int) -> None:
    f.message += (f" Checked: a copy without the wait at line {line} runs the same in every schedule (no access "
                  "ordering lost, no new finding).")
    f.suggestion = f"Drop the wait at line {line} (checked in a copy: nothing changes)."
    f.evidence["redundant_line"] = line
    f.evidence["checked"] = {"result": "confirmed", "deleted": line}


def _reaim(f: Finding, earlier: int, later: int, why_needed: str) -> None:
    """The shape rule named `later`; the simulator says `earlier` is the redundant one."""
    f.message = (f"The wait at line {earlier} on {f.barrier or 'the same slot'} is implied by the wait at line {later} "
                 "(same partition, same slot, no arrive between): a copy without it runs the same in every schedule "
                 f"(checked). The wait at line {later} is needed: without it {why_needed}.")
    f.suggestion = f"Drop the wait at line {earlier} (checked in a copy: nothing changes); keep line {later}."
    f.evidence["redundant_line"] = earlier
    f.evidence["checked"] = {"result": "re-aimed", "deleted": earlier, "needed": later, "without_needed": why_needed}


def _difference(base: Shape, copy: Shape) -> str | None:
    # Orderings over all schedules together: a pair some schedule of the original already saw
    # unordered was never the deleted wait's to give (a schedule shifted by one step fewer can
    # meet it elsewhere); a pair only one side reached says nothing.
    ordered = frozenset().union(*(b.ordered for b in base.runs))
    unordered = frozenset().union(*(b.unordered for b in base.runs))
    for b, c in zip(base.runs, copy.runs):
        if b.outcome != c.outcome:
            return f"the {b.policy} schedule ends {_said(c.outcome)} instead of {_said(b.outcome)}"
        lost = sorted((c.unordered & ordered) - unordered)
        if lost:
            a, z = lost[0]
            return f"the accesses at lines {a} and {z} are no longer ordered ({b.policy} schedule)"
        new = sorted(c.races - b.races)
        if new:
            return f"the accesses at lines {new[0][0]} and {new[0][1]} race ({b.policy} schedule)"
    new_findings = sorted(copy.findings - base.findings)
    if new_findings:
        kind, lines = new_findings[0]
        return f"{kind} at lines {', '.join(map(str, lines))}"
    return None


def _shape(analysis, params, trips: int, deleted: int | None) -> Shape | None:
    """The static rules' errors and warnings, and every `check` schedule at `params` with access
    ordering recorded."""
    from .analyses.rules.registry import run_rules
    from .analyses.sim.schedule import POLICIES, run

    fn = analysis.sel.function
    if fn is None:
        return None
    tracked = replace(params, track_races=True, track_order=True)
    runs = []
    for policy in POLICIES:
        r = run(fn, tracked, policy, stop_trips=trips)
        hb = r.machine.hb if r.machine is not None else None
        order = hb.order if hb is not None and hb.order is not None else {}
        runs.append(RunShape(policy, _ran(r.outcome), frozenset(k for k, ok in order.items() if not ok),
                             frozenset(k for k, ok in order.items() if ok),
                             frozenset((x.first.op.line, x.second.op.line) for x in (hb.races if hb else []))))
    static = frozenset((f.kind, tuple(ln for ln in f.lines if ln != deleted)) for f in run_rules(analysis)
                       if f.severity.value != "info" and f.kind != Kind.WAIT_REDUNDANT.value)
    return Shape(tuple(runs), static)


def _without_line(analysis, line: int):
    """An Analysis of the same function in a copy of the unit whose `line` is blank (every other
    line keeps its number). None when that line is not one op the copy can lose."""
    from .analysis import Analysis
    from .errors import InputError
    from .inputs import load_unit
    from .session import Selection

    sel = analysis.sel
    unit = sel.unit
    lines = unit.text().split(b"\n")
    at = line - unit.start_line
    if not 0 <= at < len(lines) or b"ttng.wait_barrier" not in lines[at] or lines[at].rstrip().endswith(b"{"):
        return None
    lines[at] = b""
    text = b"\n".join(lines)
    copy = replace(unit, _text=text, bytes=len(text))
    try:
        ir = load_unit(copy)
    except InputError:
        return None
    name = sel.function_name
    fn = ir.function(name) if name else None
    if fn is None:
        return None
    return Analysis(Selection(sel.inputs, copy, ir, fn))
