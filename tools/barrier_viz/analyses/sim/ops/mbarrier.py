"""mbarrier handlers: init, wait, arrive / expect, and NVWS tokens (full and empty barrier arrays).

In the CGA form (`Machine.cga`) a barrier with broadcast bits lives in its group's leader: the
extension's `cga_*` hooks say which copy a CTA initialises, waits on and arrives on.
"""

from __future__ import annotations

from ....ir.model import Operation
from ..registry import handles
from ..state import BarrierSlot, Ref, Step, Wait
from .common import cluster_rendezvous, need_slot, truthy


@handles("ttng.init_barrier")
def _h_init(m, op: Operation, env, who, it):
    ref = env.get(op.operands[0]) if op.operands else None
    count = int(op.literals[0]) if op.literals and op.literals[0].lstrip("-").isdigit() else 1
    if isinstance(ref, Ref) and m.cga is not None:
        # A broadcast barrier: only its group's leader holds (and initialises) it (None).
        count = m.ext.cga_init(m, op, ref.cta, count)
    if isinstance(ref, Ref) and count is not None:
        slot = m.slots[ref.key] = BarrierSlot(ref, count, count, init_line=op.line)
        m.barrier_allocs.add(ref.key[:2])
        for line, name in m.early.pop(ref.key, []):
            slot.anomalies.append(f"{name} arrived on it remotely at line {line} before this CTA initialised it at "
                                  f"line {op.line}: the init discards that arrival (a peer may arrive only after the "
                                  "barrier's init and a cluster sync)")
    if op is m.sync_after:
        # The lowering fences and cluster-syncs after the entry block's last barrier init
        # (TritonGPUToLLVM's maybeInsertClusterSync): no CTA runs on before every CTA's inits.
        return cluster_rendezvous(m, op, who, it)


@handles("ttng.inval_barrier")
def _h_inval(m, op: Operation, env, who, it):
    return None


@handles("ttng.wait_barrier")
def _h_wait(m, op: Operation, env, who, it):
    pos = op.positional
    if len(pos) > 2 and not truthy(env.get(pos[2])):
        return
    if m.cga is not None and not m.ext.cga_waits(m, op, m.threads[who].cta):
        return  # the wait on a broadcast barrier is predicated on its leader
    slot = need_slot(m, op, env, pos[0], user=who)
    phase = env.get(pos[1]) if len(pos) > 1 else None
    if phase is None and op.literals:
        phase = int(op.literals[0]) if op.literals[0].lstrip("-").isdigit() else None
    if slot is None or phase is None:
        return
    if it:
        slot.loop_waited = True
    yield Wait(op, slot, int(phase) & 1, it)


@handles("ttng.arrive_barrier", "ttng.barrier_expect")
def _h_arrive(m, op: Operation, env, who, it):
    """`arrive_barrier %b, COUNT[, %pred]` and `barrier_expect %b, BYTES[, %pred]` (one arrival
    plus a transaction-byte expectation): same operands, different effect."""
    pos = op.positional
    if len(pos) > 1 and not truthy(env.get(pos[1])):
        return
    expect = op.name == "ttng.barrier_expect"
    amount = int(op.literals[0]) if op.literals and op.literals[0].isdigit() else (0 if expect else 1)
    if m.cga is not None:
        ref = env.get(pos[0])
        home = m.ext.cga_arrival_home(m, op, m.threads[who].cta)
        if isinstance(ref, Ref) and home != ref.cta:
            # A non-leader's expect or arrive is one arrival on its group leader's copy.
            slot = m.slots.get(ref.in_cta(home).key)
            if slot is None:
                m.early_use(ref.in_cta(home), op, who)
                return
            yield Step(op)
            m.arrive(slot, 1, op.line, who, it=it)
            return
        if expect:
            amount = m.ext.cga_expect_bytes(m, op, amount)
    slot = need_slot(m, op, env, pos[0], who, user=who)
    if slot is None:
        return
    if not expect and "perThread" in op.attributes:
        # Every thread of the partition arrives (no elected leader): TLX's warp barriers init
        # the count to the arriving threads (128 for one warpgroup), not to 1.
        amount *= 32 * m.threads[who].warps
    yield Step(op)
    if expect:
        m.expect(slot, amount, op.line, who, it=it)
    else:
        m.arrive(slot, amount, op.line, who, it=it)


@handles("nvws.create_token")
def _h_create_token(m, op: Operation, env, who, it):
    """An NVWS token stands for a full and an empty barrier array of `numBuffers` slots, each
    expecting one arrival (the token-lowering pass makes exactly these)."""
    inst = m.new_instance(op, who)
    cta = m.threads[who].cta
    n = op.attr("numBuffers")
    n = n if isinstance(n, int) and n > 0 else 1
    ref = Ref(op, inst, cta=cta)
    for side in ("full", "empty"):
        for i in range(n):
            slot_ref = Ref(op, inst, (side, i), cta=cta)
            m.slots[slot_ref.key] = BarrierSlot(slot_ref, 1, 1, init_line=op.line)
    for r in op.results:
        env[r] = ref


def _token_slot(m, op: Operation, env, side: str) -> BarrierSlot | None:
    pos = op.positional
    tok = env.get(pos[0]) if pos else None
    idx = env.get(pos[1]) if len(pos) > 1 else None
    if not isinstance(tok, Ref) or not isinstance(idx, int):
        return None
    return m.slots.get(Ref(tok.alloc, tok.instance, (side, idx), cta=tok.cta).key)


@handles("nvws.producer_acquire", "nvws.consumer_wait")
def _h_token_wait(m, op: Operation, env, who, it):
    pos = op.positional
    producer = op.name == "nvws.producer_acquire"
    if len(pos) > 3 and not truthy(env.get(pos[3])):
        return
    slot = _token_slot(m, op, env, "empty" if producer else "full")
    phase = env.get(pos[2]) if len(pos) > 2 else None
    if slot is None or phase is None:
        return
    yield Wait(op, slot, (int(phase) ^ (1 if producer else 0)) & 1, it)


@handles("nvws.producer_commit", "nvws.consumer_release")
def _h_token_arrive(m, op: Operation, env, who, it):
    slot = _token_slot(m, op, env, "full" if op.name == "nvws.producer_commit" else "empty")
    if slot is None:
        return
    yield Step(op)
    m.arrive(slot, 1, op.line, who, it=it)
