"""Control flow: `scf.for`, `scf.while`, `scf.if`, and `ttg.warp_specialize` (fork and join).

Loops run their concrete trip counts (unknown bounds: `Params.unknown_trips`, noted as assumed);
a region is entered by yielding its block's generator to the trampoline. An `scf.if` on an
unknown condition whose sides run different barrier operations takes its then-side (its
else-side with `Params.unknown_if_else`). `warp_specialize` forks one `Thread` per region and
yields a `Join` until they all finish.
"""

from __future__ import annotations

import re

from ....ir.model import Block, Operation
from ...program.loaded import Loaded
from ..registry import handles
from ..state import Join, Thread, Trampoline, Value
from .common import cluster_rendezvous, truthy

_NUM_WARPS = re.compile(r"num_warps\s*\(\s*(\d+)\s*\)")


def _loaded_bounds(m, op: Operation, who: int, values) -> None:
    """A loop whose bounds were loaded from memory runs an input-decided trip count: it counts as
    assumed (deadlock._unmodelled) and remembers which elements decided it."""
    keys = frozenset().union(*(v.keys for v in values if v.__class__ is Loaded))
    if keys:
        m.assumed.setdefault(who, set()).add(op.line)
        m.loaded_sites[op.line] = m.loaded_sites.get(op.line, frozenset()) | keys


@handles("scf.for")
def _h_for(m, op: Operation, env, who, it):
    lb, ub, step = (env.get(n) for n in op.operands[:3])
    _loaded_bounds(m, op, who, (lb, ub, step))
    inits = [env.get(n) for n in op.operands[3:]]
    region = op.regions[0] if op.regions else None
    if region is None or not region.blocks:
        return
    body = region.blocks[0]
    args = body.arguments
    if None in (lb, ub, step):
        trips = m.params.unknown_trips
        lb, step = (lb if isinstance(lb, int) else 0), (step if isinstance(step, int) and step > 0 else 1)
        ub = lb + trips * step
        m.notes.append(f"line {op.line}: loop bounds unknown; ran {trips} iterations")
        m.assumed.setdefault(who, set()).add(op.line)
    if step <= 0:
        m.notes.append(f"line {op.line}: non-positive loop step; loop skipped")
        for r, v in zip(op.results, inits):
            env[r] = v
        return
    carried = inits
    k = 0
    iv = lb
    while iv < ub:
        if args:
            env[args[0].name] = iv
        for a, v in zip(args[1:], carried):
            env[a.name] = v
        m.begin_iteration(op, who)
        yield _exec_body(m, body, env, who, it + (k,))
        carried = _yielded(body, env, len(carried))
        iv += step
        k += 1
        m.count_trip(op, who, k)
    m.count_exit(op, who, k)
    for r, v in zip(op.results, carried):
        env[r] = v


def _exec_body(m, block: Block, env, who, it):
    return m._exec_block(block, env, who, it, skip_terminator=True)


def _yielded(block: Block, env, n: int) -> list[Value]:
    term = block.operations[-1] if block.operations else None
    if term is None or term.name not in ("scf.yield", "scf.condition"):
        return [None] * n
    return [env.get(name) for name in term.operands]


@handles("scf.while")
def _h_while(m, op: Operation, env, who, it):
    if len(op.regions) < 2:
        return
    before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
    carried = [env.get(n) for n in op.operands]
    k = 0
    limit = None
    while True:
        for a, v in zip(before.arguments, carried):
            env[a.name] = v
        yield _exec_body(m, before, env, who, it + (k,))
        term = before.operations[-1] if before.operations else None
        if term is None or term.name != "scf.condition":
            return
        cond = env.get(term.operands[0]) if term.operands else None
        forwarded = [env.get(n) for n in term.operands[1:]]
        if cond.__class__ is Loaded:
            _loaded_bounds(m, op, who, (cond,))
        if cond is None:
            # A runtime condition (a tile count read from memory): run `unknown_trips` iterations.
            limit = m.params.unknown_trips if limit is None else limit
            cond = k < limit
            m.assumed.setdefault(who, set()).add(op.line)
            if not cond:
                m.notes.append(f"line {op.line}: while condition unknown; ran {limit} iterations")
        if not cond:
            m.count_exit(op, who, k)
            for r, v in zip(op.results, forwarded):
                env[r] = v
            return
        for a, v in zip(after.arguments, forwarded):
            env[a.name] = v
        m.begin_iteration(op, who)
        yield _exec_body(m, after, env, who, it + (k,))
        carried = _yielded(after, env, len(carried))
        k += 1
        m.count_trip(op, who, k)


