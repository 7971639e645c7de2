"""`check`: every verdict for one selection — static rules plus deadlocks found by running it.

`check` runs the registered rules (`rules/registry.py`, in their written order), then the
simulation, then the post-passes that join the two, each a named function below, in this
order: a run's deadlock attached to the static finding naming its cause (`_attach_witnesses`),
a run's races folded into static twins or added (`_add_run_races`), the input points' hangs
(`_add_point_findings`), a launch the IR excludes demoting the run's verdicts
(`_demote_excluded_launch`) or the input that decides the hang named (`name_input`), the
stated limits (`unjudged_findings`), verdicts on unsound values turned into notes
(`demote_unresolved`), and the sort.
"""

from __future__ import annotations

from dataclasses import dataclass

from .launch.contract import Assumption, broken_by, contract_of, given_names
from .launch.trip_mismatch import refine as name_trip_mismatch
from .launch.input_points import (InputSearch, Launch, PointResult, admissible, apply_launch, base_point, explore_inputs,
                                  model_of, name_input, simulate_launch)
from .launch.memory_points import memory_points
from .model.findings import Finding, Kind, Severity
from .model.judgement import unjudged_findings, verdict
from .rules.registry import run_rules
from .sim.deadlock import DeadlockAnalysis, analyse_deadlocks, classify_run
from .sim.explore import tmem_not_judged


@dataclass
class CheckResult:
    findings: list[Finding]
    deadlocks: DeadlockAnalysis | None
    inputs: InputSearch | None = None  # the boundary launches simulated (input_points)
    launch: PointResult | None = None  # the user's own launch (check --args/--pid/--grid)
    contract: list[Assumption] | None = None  # what the launches simulated assume (launch.contract)

    @property
    def has_errors(self) -> bool:
        return any(f.severity.value == "error" for f in self.findings)

    @property
    def verdict(self) -> tuple[str, list[str]]:
        """clean | findings | not judged, with the reasons when not judged (analyses/model/judgement.py)."""
        return verdict(self.findings)


def check(analysis, simulate: bool = True, budget=None, launch: Launch | None = None,
          input_points: bool = True) -> CheckResult:
    """Static rules, then (with `simulate`) deadlock witnesses within one step `budget`
    (`analyses.sim.budget.Budget`, default interpreter steps from BARRIER_VIZ_SIM_STEPS), then the input
    points (`analyses.launch.input_points`) and the user's own `launch` (`check --args/--pid`)."""
    found = run_rules(analysis)
    dyn: DeadlockAnalysis | None = None
    inputs: InputSearch | None = None
    user: PointResult | None = None
    run_races_found: list[Finding] = []  # races of the runs (a launch the IR excludes demotes them too)
    fn = analysis.sel.function
    if simulate and fn is not None:
        model = model_of(analysis)
        adjust = None
        if model is not None:
            adjust = (lambda p: apply_launch(model, admissible(model, p), launch)) if launch is not None else \
                (lambda p: admissible(model, p))
        dyn = analyse_deadlocks(fn, analysis.arrivers, gated=analysis.arrival_gated, budget=budget, adjust=adjust)
        dyn.findings = name_trip_mismatch(dyn.findings, dyn.witness, analysis)
        _attach_witnesses(found, dyn.findings)
        if dyn.simulated:
            run_races_found += _add_run_races(found, tmem_not_judged(run_races(dyn), found))
            # Races between the CTAs of a cluster: only a run sees the peer's accesses. Also
            # when the kernel hangs: a read let in by a phase that completed early comes before
            # the hang it leads to (cluster_races says which runs' races stand).
            from .cluster.races import cluster_races
            from .sim.schedule import default_trips

            run_races_found += _add_run_races(found, cluster_races(
                fn, dyn.params, default_trips(fn), dyn.budget.deadline if dyn.budget else None, adjust))
        if launch is not None and dyn.runs:
            user = simulate_launch(analysis, dyn.params, dyn.witness or dyn.runs[0],
                                   {a.position: a.name for a in (model_of(analysis).args if model_of(analysis) else [])},
                                   given_names(launch) if launch.args else None)
            if model is not None:
                user.outside = broken_by(model, base_point(model, dyn.params), given_names(launch))
        if input_points and dyn.simulated:
            inputs = explore_inputs(analysis, dyn.params, sum(r.steps for r in dyn.runs), fixed=_fixed(analysis, launch),
                                    classify=lambda r: _classify_point(r, analysis),
                                    deadline=dyn.budget.deadline if dyn.budget is not None else None)
            # Loaded values are inputs too: launches with an empty segment (analyses.program.loaded).
            inputs.points += memory_points(analysis, dyn.params, dyn.runs[0], sum(r.steps for r in dyn.runs),
                                           classify=lambda r: _classify_point(r, analysis),
                                           deadline=dyn.budget.deadline if dyn.budget is not None else None,
                                           fixed=bool(launch is not None and launch.loads))
            if dyn.witness is None:
                _add_point_findings(found, inputs)
            elif user is not None and user.outside:
                pass  # the user's launch breaks an inferred assumption: said below, not an exclusion
            elif inputs.base_invalid:
                _demote_excluded_launch(dyn.findings + run_races_found, inputs.base_invalid)
            elif inputs.base_cause() is not None:
                # The main launch hangs on a boundary that a completing launch is not on: the
                # hang is the input's; say which.
                cause = inputs.base_cause()
                for f in dyn.findings:
                    name_input(f, cause)
    if user is not None and user.outside:
        outside_contract([f for f in found if f.severity is not Severity.info and f.kind.startswith(("deadlock.", "race."))],
                          user.outside)
    if dyn is not None and dyn.simulated:
        _attach_hang_sets(found, analysis, dyn, inputs)
    found += unjudged_findings(dyn, inputs)
    found = demote_unresolved(found, analysis)
    found.sort(key=Finding.sort_key)
    contract = contract_of(model_of(analysis)) if simulate and fn is not None else None
    return CheckResult(found, dyn, inputs, user, contract)


