"""`check`: every verdict for one selection — static rules plus deadlocks found by running it."""

from __future__ import annotations

from dataclasses import dataclass

from .coverage import coverage_findings
from .deadlock import DeadlockAnalysis, analyse_deadlocks
from .explanations import explanation_findings
from .findings import Finding, Kind
from .static_checks import static_findings


@dataclass
class CheckResult:
    findings: list[Finding]
    deadlocks: DeadlockAnalysis | None

    @property
    def has_errors(self) -> bool:
        return any(f.severity.value == "error" for f in self.findings)


def check(analysis, simulate: bool = True, budget=None) -> CheckResult:
    """Static rules, then (with `simulate`) deadlock witnesses within one wall-clock `budget`
    (`analyses.budget.Budget`, default seconds from BARRIER_VIZ_SIM_BUDGET)."""
    found = static_findings(analysis) + coverage_findings(analysis)
    found += explanation_findings(analysis, found)
    dyn: DeadlockAnalysis | None = None
    fn = analysis.sel.function
    if simulate and fn is not None:
        dyn = analyse_deadlocks(fn, analysis.arrivers, gated=analysis.arrival_gated, budget=budget)
        for f in dyn.findings:
            twin = next((s for s in found if _same_cause(s, f)), None)
            if twin is not None:
                twin.evidence["witness"] = f.evidence
                twin.settle_outcome()
                continue
            found.append(f)
    found = demote_unresolved(found, analysis)
    found.sort(key=Finding.sort_key)
    return CheckResult(found, dyn)


def demote_unresolved(findings: list[Finding], analysis) -> list[Finding]:
    """A verdict that involves an operation using an unsoundly defined value (undefined, used
    before its definition, defined twice) says nothing about the kernel: the analysis resolved
    that value to nothing, or to the wrong definition. Each such finding becomes a
    `limit.unresolved_value` note (info) that names the problem and keeps what it would have said."""
    tainted = analysis.unresolved_lines
    if not tainted:
        return findings
    from ..ir.vocab import AREF_OPS, ASYNC_ARRIVE_OPS, MBARRIER_OPS, NAMED_BARRIER_OPS, NVWS_TOKEN_OPS
    from .findings import Severity, finding

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
