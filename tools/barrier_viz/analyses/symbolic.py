"""Symbolic values: slot indices and phases of barrier operations as formulas of loop counters.

The question behind a hang is "which wait polls a phase that never comes", so every wait's slot
and phase must be known as a function of the iteration it runs in. The IR computes them with
short `arith` chains over loop-carried counters (ir-semantics §5): AutoWS threads i64
accumulation counters through nested loops (`divui/muli/subi` = mod, `andi 1` = parity, `xori
true` = inversion); upstream carries an i32 (stage, phase) pair advanced with `addi 1; cmpi eq|sge
N; select 0; xori 1; select`. This module

* traces an SSA value back to a *raw* expression tree (`Const`, `Var`, `BinOp`, `Cmp`,
  `Select`, `Cast`, `Unknown`), every node carrying the IR line it came from. Ops it does not
  model become an explicit `Unknown` leaf, never a guess;
* recognises loop-carried counters (additive chains across nested loops, wrap-around stage/phase
  pairs, one-iteration-delayed copies) and rewrites the tree in terms of one running counter per
  chain, then simplifies it to the normalized formula (`cnt % 3`, `((cnt / 3) & 1) ^ 1`). The
  simplified form is checked against the unsimplified one by evaluation before it is used;
* evaluates either form: `evaluate(expr, bindings)` for given counter values, and
  `SymbolicAnalysis.simulate(...)` which runs the raw loop recurrences for concrete iteration
  numbers (the ground truth the normalized form is tested against).

Loops are identified by the line of their `scf.for` / `scf.while` op. Trees are bounded in
height (`MAX_HEIGHT`); deeper chains end in an `Unknown` leaf saying so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping, Union

from ..facts.values import OpResult, ValueIndex
from ..ir.model import BlockArgument, Operation, ParsedIR

MAX_HEIGHT = 64
_SIMPLIFY_ROUNDS = 12
_CHECK_RANGE = 48

# ---------------------------------------------------------------------------------------------
# Expression nodes
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Const:
    """An integer constant (`true`/`false` are 1/0 of width 1)."""

    value: int
    bits: int
    line: int


@dataclass(frozen=True, slots=True)
class Var:
    """A value the tracer stops at. `kind`:

    * `iter_arg` / `loop_result` / `induction`: of the loop at line `loop` (index `index`);
    * `param`: a function argument or other value with no defining arithmetic;
    * `counter`: a running counter introduced by normalization (see `Counter`).
    """

    key: str
    name: str
    kind: str
    bits: int
    line: int
    loop: int | None = None
    index: int | None = None
    nonneg: bool = False


@dataclass(frozen=True, slots=True)
class BinOp:
    """`op` is one of add sub mul divs divu rems remu and or xor shl shrs shru mins maxs minu maxu."""

    op: str
    lhs: "Expr"
    rhs: "Expr"
    bits: int
    line: int


@dataclass(frozen=True, slots=True)
class Cmp:
    """`arith.cmpi` with its predicate (eq ne slt sle sgt sge ult ule ugt uge); width 1."""

    pred: str
    lhs: "Expr"
    rhs: "Expr"
    line: int
    bits: int = 1


@dataclass(frozen=True, slots=True)
class Select:
    cond: "Expr"
    true: "Expr"
    false: "Expr"
    bits: int
    line: int


@dataclass(frozen=True, slots=True)
class Cast:
    """extsi extui trunci index_cast index_castui, from width `from_bits` to `bits`."""

    op: str
    operand: "Expr"
    bits: int
    from_bits: int
    line: int


@dataclass(frozen=True, slots=True)
class Unknown:
    """A value the analysis does not model: `op` at `line`, and why."""

    op: str
    line: int
    reason: str = ""
    bits: int = 64


Expr = Union[Const, Var, BinOp, Cmp, Select, Cast, Unknown]

_BINOPS = {
    "arith.addi": "add", "arith.subi": "sub", "arith.muli": "mul", "arith.divsi": "divs",
    "arith.divui": "divu", "arith.remsi": "rems", "arith.remui": "remu", "arith.andi": "and",
    "arith.ori": "or", "arith.xori": "xor", "arith.shli": "shl", "arith.shrsi": "shrs",
    "arith.shrui": "shru", "arith.minsi": "mins", "arith.maxsi": "maxs", "arith.minui": "minu",
    "arith.maxui": "maxu", "arith.floordivsi": "floordivs", "arith.ceildivsi": "ceildivs",
    "arith.ceildivui": "ceildivu",
}
_CASTS = {"arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast", "arith.index_castui"}
_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
_PRED_RE = re.compile(r"arith\.cmpi\s+(eq|ne|slt|sle|sgt|sge|ult|ule|ugt|uge)\b")
_VIEW_OPS = frozenset({"ttg.memdesc_trans", "ttg.memdesc_subslice", "ttg.memdesc_reinterpret",
                       "ttg.memdesc_reshape", "ttng.tmem_subslice", "ttg.memdesc_subview"})
_PROGRAM_QUERIES = {"tt.get_program_id": "program_id", "tt.get_num_programs": "num_programs"}
_ALLOC_OPS = frozenset({"ttg.local_alloc", "ttng.tmem_alloc"})


def bits_of(type_text: str | None) -> int:
    """Width of an integer type (`index` counts as 64; memdesc slots are i32 indices)."""
    if not type_text:
        return 64
    m = re.fullmatch(r"\s*i(\d+)\s*", type_text)
    if m:
        return int(m.group(1))
    return 32 if type_text.strip().startswith("!ttg.memdesc") else 64


def is_memdesc(type_text: str | None) -> bool:
    return bool(type_text) and type_text.strip().startswith("!ttg.memdesc")


# ---------------------------------------------------------------------------------------------
# Integer semantics (MLIR two's complement; i1 values are 0/1)
# ---------------------------------------------------------------------------------------------


def wrap(value: int, bits: int) -> int:
    """Canonical form of `value` at width `bits`: 0/1 for i1, signed otherwise."""
    mask = (1 << bits) - 1
    v = value & mask
    if bits > 1 and v >> (bits - 1):
        v -= 1 << bits
    return v


def unsigned(value: int, bits: int) -> int:
    return value & ((1 << bits) - 1)


def signed(value: int, bits: int) -> int:
    v = unsigned(value, bits)
    return v - (1 << bits) if v >> (bits - 1) else v


class EvalError(ValueError):
    """A value cannot be computed: unknown leaf, missing binding, division by zero."""


def _tdiv(a: int, b: int) -> int:
    if b == 0:
        raise EvalError("division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def apply_binop(op: str, a: int, b: int, bits: int) -> int:
    """`op` on canonical values `a`, `b` of width `bits`."""
    if op == "add":
        r = a + b
    elif op == "sub":
        r = a - b
    elif op == "mul":
        r = a * b
    elif op in ("divs", "rems", "floordivs", "ceildivs"):
        sa, sb = signed(a, bits), signed(b, bits)
        if sb == 0:
            raise EvalError("division by zero")
        if op == "divs":
            r = _tdiv(sa, sb)
        elif op == "rems":
            r = sa - _tdiv(sa, sb) * sb
        elif op == "floordivs":
            r = sa // sb
        else:
            r = -((-sa) // sb)
    elif op in ("divu", "remu", "ceildivu"):
        ua, ub = unsigned(a, bits), unsigned(b, bits)
        if ub == 0:
            raise EvalError("division by zero")
        r = ua // ub if op == "divu" else (ua % ub if op == "remu" else -((-ua) // ub))
    elif op == "and":
        r = unsigned(a, bits) & unsigned(b, bits)
    elif op == "or":
        r = unsigned(a, bits) | unsigned(b, bits)
    elif op == "xor":
        r = unsigned(a, bits) ^ unsigned(b, bits)
    elif op == "shl":
        r = unsigned(a, bits) << unsigned(b, bits) if unsigned(b, bits) < bits else 0
    elif op == "shrs":
        r = signed(a, bits) >> min(unsigned(b, bits), bits)
    elif op == "shru":
        r = unsigned(a, bits) >> unsigned(b, bits) if unsigned(b, bits) < bits else 0
    elif op in ("mins", "maxs"):
        pick = min if op == "mins" else max
        r = pick(signed(a, bits), signed(b, bits))
    elif op in ("minu", "maxu"):
        pick = min if op == "minu" else max
        r = pick(unsigned(a, bits), unsigned(b, bits))
    else:  # pragma: no cover - constructor only builds the ops above
        raise EvalError(f"unsupported op {op}")
    return wrap(r, bits)


def apply_cmp(pred: str, a: int, b: int, bits: int) -> int:
    if pred in ("eq", "ne"):
        r = unsigned(a, bits) == unsigned(b, bits)
        return int(r if pred == "eq" else not r)
    if pred[0] == "s":
        x, y = signed(a, bits), signed(b, bits)
    else:
        x, y = unsigned(a, bits), unsigned(b, bits)
    return int({"lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[pred[1:]])


def apply_cast(op: str, v: int, from_bits: int, bits: int) -> int:
    """extui/index_castui zero-extend, extsi/index_cast sign-extend (i1 true → -1), trunci
    keeps the low bits."""
    if op in ("extui", "index_castui"):
        return wrap(unsigned(v, from_bits), bits)
    if op in ("extsi", "index_cast"):
        return wrap(signed(v, from_bits), bits)
    return wrap(v, bits)


# ---------------------------------------------------------------------------------------------
# Generic traversal helpers (height-bounded, so recursion depth is bounded)
# ---------------------------------------------------------------------------------------------


def children(e: Expr) -> tuple[Expr, ...]:
    if isinstance(e, BinOp) or isinstance(e, Cmp):
        return (e.lhs, e.rhs)
    if isinstance(e, Select):
        return (e.cond, e.true, e.false)
    if isinstance(e, Cast):
        return (e.operand,)
    return ()


def leaves(e: Expr) -> Iterable[Expr]:
    """Every leaf of `e` (iterative)."""
    stack = [e]
    while stack:
        cur = stack.pop()
        kids = children(cur)
        if kids:
            stack.extend(reversed(kids))
        else:
            yield cur


def unknown_leaves(e: Expr) -> list[Unknown]:
    return [leaf for leaf in leaves(e) if isinstance(leaf, Unknown)]


def shape(e: Expr) -> tuple:
    """Structural identity ignoring lines: two nodes with the same shape compute the same value."""
    if isinstance(e, Const):
        return ("c", e.value, e.bits)
    if isinstance(e, Var):
        return ("v", e.key)
    if isinstance(e, Unknown):
        return ("u", e.op, e.line)
    if isinstance(e, BinOp):
        return ("b", e.op, e.bits, shape(e.lhs), shape(e.rhs))
    if isinstance(e, Cmp):
        return ("p", e.pred, shape(e.lhs), shape(e.rhs))
    if isinstance(e, Select):
        return ("s", shape(e.cond), shape(e.true), shape(e.false))
    return ("x", e.op, e.bits, e.from_bits, shape(e.operand))


def same(a: Expr, b: Expr) -> bool:
    return shape(a) == shape(b)


def substitute(e: Expr, mapping: Mapping[str, Expr]) -> Expr:
    """Replace `Var`s whose key is in `mapping`."""
    if isinstance(e, Var):
        return mapping.get(e.key, e)
    kids = children(e)
    if not kids:
        return e
    new = tuple(substitute(k, mapping) for k in kids)
    return _rebuild(e, new)


def _rebuild(e: Expr, kids: tuple[Expr, ...]) -> Expr:
    if isinstance(e, BinOp):
        return replace(e, lhs=kids[0], rhs=kids[1])
    if isinstance(e, Cmp):
        return replace(e, lhs=kids[0], rhs=kids[1])
    if isinstance(e, Select):
        return replace(e, cond=kids[0], true=kids[1], false=kids[2])
    if isinstance(e, Cast):
        return replace(e, operand=kids[0])
    return e


def height(e: Expr) -> int:
    kids = children(e)
    return 1 + max((height(k) for k in kids), default=0)


# ---------------------------------------------------------------------------------------------
# Evaluation with bindings (normalized formulas)
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# Rendering and JSON
# ---------------------------------------------------------------------------------------------

_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "divs": "/", "divu": "/", "rems": "%", "remu": "%",
           "and": "&", "or": "|", "xor": "^", "shl": "<<", "shrs": ">>", "shru": ">>"}
_CMP_SYMBOL = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">=",
               "ult": "<u", "ule": "<=u", "ugt": ">u", "uge": ">=u"}


def render(e: Expr) -> str:
    """Readable infix text; nested operations are parenthesized."""
    if isinstance(e, Const):
        return str(e.value)
    if isinstance(e, Var):
        return e.name
    if isinstance(e, Unknown):
        return f"unknown({e.op} at line {e.line})"
    if isinstance(e, BinOp):
        if e.op in _SYMBOL:
            return f"{_wrapped(e.lhs)} {_SYMBOL[e.op]} {_wrapped(e.rhs)}"
        return f"{e.op}({render(e.lhs)}, {render(e.rhs)})"
    if isinstance(e, Cmp):
        return f"{_wrapped(e.lhs)} {_CMP_SYMBOL[e.pred]} {_wrapped(e.rhs)}"
    if isinstance(e, Select):
        return f"{_wrapped(e.cond)} ? {_wrapped(e.true)} : {_wrapped(e.false)}"
    if _fits(*value_range(e.operand), e):
        return render(e.operand)  # value-preserving: the width change is noise in a formula
    return f"{e.op}<i{e.bits}>({render(e.operand)})"


def _wrapped(e: Expr) -> str:
    while isinstance(e, Cast) and _fits(*value_range(e.operand), e):
        e = e.operand
    text = render(e)
    if isinstance(e, (BinOp, Cmp, Select)) and (not isinstance(e, BinOp) or e.op in _SYMBOL):
        return f"({text})"
    return text


def to_json(e: Expr) -> dict:
    """The machine form of an expression tree (JSON-serialisable)."""
    if isinstance(e, Const):
        return {"kind": "const", "value": e.value, "bits": e.bits, "line": e.line}
    if isinstance(e, Var):
        out = {"kind": "var", "var": e.key, "name": e.name, "var_kind": e.kind, "bits": e.bits, "line": e.line}
        if e.loop is not None:
            out["loop"] = e.loop
        if e.index is not None:
            out["index"] = e.index
        return out
    if isinstance(e, Unknown):
        return {"kind": "unknown", "op": e.op, "line": e.line, "reason": e.reason}
    if isinstance(e, BinOp):
        return {"kind": "binop", "op": e.op, "bits": e.bits, "line": e.line, "lhs": to_json(e.lhs), "rhs": to_json(e.rhs)}
    if isinstance(e, Cmp):
        return {"kind": "cmp", "pred": e.pred, "line": e.line, "lhs": to_json(e.lhs), "rhs": to_json(e.rhs)}
    if isinstance(e, Select):
        return {"kind": "select", "bits": e.bits, "line": e.line, "cond": to_json(e.cond), "true": to_json(e.true),
                "false": to_json(e.false)}
    return {"kind": "cast", "op": e.op, "bits": e.bits, "from_bits": e.from_bits, "line": e.line,
            "operand": to_json(e.operand)}


# ---------------------------------------------------------------------------------------------
# Simplification
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# Loops and counters
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LoopInfo:
    """What a loop carries. For `scf.for`, `inits`/`yields` are per iter_arg; `results[j]` is
    the value of result j in terms of the loop's iter_args after the last iteration (for a
    while: the `scf.condition` operands). Memdesc iter_args carry their slot index."""

    line: int
    kind: str  # "for" | "while"
    names: tuple[str, ...]
    bits: tuple[int, ...]
    inits: tuple[Expr, ...]
    yields: tuple[Expr, ...]
    results: tuple[Expr, ...]
    lb: Expr | None
    ub: Expr | None
    step: Expr | None
    enclosing: tuple[int, ...]  # lines of the loops around it, outermost first
    loc_names: tuple[str | None, ...] = ()


@dataclass(frozen=True, slots=True)
class Step:
    """How one loop advances a counter: by `amount` per iteration, only when `condition`
    holds (a select at `condition_line`), or by what a nested loop adds (`via` its line)."""

    loop: int
    amount: int | None
    condition: str | None = None
    condition_line: int | None = None
    via: int | None = None

    def describe(self) -> str:
        if self.via is not None:
            return f"carried through loop at line {self.via}"
        amount = f"+{self.amount}" if self.amount is not None and self.amount >= 0 else str(self.amount)
        text = f"{amount} per iteration of loop at line {self.loop}"
        if self.condition is not None:
            text += f" when {self.condition} (select at line {self.condition_line})"
        return text


@dataclass(frozen=True, slots=True)
class Counter:
    """A running counter: one value threaded through nested loops (iter_args linked by inits and
    loop results). `kind` "additive": its value is `init` plus the steps taken so far (the
    formula uses the value itself). `kind` "wrap": an upstream (stage, phase) pair; the formula
    uses `n`, the number of advances so far, with stage = (stage_init + n) % modulus and phase =
    phase_init ^ (((stage_init + n) / modulus) & 1)."""

    key: str
    name: str
    kind: str
    line: int
    root_loop: int
    init: Expr
    steps: tuple[Step, ...]
    members: tuple[tuple[int, int], ...]
    modulus: int | None = None
    phase_init: Expr | None = None

    def describe(self) -> str:
        steps = "; ".join(s.describe() for s in self.steps) or "never advanced"
        if self.kind == "toggle":
            return (f"{self.name}: flips of the phase carried from loop at line {self.root_loop}, "
                    f"starting at {render(self.init)}; {steps}")
        if self.kind == "wrap":
            return (f"{self.name}: advances of the (stage, phase) pair carried from loop at line {self.root_loop}, "
                    f"stage starts at {render(self.init)}, phase at {render(self.phase_init) if self.phase_init else '?'}, "
                    f"wraps at {self.modulus}; {steps}")
        return f"{self.name}: starts at {render(self.init)} before loop at line {self.root_loop}; {steps}"

    def to_json(self) -> dict:
        out = {"key": self.key, "name": self.name, "kind": self.kind, "line": self.line, "root_loop": self.root_loop,
               "init": to_json(self.init), "steps": [s.describe() for s in self.steps],
               "members": [list(m) for m in self.members], "description": self.describe()}
        if self.modulus is not None:
            out["modulus"] = self.modulus
        if self.phase_init is not None:
            out["phase_init"] = to_json(self.phase_init)
        return out


@dataclass(frozen=True, slots=True)
class SymbolicValue:
    """One traced operand: its raw tree, the normalized tree and formula, the counters the
    formula uses, and every unknown leaf it depends on (including counter inits and the
    recurrences of iter_args left as variables)."""

    name: str
    line: int
    raw: Expr
    expr: Expr
    formula: str
    counters: tuple[Counter, ...]
    unknowns: tuple[Unknown, ...]
    verified: bool = True

    @property
    def resolved(self) -> bool:
        return not self.unknowns

    @property
    def constant(self) -> int | None:
        return wrap(self.expr.value, self.expr.bits) if isinstance(self.expr, Const) else None

    def to_json(self) -> dict:
        return {"name": self.name, "line": self.line, "formula": self.formula, "expr": to_json(self.expr),
                "counters": [c.to_json() for c in self.counters],
                "unknowns": [render(u) for u in self.unknowns], "constant": self.constant is not None}


# ---------------------------------------------------------------------------------------------
# The analysis
# ---------------------------------------------------------------------------------------------


@dataclass
class _Frame:
    key: tuple
    defn: object
    at: Operation | None
    slot: bool
    deps: list[tuple] = field(default_factory=list)
    expanded: bool = False


class SymbolicAnalysis:
    """Traces and normalizes integer values and barrier slot indices of one parsed unit.

    `source` (the unit's text) is a fallback only: `arith.cmpi` predicates and program-id axes
    are read from the op's keywords and literals; the text is consulted for models built without them.
    """

    def __init__(self, ir: ParsedIR, source: bytes | str | None = None, values: ValueIndex | None = None):
        self.ir = ir
        self.values = values or ValueIndex(ir)
        self._source = source.encode() if isinstance(source, str) else source
        self._memo: dict[tuple, Expr] = {}
        self._heights: dict[tuple, int] = {}
        self._normalized: dict[tuple, tuple[Expr, bool]] = {}
        self._next_states: dict[int, dict[tuple, Expr]] = {}
        self._loops: dict[int, LoopInfo] = {}
        self._loop_ops: dict[int, Operation] = {}
        self._counters: dict[tuple[int, int], tuple[Counter, Expr] | None] = {}
        self._in_progress: set[tuple[int, int]] = set()

    # -- public API ---------------------------------------------------------------------------
    def raw(self, name: str, at: Operation) -> Expr:
        """The raw expression tree of integer value `name` as used by `at`."""
        return self._trace(name, at, slot=False)

    def raw_slot(self, name: str, at: Operation) -> Expr:
        """The slot index of memdesc value `name` (the `memdesc_index` index it was taken at,
        through views, captures, loop-carried memdescs and `scf.if` results)."""
        return self._trace(name, at, slot=True)

    def value(self, name: str, at: Operation) -> SymbolicValue:
        return self._finish(name, at, self.raw(name, at))

    def slot(self, name: str, at: Operation) -> SymbolicValue:
        return self._finish(name, at, self.raw_slot(name, at))

    def _finish(self, name: str, at: Operation, raw: Expr) -> SymbolicValue:
        return _normalize(self, name, at, raw)

    def wait(self, op: Operation) -> tuple[SymbolicValue, SymbolicValue]:
        """(slot, phase) of a `ttng.wait_barrier`. The phase is the parity the wait compares:
        the low bit of the i32 operand, so an `extsi` of an i1 (0 or -1) reads as 0 or 1."""
        if len(op.operands) < 2:
            u = Unknown(op.name, op.line, "wait without phase operand")
            bad = SymbolicValue("?", op.line, u, u, render(u), (), (u,))
            return bad, bad
        slot = self.slot(op.operands[0], op)
        phase = self.value(op.operands[1], op)
        if value_range(phase.expr) not in ((0, 0), (0, 1), (1, 1)):
            raw = phase.raw
            parity = BinOp("and", raw, Const(1, raw.bits, op.line), raw.bits, op.line)
            phase = self._finish(op.operands[1], op, parity)
        return slot, phase

    def wait_at(self, op: Operation, iterations: Mapping[int, int], trip_counts: Mapping[int, int] | None = None,
                params: Mapping[str, int] | None = None) -> tuple[int, int]:
        """Concrete (slot, parity) a `ttng.wait_barrier` polls when the loops around it (by line)
        are at the given iterations: the IR's recurrences run by `simulate`. Raises EvalError
        when a needed trip count or kernel input is not given."""
        slot, phase = self.wait(op)
        sim = _Simulator(self, iterations, trip_counts or {}, params or {})
        return sim.eval(slot.raw, dict(iterations)), sim.eval(phase.raw, dict(iterations)) & 1

    def loop(self, line: int) -> LoopInfo | None:
        """The loop at `line` (after any trace reached it)."""
        if line not in self._loops and line in self._loop_ops:
            self._loops[line] = self._loop_info(self._loop_ops[line])
        return self._loops.get(line)

    def describe(self, var: Var) -> str:
        """What a variable left in a formula stands for: a loop variable's loop, initial value
        and the recurrence its yield applies (raw, in terms of the loop's iter_args)."""
        if var.kind == "counter":
            found = self._counter_by_key(var.key)
            return found.describe() if found is not None else var.name
        if var.kind == "param":
            return f"{var.name}: kernel input (function argument or program id)"
        info = self.loop(var.loop) if var.loop is not None else None
        if info is None:
            return var.name
        if var.kind == "induction":
            parts = [render(x) if x is not None else "?" for x in (info.lb, info.ub, info.step)]
            return f"{var.name}: induction variable of loop at line {info.line} ({parts[0]} to {parts[1]} step {parts[2]})"
        j = var.index or 0
        if var.kind == "loop_result" and info.kind == "while":
            return f"{var.name}: result {j} of while loop at line {info.line} = {render(info.results[j])} after the last iteration"
        what = "iter_arg" if var.kind == "iter_arg" else "result (final iter_arg)"
        return (f"{var.name}: {what} {j} of loop at line {info.line}; starts at {render(info.inits[j])}, "
                f"next = {render(info.yields[j])}")

    def simulate(self, e: Expr, iterations: Mapping[int, int], trip_counts: Mapping[int, int] | None = None,
                 params: Mapping[str, int] | None = None) -> int:
        """Concrete value of raw expression `e` when each loop (by line) is at the given
        iteration (0-based), running the IR's own recurrences. Loop results need the trip
        counts of their loops (given, or computed from constant bounds)."""
        return _Simulator(self, iterations, trip_counts or {}, params or {}).eval(e, dict(iterations))

    # -- tracing ------------------------------------------------------------------------------
    def _trace(self, name: str, at: Operation, slot: bool) -> Expr:
        defn = self.values.lookup(name, at)
        if defn is None:
            return Unknown("undefined", at.line, f"{name} is not defined")
        return self._build(defn, at, slot)

    def _key(self, defn: object, slot: bool) -> tuple:
        if isinstance(defn, OpResult):
            return ("r", id(defn.op), defn.index, slot)
        return ("a", id(defn), slot)

    def _build(self, root: object, at: Operation, slot: bool) -> Expr:
        """Post-order construction with an explicit stack; results memoized per definition.
        SSA use-def chains are acyclic once loop back-edges are cut (iter_args are leaves), so
        a frame is simply revisited until all its operands are built. A node whose tree would be
        taller than MAX_HEIGHT becomes an `Unknown` leaf, which bounds every later recursion."""
        root_key = self._key(root, slot)
        if root_key in self._memo:
            return self._memo[root_key]
        stack = [_Frame(root_key, root, at, slot)]
        budget = 1_000_000
        while stack:
            budget -= 1
            if budget < 0:  # pragma: no cover - defensive: only a malformed model could loop
                self._memo[root_key] = Unknown("trace", at.line, "trace did not terminate")
                break
            fr = stack[-1]
            if fr.key in self._memo:
                stack.pop()
                continue
            if not fr.expanded:
                fr.expanded = True
                fr.deps = self._deps(fr)
            missing = [d for d in fr.deps if d[0] not in self._memo]
            if missing:
                stack.extend(_Frame(k, d, a, s) for k, d, a, s in missing)
                continue
            stack.pop()
            kids = [self._memo[d[0]] for d in fr.deps]
            node = self._node(fr, kids)
            # Height depends only on the subtree, so the cut is the same whatever the query.
            h = 1 + max((self._heights.get(d[0], 1) for d in fr.deps), default=0)
            if h > MAX_HEIGHT:
                node = Unknown(self._op_name(fr), self._line(fr), f"trace deeper than {MAX_HEIGHT}")
                h = 1
            self._heights[fr.key] = h
            self._memo[fr.key] = node
        return self._memo[root_key]

    def _op_name(self, fr: _Frame) -> str:
        return fr.defn.op.name if isinstance(fr.defn, OpResult) else "block argument"

    def _line(self, fr: _Frame) -> int:
        return fr.defn.op.line if isinstance(fr.defn, OpResult) else fr.defn.line  # type: ignore[union-attr]

    def _dep(self, name: str, at: Operation, slot: bool) -> tuple:
        defn = self.values.lookup(name, at)
        if defn is None:
            key = ("undef", name, id(at))
            self._memo.setdefault(key, Unknown("undefined", at.line, f"{name} is not defined"))
            return (key, None, at, slot)
        return (self._key(defn, slot), defn, at, slot)

    def _deps(self, fr: _Frame) -> list[tuple]:
        """The values node `fr` is built from, as (key, definition, use site, slot mode)."""
        d = fr.defn
        if isinstance(d, OpResult):
            op = d.op
            if fr.slot:
                if op.name == "ttg.memdesc_index" and len(op.operands) > 1:
                    return [self._dep(op.operands[1], op, False)]
                if op.name in _VIEW_OPS and op.operands:
                    return [self._dep(op.operands[0], op, True)]
                if op.name == "scf.if":
                    return self._if_deps(op, d.index, True)
                if op.name == "ttg.warp_specialize":
                    return self._ws_deps(op, d.index, True)
                return []
            if op.name in _BINOPS or op.name == "arith.cmpi":
                return [self._dep(n, op, False) for n in op.operands[:2]] if len(op.operands) >= 2 else []
            if op.name == "arith.select" and len(op.operands) == 3:
                return [self._dep(n, op, False) for n in op.operands]
            if op.name in _CASTS and op.operands:
                return [self._dep(op.operands[0], op, False)]
            if op.name == "scf.if":
                return self._if_deps(op, d.index, False)
            if op.name == "ttg.warp_specialize":
                return self._ws_deps(op, d.index, False)
            return []
        arg: BlockArgument = d  # type: ignore[assignment]
        owner = arg.block.region.parent if arg.block is not None and arg.block.region is not None else None
        if owner is not None and owner.name == "ttg.warp_specialize" and arg.index < len(owner.operands):
            return [self._dep(owner.operands[arg.index], owner, fr.slot)]
        if owner is not None and owner.name == "scf.while" and arg.block.region.index == 1:  # type: ignore[union-attr]
            cond = _terminator(owner, 0)
            if cond is not None and arg.index + 1 < len(cond.operands):
                return [self._dep(cond.operands[arg.index + 1], cond, fr.slot)]
        return []

    def _ws_deps(self, op: Operation, index: int, slot: bool) -> list[tuple]:
        """A warp_specialize result is what its default region yields (`ttg.warp_yield`)."""
        if not op.regions or not op.regions[0].blocks or not op.regions[0].blocks[-1].operations:
            return []
        term = op.regions[0].blocks[-1].operations[-1]
        if term.name != "ttg.warp_yield" or index >= len(term.operands):
            return []
        return [self._dep(term.operands[index], term, slot)]

    def _if_deps(self, op: Operation, index: int, slot: bool) -> list[tuple]:
        if len(op.regions) < 2 or not op.operands:
            return []
        then_y, else_y = _terminator(op, 0), _terminator(op, 1)
        if then_y is None or else_y is None or index >= len(then_y.operands) or index >= len(else_y.operands):
            return []
        return [self._dep(op.operands[0], op, False), self._dep(then_y.operands[index], then_y, slot),
                self._dep(else_y.operands[index], else_y, slot)]

    def _node(self, fr: _Frame, kids: list[Expr]) -> Expr:
        d = fr.defn
        if isinstance(d, OpResult):
            return self._op_node(d, fr.slot, kids)
        return self._arg_node(d, fr.slot, kids)  # type: ignore[arg-type]

    def _op_node(self, d: OpResult, slot: bool, kids: list[Expr]) -> Expr:
        op = d.op
        line = op.line
        rbits = bits_of(d.type)
        if op.name == "scf.if" and len(kids) == 3:
            return Select(kids[0], kids[1], kids[2], 32 if slot else rbits, line)
        if op.name == "ttg.warp_specialize" and len(kids) == 1:
            return kids[0]
        if op.name in _PROGRAM_QUERIES and not slot:
            words = [w for w in (*getattr(op, "keywords", ()), *op.literals) if w in ("x", "y", "z")]
            m = None if words else re.search(r"\b(?:get_program_id|get_num_programs)\s+(x|y|z)\b", self._text(op))
            axis = words[0] if words else (m.group(1) if m else _axis(op.attr("axis")))
            label = f"{_PROGRAM_QUERIES[op.name]}_{axis}"
            return Var(f"param:{label}", label, "param", rbits, line)
        if op.name in ("scf.for", "scf.while"):
            self._loop_ops[line] = op
            return Var(f"L{line}.result{d.index}", f"{_bare(d.name)}", "loop_result",
                       32 if slot else rbits, line, loop=line, index=d.index)
        if slot:
            if op.name == "ttg.memdesc_index" and kids:
                return kids[0]
            if op.name in _VIEW_OPS and kids:
                return kids[0]
            if op.name in _ALLOC_OPS:
                return Const(0, 32, line)  # an unindexed allocation: its only slot
            return Unknown(op.name, line, "barrier not reached through memdesc_index", 32)
        if op.name == "arith.constant":
            return self._constant(op, rbits)
        if op.name in _BINOPS and len(kids) == 2:
            return BinOp(_BINOPS[op.name], kids[0], kids[1], rbits, line)
        if op.name == "arith.cmpi" and len(kids) == 2:
            pred = self._predicate(op)
            if pred is None:
                return Unknown(op.name, line, "predicate not readable")
            return Cmp(pred, kids[0], kids[1], line)
        if op.name == "arith.select" and len(kids) == 3:
            return Select(kids[0], kids[1], kids[2], rbits, line)
        if op.name in _CASTS and kids:
            from_bits = bits_of(op.types[0]) if op.types else kids[0].bits
            return Cast(op.name.split(".", 1)[1], kids[0], rbits, from_bits, line)
        return Unknown(op.name, line, "", rbits)

    def _arg_node(self, arg: BlockArgument, slot: bool, kids: list[Expr]) -> Expr:
        if kids:
            return kids[0]  # a capture or a while "after" argument: same value
        block = arg.block
        owner = block.region.parent if block is not None and block.region is not None else None
        bits = 32 if slot else bits_of(arg.type)
        label = _bare(arg.name)
        if owner is None or owner.name in ("tt.func", "func.func", "llvm.func"):
            return Var(f"param:{arg.name}@{arg.line}", label, "param", bits, arg.line)
        if owner.name == "scf.for" and block.region.index == 0:  # type: ignore[union-attr]
            self._loop_ops[owner.line] = owner
            if arg.index == 0:
                return Var(f"L{owner.line}.iv", label, "induction", bits, arg.line, loop=owner.line)
            return Var(f"L{owner.line}.iter{arg.index - 1}", label, "iter_arg", bits, arg.line,
                       loop=owner.line, index=arg.index - 1)
        if owner.name == "scf.while" and block.region.index == 0:  # type: ignore[union-attr]
            self._loop_ops[owner.line] = owner
            return Var(f"L{owner.line}.iter{arg.index}", label, "iter_arg", bits, arg.line,
                       loop=owner.line, index=arg.index)
        return Unknown(owner.name, arg.line, f"argument {arg.name} of {owner.name}")

    def _constant(self, op: Operation, bits: int) -> Expr:
        lits = [t for t in op.literals if t not in (":",)]
        text = "".join(lits[:2]) if lits[:1] == ["-"] else (lits[0] if lits else "")
        if text == "true":
            return Const(1, 1, op.line)
        if text == "false":
            return Const(0, 1, op.line)
        try:
            return Const(wrap(int(text, 0), bits), bits, op.line)
        except ValueError:
            value = op.attributes.get("value", "")
            m = re.fullmatch(r"\s*(-?\d+)\s*(?::\s*\w+)?\s*", value)
            if m:
                return Const(wrap(int(m.group(1)), bits), bits, op.line)
            return Unknown(op.name, op.line, "not an integer constant")

    def _text(self, op: Operation) -> str:
        if self._source is None or op.end_byte <= op.start_byte:
            return ""
        return self._source[op.start_byte:op.end_byte].decode("utf-8", "replace")

    def _predicate(self, op: Operation) -> str | None:
        pred = getattr(op, "predicate", None)
        if isinstance(pred, str) and pred in _PREDICATES:
            return pred
        attr = op.attr("predicate")
        if isinstance(attr, int) and 0 <= attr < len(_PREDICATES):
            return _PREDICATES[attr]
        if isinstance(attr, str) and attr.strip() in _PREDICATES:
            return attr.strip()
        # The parser keeps the bare predicate word (`slt` of `arith.cmpi slt, ...`), so the
        # unit's source text is needed only for models built without keywords.
        words = [w for w in getattr(op, "keywords", ()) if w in _PREDICATES]
        if words:
            return words[0]
        m = _PRED_RE.search(self._text(op))
        return m.group(1) if m else None

    # -- loops ----------------------------------------------------------------------------------
    def _loop_info(self, op: Operation) -> LoopInfo:
        enclosing = tuple(reversed([a.line for a in op.ancestors() if a.name in ("scf.for", "scf.while")]))
        for a in op.ancestors():
            if a.name in ("scf.for", "scf.while"):
                self._loop_ops.setdefault(a.line, a)
        if op.name == "scf.for":
            args = op.regions[0].arguments[1:] if op.regions else []
            inits = op.operands[3:3 + len(args)]
            y = _terminator(op, 0)
            slots = [is_memdesc(a.type) for a in args]
            init_e = tuple(self._trace(n, op, s) for n, s in zip(inits, slots))
            yield_e = tuple(self._trace(y.operands[j], y, slots[j]) if y is not None and j < len(y.operands)
                            else Unknown("scf.for", op.line, "missing yield") for j in range(len(args)))
            results = tuple(Var(f"L{op.line}.iter{j}", _bare(a.name), "iter_arg", 32 if slots[j] else bits_of(a.type),
                                a.line, loop=op.line, index=j) for j, a in enumerate(args))
            lb, ub, st = (self._trace(n, op, False) for n in op.operands[:3]) if len(op.operands) >= 3 else (None,) * 3
            return LoopInfo(op.line, "for", tuple(a.name for a in args), tuple(32 if s else bits_of(a.type) for a, s in zip(args, slots)),
                            init_e, yield_e, results, lb, ub, st, enclosing, tuple(a.loc_name for a in args))
        args = op.regions[0].arguments if op.regions else []
        slots = [is_memdesc(a.type) for a in args]
        init_e = tuple(self._trace(n, op, s) for n, s in zip(op.operands, slots))
        y = _terminator(op, 1) if len(op.regions) > 1 else None
        yield_e = tuple(self._trace(y.operands[j], y, slots[j]) if y is not None and j < len(y.operands)
                        else Unknown("scf.while", op.line, "missing yield") for j in range(len(args)))
        cond = _terminator(op, 0)
        nres = len(op.results)
        res_slots = [is_memdesc(t) for t in op.result_types] + [False] * nres
        results = tuple(self._trace(cond.operands[j + 1], cond, res_slots[j]) if cond is not None and j + 1 < len(cond.operands)
                        else Unknown("scf.while", op.line, "missing condition") for j in range(nres))
        return LoopInfo(op.line, "while", tuple(a.name for a in args), tuple(32 if s else bits_of(a.type) for a, s in zip(args, slots)),
                        init_e, yield_e, results, None, None, None, enclosing, tuple(a.loc_name for a in args))

    # -- counters -----------------------------------------------------------------------------
    def counter(self, loop: int, index: int) -> tuple[Counter, Expr | None] | None:
        """The counter iter_arg `index` of loop `loop` belongs to, and its closed form in terms of
        the counter variable (the variable itself for additive counters). The closed form is None
        for a wrap pair whose stage starts at -1: only its advanced values have one."""
        key = (loop, index)
        if key in self._counters:
            return self._counters[key]
        if key in self._in_progress:
            return None
        self._in_progress.add(key)
        try:
            found = self._recognise(loop, index)
        finally:
            self._in_progress.discard(key)
        self._counters[key] = found
        return found

    def _recognise(self, loop: int, index: int) -> tuple[Counter, Expr] | None:
        info = self.loop(loop)
        if info is None or index >= len(info.yields):
            return None
        wrap_found = self._wrap(info, index)
        if wrap_found is not None:
            return wrap_found
        toggle_found = self._toggle(info, index)
        if toggle_found is not None:
            return toggle_found
        root = self._chain_root(info, index)
        if root is not None:
            return root
        steps = self._additive(info.yields[index], info, index, 0)
        if not steps:
            return None
        label = _increment_label(self, info, index) or _bare(info.names[index])
        name = label if label == _bare(info.names[index]) else f"{label}({info.names[index]})"
        init = info.inits[index]
        init_value = _const_value(init)
        # Counters are assumed never to overflow their width (they count uses of a buffer).
        nonneg = init_value is not None and init_value >= 0 and all((s.amount or 0) >= 0 for s in steps)
        members = self._members(info, index)
        c = Counter(f"counter:L{loop}.{index}", name, "additive", info.line, loop, init, tuple(steps), members)
        return c, Var(c.key, name, "counter", info.bits[index], info.line, nonneg=nonneg)

    def _chain_root(self, info: LoopInfo, index: int) -> tuple[Counter, Expr] | None:
        """An inner link of a chain: its init comes from an enclosing counter that carries it."""
        init = info.inits[index]
        outer = _base_var(init)
        if outer is None or outer.kind != "iter_arg" or outer.loop is None or outer.index is None:
            return None
        found = self.counter(outer.loop, outer.index)
        if found is None or found[0].kind != "additive":
            return None
        if (info.line, index) not in found[0].members:
            return None
        return found

    def _members(self, info: LoopInfo, index: int) -> tuple[tuple[int, int], ...]:
        out = [(info.line, index)]
        stack = [info.yields[index]]
        while stack:
            e = stack.pop()
            if isinstance(e, Var) and e.kind == "loop_result" and e.loop is not None and e.index is not None:
                inner = self.loop(e.loop)
                if inner is not None and e.index < len(inner.inits):
                    out.extend(m for m in self._members(inner, e.index) if m not in out)
            stack.extend(children(e))
        return tuple(out)

    def _additive(self, y: Expr, info: LoopInfo, index: int, depth: int) -> list[Step] | None:
        """Steps by which yield `y` advances iter_arg `index` of `info`, or None when `y` is not
        the iter_arg plus constants, conditional constants and nested-loop advances."""
        if depth > 16:
            return None
        me = f"L{info.line}.iter{index}"
        if isinstance(y, Var) and y.key == me:
            return []
        if isinstance(y, Cast):
            return self._additive(y.operand, info, index, depth + 1)
        if isinstance(y, BinOp) and y.op == "add" and isinstance(y.rhs, Const):
            base = self._additive(y.lhs, info, index, depth + 1)
            return None if base is None else base + [Step(info.line, y.rhs.value)]
        if isinstance(y, BinOp) and y.op == "add" and isinstance(y.lhs, Const):
            base = self._additive(y.rhs, info, index, depth + 1)
            return None if base is None else base + [Step(info.line, y.lhs.value)]
        if isinstance(y, Select):
            a = self._additive(y.true, info, index, depth + 1)
            b = self._additive(y.false, info, index, depth + 1)
            if a is None or b is None:
                return None
            if not a and not b:
                return []
            cond = render(simplify(y.cond))
            out = [s for s in a + b if s.via is not None]
            sum_a = sum(s.amount or 0 for s in a)
            sum_b = sum(s.amount or 0 for s in b)
            if sum_a:
                out.append(Step(info.line, sum_a, cond, y.line))
            if sum_b:
                out.append(Step(info.line, sum_b, f"not ({cond})", y.line))
            return out
        if isinstance(y, Var) and y.kind == "loop_result" and y.loop is not None and y.index is not None:
            inner = self.loop(y.loop)
            if inner is None or inner.kind != "for" or y.index >= len(inner.inits):
                return None
            pre = self._additive(inner.inits[y.index], info, index, depth + 1)
            if pre is None:
                return None
            inner_steps = self._additive(inner.yields[y.index], inner, y.index, 0)
            if inner_steps is None:
                return None
            return pre + [Step(info.line, None, via=inner.line)] + inner_steps
        return None

    def _wrap(self, info: LoopInfo, index: int) -> tuple[Counter, Expr] | None:
        pair = self._wrap_pair(info, index)
        if pair is None:
            return None
        stage, phase, modulus, steps = pair
        # The chain's root: follow inits outward while they are an enclosing wrap pair.
        root_info, rs, rp = info, stage, phase
        for _ in range(16):
            s0, p0 = root_info.inits[rs], root_info.inits[rp]
            if isinstance(s0, Var) and isinstance(p0, Var) and s0.kind == p0.kind == "iter_arg" and s0.loop == p0.loop \
                    and s0.loop is not None and s0.index is not None and p0.index is not None:
                outer = self.loop(s0.loop)
                outer_pair = self._wrap_pair(outer, s0.index) if outer is not None else None
                if outer_pair is not None and outer_pair[:3] == (s0.index, p0.index, modulus) \
                        and (root_info.line, rs) in self._members(outer, s0.index):
                    root_info, rs, rp = outer, s0.index, p0.index  # type: ignore[assignment]
                    continue
            break
        s0, p0 = root_info.inits[rs], root_info.inits[rp]
        s0v = _const_value(s0)
        if s0v is None or not -1 <= s0v < modulus:
            return None
        label = root_info.loc_names[rs] if root_info.loc_names and root_info.loc_names[rs] else _bare(root_info.names[rs])
        key = f"wrap:L{root_info.line}.{rs}"
        name = f"n({label})" if label == _bare(root_info.names[rs]) else f"n({label}, {root_info.names[rs]})"
        members = self._members(root_info, rs)
        c = Counter(key, name, "wrap", root_info.line, root_info.line, s0, tuple(steps), members, modulus, p0)
        bits_s, bits_p = info.bits[stage], info.bits[phase]
        n = Var(key, name, "counter", bits_s, root_info.line, nonneg=True)
        direct = _direct_wrap(info, stage, phase)
        if direct is not None:
            # The advanced values (the selects the yield passes on) after n advances are the
            # state after n + 1: valid for every n >= 0 once s0 >= -1.
            ys, yp = info.yields[stage], info.yields[phase]
            if direct[1] is not None:
                ys, yp = ys.true, yp.true  # type: ignore[union-attr]
            table = self._next_states.setdefault(info.line, {})
            table[shape(ys)] = _wrap_stage(n, s0v + 1, modulus, bits_s, ys.line)
            table[shape(yp)] = _wrap_phase(n, s0v + 1, modulus, p0, bits_s, bits_p, yp.line)
        if s0v < 0:
            # s = -1 before the first advance: no closed form for the iter_arg itself.
            found_none = (c, None)
            self._counters[(info.line, phase)] = found_none  # type: ignore[assignment]
            self._counters[(info.line, stage)] = found_none  # type: ignore[assignment]
            return found_none  # type: ignore[return-value]
        stage_e = _wrap_stage(n, s0v, modulus, bits_s, s0.line)
        phase_e = _wrap_phase(n, s0v, modulus, p0, bits_s, bits_p, p0.line)
        self._counters[(info.line, phase)] = (c, phase_e)
        if index == phase:
            self._counters[(info.line, stage)] = (c, stage_e)
            return c, phase_e
        return c, stage_e

    def _counter_by_key(self, key: str) -> Counter | None:
        for found in self._counters.values():
            if found is not None and found[0].key == key:
                return found[0]
        return None

    def _toggle(self, info: LoopInfo, index: int) -> tuple[Counter, Expr] | None:
        """A phase flipped once per use with no stage (single-buffered upstream channels):
        `p' = p ^ 1`, possibly guarded or carried through a nested loop; p = p0 ^ (n & 1)."""
        steps = self._toggle_steps(info, index, 0)
        if not steps:
            return None
        root_info, ri = info, index
        for _ in range(16):
            init = root_info.inits[ri]
            if isinstance(init, Var) and init.kind == "iter_arg" and init.loop is not None and init.index is not None:
                outer = self.loop(init.loop)
                if outer is not None and self._toggle_steps(outer, init.index, 0) \
                        and (root_info.line, ri) in self._members(outer, init.index):
                    root_info, ri = outer, init.index
                    continue
            break
        p0 = root_info.inits[ri]
        if _const_value(p0) not in (0, 1):
            return None
        bits = info.bits[index]
        label = root_info.loc_names[ri] if root_info.loc_names and root_info.loc_names[ri] else _bare(root_info.names[ri])
        key = f"toggle:L{root_info.line}.{ri}"
        name = f"n({label})"
        c = Counter(key, name, "toggle", root_info.line, root_info.line, p0, tuple(self._toggle_steps(root_info, ri, 0) or ()),
                    self._members(root_info, ri), 1, p0)
        n = Var(key, name, "counter", bits, root_info.line, nonneg=True)
        closed = simplify(BinOp("xor", BinOp("and", n, Const(1, bits, p0.line), bits, p0.line), _retype_to(p0, bits), bits, p0.line))
        return c, closed

    def _toggle_steps(self, info: LoopInfo, index: int, depth: int) -> list[Step] | None:
        if depth > 16 or index >= len(info.yields):
            return None
        me = f"L{info.line}.iter{index}"
        y = info.yields[index]
        guard: Expr | None = None
        if isinstance(y, Select) and isinstance(y.false, Var) and y.false.key == me:
            guard, y = y.cond, y.true
        if isinstance(y, BinOp) and y.op == "xor" and _const(y.rhs, 1) and isinstance(y.lhs, Var) and y.lhs.key == me:
            g = render(simplify(guard)) if guard is not None else None
            return [Step(info.line, 1, g, guard.line if guard is not None else None)]
        if guard is None and isinstance(y, Var) and y.kind == "loop_result" and y.loop is not None and y.index is not None:
            inner = self.loop(y.loop)
            if inner is None or inner.kind != "for" or y.index >= len(inner.inits):
                return None
            init = inner.inits[y.index]
            if not (isinstance(init, Var) and init.key == me):
                return None
            sub = self._toggle_steps(inner, y.index, depth + 1)
            return None if not sub else [Step(info.line, None, via=inner.line)] + sub
        return None

    def _wrap_pair(self, info: LoopInfo, index: int) -> tuple[int, int, int, list[Step]] | None:
        """(stage index, phase index, modulus, steps) when iter_arg `index` is half of a
        wrap-around pair advanced in this loop (directly or by a nested loop it carries)."""
        for stage in range(len(info.yields)):
            for phase in range(len(info.yields)):
                if stage == phase or index not in (stage, phase):
                    continue
                direct = _direct_wrap(info, stage, phase)
                if direct is not None:
                    guard = direct[1]
                    step = Step(info.line, 1, render(simplify(guard)) if guard is not None else None,
                                guard.line if guard is not None else None)
                    return stage, phase, direct[0], [step]
                ys, yp = info.yields[stage], info.yields[phase]
                if isinstance(ys, Var) and isinstance(yp, Var) and ys.kind == yp.kind == "loop_result" \
                        and ys.loop == yp.loop and ys.loop is not None:
                    inner = self.loop(ys.loop)
                    if inner is None or ys.index is None or yp.index is None:
                        continue
                    si, pi = inner.inits[ys.index], inner.inits[yp.index]
                    if not (isinstance(si, Var) and si.key == f"L{info.line}.iter{stage}"
                            and isinstance(pi, Var) and pi.key == f"L{info.line}.iter{phase}"):
                        continue
                    sub = self._wrap_pair(inner, ys.index)
                    if sub is not None and sub[:2] == (ys.index, yp.index):
                        return stage, phase, sub[2], [Step(info.line, None, via=inner.line)] + sub[3]
        return None


def _wrap_stage(n: Var, offset: int, modulus: int, bits: int, line: int) -> Expr:
    """(n + offset) % modulus."""
    return simplify(BinOp("remu", _plus(n, offset, bits, line), Const(modulus, bits, line), bits, line))


def _wrap_phase(n: Var, offset: int, modulus: int, p0: Expr, bits_s: int, bits_p: int, line: int) -> Expr:
    """p0 ^ (((n + offset) / modulus) & 1): one flip per wrap."""
    q = BinOp("divu", _plus(n, offset, bits_s, line), Const(modulus, bits_s, line), bits_s, line)
    par: Expr = BinOp("and", q, Const(1, bits_s, line), bits_s, line)
    if bits_p != bits_s:
        par = Cast("trunci" if bits_s > bits_p else "extui", par, bits_p, bits_s, line)
    return simplify(BinOp("xor", par, _retype_to(p0, bits_p), bits_p, line))


def _direct_wrap(info: LoopInfo, stage: int, phase: int) -> tuple[int, Expr | None] | None:
    """(N, guard) when the yields are `s' = (s+1 ==|>= N) ? 0 : s+1` and `p' = (same cond) ?
    p^1 : p`, possibly both under one guard `g ? advanced : unchanged` (predicated iterations:
    the pair then advances only when g holds)."""
    ys, yp = info.yields[stage], info.yields[phase]
    s_key, p_key = f"L{info.line}.iter{stage}", f"L{info.line}.iter{phase}"
    guard: Expr | None = None
    if isinstance(ys, Select) and isinstance(yp, Select) and same(ys.cond, yp.cond) \
            and isinstance(ys.false, Var) and ys.false.key == s_key and isinstance(yp.false, Var) and yp.false.key == p_key \
            and isinstance(ys.true, Select) and isinstance(yp.true, Select):
        guard, ys, yp = ys.cond, ys.true, yp.true
    if not (isinstance(ys, Select) and isinstance(yp, Select) and same(ys.cond, yp.cond)):
        return None
    c = ys.cond
    if not (isinstance(c, Cmp) and c.pred in ("eq", "sge", "uge") and isinstance(c.rhs, Const) and c.rhs.value > 0):
        return None
    inc = c.lhs
    if not (isinstance(inc, BinOp) and inc.op == "add" and _const(inc.rhs, 1) and isinstance(inc.lhs, Var)
            and inc.lhs.key == s_key):
        return None
    if not (_const(ys.true, 0) and same(ys.false, inc)):
        return None
    t = yp.true
    if not (isinstance(yp.false, Var) and yp.false.key == p_key and isinstance(t, BinOp) and t.op == "xor"
            and _const(t.rhs, 1) and isinstance(t.lhs, Var) and t.lhs.key == p_key):
        return None
    return c.rhs.value, guard


def _const_value(e: Expr) -> int | None:
    s = simplify(e)
    return wrap(s.value, s.bits) if isinstance(s, Const) else None


def _base_var(e: Expr) -> Var | None:
    """The iter_arg an additive init expression starts from (`x`, `x + c`, `c ? x + 1 : x`)."""
    for _ in range(16):
        if isinstance(e, Var):
            return e
        if isinstance(e, Cast):
            e = e.operand
        elif isinstance(e, BinOp) and e.op == "add" and isinstance(e.rhs, Const):
            e = e.lhs
        elif isinstance(e, BinOp) and e.op == "add" and isinstance(e.lhs, Const):
            e = e.rhs
        elif isinstance(e, Select):
            a, b = _base_var(e.true), _base_var(e.false)
            return a if a is not None and b is not None and a.key == b.key else None
        else:
            return None
    return None


def _increment_label(analysis: SymbolicAnalysis, info: LoopInfo, index: int) -> str | None:
    """Loc name of the op that increments the counter (AutoWS: `loc("accum_cnt")`), found as
    the `addi` on the innermost link of the chain."""
    stack = [info.yields[index]]
    while stack:
        e = stack.pop()
        if isinstance(e, BinOp) and e.op == "add":
            op = _op_at_line(analysis, e.line, "arith.addi")
            if op is not None:
                return op.loc_name or _bare(op.results[0])
        if isinstance(e, Var) and e.kind == "loop_result" and e.loop is not None and e.index is not None:
            inner = analysis.loop(e.loop)
            if inner is not None and e.index < len(inner.yields):
                stack.append(inner.yields[e.index])
                continue
        stack.extend(children(e))
    return None


def _op_at_line(analysis: SymbolicAnalysis, line: int, name: str) -> Operation | None:
    cache = getattr(analysis, "_by_line", None)
    if cache is None:
        cache = {}
        for op in analysis.ir.walk():
            cache.setdefault((op.line, op.name), op)
        analysis._by_line = cache  # type: ignore[attr-defined]
    return cache.get((line, name))


def _terminator(op: Operation, region_index: int) -> Operation | None:
    if region_index >= len(op.regions):
        return None
    region = op.regions[region_index]
    if not region.blocks or not region.blocks[-1].operations:
        return None
    last = region.blocks[-1].operations[-1]
    return last if last.name in ("scf.yield", "scf.condition") else None


def _axis(value: object) -> str:
    return {0: "x", 1: "y", 2: "z"}.get(value, "x") if isinstance(value, int) else "x"


def _bare(name: str) -> str:
    return name[1:] if name.startswith("%") else name


# ---------------------------------------------------------------------------------------------
# Normalization of one value
# ---------------------------------------------------------------------------------------------


def _normalize(self: SymbolicAnalysis, name: str, at: Operation, raw: Expr) -> SymbolicValue:
    """Substitute counters for the iter_args and loop results they explain, then simplify;
    the simplified form is kept only if it agrees with the substituted one by evaluation."""
    mapping: dict[str, Expr] = {}
    counters: dict[str, Counter] = {}
    raw_vars = [leaf for leaf in leaves(raw) if isinstance(leaf, Var) and leaf.loop is not None and leaf.index is not None]
    for leaf in raw_vars:
        if leaf.kind == "iter_arg":
            self.counter(leaf.loop, leaf.index)  # type: ignore[arg-type]
    table: dict[tuple, Expr] = {}
    for loop in {leaf.loop for leaf in raw_vars}:
        table.update(self._next_states.get(loop, {}))  # type: ignore[arg-type]
    work = _replace_shapes(raw, table) if table else raw
    for leaf in list(leaves(work)):
        if not isinstance(leaf, Var) or leaf.key in mapping or leaf.loop is None or leaf.index is None:
            continue
        if leaf.kind not in ("iter_arg", "loop_result"):
            continue
        info = self.loop(leaf.loop)
        if info is None:
            continue
        if leaf.kind == "loop_result" and info.kind == "while":
            continue
        found = self.counter(leaf.loop, leaf.index)
        if found is not None and found[1] is not None:
            counters[found[0].key] = found[0]
            mapping[leaf.key] = _retype_to(found[1], leaf.bits)
            continue
        if found is not None:
            continue
        delayed = _delayed(self, info, leaf.index)
        if delayed is not None:
            for c in delayed[1]:
                counters[c.key] = c
            mapping[leaf.key] = _retype_to(delayed[0], leaf.bits)
    mapping = _same_point(work, mapping)
    for e in table.values():
        for v in leaves(e):
            if isinstance(v, Var) and v.kind == "counter" and _uses_counter(work, v.key) and v.key.startswith("wrap:"):
                found_c = self._counter_by_key(v.key)
                if found_c is not None:
                    counters[v.key] = found_c
    counters = {k: c for k, c in counters.items()
                if any(_uses_counter(e, k) for e in mapping.values()) or _uses_counter(work, k)}
    substituted = substitute(work, mapping) if mapping else work
    key = shape(substituted)
    cached = self._normalized.get(key)
    if cached is None:
        expr = simplify(substituted)
        verified = shape(expr) == key or _agree(substituted, expr)
        cached = (expr if verified else substituted, verified)
        self._normalized[key] = cached
    expr, verified = cached
    unknowns = _dependencies(self, expr, counters.values())
    return SymbolicValue(name, at.line, raw, expr, render(expr), tuple(counters.values()), tuple(unknowns), verified)



def _replace_shapes(e: Expr, table: Mapping[tuple, Expr]) -> Expr:
    """Replace every subtree whose shape is in `table`."""
    hit = table.get(shape(e))
    if hit is not None:
        return hit
    kids = children(e)
    return _rebuild(e, tuple(_replace_shapes(k, table) for k in kids)) if kids else e


def _same_point(raw: Expr, mapping: dict[str, Expr]) -> dict[str, Expr]:
    """Drop substitutions that would merge different program points of one counter.

    A counter variable names the running value at the point of use. If one expression used,
    say, an outer loop's iter_arg and the nested loop's result of the same chain, both would
    become the same variable although their values differ; such values are left raw."""
    points: dict[str, set[tuple]] = {}
    raws = {leaf.key: leaf for leaf in leaves(raw) if isinstance(leaf, Var)}
    for key, closed in mapping.items():
        leaf = raws.get(key)
        if leaf is None:
            continue
        for ck in {v.key for v in leaves(closed) if isinstance(v, Var) and v.kind == "counter"}:
            points.setdefault(ck, set()).add((leaf.kind, leaf.loop))
    bad = {ck for ck, pts in points.items() if len(pts) > 1}
    if not bad:
        return mapping
    return {k: v for k, v in mapping.items() if not any(_uses_counter(v, ck) for ck in bad)}


def _uses_counter(e: Expr, key: str) -> bool:
    return any(isinstance(v, Var) and v.key == key for v in leaves(e))


def _retype_to(e: Expr, bits: int) -> Expr:
    if e.bits == bits:
        return e
    return Cast("trunci" if e.bits > bits else "extui", e, bits, e.bits, e.line)


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


def _delayed(self: SymbolicAnalysis, info: LoopInfo, index: int) -> tuple[Expr, list[Counter]] | None:
    """An iter_arg that carries the previous iteration's value of an expression F over
    counters started by this loop (ir-semantics §5.4: the barrier and phase of the previous
    MMA; pipelined AutoWS loops: a counter one use behind another): d = F(counter one
    iteration earlier). Accepted only when d's init equals F one iteration before the first
    (wrap: n = -1; additive: init - step) and the simplified form checks out by evaluation."""
    y = info.yields[index]
    me = f"L{info.line}.iter{index}"
    if any(isinstance(leaf, Var) and leaf.key == me for leaf in leaves(y)):
        return None
    mapping: dict[str, Expr] = {}
    used: dict[str, Counter] = {}
    start: dict[str, int] = {}
    stride: dict[str, int] = {}
    for leaf in leaves(y):
        if isinstance(leaf, Var) and leaf.kind == "iter_arg" and leaf.loop == info.line and leaf.index is not None:
            found = self.counter(info.line, leaf.index)
            if found is None or found[1] is None or found[0].root_loop != info.line:
                return None
            c = found[0]
            if c.kind == "additive":
                init = _const_value(c.init)
                if init is None or len(c.steps) != 1 or c.steps[0].condition is not None or c.steps[0].amount is None \
                        or c.steps[0].loop != info.line:
                    return None
                start[c.key], stride[c.key] = init, c.steps[0].amount
            elif c.kind in ("wrap", "toggle"):
                start[c.key], stride[c.key] = 0, 1
            else:
                return None
            used[c.key] = c
            mapping[leaf.key] = _retype_to(found[1], leaf.bits)
        elif isinstance(leaf, Unknown) or (isinstance(leaf, Var) and leaf.kind != "param"):
            return None
    if not used:
        return None
    f = substitute(y, mapping)
    init = _const_value(info.inits[index])
    if init is None:
        return None
    vars_in_f = {v.key: v for v in leaves(f) if isinstance(v, Var) and v.key in used}
    shift = {k: BinOp("add", v, Const(-stride[k], v.bits, info.line), v.bits, info.line) for k, v in vars_in_f.items()}
    shifted = substitute(f, shift)
    try:
        if evaluate(shifted, start) != wrap(init, shifted.bits):
            return None
    except EvalError:
        return None
    out = simplify(shifted)
    for i in range(_CHECK_RANGE):
        bind = {k: start[k] + i * stride[k] for k in used}
        try:
            if evaluate(out, bind) != evaluate(shifted, bind):
                out = shifted
                break
        except EvalError:
            return None
    return out, list(used.values())


def _dependencies(self: SymbolicAnalysis, expr: Expr, counters: Iterable[Counter]) -> list[Unknown]:
    """Unknown leaves the value depends on: in the formula, in counter inits, and in the inits
    and yields of iter_args the formula still refers to (loop bounds excluded: they decide how
    often, not which slot or phase)."""
    out: list[Unknown] = []
    seen_vars: set[str] = set()
    stack: list[Expr] = [expr] + [c.init for c in counters] + [c.phase_init for c in counters if c.phase_init]
    while stack:
        e = stack.pop()
        for leaf in leaves(e):
            if isinstance(leaf, Unknown):
                if leaf not in out:
                    out.append(leaf)
            elif isinstance(leaf, Var) and leaf.kind in ("iter_arg", "loop_result") and leaf.key not in seen_vars:
                seen_vars.add(leaf.key)
                info = self.loop(leaf.loop) if leaf.loop is not None else None
                if info is None or leaf.index is None:
                    continue
                if leaf.kind == "loop_result" and info.kind == "while":
                    if leaf.index < len(info.results):
                        stack.append(info.results[leaf.index])
                    continue
                if leaf.index < len(info.inits):
                    stack.extend((info.inits[leaf.index], info.yields[leaf.index]))
    return out


# ---------------------------------------------------------------------------------------------
# Simulation of the raw recurrences
# ---------------------------------------------------------------------------------------------


class _Simulator:
    """Runs loop recurrences concretely. A loop's carried state at iteration i is computed from
    its inits by applying its yields i times (per component, so one unknown iter_arg does not
    poison the others); nested loop results run the nested loop for its trip count."""

    def __init__(self, analysis: SymbolicAnalysis, iterations: Mapping[int, int], trips: Mapping[int, int],
                 params: Mapping[str, int]):
        self.an = analysis
        self.iterations = iterations
        self.trips = trips
        self.params = params
        self.states: dict[tuple, list[tuple]] = {}

    def eval(self, e: Expr, env: dict[int, int]) -> int:
        if isinstance(e, Const):
            return wrap(e.value, e.bits)
        if isinstance(e, Unknown):
            raise EvalError(f"unknown({e.op} at line {e.line})")
        if isinstance(e, Var):
            return wrap(self._var(e, env), e.bits)
        if isinstance(e, BinOp):
            return apply_binop(e.op, self.eval(e.lhs, env), self.eval(e.rhs, env), e.bits)
        if isinstance(e, Cmp):
            return apply_cmp(e.pred, self.eval(e.lhs, env), self.eval(e.rhs, env), e.lhs.bits)
        if isinstance(e, Select):
            return self.eval(e.true if self.eval(e.cond, env) else e.false, env)
        return apply_cast(e.op, self.eval(e.operand, env), e.from_bits, e.bits)

    def _var(self, v: Var, env: dict[int, int]) -> int:
        if v.kind == "param":
            for k in (v.key, v.name, "%" + v.name):
                if k in self.params:
                    return self.params[k]
            raise EvalError(f"no value for parameter {v.name}")
        if v.loop is None:
            raise EvalError(f"{v.name} is a normalized counter; simulate the raw expression")
        info = self.an.loop(v.loop)
        if info is None:
            raise EvalError(f"loop at line {v.loop} unknown")
        if v.kind == "induction":
            i = self._iteration(v.loop, env)
            if info.lb is None or info.step is None:
                raise EvalError("loop without bounds")
            return self.eval(info.lb, env) + i * self.eval(info.step, env)
        if v.kind == "iter_arg":
            return self._component(info, self._iteration(v.loop, env), v.index or 0, env)
        trip = self._trip(info, env)
        if info.kind == "for":
            return self._component(info, trip, v.index or 0, env)
        inner = dict(env)
        inner[info.line] = trip
        return self.eval(info.results[v.index or 0], inner)

    def _iteration(self, loop: int, env: dict[int, int]) -> int:
        if loop not in env:
            raise EvalError(f"iteration of loop at line {loop} not given")
        return env[loop]

    def _trip(self, info: LoopInfo, env: dict[int, int]) -> int:
        if info.line in self.trips:
            return self.trips[info.line]
        if info.kind == "for" and info.lb is not None and info.ub is not None and info.step is not None:
            lb, ub, st = self.eval(info.lb, env), self.eval(info.ub, env), self.eval(info.step, env)
            if st > 0:
                return max(0, -((lb - ub) // st))
        raise EvalError(f"trip count of loop at line {info.line} not given")

    def _component(self, info: LoopInfo, i: int, j: int, env: dict[int, int]) -> int:
        outer = {l: env[l] for l in info.enclosing if l in env}
        key = (info.line, tuple(sorted(outer.items())))
        states = self.states.get(key)
        if states is None:
            states = [tuple(self._try(e, outer) for e in info.inits)]
            self.states[key] = states
        while len(states) <= i:
            k = len(states) - 1
            env_k = dict(outer)
            env_k[info.line] = k
            states.append(tuple(self._try(e, env_k) for e in info.yields))
        value = states[i][j]
        if isinstance(value, EvalError):
            raise value
        return value

    def _try(self, e: Expr, env: dict[int, int]) -> int | EvalError:
        try:
            return self.eval(e, env)
        except EvalError as exc:
            return exc


def barrier_waits(ops: Iterable[Operation]) -> list[Operation]:
    """The `ttng.wait_barrier` ops among `ops`."""
    return [op for op in ops if op.name == "ttng.wait_barrier"]