_BARRIER_OPS = frozenset({"ttng.wait_barrier", "ttng.arrive_barrier", "ttng.barrier_expect", "ttng.tc_gen5_commit",
                          "ttng.async_tma_copy_global_to_local", "ttng.async_tma_gather", "ttng.tc_gen5_mma",
                          "ttng.tc_gen5_mma_scaled", "ttng.wait_barrier_named", "ttng.arrive_barrier_named",
                          "ttng.async_clc_try_cancel", "ttng.clc_try_cancel", "ttng.init_barrier",
                          "nvws.producer_acquire", "nvws.consumer_wait", "nvws.producer_commit",
                          "nvws.consumer_release"})


_IF_DIFFERS: dict[int, tuple] = {}


def _branches_differ(op: Operation) -> bool:
    """Do the two sides of this `scf.if` run different barrier operations?"""
    cached = _IF_DIFFERS.get(id(op))
    if cached is None or cached[0] is not op:
        sides = []
        for region in op.regions[:2]:
            names = sorted(o.name for top in region.operations() for o in top.walk() if o.name in _BARRIER_OPS)
            sides.append(names)
        while len(sides) < 2:
            sides.append([])
        cached = _IF_DIFFERS[id(op)] = (op, sides[0] != sides[1])
    return cached[1]


@handles("scf.if")
def _h_if(m, op: Operation, env, who, it):
    cond = env.get(op.operands[0]) if op.operands else None
    if cond.__class__ is Loaded:  # decided by loaded values: input points vary them (input_points.memory_points)
        m.loaded_sites[op.line] = m.loaded_sites.get(op.line, frozenset()) | cond.keys
    if cond is None and _branches_differ(op):
        # A runtime condition deciding which barrier operations run: one run takes then, the
        # other (`unknown_if_else`) takes else; which side the GPU takes is not known here.
        m.unknown_ifs.add(op.line)
        branch = 1 if m.params.unknown_if_else else 0
    else:
        branch = 0 if truthy(cond) else 1
    if branch >= len(op.regions) or not op.regions[branch].blocks:
        for r in op.results:
            env[r] = None
        return
    block = op.regions[branch].blocks[0]
    yield _exec_body(m, block, env, who, it)
    values = _yielded(block, env, len(op.results))
    for r, v in zip(op.results, values):
        env[r] = v


@handles("ttg.warp_specialize")
def _h_warp_specialize(m, op: Operation, env, who, it):
    """Fork: each region runs as its own thread; the default region sees the parent's values,
    partitionN regions see the captures as block arguments. The parent waits for all."""
    captures = [env.get(name) for name in op.operands]
    if m.cluster.size > 1 and m.sync_after is None:
        # No barrier init in the entry block to sync after: the CTAs still start their
        # partitions together (no peer can reach a barrier before it exists).
        yield cluster_rendezvous(m, op, who, it)
    children: list[Thread] = []
    cta = m.threads[who].cta
    for k, region in enumerate(op.regions):
        if not region.blocks:
            continue
        if region.label == "default":
            penv = dict(env)
        else:
            penv = {arg.name: captures[i] if i < len(captures) else None for i, arg in enumerate(region.arguments)}
        index = len(m.threads)
        if m.hb is not None:
            m.hb.fork(who if who >= 0 else 0, index)
        warps = _NUM_WARPS.search(region.header or "")
        label = region.label or f"region{k}"
        thread = Thread(index, m.thread_name(cta, label), Trampoline(m._exec_block(region.blocks[0], penv, index, it)),
                        machine=m, warps=int(warps.group(1)) if warps else m.threads[who].warps, cta=cta, partition=label)
        m.threads.append(thread)
        children.append(thread)
    m.ws_op = op
    yield Join(op, tuple(children))
    if m.hb is not None:
        m.hb.join_threads(who if who >= 0 else 0, [c.index for c in children])
    for r in op.results:
        env[r] = None