def _attach_hang_sets(found: list[Finding], analysis, dyn: DeadlockAnalysis, inputs: InputSearch | None) -> None:
    """The set of input values at which each trip-count mismatch hangs (`launch/hang_set.py`)."""
    from .launch.hang_set import attach

    model = model_of(analysis)
    main = base_point(model, dyn.params) if model is not None else None
    attach(found, analysis, main, inputs.points if inputs is not None else [],
           main_hung=(dyn.witness is not None) if dyn.runs and dyn.runs[0].outcome in ("completed", "covered", "deadlock") else None)


def _classify_point(result, analysis) -> list[Finding]:
    """Findings of an input point's deadlocked run, the cause named (a trip-count mismatch)."""
    return name_trip_mismatch(classify_run(result, analysis.arrivers, analysis.arrival_gated), result, analysis)


# -- post-passes: where the simulation's findings meet the rules' (in the order `check` runs them)
def _attach_witnesses(found: list[Finding], deadlocks: list[Finding]) -> None:
    """A run's deadlock whose cause a static finding already names (`_same_cause`) is attached
    to that finding as its witness; any other is added."""
    for f in deadlocks:
        twin = next((s for s in found if _same_cause(s, f)), None)
        if twin is not None:
            _attach(twin, f)
            continue
        found.append(f)


def _attach(twin: Finding, f: Finding) -> None:
    """`f` (a run's hang) as the witness of the static finding that names its cause."""
    twin.evidence["witness"] = f.evidence
    if twin.kind in _TRIP_FREE_HANGS:
        twin.message += (f" A simulated schedule reached this hang ({f.kind} at line(s) "
                         f"{', '.join(map(str, sorted(set(f.lines))))}): its witness is this cause's.")
    twin.settle_outcome()


def _add_run_races(found: list[Finding], races) -> list[Finding]:
    """Add each of a run's `races` that no finding of `found` already reports (`_reported`,
    which upgrades a weaker twin); returns the ones added."""
    added: list[Finding] = []
    for f in races:
        if not _reported(found, f):
            found.append(f)
            added.append(f)
    return added


def _add_point_findings(found: list[Finding], inputs: InputSearch) -> None:
    """The hangs of the input points, when the main launch completes. A kernel that already
    hangs at the main launch is reported once, by that hang: the points then only list where
    else it hangs (their outcomes), never more verdicts."""
    for point in inputs.points:
        for f in point.findings:
            twin = next((s for s in found if s.kind in _TRIP_FREE_HANGS and _same_cause(s, f)), None)
            if twin is not None and "witness" not in twin.evidence:
                _attach(twin, f)
            elif twin is None and not any(s.kind == f.kind and set(s.lines) == set(f.lines) for s in found):
                found.append(f)


