"""`deadlock.predicate_mismatch`: an arrive runs under a condition its partner wait does not; and
the reverse, `race.predicated_wait`: a wait runs under a condition its partner arrive does not.

What it does
    For each plain `arrive_barrier` inside a loop that is predicated (its own predicate
    operand, or an `scf.if` between it and its loop) on a condition that is neither constant
    nor a first-iteration flag (`analyses.program.predicates`: it `varies` per iteration, or is
    the same in every iteration of an entry but not known to be true), it looks for a wait on
    the same barrier in another partition, at the same loop nesting depth, that runs in every
    iteration of its loop (no predicate, no `scf.if`). When the barrier has no other arrival
    that could stand in for the skipped one (another arrive on it, a TMA or tcgen05 arrival),
    the rule reports it, with the condition written as the IR computes it
    (`analyses.symbolic.source`). It needs no trip count and no simulation, so it runs when the
    simulation stopped at a limit.

    The reverse: a wait whose own predicate operand varies, on a barrier whose only arrival is
    one unconditional plain arrive in another partition at the same loop depth. When the
    predicate is false the arrive still completes its phase, so the phases stay in step (no
    hang), but the wait is skipped while what follows it in the iteration still runs: a read of
    a buffer the arriving partition writes, after the wait in the same iteration, then reads it
    with nothing ordering it after the write (`race.predicated_wait`, wrong results). When no
    such read follows (the wait only paces, or everything it guards is skipped with it) the
    rule says nothing. A wait under an `scf.if` (rather than its own predicate) skips what the
    `if` holds with it, and whether its phase counter stays in step is the simulation's to
    judge: not judged here.

Why is this bad
    In an iteration where the condition is false (an empty segment, a group with no rows) the
    arrive is skipped, but the partner still waits for the phase that arrive completes: it
    never comes, and the kernel hangs. The GPU hangs exactly on the launches where the
    condition is false once: the jagged column norm whose hand-off arrive was predicated on
    `seg_len > 0` hung on the H200 whenever a segment was empty, and completed otherwise.

Example (the reverse: the read at `local_load` runs even when `%has_work` is false)
        ttng.arrive_barrier %ready[%slot], 1                   // producer, every iteration
        ttng.wait_barrier %ready[%slot], %phase, %has_work      // consumer
        %x = ttg.local_load %buf[%slot]

Example
        // default, once per segment
        %nonempty = arith.cmpi sgt, %seg_len, %c0_i32 : i32
        ttng.arrive_barrier %res_ready[%slot], 1, %nonempty
        // partition1, once per segment, unconditionally
        ttng.wait_barrier %res_ready[%slot], %rphase, %true
"""

from __future__ import annotations

from ...facts.barriers import Role
from ...ir.model import Operation
from ...ir.vocab import LOOP_OPS
from ..model.findings import Finding, Kind, Severity, finding
from ..model.kinds import KindDoc, Rule
from ..model.outcome import HANG
from ..model.outcome import WRONG
from ..program.order import branch_of, following_in_iteration, loop_depth
from ..program.predicates import ALWAYS, INVARIANT, VARIES, iteration_runs
from ..symbolic.source import source_text
from .release_order import memory_accesses

_WAITS = (Role.WAIT, Role.ACQUIRE)


def predicate_mismatches(analysis) -> list[Finding]:
    out: list[Finding] = []
    for b in analysis.barriers.barriers:
        if b.alloc is None:
            continue
        arrives = [u for u in b.uses if u.role not in (Role.INIT, Role.INVAL, *_WAITS)]
        if len(arrives) != 1 or arrives[0].role is not Role.ARRIVE or not arrives[0].partition:
            continue  # another arrival could complete the phase the skipped one leaves open
        a = arrives[0]
        loop = _loop(a.op)
        if loop is None:
            continue
        condition = _condition(analysis, a, loop)
        if condition is None:
            out += _predicated_waits(analysis, b, a)
            continue
        partners = [u for u in b.uses if u.role in _WAITS and u.partition not in (None, a.partition)
                    and loop_depth(u.op) == loop_depth(a.op) and _unconditional(analysis, u)]
        if not partners:
            continue
        text, line = condition
        wait_lines = sorted({u.line for u in partners})
        waiters = sorted({u.partition for u in partners})
        out.append(finding(
            Kind.DEADLOCK_PREDICATE_MISMATCH, Severity.error,
            f"The arrive at line {a.line} on {b.name} ({a.partition}) runs only when {text} (line {line}), but "
            f"{', '.join(waiters)} wait(s) on it at line(s) {', '.join(map(str, wait_lines))} in every iteration: in an "
            "iteration where the condition is false the phase that wait needs is never produced, and the kernel "
            "hangs. This holds whatever the trip counts; it hangs on every launch where the condition is false once.",
            lines=[a.line, line, *wait_lines], partitions=[a.partition, *waiters], barrier=b.name,
            evidence={"consequence": HANG, "arrive_line": a.line, "condition": text, "condition_line": line,
                      "wait_lines": wait_lines, "trip_independent": True},
            suggestion="Predicate the matching wait on the same condition (computed from the same values), or make "
                       "the arrive unconditional."))
    return out


def _loop(op: Operation) -> Operation | None:
    loop = next((x for x in op.ancestors() if x.name in LOOP_OPS), None)
    return loop if loop is not None and loop_depth(op) > 0 else None


