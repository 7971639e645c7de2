"""Which iterations of its loop a predicated operation runs in, read from the IR.

Why: a static rule that reasons about "every iteration" of a loop is wrong about an operation
that does not run in every iteration. The interpreter evaluates each predicate concretely; the
static rules need the same answer without running: `wait_barrier %bar, %ph, %first`, with
`%first` an iter-arg that enters the loop true and is yielded false, waits in the first iteration
only (a hand-written prologue folded into the loop), so a constant phase there is no lost flip
and a later wait on the same slot is not a repeat of it.

`iteration_runs` classifies the predicate of an op relative to one loop:

* `always` / `never`: a constant (or no predicate at all);
* `first`: at most in the first iteration of each entry of the loop (a loop-carried flag that
  starts true and is yielded false, `iv == lb`, or a conjunction with one of these);
* `after_first`: never in the first iteration (the negations of the above);
* `invariant`: the same in every iteration of one entry (a `pid`-dependent predicate, a
  `k_tiles > 0` guard): every iteration or none;
* `varies`: anything else (computed per iteration in a way not read here).
"""

from __future__ import annotations

from ...facts.values import BlockArgument, OpResult
from ...ir.model import Operation
from .order import varies_in

ALWAYS, NEVER, FIRST, AFTER_FIRST, INVARIANT, VARIES = "always", "never", "first", "after_first", "invariant", "varies"
_NEGATE = {ALWAYS: NEVER, NEVER: ALWAYS, FIRST: AFTER_FIRST, AFTER_FIRST: FIRST, INVARIANT: INVARIANT, VARIES: VARIES}
_MAX_DEPTH = 24


def iteration_runs(analysis, op: Operation, pred: str | None, loop: Operation | None) -> str:
    """When `op`, predicated on the value `pred` (None: unpredicated), runs across the
    iterations of `loop` (one of the kinds of the module docstring)."""
    if pred is None:
        return ALWAYS
    const = constant_bool(analysis, pred, op)
    if const is not None:
        return ALWAYS if const else NEVER
    if loop is None:
        return INVARIANT
    return _state(analysis, pred, op, loop, 0)


def constant_bool(analysis, name: str, at: Operation, depth: int = 0) -> bool | None:
    """The value of an i1 that is a constant, also through `warp_specialize` captures."""
    if depth > _MAX_DEPTH:
        return None
    d = analysis.values.lookup(name, at)
    if isinstance(d, OpResult):
        if d.op.name == "arith.constant" and d.op.literals:
            lit = d.op.literals[0]
            if lit in ("true", "false"):
                return lit == "true"
            if d.type == "i1" and lit in ("0", "1", "-1"):
                return lit != "0"
        return None
    owner = _owner(d)
    if owner is not None and owner.name == "ttg.warp_specialize" and d.index < len(owner.operands):
        return constant_bool(analysis, owner.operands[d.index], owner, depth + 1)
    return None


def _owner(d) -> Operation | None:
    if not isinstance(d, BlockArgument) or d.block is None or d.block.region is None:
        return None
    return d.block.region.parent


def _state(analysis, name: str, at: Operation, loop: Operation, depth: int) -> str:
    if depth > _MAX_DEPTH:
        return VARIES
    const = constant_bool(analysis, name, at)
    if const is not None:
        return ALWAYS if const else NEVER
    d = analysis.values.lookup(name, at)
    if isinstance(d, OpResult):
        op = d.op
        if loop not in op.ancestors():
            return INVARIANT  # computed before the loop: the same in each of its iterations
        if op.name == "arith.xori" and len(op.operands) == 2:
            for x, y in ((0, 1), (1, 0)):
                if constant_bool(analysis, op.operands[y], op) is True:
                    return _NEGATE[_state(analysis, op.operands[x], op, loop, depth + 1)]
        if op.name in ("arith.andi", "arith.ori") and len(op.operands) == 2:
            a, b = (_state(analysis, o, op, loop, depth + 1) for o in op.operands)
            return _combine(op.name == "arith.andi", a, b)
        if op.name == "arith.cmpi" and len(op.operands) == 2:
            first = _first_iteration_test(analysis, op, loop)
            if first is not None:
                return first
        return VARIES if _varies(analysis, name, at, loop) else INVARIANT
    owner = _owner(d)
    if owner is None:
        return INVARIANT  # a function argument
    if owner.name == "ttg.warp_specialize":
        return INVARIANT
    if owner is loop:
        return _carried(analysis, d, loop, depth)
    if loop in owner.ancestors():
        return VARIES  # carried by a loop nested in `loop`, or a region argument inside it
    return INVARIANT


