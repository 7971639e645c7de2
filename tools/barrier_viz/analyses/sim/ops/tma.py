"""TMA and bulk copies: loads that complete transaction bytes, stores that read shared memory late.

A TMA load (or gather, or bulk copy with a barrier) delivers its bytes on its barrier when it
executes (`extension.deliver_tma` routes a multicast to every CTA of its mask). A TMA store
reads its SMEM source as an asynchronous agent until a store wait retires it (`StoreToken`):
a rewrite of the source before that wait is a race (`race.tma_store_reuse`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ....ir.model import Operation
from ....ir.types import memdesc_bytes
from ...program.operands import TMA_STORE_OPS  # the TMA stores: one set, below the interpreter and the rules
from ..registry import handles
from ..state import Ref, Step
from .common import bracketed_after, need_slot, truthy



@handles("ttng.async_tma_copy_global_to_local", "ttng.async_tma_gather")
def _h_tma_load(m, op: Operation, env, who, it):
    pos = op.positional  # desc, dst, bar, pred
    if len(pos) < 3:
        return
    if len(pos) > 3 and not truthy(env.get(pos[3])):
        return
    bar = env.get(pos[2])
    if m.cga is not None and isinstance(bar, Ref):
        # The CTA's share lands on its group's barrier copy (its own copy may not exist).
        per_cta = m.ext.cga_tx(m, op, m.threads[who].cta)
        if not per_cta:
            return  # a multicast is issued by its group's first CTA
        yield Step(op)
        agent = m.agent(who, op)
        m.access(op, env.get(pos[1]), "write", agent, it)
        for home, nb in sorted(per_cta.items()):
            target = m.slots.get(bar.in_cta(home).key)
            if target is None:
                m.early_use(bar.in_cta(home), op, who)
            else:
                m.complete_tx(target, nb, op.line, who, agent, it=it)
        return
    slot = need_slot(m, op, env, pos[2], user=who)
    nbytes = memdesc_bytes(op.types[-1] if op.types else None)
    if slot is None or nbytes is None:
        return
    yield Step(op)
    agent = m.agent(who, op)
    m.ext.deliver_tma(m, op, env, who, it, slot, env.get(pos[1]), nbytes, agent)


@handles("ttg.async_copy_global_to_local")
def _h_bulk_copy(m, op: Operation, env, who, it):
    """`ttg.async_copy_global_to_local %ptr, %dst bulk_size %n barrier %bar {useBulk}`: a bulk
    copy (`cp.async.bulk ... mbarrier::complete_tx::bytes`) that completes `%n` bytes on `%bar`,
    like a TMA load. Without `barrier` it is a plain cp.async (no barrier: only its write)."""
    pos = op.positional
    for r in op.results:
        env[r] = None
    if "barrier" not in op.keywords or len(pos) < 4:
        if len(pos) > 1:
            m.access(op, env.get(pos[1]), "write", who, it)
        return
    nbytes = env.get(pos[2])
    slot = need_slot(m, op, env, pos[-1], who, user=who)
    if slot is None or not isinstance(nbytes, int):
        if slot is not None:
            slot.unmodelled = slot.unmodelled or f"{op.name} at line {op.line} (bulk size unknown)"
        return
    yield Step(op)
    agent = m.agent(who, op)
    m.access(op, env.get(pos[1]), "write", agent, it)
    m.complete_tx(slot, nbytes, op.line, who, agent, it=it)


@dataclass(frozen=True, slots=True)
class StoreToken:
    """One issue of a TMA store (`async_tma_copy_local_to_global` and its reduce / scatter
    forms): the async agent reading its SMEM source and the clock stamp of that read. It is
    the op's token value, so `async_tma_store_token_wait %tok` knows which store it retires."""

    agent: int
    stamp: int


@handles("ttng.async_tma_copy_local_to_global", "ttng.async_tma_reduce", "ttng.async_tma_scatter")
def _h_tma_store(m, op: Operation, env, who, it):
    """A bulk tensor store reads its SMEM source asynchronously (`cp.async.bulk.tensor` from
    shared::cta): the read belongs to an async agent of the thread and ends only when a store
    wait retires it, so a rewrite of the source before that wait is unordered with the read."""
    for r in op.results:
        env[r] = None
    if m.hb is None:
        return
    pos = op.positional
    agent = m.agent(who, op)
    if agent is None or len(pos) < 2:
        return
    m.access(op, env.get(pos[1]), "read", agent, it)
    token = StoreToken(agent, m.hb.clock(agent)[agent])
    m.stores.setdefault(who, []).append(token)
    for r in op.results:
        env[r] = token


def retire_stores(m, who: int, tokens) -> None:
    """The thread has seen these stores finish reading SMEM (a store wait passed): it now
    knows each read, up to the read's own stamp (not the agent's later issues, which a
    `pendings = N` wait leaves in flight)."""
    if m.hb is None:
        return
    clock = m.hb.clock(who)
    for t in tokens:
        if clock.get(t.agent, 0) < t.stamp:
            clock[t.agent] = t.stamp


@handles("ttng.async_tma_store_wait")
def _h_tma_store_wait(m, op: Operation, env, who, it):
    """`async_tma_store_wait {pendings = N}` (`cp.async.bulk.wait_group.read N`): at most the N
    most recent stores of this thread are still reading; the older ones are retired."""
    pending = m.stores.get(who)
    if not pending:
        return
    n = op.attr("pendings")
    n = n if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else 0
    keep = len(pending) - n if n < len(pending) else 0
    retire_stores(m, who, pending[:keep])
    m.stores[who] = pending[keep:]


@handles("ttng.async_tma_store_token_wait")
def _h_store_wait(m, op: Operation, env, who, it):
    """`async_tma_store_token_wait %tok (, %bar[%pred])*`: the store of `%tok` has finished
    reading SMEM (an unknown token: every store of the thread so far), then the barriers get
    one arrival each."""
    pending = m.stores.get(who)
    if pending:
        token = env.get(op.positional[0]) if op.positional else None
        done = [token] if isinstance(token, StoreToken) and token in pending else list(pending)
        retire_stores(m, who, done)
        m.stores[who] = [t for t in pending if t not in done]
    items = bracketed_after(op, 1)
    if not items:
        return
    yield Step(op)
    for bar, pred in items:
        if pred is not None and not truthy(env.get(pred)):
            continue
        slot = need_slot(m, op, env, bar, user=who)
        if slot is not None:
            m.arrive(slot, 1, op.line, who, it=it)
