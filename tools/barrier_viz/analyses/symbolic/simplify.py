"""The simplifier: rewrites an expression to the normalized formula a reader expects
(`cnt % 3`, `((cnt / 3) & 1) ^ 1`). Every rule is exact for the value ranges it checks;
formulas are also simplified once more before printing, so what a user reads is the
simplest form (`x - x` is `0`, `((p & 1) ^ 1) ^ 1` is `p & 1`, constants folded).
"""

from __future__ import annotations

from dataclasses import replace

from .arith import EvalError, apply_binop, apply_cast, apply_cmp, unsigned
from .evaluate import _agree, _c, _const, _fits, _nonneg, value_range
from .expr import BinOp, Cast, Cmp, Const, Expr, Select, _rebuild, children, same, shape


_SIMPLIFY_ROUNDS = 12


def simplify(e: Expr) -> Expr:
    """Normalize: drop value-preserving casts, fold constants, recognise `x - (x/N)*N` as
    `x % N`, reduce counter offsets (`(n + 3) % 3` = `n % 3`), and collapse wrap-around selects
    over `(y % N) + 1` into `(y + 1) % N`. Each rule is exact for the ranges it checks."""
    kids = children(e)
    if kids:
        e = _rebuild(e, tuple(simplify(k) for k in kids))
    for _ in range(_SIMPLIFY_ROUNDS):
        new = _rewrite(e)
        if new is None:
            return e
        kids = children(new)
        e = _rebuild(new, tuple(simplify(k) for k in kids)) if kids else new
    return e


def _rewrite(e: Expr) -> Expr | None:  # noqa: C901 - a flat list of rules reads best
    if isinstance(e, Cast):
        if isinstance(e.operand, Const):
            return _c(apply_cast(e.op, e.operand.value, e.from_bits, e.bits), e.bits, e.line)
        inner = e.operand
        if e.bits == e.from_bits:
            return inner
        if isinstance(inner, Cast) and _fits(*value_range(inner.operand), inner) and _fits(*value_range(inner), e):
            x = inner.operand
            if x.bits == e.bits:
                return x
            return Cast("trunci" if x.bits > e.bits else "extui", x, e.bits, x.bits, e.line)
        return None
    if isinstance(e, Cmp) and isinstance(e.lhs, Const) and isinstance(e.rhs, Const):
        return Const(apply_cmp(e.pred, e.lhs.value, e.rhs.value, e.lhs.bits), 1, e.line)
    if isinstance(e, Select):
        if isinstance(e.cond, Const):
            return e.true if e.cond.value else e.false
        if same(e.true, e.false):
            return e.true
        return _wrap_select(e)
    if not isinstance(e, BinOp):
        return None
    a, b, bits, op = e.lhs, e.rhs, e.bits, e.op
    if isinstance(a, Const) and isinstance(b, Const):
        try:
            return _c(apply_binop(op, a.value, b.value, bits), bits, e.line)
        except EvalError:
            return None
    if op in ("add", "mul", "and", "or", "xor") and isinstance(a, Const):
        return replace(e, lhs=b, rhs=a)
    if op == "sub" and isinstance(b, Const):
        return BinOp("add", a, _c(-b.value, bits, b.line), bits, e.line)
    if op == "sub":
        q = b.lhs if isinstance(b, BinOp) and b.op == "mul" else None
        n = b.rhs if q is not None else None
        if q is not None and not (isinstance(q, BinOp) and q.op in ("divu", "divs")):
            q, n = n, q  # mul(N, div)
        if isinstance(q, BinOp) and q.op in ("divu", "divs") and n is not None and same(q.rhs, n) and same(q.lhs, a):
            return BinOp("remu" if q.op == "divu" else "rems", a, n, bits, e.line)
    if op in ("sub", "xor") and same(a, b):
        return _c(0, bits, e.line)  # x - x, x ^ x
    if op in ("and", "or", "mins", "maxs", "minu", "maxu") and same(a, b):
        return a  # x & x, x | x
    if op in ("mul", "and") and _const(b, 0):
        return _c(0, bits, e.line)
    if op == "and" and isinstance(b, Const) and isinstance(a, BinOp) and a.op == "and" and isinstance(a.rhs, Const):
        return BinOp("and", a.lhs, _c(unsigned(a.rhs.value, bits) & unsigned(b.value, bits), bits, b.line), bits, e.line)
    if op in ("add", "xor", "or", "shl", "shrs", "shru") and _const(b, 0):
        return a
    if op == "mul" and _const(b, 1):
        return a
    if op in ("divu", "divs") and _const(b, 1):
        return a
    if op in ("remu", "rems") and _const(b, 1):
        return _c(0, bits, e.line)
    if op == "add" and isinstance(b, Const) and isinstance(a, BinOp) and a.op == "add" and isinstance(a.rhs, Const):
        return BinOp("add", a.lhs, _c(a.rhs.value + b.value, bits, b.line), bits, e.line)
    if op == "xor" and isinstance(b, Const) and isinstance(a, BinOp) and a.op == "xor" and isinstance(a.rhs, Const):
        return BinOp("xor", a.lhs, _c(unsigned(a.rhs.value, bits) ^ unsigned(b.value, bits), bits, b.line), bits, e.line)
    if op == "and" and _const(b, 1) and value_range(a) in ((0, 0), (0, 1), (1, 1)):
        return a
    if op == "and" and _const(b, 1) and isinstance(a, Cast) and a.op in ("extsi", "index_cast") and a.from_bits == 1:
        return Cast("extui", a.operand, bits, 1, a.line)  # low bit of a sign-extended i1
    if op == "and" and _const(b, 1) and isinstance(a, BinOp) and a.op == "xor" and isinstance(a.rhs, Const):
        # (x ^ k) & 1 = (x & 1) ^ (k & 1)
        return BinOp("xor", BinOp("and", a.lhs, b, bits, e.line), _c(a.rhs.value & 1, bits, a.rhs.line), bits, e.line)
    if op == "and" and _const(b, 1) and isinstance(a, BinOp) and a.op == "add" and isinstance(a.rhs, Const) \
            and _nonneg(a.lhs) and a.rhs.value > 0:
        # (x + k) & 1 = (x & 1) ^ (k & 1) for the low bit
        return BinOp("xor", BinOp("and", a.lhs, b, bits, e.line), _c(a.rhs.value & 1, bits, a.rhs.line), bits, e.line)
    if op in ("remu", "rems") and isinstance(b, Const) and b.value > 0 and isinstance(a, BinOp) and a.op == "add" \
            and isinstance(a.rhs, Const) and _nonneg(a.lhs) and a.rhs.value >= b.value:
        return BinOp(op, _plus(a.lhs, a.rhs.value % b.value, bits, a.line), b, bits, e.line)
    if op in ("divu", "divs") and isinstance(b, Const) and b.value > 0 and isinstance(a, BinOp) and a.op == "add" \
            and isinstance(a.rhs, Const) and _nonneg(a.lhs) and a.rhs.value >= b.value:
        k = a.rhs.value // b.value
        inner = BinOp(op, _plus(a.lhs, a.rhs.value % b.value, bits, a.line), b, bits, e.line)
        return BinOp("add", inner, _c(k, bits, a.rhs.line), bits, e.line)
    return None


