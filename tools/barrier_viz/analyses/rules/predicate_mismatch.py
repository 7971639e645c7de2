"""`deadlock.predicate_mismatch`: an arrive runs under a condition its partner wait does not.

What it does
    For each plain `arrive_barrier` inside a loop that is predicated (its own predicate
    operand, or an `scf.if` between it and its loop) on a condition that is neither constant
    nor a first-iteration flag (`analyses.program.predicates`: it `varies` per iteration, or is
    the same in every iteration of an entry but not known to be true), it looks for a wait on
    the same barrier in another partition, at the same loop nesting depth, that runs in every
    iteration of its loop (no predicate, no `scf.if`). When the barrier has no other arrival
    that could stand in for the skipped one (another arrive on it, a TMA or tcgen05 arrival),
    the rule reports it, with the condition written as the IR computes it. It needs no trip
    count and no simulation, so it runs when the simulation stopped at a limit. The reverse
    (a wait predicated on a condition its arrive is not) is not judged here: a waiter that
    skips a wait stays in step when its counter also skips, which this rule does not read.

Why is this bad
    In an iteration where the condition is false (an empty segment, a group with no rows) the
    arrive is skipped, but the partner still waits for the phase that arrive completes: it
    never comes, and the kernel hangs. The GPU hangs exactly on the launches where the
    condition is false once: the jagged column norm whose hand-off arrive was predicated on
    `seg_len > 0` hung on the H200 whenever a segment was empty, and completed otherwise.

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
from ..launch.run_condition import _branch_of
from ..program.predicates import ALWAYS, INVARIANT, VARIES, iteration_runs
from ..program.order import loop_depth

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
            negated = _branch_of(first, use.op) == 1
            return (f"not ({text})" if negated else text), line
    return None


def _unconditional(analysis, use) -> bool:
    loop = _loop(use.op)
    if loop is None or iteration_runs(analysis, use.op, use.predicate, loop) != ALWAYS:
        return False
    return not any(x.name == "scf.if" and loop in x.ancestors() for x in use.op.ancestors())


def _written(analysis, name: str, at: Operation) -> tuple[str, int]:
    """`%seg_len_8 > 0`: the comparison that defines `name`, in the IR's own value names."""
    from ...facts.values import OpResult

    d = analysis.values.lookup(name, at)
    if isinstance(d, OpResult) and d.op.name == "arith.cmpi" and len(d.op.operands) == 2:
        rel = next((w for w in list(d.op.keywords) + list(d.op.literals) if w in _REL), None)
        if rel is not None:
            return f"{_constant_or_name(analysis, d.op.operands[0], d.op)} {_REL[rel]} " \
                   f"{_constant_or_name(analysis, d.op.operands[1], d.op)}", d.op.line
    line = d.op.line if isinstance(d, OpResult) else at.line
    return f"{name} is true", line


def _constant_or_name(analysis, name: str, at: Operation) -> str:
    from ...facts.values import OpResult

    d = analysis.values.lookup(name, at)
    if isinstance(d, OpResult) and d.op.name == "arith.constant" and d.op.literals:
        return d.op.literals[0]
    return name


_REL = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">=", "ult": "<", "ule": "<=",
        "ugt": ">", "uge": ">="}


RULE = Rule("predicate_mismatch", __name__, predicate_mismatches, docs=(
    KindDoc(
        Kind.DEADLOCK_PREDICATE_MISMATCH,
        'An arrive runs under a condition its partner wait does not.',
        'Finds the only arrive on a barrier, inside a loop, predicated (its operand or an enclosing scf.if) on a condition that varies, while a wait on that barrier in another partition, at the same loop depth, runs every iteration. The message writes the condition as the IR computes it. The reverse direction is not judged.',
        'In an iteration where the condition is false (an empty segment, a group with no rows) the arrive is skipped but the partner still waits for the phase it completes: the kernel hangs on exactly those launches.',
        '%nonempty = arith.cmpi sgt, %seg_len, %c0_i32 : i32\nttng.arrive_barrier %res_ready[%slot], 1, %nonempty   // default\nttng.wait_barrier %res_ready[%slot], %rphase, %true    // partition1, unconditional',
        'Predicate the wait on the same condition (and its counter), or arrive unconditionally.',
        (Severity.error,), 'An error whose outcome is a hang.'),
))
