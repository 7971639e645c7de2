"""`check`: every verdict for one selection — static rules plus deadlocks found by running it."""

from __future__ import annotations

from dataclasses import dataclass

from .coverage import coverage_findings
from .deadlock import DeadlockAnalysis, analyse_deadlocks, classify_run
from .findings import Finding, Kind, Severity
from .input_points import (InputSearch, Launch, PointResult, admissible, apply_launch, explore_inputs, model_of,
                           name_input, simulate_launch)
from .static_checks import static_findings


@dataclass
class CheckResult:
    findings: list[Finding]
    deadlocks: DeadlockAnalysis | None
    inputs: InputSearch | None = None  # the boundary launches simulated (input_points)
    launch: PointResult | None = None  # the user's own launch (check --args/--pid/--grid)

    @property
    def has_errors(self) -> bool:
        return any(f.severity.value == "error" for f in self.findings)


def check(analysis, simulate: bool = True, launch: Launch | None = None, input_points: bool = True) -> CheckResult:
    found = static_findings(analysis) + coverage_findings(analysis)
    dyn: DeadlockAnalysis | None = None
    inputs: InputSearch | None = None
    user: PointResult | None = None
    fn = analysis.sel.function
    if simulate and fn is not None:
        model = model_of(analysis)
        adjust = None
        if model is not None:
            adjust = (lambda p: apply_launch(model, admissible(model, p), launch)) if launch is not None else \
                (lambda p: admissible(model, p))
        dyn = analyse_deadlocks(fn, analysis.arrivers, gated=analysis.arrival_gated, adjust=adjust)
        for f in dyn.findings:
            twin = next((s for s in found if _same_cause(s, f)), None)
            if twin is not None:
                twin.evidence["witness"] = f.evidence
                continue
            found.append(f)
        if launch is not None and dyn.runs:
            user = simulate_launch(analysis, dyn.params, dyn.witness or dyn.runs[0],
                                   {a.position: a.name for a in (model_of(analysis).args if model_of(analysis) else [])})
        if input_points and dyn.simulated:
            inputs = explore_inputs(analysis, dyn.params, sum(r.steps for r in dyn.runs), fixed=_fixed(analysis, launch),
                                    classify=lambda r: classify_run(r, analysis.arrivers, analysis.arrival_gated))
            # A kernel that already hangs at the main launch is reported once, by that hang: the
            # points then only list where else it hangs (their outcomes), never more verdicts.
            for point in inputs.points if dyn.witness is None else ():
                for f in point.findings:
                    if not any(s.kind == f.kind and set(s.lines) == set(f.lines) for s in found):
                        found.append(f)
            if dyn.witness is not None and inputs.base_invalid:
                # The chosen launch breaks an assumption the IR states: no launch hangs that way.
                for f in dyn.findings:
                    f.severity = Severity.info
                    f.message = (f"Not a verdict: the simulated launch is one the IR excludes ({inputs.base_invalid}). "
                                 + f.message)
            elif dyn.witness is not None and inputs.base_cause() is not None:
                # The main launch hangs on a boundary that a completing launch is not on: the
                # hang is the input's; say which.
                cause = inputs.base_cause()
                for f in dyn.findings:
                    name_input(f, cause)
    found.sort(key=Finding.sort_key)
    return CheckResult(found, dyn, inputs, user)


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


def _same_cause(static: Finding, dynamic: Finding) -> bool:
    """A deadlock witness whose cause a static finding already names (a missing acquire, or
    expected bytes that never land) is attached to that finding instead of repeated."""
    if not set(static.lines) & set(dynamic.lines):
        return False
    if static.kind == dynamic.kind == Kind.RACE_MISSING_ACQUIRE.value:
        return True
    cause = str(dynamic.evidence.get("cause", ""))
    return (static.kind == Kind.EXPECT_BYTES_MISMATCH.value and dynamic.kind == Kind.DEADLOCK_PARITY_CADENCE.value
            and ("transaction byte" in cause or "TMA bytes" in cause))
