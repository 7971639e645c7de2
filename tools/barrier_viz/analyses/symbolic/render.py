"""Printing expressions: readable infix text for people and a JSON tree for machines.
Value-preserving casts are left out of the text (the width change is noise in a formula).
"""

from __future__ import annotations


from .evaluate import _fits, value_range
from .expr import BinOp, Cast, Cmp, Const, Expr, Select, Unknown, Var
from .simplify import printable


_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "divs": "/", "divu": "/", "rems": "%", "remu": "%",
           "and": "&", "or": "|", "xor": "^", "shl": "<<", "shrs": ">>", "shru": ">>"}


_CMP_SYMBOL = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">=",
               "ult": "<u", "ule": "<=u", "ugt": ">u", "uge": ">=u"}


def render(e: Expr) -> str:
    """Readable infix text of the simplest equivalent form (`simplify.printable`); nested
    operations are parenthesized, `x + -1` reads `x - 1`."""
    return _text(printable(e))


def _text(e: Expr) -> str:
    if isinstance(e, Const):
        return str(e.value)
    if isinstance(e, Var):
        return e.name
    if isinstance(e, Unknown):
        return e.source or f"unknown({e.op} at line {e.line})"
    if isinstance(e, BinOp):
        if e.op == "add" and isinstance(e.rhs, Const) and e.rhs.value < 0:
            return f"{_wrapped(e.lhs)} - {-e.rhs.value}"
        if e.op in _SYMBOL:
            return f"{_wrapped(e.lhs)} {_SYMBOL[e.op]} {_wrapped(e.rhs)}"
        return f"{e.op}({_text(e.lhs)}, {_text(e.rhs)})"
    if isinstance(e, Cmp):
        return f"{_wrapped(e.lhs)} {_CMP_SYMBOL[e.pred]} {_wrapped(e.rhs)}"
    if isinstance(e, Select):
        return f"{_wrapped(e.cond)} ? {_wrapped(e.true)} : {_wrapped(e.false)}"
    if _fits(*value_range(e.operand), e):
        return _text(e.operand)  # value-preserving: the width change is noise in a formula
    return f"{e.op}<i{e.bits}>({_text(e.operand)})"


def _wrapped(e: Expr) -> str:
    while isinstance(e, Cast) and _fits(*value_range(e.operand), e):
        e = e.operand
    text = _text(e)
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
        return {"kind": "unknown", "op": e.op, "line": e.line, "reason": e.reason, **({"source": e.source} if e.source else {})}
    if isinstance(e, BinOp):
        return {"kind": "binop", "op": e.op, "bits": e.bits, "line": e.line, "lhs": to_json(e.lhs), "rhs": to_json(e.rhs)}
    if isinstance(e, Cmp):
        return {"kind": "cmp", "pred": e.pred, "line": e.line, "lhs": to_json(e.lhs), "rhs": to_json(e.rhs)}
    if isinstance(e, Select):
        return {"kind": "select", "bits": e.bits, "line": e.line, "cond": to_json(e.cond), "true": to_json(e.true),
                "false": to_json(e.false)}
    return {"kind": "cast", "op": e.op, "bits": e.bits, "from_bits": e.from_bits, "line": e.line,
            "operand": to_json(e.operand)}
