"""Named (hardware) barriers: `bar.arrive` / `bar.sync` on a barrier id with a thread count.

A generation completes when the expected threads have arrived, then re-arms; every thread of the
arriving partition counts (32 per warp). One per CTA and id.
"""

from __future__ import annotations

from ....ir.model import Operation
from ..registry import handles
from ..state import BarrierSlot, Ref, Step, Wait


def _named_slot(m, op: Operation, env, who: int) -> tuple[BarrierSlot | None, int]:
    """The named barrier `op` uses and the threads it expects; (None, 0) when either operand
    is unknown (the op is then reported as a limit, like any barrier op we cannot follow)."""
    pos = op.positional
    bar = env.get(pos[0]) if pos else None
    threads = env.get(pos[1]) if len(pos) > 1 else None
    if not isinstance(bar, int) or not isinstance(threads, int) or threads <= 0:
        m.notes.append(f"line {op.line}: named barrier with an unknown id or thread count; not modelled")
        return None, 0
    cta = m.threads[who].cta
    slot = m.named.get((cta, bar))
    if slot is None or slot.count != threads:
        # A generation completes when `threads` threads have arrived; it then re-arms (per CTA).
        slot = BarrierSlot(Ref(op, 0, ("named", bar), cta=cta), threads, threads, init_line=op.line, named=bar)
        m.named[(cta, bar)] = slot
    return slot, threads


@handles("ttng.arrive_barrier_named")
def _h_named_arrive(m, op: Operation, env, who, it):
    """`arrive_barrier_named %id, %threads` (bar.arrive): every thread of the partition arrives
    on hardware barrier `id`, without waiting."""
    slot, _ = _named_slot(m, op, env, who)
    if slot is None:
        return
    yield Step(op)
    m.arrive(slot, min(32 * m.threads[who].warps, slot.pending or slot.count), op.line, who, it=it)


@handles("ttng.wait_barrier_named")
def _h_named_wait(m, op: Operation, env, who, it):
    """`wait_barrier_named %id, %threads` (bar.sync): the partition's threads arrive, then wait
    until the generation they arrived in has its `threads` arrivals."""
    slot, _ = _named_slot(m, op, env, who)
    if slot is None:
        return
    yield Step(op)
    generation = slot.parity
    m.arrive(slot, min(32 * m.threads[who].warps, slot.pending or slot.count), op.line, who, it=it)
    yield Wait(op, slot, generation, it)
