"""Integer semantics of `arith.*`: the interpreter's and, through `arith_value`, the trip counts'.

Values are kept in canonical form (two's complement, signed; i1 is 0 or 1) and every operation
reads its operands signed or unsigned as its name says. Unknown operands or ops give None.
"""

from __future__ import annotations

import re

from ....ir.model import Operation
from ...program.loaded import Loaded
from ..state import Value

INT_TYPE = re.compile(r"^i(\d+)$")


def _width(type_: str | None) -> int | None:
    if type_ is None:
        return None
    if type_ == "index":
        return 64
    m = INT_TYPE.match(type_)
    return int(m.group(1)) if m else None


def _wrap(v: int, width: int | None) -> int:
    """Canonical form of an integer of `width` bits: two's complement signed (i1: 0 or 1)."""
    if width is None:
        return v
    v &= (1 << width) - 1
    if width > 1 and v >> (width - 1):
        v -= 1 << width
    return v


def _u(v: int, width: int | None) -> int:
    """The unsigned reading of a canonical value."""
    return v if width is None else v & ((1 << width) - 1)


def _signed(v: int, width: int | None) -> int:
    if width is None:
        return v
    v &= (1 << width) - 1
    return v - (1 << width) if width > 1 and v >> (width - 1) else v


def _constant(op: Operation) -> Value:
    lits = [x for x in op.literals if x not in ("<", ">", "dense")]
    if not lits or "dense" in op.literals:
        return None
    t = lits[0]
    if t in ("true", "false"):
        return 1 if t == "true" else 0
    try:
        return _wrap(int(t, 0), _width(op.result_types[0] if op.result_types else None))
    except ValueError:
        return None


def execute_arith(m, op: Operation, env: dict[str, Value]) -> None:
    plan = m.arith_plans.get(id(op))
    if plan is None or plan[0] is not op:
        plan = m.arith_plans[id(op)] = _arith_plan(op)
    _, name, width, src_width, fn, result_name, operands = plan
    if result_name is None:
        return
    if name == "constant":
        env[result_name] = fn
        return
    get = env.get
    args = [get(n) for n in operands]
    if name == "select" and len(args) == 3 and args[0] is not None:
        # Only the chosen operand matters (a CLC tile id selected against an unknown offset).
        chosen = args[1] if args[0] else args[2]
        env[result_name] = _wrap(chosen, width) if isinstance(chosen, int) else None
        if chosen.__class__ is Loaded:
            env[result_name] = Loaded(env[result_name], chosen.keys)
        return
    if None in args or not args:
        env[result_name] = None
        return
    try:
        result = fn(args, width, src_width, op)
    except (ZeroDivisionError, ValueError, TypeError, IndexError):  # as arith_value: too few operands is unknown
        result = None
    if not isinstance(result, int):
        env[result_name] = None
        return
    env[result_name] = _wrap(result, width)
    for a in args:
        if a.__class__ is Loaded:
            break
    else:
        return  # no operand was loaded (the common case)
    # A value computed from loaded ones stays an input (analyses.program.loaded); `a[i + 1] - a[i]`
    # marks `a` as an array of offsets.
    keys = frozenset().union(*(a.keys for a in args if a.__class__ is Loaded))
    env[result_name] = Loaded(env[result_name], keys)
    if name == "subi" and all(a.__class__ is Loaded for a in args) and len({k[0] for k in keys}) == 1:
        m.offset_arrays.add(next(iter(keys))[0])


def _arith_plan(op: Operation) -> tuple:
    """What `execute_arith` needs of an op, computed once per op (types parsed, handler looked up):
    (op, name, result width, source width, handler or constant value, result, operands)."""
    name = op.name[6:]
    width = _width(op.result_types[0] if op.result_types else None)
    result_name = op.results[0] if op.results else None
    if name == "constant":
        return (op, name, width, width, _constant(op), result_name, ())
    src_width = _width(op.types[0]) if op.types else width
    return (op, name, width, src_width, _ARITH.get(name, _unknown), result_name, tuple(op.operands))


def _unknown(args, width, src_width, op):
    return None


