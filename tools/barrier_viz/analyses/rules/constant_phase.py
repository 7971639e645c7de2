"""`phase.constant_in_loop`: a wait inside a loop whose parity never changes there.

A barrier reused every iteration completes one phase per use; a wait whose parity operand is
the same in every iteration passes on every phase after the first (no protection) or never
(a hang) (ir-semantics §7.3). The loop is the one that repeats the wait with its predicate
evaluated per iteration (`program/predicates.py`): a wait on a first-iteration flag is repeated
by the enclosing loop only. Not reported: a barrier re-initialised in that loop (its phase
restarts), and a turn token passed between two partitions with opposite constant parities.
"""

from __future__ import annotations

from ...facts.barriers import Barrier, BarrierUse, Role, constant_value
from ...facts.values import OpResult
from ...ir.model import Operation
from ..model.findings import Finding, Kind, Severity, finding
from ..model.kinds import KindDoc, Rule
from ..program.operands import barrier_label, slot_key
from ..program.order import following_in_iteration, innermost_loop, varies_in
from ..program.predicates import FIRST, NEVER, iteration_runs


def constant_phase(analysis) -> list[Finding]:
    out: list[Finding] = []
    for b in analysis.barriers.barriers:
        if b.alloc is None:
            continue  # a barrier passed in as an argument: its initialisation is the caller's, unseen
        inits = [u for u in b.uses if u.role is Role.INIT]
        for u in b.uses:
            if u.role not in (Role.WAIT, Role.ACQUIRE) or u.phase is None:
                continue
            loop = _loop_it_repeats_in(analysis, u)
            if loop is None:
                continue
            if any(loop in i.op.ancestors() for i in inits) or (b.alloc is not None and loop in b.alloc.ancestors()):
                continue  # re-initialised every iteration: its phase restarts, a constant is right
            if varies_in(u.phase, u.op, loop, analysis):
                continue
            if _turn_token(b, u, analysis):
                continue
            out.append(finding(
                Kind.PHASE_CONSTANT_IN_LOOP, Severity.error,
                f"The wait at line {u.line} polls a parity that never changes inside the loop at line {loop.line}, "
                f"on {barrier_label(b, u)}, which is reused every iteration: after the first completion it either "
                "always passes (no protection) or never passes (hang).",
                lines=[u.line, loop.line], partitions=[u.partition] if u.partition else [], barrier=barrier_label(b, u),
                evidence={"phase_operand": u.phase, "loop_line": loop.line},
                suggestion="Derive the phase from the loop's use counter: ((n / depth) & 1), inverted for the producer's acquire."))
    return out


def _loop_it_repeats_in(analysis, u: BarrierUse) -> Operation | None:
    """The innermost loop in which the op of `u` runs in more than one iteration of an entry,
    with its predicate evaluated per iteration (`predicates.py`): a wait on a first-iteration
    flag runs once per entry of its loop, like an op just before that loop, so the loop that
    repeats it is the enclosing one. None when no loop repeats it (or it never runs)."""
    loop = innermost_loop(u.op)
    while loop is not None:
        runs = iteration_runs(analysis, u.op, u.predicate, loop)
        if runs == NEVER:
            return None
        if runs != FIRST:
            return loop
        loop = innermost_loop(loop)
    return None


def _constant_phase(u: BarrierUse, analysis) -> int | None:
    defn = analysis.values.lookup(u.phase, u.op) if u.phase else None
    return constant_value(defn.op) if isinstance(defn, OpResult) else None


def _turn_token(b: Barrier, u: BarrierUse, analysis) -> bool:
    """Is the slot `u` waits on a turn token passed between two partitions (the hand-written
    ping-pong of two consumer warpgroups, TLX `pingpong_mma_bar`)? Count 1; each of exactly two
    partitions waits on it with its own constant parity, the two parities opposite, and arrives
    on it after that wait in the same iteration. Every arrival flips the parity, so parity p
    means "the other side has handed over": neither side can arrive twice in a row, the
    parity never laps, and a constant parity per side is the protocol, not a lost flip."""
    inits = [i for i in b.uses if i.role is Role.INIT and slot_key(i) == slot_key(u)]
    if len(inits) != 1 or inits[0].count != 1:
        return False
    key = slot_key(u)
    same = [x for x in b.uses if slot_key(x) == key]
    waits = [x for x in same if x.role is Role.WAIT]
    arrives = [x for x in same if x.role is Role.ARRIVE]
    if len(arrives) != len(same) - len(waits) - 1:  # only waits, plain arrives and the init
        return False
    sides = {x.partition for x in waits}
    if len(sides) != 2 or None in sides or {x.partition for x in arrives} != sides:
        return False
    parity: dict[str, set] = {}
    for w in waits:
        parity.setdefault(w.partition, set()).add(_constant_phase(w, analysis))
        loop = innermost_loop(w.op)
        if loop is None or varies_in(w.phase, w.op, loop, analysis):
            return False
        mine = {id(a.op) for a in arrives if a.partition == w.partition}
        if not any(id(o) in mine for o in following_in_iteration(w.op)):
            return False
    values = [next(iter(v)) for v in parity.values() if len(v) == 1]
    return len(values) == 2 and None not in values and values[0] != values[1]


RULE = Rule("constant_phase", __name__, constant_phase, docs=(KindDoc(
    Kind.PHASE_CONSTANT_IN_LOOP,
    "A wait inside a loop polls a parity that never changes there.",
    "Finds a `wait_barrier` (or acquire) in a loop whose phase operand is the same in every "
    "iteration, on a barrier that is reused every iteration (not re-initialised in that loop).",
    "Each use of the barrier completes one phase and flips the parity. A constant parity matches "
    "only every other phase: after the first completion the wait either always passes (no "
    "protection: a read of a slot not yet filled) or never passes (a hang), depending on which "
    "partition runs ahead.",
    "scf.for %i = %c0 to %n step %c1 {\n"
    "  ttng.wait_barrier %full, %c0_i32        // parity 0 in every iteration\n"
    "  ...\n"
    "}",
    "Use the loop's use counter: `%ph = ((%i / depth) & 1)`, inverted for the producer's acquire.",
    (Severity.error,), "Always an error (outcome: hang or wrong results, depending on timing)."),))
