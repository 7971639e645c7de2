"""Evaluating expressions: the value under given bindings (`evaluate`) and a conservative
(lo, hi) bound (`value_range`) that justifies dropping casts and offsets in the simplifier.
"""

from __future__ import annotations

from typing import Mapping

from .arith import EvalError, apply_binop, apply_cast, apply_cmp, wrap
from .expr import BinOp, Cast, Cmp, Const, Expr, Select, Unknown, Var, leaves


def evaluate(e: Expr, bindings: Mapping[str, int]) -> int:
    """Value of `e` with every `Var` bound by key (or by name) in `bindings`."""
    if isinstance(e, Const):
        return wrap(e.value, e.bits)
    if isinstance(e, Var):
        if e.key in bindings:
            return wrap(bindings[e.key], e.bits)
        if e.name in bindings:
            return wrap(bindings[e.name], e.bits)
        raise EvalError(f"no value for {e.name}")
    if isinstance(e, Unknown):
        raise EvalError(f"unknown({e.op} at line {e.line})")
    if isinstance(e, BinOp):
        return apply_binop(e.op, evaluate(e.lhs, bindings), evaluate(e.rhs, bindings), e.bits)
    if isinstance(e, Cmp):
        return apply_cmp(e.pred, evaluate(e.lhs, bindings), evaluate(e.rhs, bindings), e.lhs.bits)
    if isinstance(e, Select):
        return evaluate(e.true if evaluate(e.cond, bindings) else e.false, bindings)
    return apply_cast(e.op, evaluate(e.operand, bindings), e.from_bits, e.bits)


def value_range(e: Expr) -> tuple[int | None, int | None]:
    """A (lo, hi) bound of `e` (None = unbounded), used to justify dropping casts and offsets.
    Sums are assumed not to wrap: the values bounded here are use counters and slot indices."""
    if isinstance(e, Const):
        v = wrap(e.value, e.bits)
        return (v, v)
    if isinstance(e, Var):
        if e.bits == 1:
            return (0, 1)
        return (0, None) if e.nonneg else (None, None)
    if isinstance(e, Cmp) or e.bits == 1:
        return (0, 1)
    if isinstance(e, Select):
        a, b = value_range(e.true), value_range(e.false)
        lo = None if a[0] is None or b[0] is None else min(a[0], b[0])
        hi = None if a[1] is None or b[1] is None else max(a[1], b[1])
        return (lo, hi)
    if isinstance(e, Cast):
        lo, hi = value_range(e.operand)
        if _fits(lo, hi, e):
            return (lo, hi)
        return (None, None)
    if isinstance(e, BinOp):
        a, b = value_range(e.lhs), value_range(e.rhs)
        if e.op == "remu" and isinstance(e.rhs, Const) and e.rhs.value > 0:
            return (0, e.rhs.value - 1)  # an unsigned remainder, whatever the dividend
        if e.op == "rems" and isinstance(e.rhs, Const) and e.rhs.value > 0 and a[0] is not None and a[0] >= 0:
            return (0, e.rhs.value - 1)
        if e.op == "divu" and isinstance(e.rhs, Const) and e.rhs.value >= 2 and not (a[0] is not None and a[0] >= 0):
            return (0, None)  # below 2**(bits-1): non-negative as a signed value too
        if e.op == "and" and isinstance(e.rhs, Const) and e.rhs.value >= 0:
            return (0, e.rhs.value)
        if e.op in ("divu", "divs") and isinstance(e.rhs, Const) and e.rhs.value > 0 and a[0] is not None and a[0] >= 0:
            return (0, None if a[1] is None else a[1] // e.rhs.value)
        if e.op == "add" and None not in (a[0], b[0]):
            hi = None if a[1] is None or b[1] is None else a[1] + b[1]
            return (a[0] + b[0], hi)  # type: ignore[operator]
        if e.op == "xor" and a == (0, 1) and b == (0, 1):
            return (0, 1)
        if e.op == "xor" and a[0] is not None and a[0] >= 0 and b[0] is not None and b[0] >= 0 \
                and a[1] is not None and b[1] is not None:
            return (0, (1 << max(a[1], b[1]).bit_length()) - 1)
    return (None, None)


def _fits(lo: int | None, hi: int | None, cast: Cast) -> bool:
    """Whether a cast leaves every value in [lo, hi] unchanged."""
    if lo is None or hi is None or lo < 0:
        return False
    width = min(cast.bits, cast.from_bits)
    if cast.op in ("extsi", "index_cast") and cast.from_bits == 1:
        return hi == 0
    limit = (1 << width) - 1 if width == 1 else (1 << (width - 1)) - 1
    return hi <= limit


def _const(e: Expr, value: int | None = None) -> bool:
    return isinstance(e, Const) and (value is None or wrap(e.value, e.bits) == wrap(value, e.bits))


def _nonneg(e: Expr) -> bool:
    lo = value_range(e)[0]
    return lo is not None and lo >= 0


def _c(value: int, bits: int, line: int) -> Const:
    return Const(wrap(value, bits), bits, line)


def _retype_to(e: Expr, bits: int) -> Expr:
    if e.bits == bits:
        return e
    return Cast("trunci" if e.bits > bits else "extui", e, bits, e.bits, e.line)


_CHECK_RANGE = 48


def _agree(a: Expr, b: Expr) -> bool:
    """Whether two forms agree for every counter value 0..63 (other variables: 0..3)."""
    vs = {leaf.key: leaf for leaf in leaves(a) if isinstance(leaf, Var)}
    vs.update({leaf.key: leaf for leaf in leaves(b) if isinstance(leaf, Var)})
    for n in range(_CHECK_RANGE):
        bind = {k: (n if v.kind == "counter" else n % 4) for k, v in vs.items()}
        try:
            x = evaluate(a, bind)
        except EvalError:
            x = None
        try:
            y = evaluate(b, bind)
        except EvalError:
            y = None
        if x is not None and x != y:
            return False
    return True
