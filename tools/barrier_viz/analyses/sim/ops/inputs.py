"""Values the launch decides: program ids, and scalars loaded from input arrays.

`tt.get_program_id` / `tt.get_num_programs` read `Params` (in a cluster, the extension adds the
CTA's coordinate); a scalar `tt.load` through `tt.addptr` of an array the kernel never writes
reads `Params.memory` (`analyses.program.loaded`), the same value in every partition.
"""

from __future__ import annotations

from ....ir.model import Operation
from ...program.loaded import Loaded, Ptr, loaded_width
from ..registry import handles
from .arith import wrap_int


@handles("tt.addptr")
def _h_addptr(m, op: Operation, env, who, it):
    """`tt.addptr` of an input array's pointer by a known offset: the element it points at."""
    p, off = (env.get(n) for n in op.operands[:2]) if len(op.operands) >= 2 else (None, None)
    env[op.results[0]] = Ptr(p.position, p.name, p.offset + int(off)) if p.__class__ is Ptr and isinstance(off, int) \
        else None


@handles("tt.load")
def _h_load(m, op: Operation, env, who, it):
    """A scalar `tt.load` from an input array: the element's value (`params.memory`), the same
    in every partition; anything else is opaque."""
    p = env.get(op.operands[0]) if len(op.operands) == 1 else None
    width = loaded_width(op) if p.__class__ is Ptr else None
    for r in op.results:
        env[r] = None
    if width is None:
        return
    key = (p.position, p.offset)
    v = m.params.memory.value(p.position, p.offset, m.params.int_args)
    if v is None:
        return
    m.loads[key] = v
    m.thread_loads.setdefault(who, set()).add(key)
    m.array_names[p.position] = p.name
    env[op.results[0]] = Loaded(wrap_int(v, width), frozenset({key}))



@handles("tt.get_program_id")
def _h_program_id(m, op: Operation, env, who, it):
    value = m.params.axis_value(op, counts=False)
    axis = next(({"x": 0, "y": 1, "z": 2}[w] for w in (*op.keywords, *op.literals) if w in ("x", "y", "z")), 0)
    env[op.results[0]] = m.ext.program_id(m, value, axis, m.threads[who].cta)


@handles("tt.get_num_programs")
def _h_num_programs(m, op: Operation, env, who, it):
    env[op.results[0]] = m.params.axis_value(op, counts=True)
