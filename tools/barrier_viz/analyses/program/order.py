"""Program order inside one partition: loops around an op, what runs before and after it in an
iteration, and whether a value changes from one iteration to the next.

Why here: every static rule asks these questions, and so do the dependency graph, the coverage
tables and the predicate classifier (`predicates.py`). They are facts about the program, not
verdicts, so they live below every rule (a rule never imports another rule for them).
Imports: ir/, facts/ only.
"""

from __future__ import annotations

from typing import Iterator

from ...facts.values import OpResult, reaches_back
from ...ir.model import Operation
from ...ir.vocab import LOOP_OPS

# Where an iteration's program order stops: a loop, or the partition/function that holds it.
_STOP_AT = LOOP_OPS | {"ttg.warp_specialize", "nvws.warp_group", "tt.func", "func.func", "builtin.module"}


def innermost_loop(op: Operation) -> Operation | None:
    """The nearest loop enclosing `op`, if any."""
    return next((a for a in op.ancestors() if a.name in LOOP_OPS), None)


def loop_depth(op: Operation) -> int:
    """Loops enclosing `op` inside its partition (or function)."""
    depth = 0
    for a in op.ancestors():
        if a.name in _STOP_AT - LOOP_OPS:
            break
        if a.name in LOOP_OPS:
            depth += 1
    return depth


def _iteration_scopes(op: Operation, levels: int) -> Iterator[tuple[list[Operation], int]]:
    """(block operations, index of the op or its enclosing op) from `op` outwards, up to the
    innermost loop (or `levels` loops further out) or the partition/function boundary."""
    cur = op
    while True:
        block = cur.block
        if block is None:
            return
        yield block.operations, block.operations.index(cur)
        parent = block.region.parent if block.region is not None else None
        if parent is None or parent.name in _STOP_AT - LOOP_OPS:
            return
        if parent.name in LOOP_OPS:
            if levels <= 0:
                return
            levels -= 1
        cur = parent


def preceding_in_iteration(op: Operation, levels: int = 0) -> Iterator[Operation]:
    """Operations executed before `op` in the same iteration of its innermost loop (or since the
    partition started), nearest first; nested regions of earlier ops included. With `levels`,
    the iteration is the one of the loop that many levels further out (what runs before the
    inner loop in the enclosing iteration counts too)."""
    for ops, idx in _iteration_scopes(op, levels):
        for prev in reversed(ops[:idx]):
            yield from reversed(list(prev.walk()))


def following_in_iteration(op: Operation, levels: int = 0) -> Iterator[Operation]:
    """`op` itself, then what runs after it in the same iteration of its innermost loop (or of
    the loop `levels` further out)."""
    yield op
    for ops, idx in _iteration_scopes(op, levels):
        for nxt in ops[idx + 1 :]:
            yield from nxt.walk()


def same_iteration(op: Operation, levels: int = 0) -> Iterator[Operation]:
    """Everything in `op`'s loop iteration: what precedes it, and what follows it (which, in a
    software-pipelined loop, is the previous iteration's tail: rotated waits sit there)."""
    yield from preceding_in_iteration(op, levels)
    yield from following_in_iteration(op, levels)


def varies_in(name: str, at: Operation, loop: Operation, analysis, budget: int = 400) -> bool:
    """Does value `name` (used at `at`) change from one iteration of `loop` to the next?"""

    def visit(defn):
        if defn is None:
            return None
        if isinstance(defn, OpResult):
            op = defn.op
            if loop not in op.ancestors():
                return None
            if op.name in LOOP_OPS or op.name == "scf.if":
                return True  # results of nested control flow: assume they vary
            return [(o, op) for o in op.operands]
        block = defn.block
        owner = block.region.parent if block is not None and block.region is not None else None
        if owner is loop and _yielded_unchanged(defn, loop):
            return [(loop.operands[defn.index - 1 + 3], loop)]  # the iter-arg keeps its initial value
        return True if owner is not None and (owner is loop or loop in owner.ancestors()) else None

    return reaches_back(analysis.values, name, at, visit, budget)


def _yielded_unchanged(arg, loop: Operation) -> bool:
    """Is `arg`, an iter-arg of the scf.for `loop`, yielded back as itself (directly or through
    `select(c, arg, arg)`), so that it holds its initial value in every iteration (a phase bit
    whose flip on wrap was lost)?"""
    if loop.name != "scf.for" or arg.index < 1 or len(loop.operands) < arg.index + 3:
        return False
    ops = arg.block.operations
    if not ops or ops[-1].name != "scf.yield" or len(ops[-1].operands) < arg.index:
        return False
    defs = {r: op for op in ops for r in op.results}
    value = ops[-1].operands[arg.index - 1]
    for _ in range(8):
        if value == arg.name:
            return True
        op = defs.get(value)
        if op is None or op.name != "arith.select" or len(op.operands) != 3 or op.operands[1] != op.operands[2]:
            return False
        value = op.operands[1]
    return False


def branch_of(if_op: Operation, op: Operation) -> int:
    """Which region of the `scf.if` `if_op` holds `op` (0: then, 1: else)."""
    cur = op
    while cur.block is not None and cur.block.region is not None:
        region = cur.block.region
        if region.parent is if_op:
            return region.index
        cur = region.parent
        if cur is None:
            break
    return 0
