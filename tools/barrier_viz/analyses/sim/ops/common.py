"""Helpers the op families share: predicates, `%bar[%pred]` operand lists, barrier lookup,
and the CTAs' start-up rendezvous."""

from __future__ import annotations

from ....ir.model import Operation
from ..state import BarrierSlot, Ref, Step, Value, Wait


def truthy(v: Value) -> bool:
    """Unknown predicates are taken as true: the kernel has work to do."""
    return True if v is None else bool(v)


def bracketed_after(op: Operation, start: int) -> list[tuple[str, str | None]]:
    """`%bar[%pred]` items: a depth-0 operand followed by a depth-1 operand, from position `start`
    of the positional operands on."""
    items: list[tuple[str, str | None]] = []
    ops, depths = op.operands, op.operand_depths or [0] * len(op.operands)
    pos = -1
    i = 0
    while i < len(ops):
        if depths[i] == 0:
            pos += 1
            if pos >= start:
                pred = ops[i + 1] if i + 1 < len(ops) and depths[i + 1] > 0 else None
                items.append((ops[i], pred))
        i += 1
    return items


def need_slot(m, op: Operation, env, name: str, who: int | None = None, *, user: int | None = None) -> BarrierSlot | None:
    """The slot the barrier operand `name` names. `who`: note a remote use before its init
    (`Machine.early_use`); `user`: the thread using it, for `Machine.note_use` (which loaded
    values this use depends on)."""
    ref = env.get(name)
    slot = m.slot(ref, op)
    if slot is not None and user is not None:
        m.note_use(ref, op, env, user)
    if slot is None and isinstance(ref, Ref):
        m.notes.append(f"line {op.line}: barrier used before init_barrier (or with an unknown slot index)")
        if who is not None:
            m.early_use(ref, op, who)
    return slot


def cluster_rendezvous(m, op: Operation, who: int, it):
    yield Step(op)
    generation = m.cluster_arrive(op, who, it)
    yield Wait(op, m.cluster_slot(op), generation, it)
