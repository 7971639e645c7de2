"""`check`: every verdict for one selection — static rules plus deadlocks found by running it."""

from __future__ import annotations

from dataclasses import dataclass

from .coverage import coverage_findings
from .deadlock import DeadlockAnalysis, analyse_deadlocks
from .findings import Finding, Kind
from .descriptor_reuse import tensormap_rewrites
from .release_order import use_after_release
from .static_checks import static_findings


@dataclass
class CheckResult:
    findings: list[Finding]
    deadlocks: DeadlockAnalysis | None

    @property
    def has_errors(self) -> bool:
        return any(f.severity.value == "error" for f in self.findings)


def check(analysis, simulate: bool = True) -> CheckResult:
    found = static_findings(analysis) + coverage_findings(analysis) + use_after_release(analysis)
    found += tensormap_rewrites(analysis)
    dyn: DeadlockAnalysis | None = None
    fn = analysis.sel.function
    if simulate and fn is not None:
        dyn = analyse_deadlocks(fn, analysis.arrivers, gated=analysis.arrival_gated)
        for f in dyn.findings:
            twin = next((s for s in found if _same_cause(s, f)), None)
            if twin is not None:
                twin.evidence["witness"] = f.evidence
                continue
            found.append(f)
    found.sort(key=Finding.sort_key)
    return CheckResult(found, dyn)


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
