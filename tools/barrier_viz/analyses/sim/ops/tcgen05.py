"""tcgen05 handlers: MMAs, commits and tensor-memory copies.

Each is an asynchronous agent of the issuing thread, ordered with its earlier tcgen05 ops (they
complete in issue order). Their barrier arrivals do not land at issue: `Machine.arrive_async`
holds them until the issuing thread's next wait has polled (see `machine`). A paired (2-CTA) MMA
or commit is issued by the even CTA of the pair (`extension.issues`) and arrives in both CTAs.
"""

from __future__ import annotations

from ....ir.model import Operation
from ..registry import handles
from ..state import BarrierSlot, Ref, Step, Value
from .common import bracketed_after, need_slot, truthy


def pair_of(rank: int) -> tuple[int, int]:
    """The two CTAs of the 2-CTA pair CTA `rank` belongs to."""
    base = rank & ~1
    return base, base + 1


def mma_targets(m, op: Operation, cta: int) -> list[int] | None:
    """CTAs whose barriers an MMA's or commit's arrivals reach; None when this CTA does not issue
    it (the odd CTA of a pair)."""
    return m.ext.targets(m, op, cta) if m.ext.issues(m, op, cta) else None


@handles("ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled")
def _h_mma(m, op: Operation, env, who, it):
    pos = op.positional
    first_bar = 7 if op.name.endswith("_scaled") else 5
    pred_at = first_bar - 1
    if len(pos) > pred_at and not truthy(env.get(pos[pred_at])):
        return  # predicated off: no MMA, no arrivals
    ctas = mma_targets(m, op, m.threads[who].cta)
    if m.cga is not None:
        from ....facts.cga import issues_commit

        if not issues_commit(op, m.cga, m.threads[who].cta):
            return  # a two-CTA MMA is issued by the even CTA of the pair only
        has_barriers = bool(bracketed_after(op, first_bar))
        arrive_in = sorted(m.ext.cga_commit(m, op, m.threads[who].cta)) if has_barriers else []
        # Its data: a two-CTA MMA reads and writes the pair's halves; its arrivals: `arrive_in`.
        ctas = list(pair_of(m.threads[who].cta)) if m.cga.two_ctas else [m.threads[who].cta]
    if ctas is None:
        return  # a paired MMA is issued by the even CTA of the pair only
    items = bracketed_after(op, first_bar)
    if items:
        yield Step(op)
    # tcgen05 ops complete in issue order: this one's completion implies the earlier ones'.
    agent = m.agent(who, op, tuple(m.tcgen05.get(who, [])[-1:]))
    if agent is not None:
        m.tcgen05[who] = [agent]
    # Without `is_async` and without completion barriers the MMA is the synchronous form (the
    # lowering waits for it; its token orders the accumulator's next use): its accesses are
    # the issuing thread's, in program order.
    actor = agent if items or "is_async" in op.attributes or agent is None else who
    if actor == who and agent is not None:
        # Waiting for it waits for every tcgen05 op issued before it (issue order): a `tmem_copy`
        # into the accumulator it then reads (Gluon's matmul_accumulate) is ordered.
        m.hb.join_threads(who, [agent])
    if len(pos) > 2:
        use_d = env.get(pos[pred_at - 1]) if len(pos) > pred_at - 1 else None
        for cta in ctas:  # a paired MMA reads both CTAs' operand halves and writes both accumulators
            a, b, d = (_in_cta(env.get(pos[k]), cta) for k in range(3))
            m.access(op, a, "read", actor, it)
            m.access(op, b, "read", actor, it)
            if use_d is None or use_d:
                m.access(op, d, "read", actor, it)
            m.access(op, d, "write", actor, it)
    for bar, pred in items:
        if pred is not None and not truthy(env.get(pred)):
            continue
        for slot in _slots_in(m, op, env, bar, arrive_in if m.cga is not None else ctas, who):
            m.arrive_async(slot, op.line, who, agent, it)


def _in_cta(v: Value, cta: int) -> Value:
    return v.in_cta(cta) if isinstance(v, Ref) and v.cta != cta else v


def _slots_in(m, op: Operation, env, name: str, ctas: list[int], who: int) -> list[BarrierSlot]:
    """The barrier `name` names, in each CTA of `ctas` (its own CTA only, outside a pair)."""
    ref = env.get(name)
    if not isinstance(ref, Ref) or ctas == [ref.cta]:
        slot = need_slot(m, op, env, name, who, user=who)
        return [slot] if slot is not None else []
    out = []
    for c in ctas:
        slot = m.slots.get(ref.in_cta(c).key)
        if slot is None:
            m.early_use(ref.in_cta(c), op, who)
        else:
            out.append(slot)
    return out


@handles("ttng.tmem_copy")
def _h_tmem_copy(m, op: Operation, env, who, it):
    """`tmem_copy %src, %dst` (`tcgen05.cp`): a tensor-core copy from shared to tensor memory,
    asynchronous and ordered with the thread's other tcgen05 ops, so it is a tcgen05 agent of the
    issuing thread (a later commit covers it, as it covers the MMA that reads the scales). In a
    paired (2-CTA) module the lowering predicates it on the leader CTA
    (`TensorMemoryCopyOpConversion`: `createLeaderCTAPredicate`, `cta_group::2`): the even CTA of
    the pair copies for both, reading and writing each CTA's half, and the odd CTA issues nothing."""
    for r in op.results:
        env[r] = None
    if m.hb is None:
        return
    pos = op.positional
    cta = m.threads[who].cta
    paired = (m.cga.two_ctas if m.cga is not None else m.cluster.paired) and m.cluster.size > 1
    if paired and cta % 2:
        return
    agent = m.agent(who, op, tuple(m.tcgen05.get(who, [])[-1:]))
    if agent is not None:
        m.tcgen05[who] = [agent]
    actor = agent if agent is not None else who
    for c in (pair_of(cta) if paired else (cta,)):
        if len(pos) > 1:
            m.access(op, _in_cta(env.get(pos[0]), c), "read", actor, it)
            m.access(op, _in_cta(env.get(pos[1]), c), "write", actor, it)


@handles("ttng.tc_gen5_commit")
def _h_commit(m, op: Operation, env, who, it):
    pos = op.positional
    if len(pos) > 1 and not truthy(env.get(pos[1])):
        return
    ctas = mma_targets(m, op, m.threads[who].cta)
    if m.cga is not None:
        ctas = sorted(m.ext.cga_commit(m, op, m.threads[who].cta)) or None
    if ctas is None:
        return  # in a paired (2-CTA) module the even CTA of the pair commits for both
    slots = _slots_in(m, op, env, pos[0], ctas, who)
    if not slots:
        return
    yield Step(op)
    # The commit arrives once every tcgen05 op this thread issued before it has completed.
    agent = m.agent(who, op, tuple(m.tcgen05.get(who, [])[-1:]))
    for slot in slots:
        m.arrive_async(slot, op.line, who, agent, it)