def _plus(x: Expr, k: int, bits: int, line: int) -> Expr:
    return x if k == 0 else BinOp("add", x, _c(k, bits, line), bits, line)


def _mod_parts(e: Expr) -> tuple[Expr, int] | None:
    """`y % N` (N a positive constant, y ≥ 0) → (y, N)."""
    if isinstance(e, BinOp) and e.op in ("remu", "rems") and isinstance(e.rhs, Const) and e.rhs.value > 0 \
            and _nonneg(e.lhs):
        return e.lhs, e.rhs.value
    return None


def _parity_parts(e: Expr) -> tuple[Expr, int, int] | None:
    """`((y / N) & 1) [^ k]` → (y, N, k & 1)."""
    k = 0
    if isinstance(e, BinOp) and e.op == "xor" and isinstance(e.rhs, Const):
        k, e = e.rhs.value & 1, e.lhs
    if isinstance(e, BinOp) and e.op == "and" and _const(e.rhs, 1):
        q = e.lhs
        if isinstance(q, BinOp) and q.op in ("divu", "divs") and isinstance(q.rhs, Const) and q.rhs.value > 0 \
                and _nonneg(q.lhs):
            return q.lhs, q.rhs.value, k
    return None


def _wrap_select(e: Select) -> Expr | None:
    """`(y%N)+1 ==|>= N ? 0 : (y%N)+1` → `(y+1) % N` and
    `(y%N)+1 ==|>= N ? P^1 : P` with P = ((y/N)&1)^k → `(((y+1)/N)&1)^k`."""
    c = e.cond
    if not (isinstance(c, Cmp) and c.pred in ("eq", "sge", "uge") and isinstance(c.rhs, Const)):
        return None
    inc = c.lhs
    if not (isinstance(inc, BinOp) and inc.op == "add" and _const(inc.rhs, 1)):
        return None
    mod = _mod_parts(inc.lhs)
    if mod is None or mod[1] != c.rhs.value:
        return None
    y, n = mod
    bits = e.bits
    y1 = BinOp("add", y, _c(1, y.bits, inc.line), y.bits, inc.line)
    if _const(e.true, 0) and same(e.false, inc):
        return BinOp(inc.lhs.op, y1, _c(n, inc.lhs.bits, c.rhs.line), inc.lhs.bits, e.line)  # type: ignore[union-attr]
    par, par_t = _parity_parts(e.false), _parity_parts(e.true)
    if par is not None and par_t is not None and par[1] == par_t[1] == n and same(par[0], y) \
            and same(par_t[0], y) and par_t[2] == par[2] ^ 1:
        q = BinOp("divu", y1, _c(n, y.bits, c.rhs.line), y.bits, e.line)
        p = BinOp("and", q, _c(1, y.bits, e.line), y.bits, e.line)
        if y.bits != bits:
            p = Cast("trunci" if y.bits > bits else "extui", p, bits, y.bits, e.line)
        return BinOp("xor", p, _c(par[2], bits, e.line), bits, e.line)
    return None


def printable(e: Expr) -> Expr:
    """The form a formula is printed in: value-preserving casts removed (so the rules see
    through them: `(trunci((p & 1) ^ 1)) ^ 1` is `p & 1`), then simplified. Kept only when it
    agrees with `e` by evaluation; otherwise `e` prints as it is."""
    if not children(e):
        return e
    stripped = _strip_casts(e)
    out = simplify(stripped)
    if shape(out) == shape(e):
        return e
    return out if _agree(e, out) else e


def _strip_casts(e: Expr) -> Expr:
    while isinstance(e, Cast) and _fits(*value_range(e.operand), e):
        e = e.operand
    kids = children(e)
    return _rebuild(e, tuple(_strip_casts(k) for k in kids)) if kids else e