def _condition(analysis, use, loop: Operation) -> tuple[str, int] | None:
    """(the condition as written, its line) under which `use` runs in an iteration of `loop`,
    when it is one that may be false in some iteration or entry; None otherwise."""
    runs = iteration_runs(analysis, use.op, use.predicate, loop)
    if runs in (VARIES, INVARIANT):
        return _written(analysis, use.predicate, use.op)
    ifs = [x for x in use.op.ancestors() if x.name == "scf.if" and loop in x.ancestors()]
    if runs == ALWAYS and ifs:
        first = ifs[0]
        if first.operands and iteration_runs(analysis, first, first.operands[0], loop) in (VARIES, INVARIANT):
            text, line = _written(analysis, first.operands[0], first)
            negated = branch_of(first, use.op) == 1
            return (f"not ({text})" if negated else text), line
    return None


def _unconditional(analysis, use) -> bool:
    loop = _loop(use.op)
    if loop is None or iteration_runs(analysis, use.op, use.predicate, loop) != ALWAYS:
        return False
    return not any(x.name == "scf.if" and loop in x.ancestors() for x in use.op.ancestors())


def _written(analysis, name: str, at: Operation) -> tuple[str, int]:
    """`offs_ptr[s + 1] - offs_ptr[s] > 0`: the condition as the IR computes it, and the line
    of the op that computes it."""
    from ...facts.values import OpResult

    d = analysis.values.lookup(name, at)
    line = d.op.line if isinstance(d, OpResult) else at.line
    return source_text(name, at), line


def _predicated_waits(analysis, b, a) -> list[Finding]:
    """The reverse: waits on `b` whose own predicate varies while its only arrival, `a`, runs
    in every iteration, followed in their iteration by a read of a buffer `a`'s partition writes."""
    if not _unconditional(analysis, a):
        return []
    part = analysis.partitions.by_name(a.partition)
    written = {ext[0] for op in (analysis.partitions.body(part) if part is not None else ())
               for _, ext in memory_accesses(analysis, op, "writes")}
    out = []
    for w in b.uses:
        loop = _loop(w.op)
        if w.role not in _WAITS or w.partition in (None, a.partition) or loop is None or w.predicate is None \
                or loop_depth(w.op) != loop_depth(a.op) \
                or iteration_runs(analysis, w.op, w.predicate, loop) not in (VARIES, INVARIANT):
            continue
        read = next((op for op in following_in_iteration(w.op) if op is not w.op and w.predicate not in op.operands
                     and any(ext[0] in written for _, ext in memory_accesses(analysis, op, "reads"))), None)
        if read is None:
            continue
        text, line = _written(analysis, w.predicate, w.op)
        out.append(finding(
            Kind.RACE_PREDICATED_WAIT, Severity.error,
            f"The wait at line {w.line} on {b.name} ({w.partition}) runs only when {text} (line {line}), but its "
            f"only arrival, the arrive at line {a.line} ({a.partition}), runs in every iteration, and the "
            f"{read.name.split('.')[-1]} at line {read.line} after the wait runs whatever the condition: in an "
            f"iteration where it is false, that read of a buffer {a.partition} writes is ordered after nothing, and "
            "can see data not yet written (wrong results). The phases stay in step (the arrive still completes "
            "each one), so it does not hang. This holds whatever the trip counts.",
            lines=[w.line, line, read.line, a.line], partitions=[w.partition, a.partition], barrier=b.name,
            evidence={"consequence": WRONG, "wait_line": w.line, "condition": text, "condition_line": line,
                      "read_line": read.line, "arrive_line": a.line, "trip_independent": True},
            suggestion="Predicate the read on the same condition (or put both under an scf.if), or wait "
                       "unconditionally."))
    return out


RULE = Rule("predicate_mismatch", __name__, predicate_mismatches, docs=(
    KindDoc(
        Kind.DEADLOCK_PREDICATE_MISMATCH,
        'An arrive runs under a condition its partner wait does not.',
        'Finds the only arrive on a barrier, inside a loop, predicated (its operand or an enclosing scf.if) on a condition that varies, while a wait on that barrier in another partition, at the same loop depth, runs every iteration. The message writes the condition as the IR computes it. The reverse direction is not judged.',
        'In an iteration where the condition is false (an empty segment, a group with no rows) the arrive is skipped but the partner still waits for the phase it completes: the kernel hangs on exactly those launches.',
        '%nonempty = arith.cmpi sgt, %seg_len, %c0_i32 : i32\nttng.arrive_barrier %res_ready[%slot], 1, %nonempty   // default\nttng.wait_barrier %res_ready[%slot], %rphase, %true    // partition1, unconditional',
        'Predicate the wait on the same condition (and its counter), or arrive unconditionally.',
        (Severity.error,), 'An error whose outcome is a hang.'),
    KindDoc(
        Kind.RACE_PREDICATED_WAIT,
        'A wait runs under a condition its partner arrive does not, and a read after it runs anyway.',
        'Finds a wait whose own predicate operand varies, on a barrier whose only arrival is one plain arrive, in every iteration of another partition at the same loop depth, followed in its iteration by a read of a buffer the arriving partition writes. A wait inside an scf.if is left to the simulation.',
        'When the predicate is false the wait is skipped but the read still runs, ordered after nothing: it can read data the other partition has not written yet. The arrive still completes each phase, so the phases stay in step and nothing hangs: the outcome is wrong results.',
        'ttng.arrive_barrier %ready[%slot], 1                   // producer, every iteration\nttng.wait_barrier %ready[%slot], %phase, %has_work      // consumer\n%x = ttg.local_load %buf[%slot]                         // runs whatever %has_work is',
        'Predicate the read on the same condition (or put both under an scf.if), or wait unconditionally.',
        (Severity.error,), 'An error whose outcome is wrong results.'),
))