def _combine(conj: bool, a: str, b: str) -> str:
    if not conj:
        return _NEGATE[_combine(True, _NEGATE[a], _NEGATE[b])]  # De Morgan
    if NEVER in (a, b):
        return NEVER
    if a == ALWAYS:
        return b
    if b == ALWAYS:
        return a
    if FIRST in (a, b):
        return FIRST  # true at most where the first-iteration flag is
    if AFTER_FIRST in (a, b) and {a, b} <= {AFTER_FIRST, INVARIANT}:
        return AFTER_FIRST
    if a == b == INVARIANT:
        return INVARIANT
    return VARIES


def _carried(analysis, arg: BlockArgument, loop: Operation, depth: int) -> str:
    """An iter-arg of `loop`: its value entering the loop, and what each iteration yields."""
    if loop.name == "scf.for":
        if arg.index < 1 or len(loop.operands) < arg.index + 3:
            return VARIES  # the induction variable
        init = loop.operands[arg.index + 2]
        body = arg.block
        k = arg.index - 1
    elif loop.name == "scf.while" and arg.block.region is not None and arg.block.region.index == 0:
        if arg.index >= len(loop.operands) or len(loop.regions) < 2 or not loop.regions[1].blocks:
            return VARIES
        init = loop.operands[arg.index]
        body = loop.regions[1].blocks[0]
        k = arg.index
    else:
        return VARIES
    term = body.operations[-1] if body.operations else None
    if term is None or term.name != "scf.yield" or k >= len(term.operands):
        return VARIES
    entry = constant_bool(analysis, init, loop)
    yielded = term.operands[k]
    if yielded == arg.name:
        return INVARIANT if entry is None else (ALWAYS if entry else NEVER)
    later = constant_bool(analysis, yielded, term)
    if later is None:
        d = analysis.values.lookup(yielded, term)
        if isinstance(d, OpResult) and d.op.name == "arith.andi" and arg.name in d.op.operands:
            later = False if entry is False else None  # `flag & x` never turns a false flag true
        if later is None:
            return VARIES
    if entry is True and later is False:
        return FIRST
    if entry is False and later is True:
        return AFTER_FIRST
    if entry is not None and entry == later:
        return ALWAYS if entry else NEVER
    if entry is None:
        # Entry unknown (a runtime flag): false from the second iteration on is still "first".
        return FIRST if later is False else VARIES
    return VARIES


def _first_iteration_test(analysis, cmp: Operation, loop: Operation) -> str | None:
    """`iv == lb` (first) or `iv != lb` / `iv > lb` (after the first) of an `scf.for`."""
    if loop.name != "scf.for" or not loop.regions or not loop.regions[0].blocks:
        return None
    body = loop.regions[0].blocks[0]
    if not body.arguments:
        return None
    iv = body.arguments[0].name
    pred = next((w for w in list(cmp.keywords) + list(cmp.literals)
                 if w in ("eq", "ne", "sgt", "ugt", "slt", "ult", "sle", "ule", "sge", "uge")), None)
    a, b = cmp.operands
    if a == iv and _same_value(analysis, b, cmp, loop.operands[0], loop):
        table = {"eq": FIRST, "sle": FIRST, "ule": FIRST, "ne": AFTER_FIRST, "sgt": AFTER_FIRST, "ugt": AFTER_FIRST}
    elif b == iv and _same_value(analysis, a, cmp, loop.operands[0], loop):
        table = {"eq": FIRST, "sge": FIRST, "uge": FIRST, "ne": AFTER_FIRST, "slt": AFTER_FIRST, "ult": AFTER_FIRST}
    else:
        return None
    return table.get(pred or "")


def _same_value(analysis, a: str, at_a: Operation, b: str, at_b: Operation) -> bool:
    if a == b:
        return True
    da, db = analysis.values.lookup(a, at_a), analysis.values.lookup(b, at_b)
    if not (isinstance(da, OpResult) and isinstance(db, OpResult)):
        return False
    if da.op.name == db.op.name == "arith.constant":
        return da.op.literals[:1] == db.op.literals[:1]
    return False


def _varies(analysis, name: str, at: Operation, loop: Operation) -> bool:
    return varies_in(name, at, loop, analysis)
