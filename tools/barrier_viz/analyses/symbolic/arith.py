"""Integer semantics of `arith` ops as MLIR defines them: two's complement at a given width, i1
values 0/1, signed and unsigned division, casts. Plain integers in, plain integers out.
"""

from __future__ import annotations


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