def _demote_excluded_launch(findings: list[Finding], why: str) -> None:
    """The chosen launch breaks an assumption the IR states: no launch hangs that way (nor races
    on the way to that hang). The run's verdicts become infos that say so."""
    for f in findings:
        f.severity = Severity.info
        f.message = f"Not a verdict: the simulated launch is one the IR excludes ({why}). " + f.message
        f.evidence["not_judged"] = f"the simulated launch is one the IR excludes ({why})"
        f.settle_outcome()


def outside_contract(findings: list[Finding], broken: list[Assumption]) -> None:
    """The user's launch breaks an assumption the tool inferred about the launch (not one the IR
    states): a hang or race there is real at that launch, but the kernel may never be launched
    so. Each becomes a warning that says so ("hangs if the contract is broken"), and the verdict
    is `not judged` with that reason (`model.judgement.verdict`): never a clean pass, never a
    plain bug."""
    what = "; ".join(a.statement for a in broken)
    for f in findings:
        hang = f.kind.startswith("deadlock.")
        f.severity = Severity.warning
        f.message = (f"{'Hangs' if hang else 'Races'} if the launch contract is broken: your launch breaks the "
                     f"inferred assumption{'s' if len(broken) > 1 else ''} {what}. " + f.message)
        f.evidence["outside_contract"] = [a.as_dict() for a in broken]


def run_races(dyn: DeadlockAnalysis) -> list[Finding]:
    """The happens-before races seen on `check`'s own schedules (every one carries vector
    clocks: `deadlock.analyse_deadlocks`), as the findings `explore` makes of them
    (`explore.race_findings`). A run's races count when its end is a verdict or a bound
    (`cluster_races.races_stand`: not an unmodelled op, not a hang that is a stated limit); in
    Triton's CGA form a CLC response reused across CTA groups is a warning
    (`cluster_races.cga_pace_findings`), and so is a race on TMEM inside one CTA of a cluster
    (`cluster_races.approximate_races`: placed by column only approximately), as in `explore`."""
    from .cluster.races import approximate_races, cga_pace_findings, pace_excuse, races_stand
    from .sim.explore import not_judged, race_findings, races_of

    standing = [r for r in dyn.runs if r.machine is not None and r.machine.hb is not None and races_stand(r)]
    found = race_findings(races_of(standing))
    if found and any(r.machine.cga is not None for r in standing):
        found = cga_pace_findings(standing, found)
    approximate: dict[tuple[int, int], str] = {}
    paced: dict[tuple[int, int], str] = {}
    judged: set[tuple[int, int]] = set()
    for r in standing:
        approximate.update(approximate_races(r))
        pace = pace_excuse(r)  # a schedule only the CTA groups' pace forbids: its races are no verdict
        pairs = {(race.first.op.line, race.second.op.line) for race in r.machine.hb.races}
        if pace:
            paced.update({p: pace for p in pairs})
        else:
            judged |= pairs
    return not_judged(found, {**{p: why for p, why in paced.items() if p not in judged}, **approximate})


# An access that may land after its CTA exited is its own hazard, not another name for an
# unordered pair on the same lines: it is never folded into a twin of another kind.
_EXIT = Kind.RACE_REMOTE_AFTER_EXIT.value


def _reported(found: list[Finding], race: Finding) -> bool:
    """Is `race` (a pair of lines from a run) already a race finding of `found` (a static rule's,
    or an earlier run's) on the same lines? A twin that is not an error (a static rule's "ordered
    only incidentally" warning) becomes one, with the run's evidence: the run saw the accesses
    unordered, at the severity the run's race has."""
    twins = [s for s in found if s.kind.startswith("race.") and set(race.lines) <= set(s.lines)
             and (s.kind == race.kind or _EXIT not in (s.kind, race.kind))]
    for twin in twins:
        if race.severity is Severity.error and twin.severity is not Severity.error \
                and not twin.evidence.get("not_judged"):
            twin.severity = Severity.error
            twin.message += f" A simulated schedule shows it: {race.message}"
            twin.evidence["run_race"] = race.evidence
            twin.settle_outcome()
    return bool(twins)


