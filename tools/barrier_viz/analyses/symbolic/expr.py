"""The expression model: immutable nodes (`Const`, `Var`, `BinOp`, `Cmp`, `Select`, `Cast`,
`Unknown`), each carrying the IR line it came from, and structural helpers (children, leaves,
shape, substitution). Nothing here knows about the IR or about integer semantics.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Iterable, Mapping, Union


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
    """A value the analysis does not model: `op` at `line`, and why; `source`, when known, is
    the expression the IR computes for it (`source.source_text`: `offs_ptr[s + 1]` for a load)."""

    op: str
    line: int
    reason: str = ""
    bits: int = 64
    source: str = ""


Expr = Union[Const, Var, BinOp, Cmp, Select, Cast, Unknown]


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
