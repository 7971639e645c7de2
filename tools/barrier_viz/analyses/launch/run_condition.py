"""The launch condition under which an operation runs at least once per iteration of a loop.

Why: a suggested fix can rest on an operation that does not always run. "Remove the zero store,
the MMA's useD=false initialises the accumulator" holds only in a tile where that MMA runs: an
MMA predicated on `k_tiles > 0`, or issued inside a K loop whose trip count can be 0, does not
run when K < BLOCK_K, and then the epilogue reads exactly the zeros the store wrote. So a rule
that suggests such a fix asks here for the condition and states it ("only when K >= 64"), rather
than suggesting something that breaks a launch it did not think of.

The condition is read with `trip_counts` (the same expressions `input_points` uses for
boundary launches): the op's own predicate, the trip count of every loop between the op and
`stop`, and the side of every `scf.if` on the way. A clause over a single integer argument is
also solved for the smallest value that makes it hold, by evaluating it (the interpreter's
integer semantics), so the text can say `K >= 64`, not only `((K / 64) > 0)`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir.model import Operation
from ..program.order import branch_of
from .trip_counts import _PRED_AT as _TRIP_PRED_AT
from .trip_counts import Node, Point, build_model, evaluate, render, render_trips, variables

# Positional operand holding the op's own predicate.
_PRED_AT = {"ttng.tc_gen5_mma": 4, "ttng.tc_gen5_mma_scaled": 6}
_SEARCH_MAX = 1 << 20


@dataclass(frozen=True)
class Clause:
    text: str  # the formula, e.g. "((K / 64) > 0)" or "ktiles > 0"
    line: int  # the op, loop or if it comes from
    solved: str | None = None  # "K >= 64" when a single argument decides it
    where: str = ""  # "the predicate of ttng.tc_gen5_mma at line 46"

    def __str__(self) -> str:
        if self.solved:
            return f"{self.solved} ({self.text}: {self.where})"
        return f"{self.text} ({self.where})" if self.where else self.text


def run_condition(analysis, op: Operation, stop: Operation | None) -> list[Clause]:
    """The clauses that must all hold for `op` to run in an iteration of `stop` (or of the
    function when None). Empty: it runs unconditionally there (as far as the IR says)."""
    fn = analysis.sel.function
    if fn is None:
        return []
    from .input_points import _header

    ids = {id(o) for o in analysis.ops if analysis.barriers.uses_at(o)} | {id(op)}
    model = build_model(fn, ids, _header(analysis), pred_at={**_TRIP_PRED_AT, **_PRED_AT})
    names = {a.position: a.name for a in model.args}
    flags = {a.position for a in model.args if a.flag}
    site = next((s for s in model.sites if s.op is op and s.kind == "pred"), None)
    out: list[Clause] = []
    if site is None:
        pos = op.positional
        k = _PRED_AT.get(op.name)
        if k is not None and k < len(pos) and not _true(analysis, pos[k], op):
            out.append(Clause(f"the predicate {pos[k]} of {op.name}", op.line))
        parent = _enclosing_site(model, op)
    else:
        out.append(_clause(site.cond, op.line, names, flags, f"the predicate of {op.name} at line {op.line}"))
        parent = site.parent
    s = parent
    while s is not None and s.op is not stop:
        if s.kind == "for" and s.ub.kind == s.lb.kind == "const":
            if (s.ub.value or 0) <= (s.lb.value or 0):
                out.append(Clause("false", s.op.line, where=f"the loop at line {s.op.line} runs no iteration"))
        elif s.kind == "for":
            trips = Node("op", op=_Sub, args=(s.ub, s.lb))
            out.append(_clause(trips, s.op.line, names, flags, f"trip count of the loop at line {s.op.line}",
                               text=f"{render_trips(s)} > 0"))
        elif s.kind == "if":
            out.append(_clause(s.cond, s.op.line, names, flags, f"the scf.if at line {s.op.line}",
                               negate=branch_of(s.op, op) == 1))
        s = s.parent
    return [c for c in out if c.text != "true"]


def describe(clauses: list[Clause]) -> str:
    return " and ".join(str(c) for c in clauses)


class _SubOp:
    """Stands in for an `arith.subi` so a trip count `ub - lb` evaluates as one expression."""

    name = "arith.subi"
    keywords: list[str] = []
    literals: list[str] = []
    line = 0


_Sub = _SubOp()


def _clause(node: Node, line: int, names: dict[int, str], flags: set[int], where: str, text: str | None = None,
            negate: bool = False) -> Clause:
    trips = node.op is _Sub
    formula = text or render(node)
    if negate:
        formula = f"not {formula}"
    if node.kind == "const":
        holds = bool(node.value) != negate
        return Clause("true" if holds else "false", line)
    solved = _solve(node, names, flags, trips, negate)
    if solved == _ALWAYS:
        return Clause("true", line)  # holds at every launch the kernel can be given
    return Clause(formula, line, solved, where)


_ALWAYS = "always"


def _solve(node: Node, names: dict[int, str], flags: set[int], trips: bool, negate: bool) -> str | None:
    """`NAME >= v`: the smallest value of the one argument `node` depends on that makes the
    clause hold, when it fails at the smallest launch value and holds from v on (checked at
    v - 1, v and a few larger values); `_ALWAYS` when it holds from 1 on for a size (a size is
    at least 1: `input_points`' launch rule; a flag may be 0); None otherwise."""
    deps = variables(node)
    if len(deps) != 1:
        return None
    kind, pos = next(iter(deps))
    if kind != "arg":
        return None

    def holds(v: int) -> bool | None:
        if trips:
            ub, lb = (evaluate(x, Point(args=((pos, v),))) for x in node.args)
            value = None if ub is None or lb is None else ub - lb > 0
        else:
            r = evaluate(node, Point(args=((pos, v),)))
            value = None if r is None else bool(r)
        return None if value is None else value != negate

    if pos not in flags and all(holds(v) is True for v in (1, 2, 3, 7, 63, 64, 65, 1000, _SEARCH_MAX)):
        return _ALWAYS
    if holds(1) is not False:
        return None
    hi = 2
    while hi <= _SEARCH_MAX and holds(hi) is False:
        hi *= 2
    if hi > _SEARCH_MAX or holds(hi) is not True:
        return None
    lo = hi // 2  # holds(lo) is False
    while hi - lo > 1:
        mid = (lo + hi) // 2
        r = holds(mid)
        if r is None:
            return None
        lo, hi = (lo, mid) if r else (mid, hi)
    if any(holds(v) is not True for v in (hi, hi + 1, 2 * hi, 4 * hi)):
        return None
    return f"{names.get(pos, f'arg{pos}')} >= {hi}"


def _true(analysis, name: str, at: Operation) -> bool:
    from ..program.predicates import constant_bool

    return constant_bool(analysis, name, at) is True


def _enclosing_site(model, op: Operation):
    """The innermost loop or if site around `op`."""
    by_op = {id(s.op): s for s in model.sites if s.kind in ("for", "while", "if")}
    for a in op.ancestors():
        s = by_op.get(id(a))
        if s is not None:
            return s
    return None
