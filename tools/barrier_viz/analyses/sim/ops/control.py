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
from ..state import Join, Ref, Thread, Trampoline, Value
from .common import cluster_rendezvous, truthy

_NUM_WARPS = re.compile(r"num_warps\s*\(\s*(\d+)\s*\)")


def _loaded_bounds(m, op: Operation, who: int, values) -> frozenset:
    """A loop whose bounds were loaded from memory runs an input-decided trip count: it counts as
    assumed (deadlock._unmodelled) and remembers which elements decided it (returned)."""
    keys = frozenset().union(*(v.keys for v in values if v.__class__ is Loaded))
    if keys:
        m.assumed.setdefault(who, set()).add(op.line)
        m.loaded_sites[op.line] = m.loaded_sites.get(op.line, frozenset()) | keys
    return keys


def _enter(m, who: int, keys: frozenset) -> None:
    """The body about to run is decided by loaded `keys` (a loop's trip count, an `scf.if`'s
    condition): every barrier use inside depends on them (`Machine.note_use`)."""
    if keys:
        m.loaded_context.setdefault(who, []).append(keys)


def _leave(m, who: int, keys: frozenset) -> None:
    if keys:
        m.loaded_context[who].pop()


_VIEWS = frozenset({"ttg.memdesc_index", "ttg.memdesc_subview", "ttg.memdesc_subslice", "ttg.memdesc_reinterpret"})
_SKIPPED: dict[int, tuple] = {}


def _skipped(m, blocks, env, who: int, keys: frozenset) -> None:
    """A body the loaded `keys` decided not to run (a segment loop with no iteration, the side of
    an `scf.if` not taken) still decides which barriers its thread uses: note the barriers its
    barrier operations name (through views defined inside it, back to a value defined outside)
    as used under `keys` (`Machine.note_use`), so a peer waiting for an arrival it skipped is
    compared with the input that skipped it."""
    if not keys or not m.barrier_allocs:
        return
    for block in blocks:
        cached = _SKIPPED.get(id(block))
        if cached is None or cached[0] is not block:
            ops = [o for top in block.operations for o in top.walk()]
            views = {r: o.operands[0] for o in ops if o.name in _VIEWS and o.operands for r in o.results}
            names = set()
            for o in ops:
                if o.name in _BARRIER_OPS:
                    for n in o.operands:
                        while n in views:
                            n = views[n]
                        names.add(n)
            cached = _SKIPPED[id(block)] = (block, tuple(sorted(names)))
        for n in cached[1]:
            v = env.get(n)
            if v.__class__ is Ref and v.key[:2] in m.barrier_allocs:
                groups = m.barrier_uses.setdefault(v.key[:2], {}).setdefault(who, set())
                groups.update(m.loaded_context.get(who, ()))
                groups.add(keys)


def region_barriers(function: Operation, ws: Operation) -> dict[str, frozenset[int]]:
    """Partition label -> id() of the allocations its barrier operations name anywhere in its
    program (through views, and captures of `ws`'s operands, back to the allocation): a
    partition blocked before its first use of a barrier still shares it."""
    top: dict[str, Operation] = {}
    for op in function.regions[0].blocks[0].operations if function.regions and function.regions[0].blocks else ():
        for r in op.results:
            top[r] = op

    def root(name: str, local: dict[str, Operation], captured: dict[str, str]) -> int | None:
        for _ in range(64):
            d = local.get(name)
            if d is None and name in captured:
                name, local = captured[name], top
                continue
            d = d or top.get(name)
            if d is None:
                return None
            if d.name in _VIEWS and d.operands:
                name = d.operands[0]
                continue
            return id(d)
        return None

    out: dict[str, frozenset[int]] = {}
    for region in ws.regions:
        captured = {} if region.label == "default" else {
            a.name: ws.operands[i] for i, a in enumerate(region.arguments) if i < len(ws.operands)}
        ops = [o for first in region.operations() for o in first.walk()]
        local = {r: o for o in ops for r in o.results}
        found = {root(n, local, captured) for o in ops if o.name in _BARRIER_OPS for n in o.operands}
        out[region.label or ""] = frozenset(x for x in found if x is not None)
    return out


