"""What both coverage tables share: the ops and roles they look for, one TMEM access
(`_TAccess`), one release -> wait edge (`_Edge`), and small program-order and TMEM-column
helpers (loops and cadence, the ops before and after an op, column spans of a type).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

from ....facts.barriers import Barrier, BarrierKind, BarrierUse, Role
from ....facts.buffers import element_bits, parse_memdesc
from ....facts.values import OpResult
from ....ir.model import BlockArgument, Operation
from ....ir.types import tmem_columns
from ....ir.vocab import LOOP_OPS


MMA_OPS = frozenset({"ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled"})
TMEM_ALLOC = "ttng.tmem_alloc"
_BOUNDARY = frozenset({"ttg.warp_specialize", "nvws.warp_group", "tt.func", "func.func", "builtin.module"})
_ARRIVES = frozenset({Role.ARRIVE, Role.EXPECT, Role.TMA_ARRIVE, Role.MMA_ARRIVE, Role.COMMIT, Role.RELEASE,
                      Role.PUT_EXIT, Role.GET_EXIT})
_WAITS = frozenset({Role.WAIT, Role.ACQUIRE, Role.PUT_ENTER, Role.GET_ENTER})
_MAX_SEARCH = 256


# -- internal facts -------------------------------------------------------------------------------
@dataclass(frozen=True)
class _TAccess:
    """One TMEM read or write: which allocation (root), which columns, by which partitions."""

    op: Operation
    kind: str  # "read" | "write"
    root: Operation
    cols: tuple[int, int] | None  # None: the whole allocation
    label: str | None
    parts: tuple[str, ...]
    exact: bool = False  # columns absolute in the allocation (constant slots all the way)


@dataclass(frozen=True)
class _Edge:
    """A release→wait edge: `arrive` (in one partition) completes what `wait` (in another) awaits."""

    arrive: Operation
    wait: Operation
    barrier: str


# -- helpers --------------------------------------------------------------------------------------
def _tmem_roles(op: Operation, use_d: Callable[[Operation], str]) -> list[tuple[int, str]]:
    if op.name == "ttng.tmem_load":
        return [(0, "read")]
    if op.name == "ttng.tmem_store":
        return [(1, "write")]
    if op.name == "ttng.tmem_copy":
        return [(1, "write")]
    if op.name in MMA_OPS:
        roles = [(0, "read"), (2, "write")]
        if op.name == "ttng.tc_gen5_mma_scaled":
            roles += [(3, "read"), (4, "read")]
        if use_d(op) != "false":
            roles.append((2, "read"))
        return roles
    return []


_MEM_ROLES = {
    "ttng.tmem_load": ((0, "read"),),
    "ttng.tmem_store": ((1, "write"),),
    "ttng.tmem_copy": ((0, "read"), (1, "write")),
    "ttg.local_load": ((0, "read"),),
    "ttg.local_store": ((1, "write"),),
    "ttng.async_tma_copy_global_to_local": ((1, "write"),),
    "nvws.descriptor_load": ((1, "write"),),
    "ttng.async_tma_copy_local_to_global": ((1, "read"),),
    "ttng.tc_gen5_mma": ((0, "read"), (1, "read"), (2, "write"), (2, "read")),
    "ttng.tc_gen5_mma_scaled": ((0, "read"), (1, "read"), (2, "write"), (2, "read")),
    "ttng.warp_group_dot": ((0, "read"), (1, "read")),
}


def _memory_operands(op: Operation) -> list[tuple[str, str]]:
    roles = _MEM_ROLES.get(op.name)
    if not roles:
        return []
    pos = op.positional
    return [(pos[i], kind) for i, kind in roles if i < len(pos) and pos[i].startswith("%")]


def _bar_sync_arrives(b: Barrier, u: BarrierUse, roles: frozenset[Role]) -> bool:
    """A named barrier's `bar.sync` (`wait_barrier_named`) arrives with its threads as well as
    waiting: it releases what its partition read before it to the partitions syncing after."""
    return b.kind is BarrierKind.NAMED and u.role is Role.WAIT and bool(roles & _ARRIVES)


def _side(b: Barrier, u: BarrierUse) -> str:
    """Tokens and arefs stand for two barriers: `full` (commit → wait) and `empty` (release →
    acquire). An mbarrier is one."""
    if b.kind is BarrierKind.NVWS_TOKEN:
        return "empty" if u.role in (Role.ACQUIRE, Role.RELEASE) else "full"
    if b.kind is BarrierKind.AREF:
        return "empty" if u.role in (Role.PUT_ENTER, Role.GET_EXIT) else "full"
    return ""


def _loops(op: Operation) -> list[Operation]:
    """Enclosing loops, innermost first."""
    return [a for a in op.ancestors() if a.name in LOOP_OPS]


def _depth(op: Operation) -> int:
    return len(_loops(op))


def _cadence(writer: Operation, reader: Operation) -> str:
    return "inner" if _depth(reader) >= _depth(writer) else "outer"


def _before(op: Operation, stop: Operation | None = None) -> Iterator[Operation]:
    """Ops before `op` in program order, nearest first, climbing out of enclosing regions (loops
    included) up to the partition or function boundary, or up to `stop`."""
    cur = op
    while True:
        block = cur.block
        if block is None:
            return
        idx = next(i for i, o in enumerate(block.operations) if o is cur)
        for prev in reversed(block.operations[:idx]):
            yield from reversed(list(prev.walk()))
        parent = block.region.parent if block.region is not None else None
        if parent is None or parent is stop or parent.name in _BOUNDARY:
            return
        cur = parent


def _after(op: Operation) -> Iterator[Operation]:
    """Ops after `op` in program order, climbing out up to the partition or function boundary."""
    cur = op
    while True:
        block = cur.block
        if block is None:
            return
        idx = next(i for i, o in enumerate(block.operations) if o is cur)
        for nxt in block.operations[idx + 1:]:
            yield from nxt.walk()
        parent = block.region.parent if block.region is not None else None
        if parent is None or parent.name in _BOUNDARY:
            return
        cur = parent


def _overlaps(w: _TAccess, cols: tuple[int, int], is_owner: bool) -> bool:
    """Does writer `w` overwrite (part of) the row at `cols`, as an aliasing hazard? A
    whole-allocation writer overwrites every row, and the owner's own data spans every column.
    A `tmem_store` of exactly the row's columns is that buffer's own producer (alpha, m, l, a
    rescaled O): its channel is the ordinary producer/consumer one the phase model and the
    simulation check, not an overwrite of another buffer's columns."""
    if w.cols is None or is_owner:
        return True
    if w.cols == cols and w.op.name not in MMA_OPS:
        return False
    return w.cols[0] <= cols[1] and cols[0] <= w.cols[1]


