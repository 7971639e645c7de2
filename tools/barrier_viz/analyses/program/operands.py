"""What an operand names, as the rules compare it: the allocation it traces back to, the slot of
a barrier use, a label for a barrier slot, and the TMA store ops that read shared memory.

Why here: several rules (and the interpreter's race excuses) need the same names for the same
things; a rule never imports another rule for them. Imports: ir/, facts/ only.
"""

from __future__ import annotations

from ...facts.barriers import Barrier, BarrierUse
from ...ir.model import Operation

# TMA ops that read a shared-memory buffer asynchronously and write global memory.
TMA_STORE_OPS = frozenset({"ttng.async_tma_copy_local_to_global", "ttng.async_tma_reduce", "ttng.async_tma_scatter"})


def traced_root(analysis, name: str, at: Operation):
    """The allocation value `name` (used at `at`) traces back to, or None when the trace stops."""
    t = analysis.tracer.trace(name, at)
    return t.key if t.resolved else None


def slot_key(use: BarrierUse) -> tuple:
    """Which slot of its barrier `use` touches: constant indices, else the index values' names."""
    return tuple(s.constant if s.constant is not None else s.value for s in use.slots)


def barrier_label(b: Barrier, use: BarrierUse | None = None) -> str:
    """`name[slot]...` of a barrier (and the slot `use` touches), as messages print it."""
    slots = "".join(f"[{s.constant if s.constant is not None else s.value}]" for s in (use.slots if use else ()))
    return f"{b.name}{slots}"


def buffer_name(key: tuple, writers) -> str:
    """The buffer operand's name at the first of `writers` ((op, barrier) pairs of TMA copies)."""
    op = writers[0][0]
    pos = op.positional
    return pos[1] if len(pos) > 1 else "buffer"


# Ops that read shared or tensor memory, with the positions of the operands they read.
READ_OPERANDS = {
    "ttng.tc_gen5_mma": (0, 1),
    "ttng.tc_gen5_mma_scaled": (0, 1),
    "ttng.warp_group_dot": (0, 1),
    "tt.dot": (0, 1),
    "ttg.local_load": (0,),
    "ttng.async_tma_copy_local_to_global": (1,),
}


def remotely_arrived(analysis) -> set[int]:
    """Allocations of barriers some op reaches through `map_to_remote_buffer` (a peer CTA's copy)."""
    out: set[int] = set()
    for op in analysis.ops:
        if op.name == "ttng.map_to_remote_buffer" and op.operands:
            t = analysis.tracer.trace(op.operands[0], op)
            if t.root is not None:
                out.add(id(t.root))
    return out