def _decided(block: Block, values: list, keys: frozenset) -> list:
    """A region's results after a body that loaded `keys` decided: a value the body changes (a
    ring counter, a phase carried out of a segment loop) depends on how often, or whether, it
    ran, so it is marked loaded too; one it passes through unchanged is not."""
    if not keys:
        return values
    term = block.operations[-1] if block is not None and block.operations else None
    args = {a.name: i for i, a in enumerate(block.arguments)} if block is not None else {}
    out = []
    for i, v in enumerate(values):
        through = term is not None and i < len(term.operands) and args.get(term.operands[i], -1) == i + 1 \
            and term.name in ("scf.yield", "scf.condition")
        if isinstance(v, int) and not isinstance(v, bool) and not through:
            v = Loaded(v, (v.keys if v.__class__ is Loaded else frozenset()) | keys)
        out.append(v)
    return out


@handles("scf.for")
def _h_for(m, op: Operation, env, who, it):
    lb, ub, step = (env.get(n) for n in op.operands[:3])
    keys = _loaded_bounds(m, op, who, (lb, ub, step))
    if keys and isinstance(step, int) and step > 0:  # a segment's iterations (input_points' ragged memory)
        for pos in {k[0] for k in keys}:
            m.loaded_steps[pos] = min(m.loaded_steps.get(pos, step), step)
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
    _enter(m, who, keys)
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
    _leave(m, who, keys)
    if k == 0:
        _skipped(m, (body,), env, who, keys)
    m.count_exit(op, who, k, it)
    for r, v in zip(op.results, _decided(body, carried, keys)):
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
    keys = frozenset()  # loaded elements that decided a condition so far: the rest depends on them
    while True:
        for a, v in zip(before.arguments, carried):
            env[a.name] = v
        yield _exec_body(m, before, env, who, it + (k,))
        term = before.operations[-1] if before.operations else None
        if term is None or term.name != "scf.condition":
            _leave(m, who, keys)
            return
        cond = env.get(term.operands[0]) if term.operands else None
        forwarded = [env.get(n) for n in term.operands[1:]]
        if cond.__class__ is Loaded and not cond.keys <= keys:
            _leave(m, who, keys)
            keys = keys | _loaded_bounds(m, op, who, (cond,))
            _enter(m, who, keys)
        if cond is None:
            # A runtime condition (a tile count read from memory): run `unknown_trips` iterations.
            limit = m.params.unknown_trips if limit is None else limit
            cond = k < limit
            m.assumed.setdefault(who, set()).add(op.line)
            if not cond:
                m.notes.append(f"line {op.line}: while condition unknown; ran {limit} iterations")
        if not cond:
            _leave(m, who, keys)
            if k == 0:
                _skipped(m, (after,), env, who, keys)
            m.count_exit(op, who, k, it)
            for r, v in zip(op.results, _decided(None, forwarded, keys)):
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
    keys = frozenset()
    if cond.__class__ is Loaded:  # decided by loaded values: input points vary them (launch.memory_points)
        m.loaded_sites[op.line] = m.loaded_sites.get(op.line, frozenset()) | cond.keys
        keys = cond.keys
    if cond is None and _branches_differ(op):
        # A runtime condition deciding which barrier operations run: one run takes then, the
        # other (`unknown_if_else`) takes else; which side the GPU takes is not known here.
        m.unknown_ifs.add(op.line)
        branch = 1 if m.params.unknown_if_else else 0
    else:
        branch = 0 if truthy(cond) else 1
    if branch >= len(op.regions) or not op.regions[branch].blocks:
        _skipped(m, [b for r in op.regions[:1] for b in r.blocks[:1]] if branch else [], env, who, keys)
        for r in op.results:
            env[r] = None
        return
    if keys:
        _skipped(m, [b for r in op.regions[1 - branch:2 - branch] for b in r.blocks[:1]], env, who, keys)
    block = op.regions[branch].blocks[0]
    _enter(m, who, keys)
    yield _exec_body(m, block, env, who, it)
    _leave(m, who, keys)
    values = _decided(None, _yielded(block, env, len(op.results)), keys)
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