def _value_type(values, name: str, at: Operation) -> str | None:
    d = values.lookup(name, at)
    return d.type if isinstance(d, (OpResult, BlockArgument)) else None


def _alloc_columns(alloc: Operation, aliases: dict[str, str]) -> int | None:
    """Columns of a whole TMEM allocation: one slot's columns times the leading dimensions."""
    text = alloc.result_types[0] if alloc.result_types else None
    md = parse_memdesc(text, aliases)
    per_slot = tmem_columns(text, aliases)
    if md is None or per_slot is None:
        return None
    lead = 1
    for d in md.shape[:-2]:
        lead *= d
    return per_slot * lead


def _columns(type_text: str | None) -> int | None:
    """32-bit TMEM columns a 2-D (or slot-prefixed) view spans: the last dimension, scaled by
    element width (two 16-bit elements share a column)."""
    md = parse_memdesc(type_text)
    if md is None or not md.shape:
        return None
    bits = element_bits(md.dtype) or 32
    return max(1, (md.shape[-1] * bits + 31) // 32)


def _span(cols: tuple[int, int]) -> str:
    return f"col {cols[0]}" if cols[0] == cols[1] else f"cols {cols[0]}-{cols[1]}"


def _int_attr(op: Operation, key: str) -> int | None:
    v = op.attr(key)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _label(op: Operation) -> str:
    if op.loc_name:
        return op.loc_name
    name = op.results[0] if op.results else op.name
    bare = name.lstrip("%")
    return name if bare.isdigit() else bare


def _is_zero_literal(literals: list[str]) -> bool:
    vals = [t for t in literals if t not in ("dense", "<", ">")]
    if len(vals) != 1:
        return False
    v = vals[0]
    try:
        return float.fromhex(v) == 0.0 if v.lower().startswith("0x") else float(v) == 0.0
    except ValueError:
        return False
