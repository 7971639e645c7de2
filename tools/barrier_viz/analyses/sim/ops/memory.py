"""Memory descriptors and plain accesses: allocations, views, and ops that only read or write.

An allocation executed again is a new instance (`Ref.instance`); a view keeps its allocation
and records the indices, sub-tile offsets or TMEM columns it selects. Loads, stores and
synchronous dots record their accesses for the happens-before race check (`hb`), placed by
`access_region` (TMEM by `buffer.id` and column, shared memory per allocation instance and CTA).
"""

from __future__ import annotations

from ....ir.model import Operation
from ....ir.types import parse_memdesc
from ..hb import Region
from ..registry import handles, register
from ..state import Ref
from .common import truthy


@handles("ttg.local_alloc", "ttng.tmem_alloc")
def _h_alloc(m, op: Operation, env, who, it):
    inst = m.new_instance(op, who)
    cta = m.threads[who].cta
    for r in op.results:
        env[r] = Ref(op, inst, cta=cta) if not r.endswith("#1") else None


@handles("ttg.memdesc_index",
          "ttg.memdesc_subview",
          "ttg.memdesc_subslice",
          "ttng.tmem_subslice",
          "ttg.memdesc_reinterpret",
          "ttg.memdesc_trans",
          "ttg.memdesc_reshape")
def _h_view(m, op: Operation, env, who, it):
    base = env.get(op.operands[0]) if op.operands else None
    if op.name == "ttg.memdesc_index" and isinstance(base, Ref):
        idx = env.get(op.operands[1]) if len(op.operands) > 1 else None
        if idx is None and op.literals:
            try:
                idx = int(op.literals[0])
            except ValueError:
                idx = None
        env[op.results[0]] = base.index(idx if isinstance(idx, int) else None)
        return
    if isinstance(base, Ref) and op.name == "ttg.memdesc_subslice":
        # A shared-memory sub-tile (`%buf[0, 64]`): sub-tiles at different offsets are disjoint
        # (the halves a 2-CTA cluster multicasts), the whole buffer overlaps each of them.
        offsets = tuple(op.index_literals)
        env[op.results[0]] = base.index(("sub", *offsets) if offsets else None)  # type: ignore[arg-type]
        return
    if isinstance(base, Ref) and op.name == "ttng.tmem_subslice":
        # A subslice selects columns [N, N + width) of a 32-bit view. A reinterpret keeps the
        # footprint of what it views: a 16-bit type's shape says nothing about its columns.
        n = op.attr("N")
        width = last_dim(op.result_types[0] if op.result_types else None)
        base = base.view(n if isinstance(n, int) and not isinstance(n, bool) else 0, width)
    for r in op.results:
        env[r] = base


def _accessor(reads: tuple[int, ...], writes: tuple[int, ...], pred: int | None = None):
    """Handler for an op that only touches memory: records its accesses (for races)."""

    def handler(m, op: Operation, env, who, it):
        for r in op.results:
            env[r] = None
        if m.hb is None:
            return
        pos = op.positional
        if pred is not None and len(pos) > pred and not truthy(env.get(pos[pred])):
            return
        for k in reads:
            if k < len(pos):
                m.access(op, env.get(pos[k]), "read", who, it)
        for k in writes:
            if k < len(pos):
                m.access(op, env.get(pos[k]), "write", who, it)

    return handler


def access_region(ref: Ref) -> Region:
    """Where an access through `ref` lands (its storage, indices and columns), for `hb`."""
    alloc = ref.alloc
    cached = _ALLOC_PLACES.get(id(alloc))
    if cached is None or cached[0] is not alloc:
        cached = _ALLOC_PLACES[id(alloc)] = (alloc, *_alloc_place(alloc))
    _, tmem, base, last = cached
    storage: tuple = tmem or ("alloc", f"{alloc.results[0] if alloc.results else alloc.name}@{alloc.line}", ref.instance)
    if ref.cta:
        storage += (f"cta{ref.cta}",)  # each CTA of a cluster has its own shared and tensor memory
    width = ref.width or last or 1
    lo = base + ref.col
    return Region(storage, ref.indices, lo, lo + width)


def _alloc_place(alloc: Operation) -> tuple:
    """Where an allocation's accesses land, per allocation (every access of a race-tracking run
    asks): its TMEM storage id (shared by a `buffer.id`), column offset and last dimension."""
    bid = alloc.attr("buffer.id") if alloc.name == "ttng.tmem_alloc" else None
    tmem = ("tmem", bid) if isinstance(bid, int) and not isinstance(bid, bool) else None
    offset = alloc.attr("buffer.offset")
    base = offset if isinstance(offset, int) and not isinstance(offset, bool) else 0
    return tmem, base, last_dim(alloc.result_types[0] if alloc.result_types else None)


_ALLOC_PLACES: dict[int, tuple] = {}


def last_dim(type_: str | None) -> int | None:
    md = parse_memdesc(type_)
    return md.shape[-1] if md is not None and md.shape else None


register("ttng.tmem_load", _accessor(reads=(0,), writes=()))
register("ttng.tmem_store", _accessor(reads=(), writes=(1,), pred=2))
register("ttg.local_load", _accessor(reads=(0,), writes=()))
register("ttg.local_store", _accessor(reads=(), writes=(1,)))
register("ttng.warp_group_dot", _accessor(reads=(0, 1), writes=()))