def _fixed(analysis, launch: Launch | None) -> set[tuple[str, int]]:
    """Inputs the user fixed: the search varies only the others."""
    if launch is None:
        return set()
    model = model_of(analysis)
    by_name = {a.name: a.position for a in (model.args if model else [])}
    out = {("arg", by_name[n]) for n in launch.args if n in by_name}
    if launch.pids is not None:
        out |= {("pid", a) for a in range(3)}
    if launch.grid is not None:
        out |= {("nprog", a) for a in range(3)}
    return out


def demote_unresolved(findings: list[Finding], analysis) -> list[Finding]:
    """A verdict that involves an operation using an unsoundly defined value (undefined, used
    before its definition, defined twice) says nothing about the kernel: the analysis resolved
    that value to nothing, or to the wrong definition. Each such finding becomes a
    `limit.unresolved_value` note (info) that names the problem and keeps what it would have said."""
    tainted = analysis.unresolved_lines
    if not tainted:
        return findings
    from ..ir.vocab import AREF_OPS, ASYNC_ARRIVE_OPS, MBARRIER_OPS, NAMED_BARRIER_OPS, NVWS_TOKEN_OPS
    from .model.findings import Severity, finding

    sync = MBARRIER_OPS | NAMED_BARRIER_OPS | ASYNC_ARRIVE_OPS | NVWS_TOKEN_OPS | AREF_OPS
    # A synchronising op on such a value breaks the barrier program as a whole: every ordering
    # (and so every deadlock or race) the simulation derives may pass through it.
    whole = any(op.line in tainted and op.name in sync for op in analysis.ops)

    problems = [{"kind": p.kind, "value": p.name, "line": p.line, "column": p.column, "message": p.message}
                for p in analysis.ssa_problems]
    out: list[Finding] = []
    for f in findings:
        if f.severity is Severity.info or not (whole or set(f.lines) & tainted):
            out.append(f)
            continue
        first = problems[0]
        out.append(finding(
            Kind.LIMIT_UNRESOLVED_VALUE, Severity.info,
            f"not judged: the {f.kind} {f.severity.value} at lines {', '.join(map(str, f.lines))} depends on a value "
            f"the IR does not define soundly (line {first['line']}: {first['message']}"
            + (f"; and {len(problems) - 1} more" if len(problems) > 1 else "") + ").",
            lines=f.lines, partitions=f.partitions, barrier=f.barrier, buffer_id=f.buffer_id,
            evidence={"ssa_problems": problems[:10],
                      "would_report": {"kind": f.kind, "severity": f.severity.value, "message": f.message}},
            suggestion="Fix the IR (every value defined once, before its uses) and rerun."))
    return out


# Static rules that name a hang's cause whatever the trip counts: a run's hang on the same
# barrier, blocked at a line the rule names, is that cause seen in a schedule (one finding, not two).
_TRIP_FREE_HANGS = frozenset({Kind.PHASE_COUNTER_RESTART.value, Kind.DEADLOCK_PREDICATE_MISMATCH.value})


def _same_cause(static: Finding, dynamic: Finding) -> bool:
    """A deadlock witness whose cause a static finding already names (a missing acquire,
    expected bytes that never land, a ring counter restarted on one side, an arrive skipped
    under a condition its wait does not share) is attached to that finding instead of repeated."""
    if not set(static.lines) & set(dynamic.lines):
        return False
    if static.kind == dynamic.kind == Kind.RACE_MISSING_ACQUIRE.value:
        return True
    if static.kind in _TRIP_FREE_HANGS and dynamic.kind.startswith("deadlock.") and static.severity is Severity.error \
            and ((dynamic.barrier or "").split("[")[0] in static.evidence.get("barriers", [static.barrier])
                 or any(b.get("line") in static.lines for b in dynamic.evidence.get("blocked", []))):
        # The run blocks on the ring (or hand-off) the rule names, or some partition of it blocks
        # at a wait the rule names (the run may name another blocked wait first: the peer that
        # then waits behind it): the rule's cause is the specific one, the run's hang its witness.
        return True
    cause = str(dynamic.evidence.get("cause", ""))
    return (static.kind == Kind.EXPECT_BYTES_MISMATCH.value and dynamic.kind == Kind.DEADLOCK_PARITY_CADENCE.value
            and ("transaction byte" in cause or "TMA bytes" in cause))
