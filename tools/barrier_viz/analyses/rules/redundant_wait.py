"""`wait.redundant`: a second wait on the same slot that can never block.

Same parity as an earlier wait in the iteration (the phase it needs already completed), or the
inverted parity the previous flip already serves (the correct "redundant acquire" pattern),
where the first wait runs whenever the second does: harmless over-synchronization (info).
"""

from __future__ import annotations

from ...facts.barriers import BarrierUse, Role
from ...facts.values import OpResult
from ..model.findings import Finding, Kind, Severity, finding
from ..model.kinds import KindDoc, Rule
from ..program.operands import barrier_label, slot_key
from ..program.order import preceding_in_iteration
from ..program.predicates import constant_bool


def redundant_waits(analysis) -> list[Finding]:
    out: list[Finding] = []
    for b in analysis.barriers.barriers:
        waits = [u for u in b.uses if u.role is Role.WAIT and u.phase is not None]
        arrive_ops = {id(u.op) for u in b.uses if u.role not in (Role.WAIT, Role.INIT, Role.INVAL)}
        for later in waits:
            for prev in preceding_in_iteration(later.op):
                if id(prev) in arrive_ops:
                    break
                earlier = next((w for w in waits if w.op is prev), None)
                if earlier is None or slot_key(earlier) != slot_key(later) or earlier.partition != later.partition:
                    continue
                relation = _phase_relation(earlier, later, analysis)
                if relation is None or not _runs_whenever(analysis, earlier, later):
                    continue
                out.append(finding(
                    Kind.WAIT_REDUNDANT, Severity.info,
                    f"The wait at line {later.line} repeats the wait at line {earlier.line} on {barrier_label(b, later)} "
                    + ("with the same parity: the phase it needs has already completed, so it passes at once."
                       if relation == "same" else
                       "with the opposite parity: it is served by the previous flip, the correct 'redundant acquire' pattern."),
                    lines=[earlier.line, later.line], partitions=[later.partition] if later.partition else [],
                    barrier=barrier_label(b, later), evidence={"relation": relation}))
                break
    return out


def _runs_whenever(analysis, earlier: BarrierUse, later: BarrierUse) -> bool:
    """Does `earlier` run in every iteration in which `later` runs? Unpredicated (or constant
    true), or on the very same predicate value. A wait on a first-iteration flag, a pid or a
    `k_tiles > 0` guard does not: a later unpredicated wait is then the only one there."""
    if earlier.predicate is None or earlier.predicate == later.predicate:
        return True
    return constant_bool(analysis, earlier.predicate, earlier.op) is True


def _phase_relation(a: BarrierUse, b: BarrierUse, analysis) -> str | None:
    if a.phase == b.phase:
        return "same"
    for x, y in ((a, b), (b, a)):
        defn = analysis.values.lookup(y.phase, y.op)
        if isinstance(defn, OpResult) and defn.op.name == "arith.xori" and x.phase in defn.op.operands:
            return "inverted"
    return None


RULE = Rule("redundant_wait", __name__, redundant_waits, docs=(KindDoc(
    Kind.WAIT_REDUNDANT,
    "A second wait on the same barrier slot that can never block.",
    "Finds a wait that repeats an earlier wait of the same partition on the same slot in the same "
    "iteration, with no arrive on the barrier between them: with the same parity, or with the "
    "inverted parity the previous flip already serves.",
    "It is not a bug: the phase it needs has already completed, so it passes at once. It costs a "
    "poll and hides which wait actually orders the data; the inverted form is the correct "
    "\"redundant acquire\" pattern.",
    "ttng.wait_barrier %full, %ph\n"
    "ttng.wait_barrier %full, %ph              // passes at once",
    "Drop the second wait.",
    (Severity.info,), "Always info (harmless)."),))