def _cmp(args, width, src_width, op):
    pred = next((a for a in _cmp_pred(op)), "eq")
    a, b = args
    sa, sb = _signed(a, src_width), _signed(b, src_width)
    ua, ub = _u(a, src_width), _u(b, src_width)
    table = {"eq": ua == ub, "ne": ua != ub, "slt": sa < sb, "sle": sa <= sb, "sgt": sa > sb, "sge": sa >= sb,
             "ult": ua < ub, "ule": ua <= ub, "ugt": ua > ub, "uge": ua >= ub}
    return int(table[pred])


def _cmp_pred(op: Operation) -> list[str]:
    words = list(getattr(op, "keywords", [])) + list(op.literals)
    preds = [t for t in words if t in ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")]
    if preds:
        return preds
    raw = op.attributes.get("predicate", "")
    return [raw.strip()] if raw else []


def _div_s(a, b, w):
    sa, sb = _signed(a, w), _signed(b, w)
    q = abs(sa) // abs(sb)
    return q if (sa >= 0) == (sb >= 0) else -q


def _rem_s(a, b, w):
    sa, sb = _signed(a, w), _signed(b, w)
    r = abs(sa) % abs(sb)
    return r if sa >= 0 else -r


_ARITH = {
    "addi": lambda a, w, sw, op: a[0] + a[1],
    "subi": lambda a, w, sw, op: a[0] - a[1],
    "muli": lambda a, w, sw, op: a[0] * a[1],
    "divui": lambda a, w, sw, op: _u(a[0], w) // _u(a[1], w),
    "divsi": lambda a, w, sw, op: _div_s(a[0], a[1], w),
    "ceildivsi": lambda a, w, sw, op: -(-_signed(a[0], w) // _signed(a[1], w)),
    "ceildivui": lambda a, w, sw, op: -(-_u(a[0], w) // _u(a[1], w)),
    "floordivsi": lambda a, w, sw, op: _signed(a[0], w) // _signed(a[1], w),
    "remui": lambda a, w, sw, op: _u(a[0], w) % _u(a[1], w),
    "remsi": lambda a, w, sw, op: _rem_s(a[0], a[1], w),
    "andi": lambda a, w, sw, op: a[0] & a[1],
    "ori": lambda a, w, sw, op: a[0] | a[1],
    "xori": lambda a, w, sw, op: a[0] ^ a[1],
    "shli": lambda a, w, sw, op: a[0] << _u(a[1], w),
    "shrui": lambda a, w, sw, op: _u(a[0], w) >> _u(a[1], w),
    "shrsi": lambda a, w, sw, op: _signed(a[0], w) >> _u(a[1], w),
    "extui": lambda a, w, sw, op: _u(a[0], sw),
    "extsi": lambda a, w, sw, op: _signed(a[0], sw),
    "trunci": lambda a, w, sw, op: a[0],
    "index_cast": lambda a, w, sw, op: _signed(a[0], sw),
    "index_castui": lambda a, w, sw, op: _u(a[0], sw),
    "select": lambda a, w, sw, op: a[1] if a[0] else a[2],
    "cmpi": _cmp,
    "maxsi": lambda a, w, sw, op: max(_signed(a[0], w), _signed(a[1], w)),
    "minsi": lambda a, w, sw, op: min(_signed(a[0], w), _signed(a[1], w)),
    "maxui": lambda a, w, sw, op: max(_u(a[0], w), _u(a[1], w)),
    "minui": lambda a, w, sw, op: min(_u(a[0], w), _u(a[1], w)),
}


def arith_value(op: Operation, args: list[int]) -> int | None:
    """The value `op` (an `arith.*` op) computes from concrete operands, exactly as a run does:
    `trip_counts` evaluates loop bounds with it, so its trip counts are the simulation's."""
    name = op.name[6:]
    width = _width(op.result_types[0] if op.result_types else None)
    if name == "constant":
        return _constant(op)
    if not args or any(a is None for a in args):
        return None
    src_width = _width(op.types[0]) if op.types else width
    try:
        result = _ARITH.get(name, _unknown)(args, width, src_width, op)
    except (ZeroDivisionError, ValueError, TypeError, IndexError):
        return None
    return _wrap(result, width) if isinstance(result, int) else None


def int_width(type_: str | None) -> int | None:
    return _width(type_)


def wrap_int(v: int, width: int | None) -> int:
    return _wrap(v, width)
