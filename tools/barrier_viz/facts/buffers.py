"""Buffers: `buffer.id` groups, who writes and reads each buffer, and the merged-barrier expect check.

The skill's Shared Data Map (report section 4) answers "what data crosses partitions, in which
storage, behind which barrier". Its raw material is scattered: the memory planner's grouping
lives in `buffer.*` attributes on allocations, the slot shape in the memdesc type, the writers
and readers in ops that reach the allocation only through chains of views, captures and
iter_args. This module gathers those facts once, resolving every memory operand with the
`Tracer` (the single place SSA chains are followed), and never drops an operand it cannot
resolve: it is listed in `BufferFacts.unresolved`.

The expect check exists because a merged barrier (several TMA copies signalling one barrier)
is only correct when the `barrier_expect` byte count equals the bytes those copies deliver;
a mismatch is a hang (too many bytes expected) or a phase completing early (too few).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from math import prod

from ..ir.attrs import split_top_level
from ..ir.model import BlockArgument, Operation, ParsedIR
from ..ir.types import MemDesc, element_bits, memdesc_bytes, parse_memdesc  # noqa: F401  (re-exported)
from .cga import CgaUnknown, bytes_per_cta, cga_module
from .cluster import cluster_of
from .partitions import PartitionMap, module_warps
from .trace import VIEW_OPS, Trace, Tracer
from .transactions import BULK_COPY, NO_TX, bulk_copy_operands, REMOTE_COPY, REMOTE_COPY_OPS, REMOTE_STORE, REMOTE_VIEW, TX_OPS, Counter, \
    Delivery, Tally, remote_copy_bytes, remote_copy_operands
from .values import OpResult

ALLOC_OPS = frozenset({"ttg.local_alloc", "ttng.tmem_alloc"})
TMA_LOADS = frozenset({"ttng.async_tma_copy_global_to_local", "ttng.async_tma_gather"})
# Every op that completes transaction bytes on a barrier (TMA loads, CLC responses, remote copies).
TX_DELIVERY_OPS = frozenset(TX_OPS) | REMOTE_COPY_OPS | {BULK_COPY}
EXPECT = "ttng.barrier_expect"
WAIT = "ttng.wait_barrier"
_LOAD_OPS = frozenset({"tt.descriptor_load", "tt.load", "nvws.descriptor_load"})
_AREF_CREATE = "nvws.aref.create"
_AREF_ENTER = frozenset({"nvws.aref.put.enter", "nvws.aref.get.enter"})
_MAX_AREF_DEPTH = 8
_VIEW_KINDS = frozenset(VIEW_OPS.values())
_ALLOC_SHAPE = re.compile(r"^\d+(?:x\d+)*$")


# -- facts ------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Member:
    """One data allocation (`local_alloc` / `tmem_alloc`) and what its attributes and type say.

    `slot_*` describe one slot (one pipeline stage); `copies` is the number of slots, from
    `buffer.copy` or from the leading memdesc dimension, `copies_from` says which."""

    op: Operation = field(compare=False, repr=False)
    name: str
    loc_name: str | None
    line: int
    space: str | None
    type: str
    dtype: str
    shape: tuple[int, ...]
    slot_shape: tuple[int, ...]
    slot_bytes: int | None
    copies: int
    copies_from: str  # "buffer.copy" | "leading dimension" | "default"
    buffer_id: int | None
    offset: int | None
    share_group: int | None
    tma_staging: bool

    @property
    def owner(self) -> bool:
        """The planner's owner of a `buffer.id` group: the member without `buffer.offset`."""
        return self.offset is None

    @property
    def label(self) -> str:
        """A human name: the `loc("...")` name when there is one, else the SSA name (without
        `%` unless it is a bare number like `%0`)."""
        if self.loc_name:
            return self.loc_name
        bare = self.name.lstrip("%")
        return self.name if bare.isdigit() else bare


@dataclass(frozen=True, slots=True)
class Access:
    """One op writing or reading a member, with the partitions that execute it."""

    member: str
    kind: str  # "write" | "read"
    op: str
    role: str
    partitions: tuple[str, ...]
    line: int


@dataclass(frozen=True, slots=True)
class BarrierRef:
    """A barrier as the expect check sees it: its allocation and the slot indices applied."""

    name: str | None
    line: int | None
    slot: tuple[str, ...]
    # Through `map_to_remote_buffer`: the rank operand naming the CTA whose copy it is.
    cta: str | None = None


@dataclass(frozen=True, slots=True)
class TmaCopy:
    """An op that completes transaction bytes on a barrier (a TMA load, a CLC try-cancel, a
    remote copy): destination member, bytes delivered, barrier."""

    op: Operation = field(compare=False, repr=False)
    line: int
    member: str | None
    bytes: int | None
    barrier: BarrierRef | None
    partitions: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ExpectCheck:
    """One `barrier_expect`: declared bytes against the bytes its TMA copies deliver."""

    op: Operation = field(compare=False, repr=False)
    line: int
    barrier: BarrierRef | None
    declared: int | None
    copies: tuple[TmaCopy, ...]
    partitions: tuple[str, ...]
    # Bytes the barrier receives in each CTA of the cluster (one entry without a cluster), or
    # None with `reason` saying why they cannot be counted.
    per_cta: tuple[int, ...] | None = None
    reason: str | None = None
    # What each CTA's copy of the barrier expects when that is not `declared` everywhere (CGA
    # form: a broadcast group's leader expects `declared` per CTA of the group, others nothing).
    expected_per_cta: tuple[int, ...] | None = None
    # CTAs not checked: they do not run the expect (a rank test around it or its predicate),
    # or run no wait on its slot (waits are CTA-local: an armed phase nobody waits on stalls nothing).
    idle: tuple[int, ...] = ()

    def expects(self, cta: int) -> int | None:
        return self.expected_per_cta[cta] if self.expected_per_cta is not None else self.declared

    @property
    def delivered(self) -> int | None:
        """The bytes delivered (in the first CTA that disagrees with the expect, if one does)."""
        if self.per_cta is None:
            return None
        wrong = [b for r, b in enumerate(self.per_cta) if b != self.expects(r) and r not in self.idle]
        if self.expected_per_cta is not None and not wrong:
            return self.declared  # every barrier copy got `declared` per CTA it serves
        return wrong[0] if wrong else self.per_cta[0]

    @property
    def mismatched_ctas(self) -> tuple[int, ...]:
        if self.per_cta is None or self.declared is None:
            return ()
        return tuple(r for r, b in enumerate(self.per_cta) if b != self.expects(r) and r not in self.idle)

    @property
    def status(self) -> str:
        """matched | mismatched | unknown (bytes, barrier or the delivering ops not known)."""
        if self.barrier is None or self.declared is None or self.delivered is None:
            return "unknown"
        return "mismatched" if self.mismatched_ctas else "matched"


@dataclass(frozen=True, slots=True)
class MergedBarrier:
    """A barrier allocation that TMA copies into several different buffers signal."""

    name: str | None
    line: int | None
    members: tuple[str, ...]
    copies: tuple[TmaCopy, ...]


@dataclass(frozen=True, slots=True)
class Unresolved:
    """A memory operand whose allocation could not be found, and why."""

    op: str
    line: int
    operand: str
    reason: str


@dataclass(frozen=True, slots=True)
class BufferGroup:
    """Allocations sharing a `buffer.id` (or one allocation without it), and their accesses."""

    key: str
    buffer_id: int | None
    members: tuple[Member, ...]
    writers: tuple[Access, ...]
    readers: tuple[Access, ...]

    @property
    def packed(self) -> bool:
        """Column-packed: some member sits at a `buffer.offset` inside the owner."""
        return any(m.offset is not None for m in self.members)

    @property
    def shares_id(self) -> bool:
        """Several whole buffers (no offset) in one `buffer.id` group: the skill's merged case."""
        return sum(1 for m in self.members if m.offset is None) > 1

    @property
    def space(self) -> str | None:
        spaces = {m.space for m in self.members}
        return spaces.pop() if len(spaces) == 1 else None

    @property
    def slot_bytes(self) -> int | None:
        """Bytes per slot of the whole group (members packed by offset do not add storage)."""
        whole = [m for m in self.members if m.offset is None]
        if any(m.slot_bytes is None for m in whole):
            return None
        return sum(m.slot_bytes or 0 for m in whole)


@dataclass(frozen=True, slots=True)
class BufferFacts:
    groups: tuple[BufferGroup, ...]
    expects: tuple[ExpectCheck, ...]
    merged_barriers: tuple[MergedBarrier, ...]
    uncovered_copies: tuple[TmaCopy, ...]
    unresolved: tuple[Unresolved, ...]

    def group_of(self, member_name: str) -> BufferGroup | None:
        return next((g for g in self.groups if any(m.name == member_name for m in g.members)), None)

    def expects_for(self, group: BufferGroup) -> list[ExpectCheck]:
        names = {m.name for m in group.members}
        return [e for e in self.expects if any(c.member in names for c in e.copies)]

    def merged_barriers_for(self, group: BufferGroup) -> list[MergedBarrier]:
        names = {m.name for m in group.members}
        return [b for b in self.merged_barriers if names & set(b.members)]


# -- collection -------------------------------------------------------------------------------
def buffer_facts(
    ir: ParsedIR,
    ops: list[Operation],
    partitions: PartitionMap | None = None,
    tracer: Tracer | None = None,
) -> BufferFacts:
    """Every buffer fact of the operations in scope (one function's, usually)."""
    return _Collector(ir, ops, partitions, tracer).run()


class _Collector:
    def __init__(self, ir: ParsedIR, ops: list[Operation], pmap: PartitionMap | None, tracer: Tracer | None):
        self.ir = ir
        self.ops = ops
        self.pmap = pmap if pmap is not None else PartitionMap(ops, module_warps(ops))
        self.tracer = tracer or Tracer(ir)
        self._traces: dict[tuple[int, str], Trace] = {}
        self.unresolved: list[Unresolved] = []
        self.cluster = cluster_of(ir)
        self.cga = cga_module(ir)
        self._by_op: dict[int, Member] = {}

    def run(self) -> BufferFacts:
        members = self._members()
        by_op = self._by_op = {id(m.op): m for m in members}
        accesses = self._accesses(by_op)
        copies = self._tma_copies(by_op)
        expects, covered = self._expect_checks(copies)
        uncovered = tuple(c for c in copies if id(c.op) not in covered)
        return BufferFacts(
            groups=self._groups(members, accesses),
            expects=tuple(expects),
            merged_barriers=self._merged_barriers(copies),
            uncovered_copies=uncovered,
            unresolved=tuple(self.unresolved),
        )

    # -- members ----------------------------------------------------------------------------
    def _members(self) -> list[Member]:
        allocs = [op for op in self.ops if op.name in ALLOC_OPS and op.results]
        types = {id(op): parse_memdesc(op.result_types[0] if op.result_types else None, self.ir.aliases) for op in allocs}
        data = [op for op in allocs if types[id(op)] is not None and not _is_barrier_array(types[id(op)])]
        slots = self._direct_slot_types(data)
        return [self._member(op, types[id(op)], slots.get(id(op))) for op in data]  # type: ignore[arg-type]

    def _direct_slot_types(self, allocs: list[Operation]) -> dict[int, MemDesc]:
        """Slot type of each allocation that is indexed directly: `memdesc_index` on the alloc
        itself (possibly through captures or iter_args, not through other views), or the
        buffer an `nvws.aref.put/get.enter` hands out for it."""
        wanted = {id(op) for op in allocs}
        found: dict[int, MemDesc] = {}
        for op in self.ops:
            for root, type_text in self._slot_evidence(op):
                if root is None or id(root) not in wanted or id(root) in found:
                    continue
                slot = parse_memdesc(type_text, self.ir.aliases)
                if slot is not None:
                    found[id(root)] = slot
        return found

    def _slot_evidence(self, op: Operation) -> list[tuple[Operation | None, str | None]]:
        if op.name == "ttg.memdesc_index" and op.operands:
            trace = self._trace(op.operands[0], op)
            if trace.indices or any(h.via in _VIEW_KINDS for h in trace.hops):
                return []
            return [(trace.root, op.result_types[0] if op.result_types else None)]
        if op.name in _AREF_ENTER and op.operands:
            create = self._trace(op.operands[0], op).root
            if create is None or create.name != _AREF_CREATE:
                return []
            buffers = create.positional
            return [(self._root(buffers[k], create)[0], op.result_types[k] if k < len(op.result_types) else None)
                    for k in range(min(len(buffers), len(op.results)))]
        return []

    def _member(self, op: Operation, desc: MemDesc, slot: MemDesc | None) -> Member:
        copy_attr = _int_attr(op, "buffer.copy")
        shape = desc.shape
        if slot is not None and len(shape) == len(slot.shape) + 1 and shape[1:] == slot.shape:
            slot_shape, copies, source = shape[1:], shape[0], "leading dimension"
        elif copy_attr is not None and len(shape) >= 2 and shape[0] == copy_attr and (len(shape) >= 3 or copy_attr > 1):
            slot_shape, copies, source = shape[1:], copy_attr, "leading dimension"
        else:
            slot_shape = shape
            copies, source = (copy_attr, "buffer.copy") if copy_attr is not None else (1, "default")
        bits = desc.bits
        return Member(
            op=op,
            name=op.results[0],
            loc_name=op.loc_name,
            line=op.line,
            space=desc.space,
            type=desc.text,
            dtype=desc.dtype,
            shape=shape,
            slot_shape=slot_shape,
            slot_bytes=None if bits is None else (prod(slot_shape) * bits + 7) // 8,
            copies=copies,
            copies_from=source,
            buffer_id=_int_attr(op, "buffer.id"),
            offset=_int_attr(op, "buffer.offset"),
            share_group=_int_attr(op, "allocation.shareGroup"),
            tma_staging=bool(_int_attr(op, "buffer.tmaStaging")),
        )

    # -- accesses ---------------------------------------------------------------------------
    def _accesses(self, by_op: dict[int, Member]) -> list[Access]:
        out: list[Access] = []
        for op in self.ops:
            if op.name in ALLOC_OPS and id(op) in by_op:
                out.extend(self._init_write(op, by_op[id(op)]))
                continue
            for index, kind, role in self._operand_roles(op):
                pos = op.positional
                if index >= len(pos):
                    continue
                member = self._resolve(pos[index], op, by_op)
                if member is not None:
                    out.append(Access(member.name, kind, op.name, role, self._parts(op), op.line))
        return out

    def _init_write(self, op: Operation, member: Member) -> list[Access]:
        """An allocation with an initial value writes it; when that value is a load (the
        pre-partition form of a TMA load) the load's partition is the real writer."""
        pos = op.positional
        if not pos:
            return []
        source = self.tracer.values.lookup(pos[0], op)
        parts = self._parts(op)
        role = "alloc init"
        if isinstance(source, OpResult) and source.op.name in _LOAD_OPS:
            role = f"alloc init ({source.op.name.split('.')[-1]})"
            parts = self._parts(source.op) or parts
        return [Access(member.name, "write", op.name, role, parts, op.line)]

    def _operand_roles(self, op: Operation) -> list[tuple[int, str, str]]:
        """(positional operand index, write/read, role) of each memory operand of `op`."""
        name = op.name
        if name in TMA_LOADS:
            return [(1, "write", "TMA load")]
        if name == "nvws.descriptor_load":
            return [(1, "write", "TMA load (aref)")]
        if name == "ttng.async_clc_try_cancel":
            return [(1, "write", "CLC response")]
        if name == "ttng.clc_try_cancel":
            return [(0, "write", "CLC response")]
        if name in ("ttng.clc_query_cancel", "ttng.clc_load_result"):
            return [(0, "read", "CLC response")]
        if name == REMOTE_COPY:
            return [(0, "read", "remote copy source"), (2, "write", "remote copy (peer CTA)")]
        if name == REMOTE_STORE:
            return [(2, "write", "remote store (peer CTA)")]
        if name == "ttg.async_copy_global_to_local":
            return [(1, "write", "cp.async")]
        if name == "ttg.local_store":
            return [(1, "write", "local_store")]
        if name == "ttng.tmem_store":
            return [(1, "write", "tmem_store")]
        if name == "ttng.tmem_copy":
            return [(0, "read", "tmem_copy source"), (1, "write", "tmem_copy")]
        if name == "ttng.tmem_load":
            return [(0, "read", "tmem_load")]
        if name == "ttg.local_load":
            return [(0, "read", "local_load")]
        if name == "ttng.async_tma_copy_local_to_global":
            return [(1, "read", "TMA store")]
        if name in ("ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled"):
            return self._mma_roles(op)
        if name == "ttng.warp_group_dot":
            return [(i, "read", role) for i, role in ((0, "MMA A"), (1, "MMA B")) if _is_memdesc_operand(op, i)]
        return []

    def _mma_roles(self, op: Operation) -> list[tuple[int, str, str]]:
        scaled = op.name == "ttng.tc_gen5_mma_scaled"
        roles = [(0, "read", "MMA A"), (1, "read", "MMA B"), (2, "write", "MMA D")]
        if scaled:
            roles += [(3, "read", "MMA scale A"), (4, "read", "MMA scale B")]
        use_d = _use_d(op, self, 5 if scaled else 3)
        if use_d != "false":
            roles.append((2, "read", "MMA D (accumulate)" if use_d == "true" else "MMA D (useD dynamic)"))
        return roles

    def _resolve(self, value: str, at: Operation, by_op: dict[int, Member]) -> Member | None:
        root, reason = self._root(value, at)
        if root is not None and id(root) in by_op:
            return by_op[id(root)]
        if root is not None and root.name in ALLOC_OPS:
            return None  # a barrier array or an allocation outside the scope
        self.unresolved.append(Unresolved(at.name, at.line, value, reason or f"{value} has no allocation"))
        return None

    def _root(self, value: str, at: Operation, depth: int = 0) -> tuple[Operation | None, str | None]:
        """The allocation a memory operand views, or None and why. Continues the Tracer's
        chain through arefs: a buffer taken from `nvws.aref.put/get.enter` (result k) or
        `nvws.aref.buffer` is buffer k of the `nvws.aref.create` it came from."""
        trace = self._trace(value, at)
        if trace.root is not None and trace.root.name == _AREF_CREATE:
            buffers = trace.root.positional
            if len(buffers) != 1:
                return None, f"{value} is one of several buffers of the aref at line {trace.root.line}"
            return self._aref_buffer(trace.root, 0, depth)
        if trace.stop_op is not None and trace.stop_op.name in _AREF_ENTER and trace.stop_op.operands:
            enter = trace.stop_op
            create = self._trace(enter.operands[0], enter).root
            if create is not None and create.name == _AREF_CREATE:
                return self._aref_buffer(create, trace.stop_result, depth)
        if trace.root is not None:
            return trace.root, None
        if trace.root_arg is not None:
            return None, f"{value} is function argument {trace.root_name}"
        return None, trace.unresolved

    def _aref_buffer(self, create: Operation, k: int, depth: int) -> tuple[Operation | None, str | None]:
        buffers = create.positional
        if k >= len(buffers) or depth >= _MAX_AREF_DEPTH:
            return None, f"buffer {k} of the aref at line {create.line} is not known"
        return self._root(buffers[k], create, depth + 1)

    # -- TMA copies, expects, merged barriers -----------------------------------------------
    def _tma_copies(self, by_op: dict[int, Member]) -> list[TmaCopy]:
        """Every op that delivers transaction bytes to a barrier: TMA loads, CLC try-cancel
        (its 16-byte response), remote copies (the source's bytes, in the peer CTA)."""
        out: list[TmaCopy] = []
        for op in self.ops:
            if op.name not in TX_DELIVERY_OPS:
                continue
            pos = op.positional
            if op.name in REMOTE_COPY_OPS:
                rc = remote_copy_operands(op)
                if rc is None:
                    continue
                member = self._lookup_member(pos[2], op, by_op)
                out.append(TmaCopy(op, op.line, member.name if member else None, remote_copy_bytes(op),
                                   self._barrier(rc[2], op), self._parts(op)))
                continue
            bulk = bulk_copy_operands(op)
            if op.name == BULK_COPY:
                if bulk is not None:
                    member = self._lookup_member(bulk[0], op, by_op)
                    out.append(TmaCopy(op, op.line, member.name if member else None, self._bulk_bytes(op, bulk),
                                       self._barrier(bulk[2], op), self._parts(op)))
                continue
            bar_at, data_at, fixed = TX_OPS[op.name]
            member = self._lookup_member(pos[data_at], op, by_op) if data_at < len(pos) else None
            nbytes = fixed if fixed is not None else self._copy_bytes(op, member)
            out.append(TmaCopy(op, op.line, member.name if member else None, nbytes,
                               self._barrier(pos[bar_at], op) if bar_at < len(pos) else None, self._parts(op)))
        return out

    def _copy_bytes(self, op: Operation, member: Member | None) -> int | None:
        """Bytes one copy delivers: its destination view as typed on the op (a split copy
        writes a sub-view), else the destination slot. In CGA form: one CTA's share of it."""
        for text in reversed(op.types):
            dst = parse_memdesc(text, self.ir.aliases)
            if dst is not None and dst.dtype != "i64" and dst.bytes is not None:
                if self.cga is not None:
                    try:
                        return bytes_per_cta(text, self.ir.aliases, self.cga.num_ctas)
                    except CgaUnknown:
                        return None
                return dst.bytes
        return member.slot_bytes if member is not None else None

    def _lookup_member(self, value: str, at: Operation, by_op: dict[int, Member]) -> Member | None:
        root, _ = self._root(value, at)
        return by_op.get(id(root)) if root is not None else None

    def _barrier(self, value: str, at: Operation) -> BarrierRef | None:
        trace = self._trace(value, at)
        if not trace.found:
            self.unresolved.append(Unresolved(at.name, at.line, value, trace.unresolved or "no allocation"))
            return None
        return BarrierRef(trace.root_name, trace.root_line, tuple(i.value for i in trace.indices),
                          trace.remote.rank if trace.remote is not None else None)

    def _barrier_key(self, op: Operation, index: int) -> tuple | None:
        pos = op.positional
        if index >= len(pos):
            return None
        trace = self._trace(pos[index], op)
        if not trace.resolved:
            return None
        return (trace.key, tuple(i.value for i in trace.indices))

    def _expect_checks(self, copies: list[TmaCopy]) -> tuple[list[ExpectCheck], set[int]]:
        """Pair each `barrier_expect` with the ops on the same barrier slot that follow it in
        its block (nested regions included), up to the next expect on that slot or a wait on it
        (the wait ends the phase the expect armed), and count the bytes each CTA receives."""
        by_copy = {id(c.op): c for c in copies}
        counter = Counter(self.tracer.values, self.cluster, self.cga)
        covered: set[int] = set()
        checks: list[ExpectCheck] = []
        for op in self.ops:
            if op.name != EXPECT:
                continue
            pos = op.positional
            barrier = self._barrier(pos[0], op) if pos else None
            key = self._barrier_key(op, 0)
            found: list[TmaCopy] = []
            tally = Tally(None, "its barrier operand is not resolved to an allocation")
            if key is None and barrier is not None and barrier.cta is not None:
                tally = Tally(None, f"it arms the copy of the barrier in the CTA {barrier.cta} names "
                                    "(map_to_remote_buffer): a remote expect is not counted per CTA")
            if key is not None:
                found, deliveries, blockers = self._window(op, key, by_copy, counter)
                if not deliveries and not blockers:
                    elsewhere = self._deliveries_elsewhere(op, key, by_copy)
                    if elsewhere:
                        blockers = [f"the bytes on this barrier come from ops outside the expect's block (line(s) "
                                    f"{', '.join(str(c.line) for c in elsewhere)}), which are not paired with it"]
                tally = counter.tally(op, deliveries, blockers)
                if tally.per_cta is not None and len(tally.per_cta) > 1:
                    unwaited = tuple(c for c in range(len(tally.per_cta)) if self._never_waited(op, key, c, counter))
                    tally = replace(tally, idle=tuple(sorted(set(tally.idle) | set(unwaited))))
            covered.update(id(c.op) for c in found)
            checks.append(ExpectCheck(op, op.line, barrier, _int_literal(op), tuple(found), self._parts(op),
                                      tally.per_cta, tally.reason, tally.expected, tally.idle))
        return checks, covered

    def _window(self, expect: Operation, key: tuple, by_copy: dict[int, TmaCopy], counter: Counter):
        """(copies, deliveries, blockers) of the ops after `expect` that act on its slot."""
        found: list[TmaCopy] = []
        deliveries: list[Delivery] = []
        blockers: list[str] = []
        for top in self._window_ops(expect, counter):
            for op in top.walk():
                if op.name in (EXPECT, WAIT) and self._barrier_key(op, 0) == key:
                    return found, deliveries, blockers
                pos = op.positional
                for name in dict.fromkeys(op.operands):
                    hit = self._slot_of(name, op)
                    if hit is None or hit[0][0] != key[0]:
                        continue
                    remote = hit[1]
                    k = pos.index(name) if name in pos else -1
                    same = self._same_slot(hit[0][1], op, key[1], expect, counter)
                    if same is False:
                        continue
                    d = self._delivery(op, k, remote, counter)
                    if d is not None and same is None:
                        blockers.append(f"{op.name} at line {op.line} completes bytes on a slot of the barrier array "
                                        "whose index is not computable per CTA")
                    elif d is not None:
                        if same is not True:  # a per-rank index: only the ranks that name this slot
                            d = replace(d, issues=lambda s, _d=d, _m=same: _m(s) and _d.issues(s))
                        deliveries.append(d)
                        if id(op) in by_copy:
                            found.append(by_copy[id(op)])
                    elif hit[0] != key:
                        continue  # another slot of the array, used in a way that delivers nothing
                    elif op.name not in NO_TX and op.name not in TX_OPS:
                        blockers.append(f"{op.name} at line {op.line} uses the barrier and is not modelled")
        return found, deliveries, blockers

    def _never_waited(self, expect: Operation, key: tuple, cta: int, counter: Counter) -> bool:
        """No wait on the expect's slot runs in CTA `cta` (every wait on the barrier array sits
        under a rank test that excludes it, or names another slot there). mbarrier waits are
        CTA-local, so a phase that CTA arms and never waits on stalls nothing (TLX's remote-store
        reduction: every CTA arms the slots, only CTA 0 waits). Unknown: False."""
        waits = [w for w in self.ops if w.name == WAIT and w.positional
                 and (hit := self._slot_of(w.positional[0], w)) is not None and hit[0][0] == key[0]]
        for w in waits:
            hit = self._slot_of(w.positional[0], w)
            same = self._same_slot(hit[0][1], w, key[1], expect, counter)
            if same is None:
                return False
            if same is False or (same is not True and not same(cta)):
                continue
            if counter.executes(w, None, cta) is not False:
                return False
        return True

    def _window_ops(self, expect: Operation, counter: Counter) -> list[Operation]:
        """The ops after `expect` in its block; in a cluster, when that block is the body of an
        `scf.if` on the CTA rank (one CTA arms the barrier, e.g. `if rank == 1: expect`), also
        the ops after that `scf.if`: the copies that complete the phase are issued there, often
        by a peer under its own rank test, and run after the expect in program order."""
        out: list[Operation] = []
        op = expect
        while op.block is not None:
            ops = op.block.operations
            out.extend(ops[next(i for i, o in enumerate(ops) if o is op) + 1:])
            parent = op.parent_op
            if (self.cluster.size <= 1 or parent is None or parent.name != "scf.if" or not parent.operands
                    or not counter.depends_on_rank(parent.operands[0], parent)):
                break
            op = parent
        return out

    @staticmethod
    def _same_slot(idx: tuple[str, ...], at: Operation, want: tuple[str, ...], expect: Operation,
                   counter: Counter):
        """Is the slot `idx` (indices at `at`) the expect's slot `want`? True / False for every
        CTA alike (other index values: another slot, as before), a per-rank predicate when an
        index depends on the CTA rank (TLX `barriers[cluster_cta_rank()]`), None when such an
        index cannot be computed."""
        if idx == want:
            return True
        if len(idx) != len(want) or not any(counter.depends_on_rank(a, at) for a in idx):
            return False  # another slot (an index that is the same in every CTA names it apart)
        n = max(1, counter.cluster.size)
        per_rank = []
        for s in range(n):
            got = [counter.ranks.value(a, at, s) for a in idx]
            exp = [counter.ranks.value(b, expect, s) for b in want]
            if any(v is None for v in got + exp):
                return None
            per_rank.append(got == exp)
        if all(per_rank):
            return True
        if not any(per_rank):
            return False
        return lambda s: 0 <= s < n and per_rank[s]

    def _delivery(self, op: Operation, k: int, remote: tuple[str, Operation] | None,
                  counter: Counter) -> Delivery | None:
        """The bytes `op` completes on the barrier it takes as positional operand `k`, if any."""
        spec = TX_OPS.get(op.name)
        # A remote view (`map_to_remote_buffer`) is the peer's copy: `counter.reached` names the
        # CTA it reaches (the 2-CTA TMA load completing on the pair leader's barrier).
        if spec is not None and k == spec[0]:
            bar_at, data_at, fixed = spec
            if fixed is not None:
                nbytes: int | None = fixed
            else:
                pos = op.positional
                member = self._lookup_member(pos[data_at], op, self._by_op) if data_at < len(pos) else None
                nbytes = self._copy_bytes(op, member)
            return Delivery(op, nbytes, *counter.reached(op, op.positional[bar_at]))
        rc = remote_copy_operands(op)
        if rc is not None and k == len(op.positional) - 1 and remote is None:
            return Delivery(op, remote_copy_bytes(op), *counter.reached(op, rc[2]))
        bulk = bulk_copy_operands(op)
        if bulk is not None and k == len(op.positional) - 1:
            return Delivery(op, self._bulk_bytes(op, bulk), *counter.reached(op, bulk[2]))
        return None

    def _bulk_bytes(self, op: Operation, bulk: tuple[str, str, str]) -> int | None:
        """A bulk copy's `bulk_size` (a constant), else its destination view's bytes."""
        defn = self.tracer.values.lookup(bulk[1], op)
        if isinstance(defn, OpResult) and defn.op.name == "arith.constant":
            value = next((int(t) for t in defn.op.literals if t.lstrip("-").isdigit()), None)
            if value is not None:
                return value
        return next((b for b in (memdesc_bytes(t) for t in op.types) if b is not None), None)

    def _slot_of(self, value: str, at: Operation) -> tuple[tuple, tuple[str, Operation] | None] | None:
        """(barrier slot key, remote view) of an operand that is a barrier (None otherwise); a
        `map_to_remote_buffer` view names the slot of its source and the rank operand."""
        defn = self.tracer.values.lookup(value, at)
        type_text = defn.type if isinstance(defn, (OpResult, BlockArgument)) else None
        if type_text is not None and ("i64" not in type_text or "memdesc" not in type_text):
            return None
        trace = self._trace(value, at)
        if not trace.found:
            return None
        # slot indices from the allocation outwards, as the expect's key lists them
        key = (trace.key, tuple(i.value for i in trace.indices))
        return key, ((trace.remote.rank, trace.remote.op) if trace.remote is not None else None)

    def _deliveries_elsewhere(self, expect: Operation, key: tuple, by_copy: dict[int, TmaCopy]) -> list[TmaCopy]:
        """TMA/CLC ops on the same barrier allocation (any slot) that are not in the window."""
        out = []
        for c in by_copy.values():
            spec = TX_OPS.get(c.op.name)
            pos = c.op.positional
            if spec is None or spec[0] >= len(pos):
                continue
            hit = self._slot_of(pos[spec[0]], c.op)
            if hit is not None and hit[0][0] == key[0]:
                out.append(c)
        return out

    def _merged_barriers(self, copies: list[TmaCopy]) -> tuple[MergedBarrier, ...]:
        by_barrier: dict[tuple[str | None, int | None], list[TmaCopy]] = {}
        for c in copies:
            if c.barrier is not None:
                by_barrier.setdefault((c.barrier.name, c.barrier.line), []).append(c)
        out = []
        for (name, line), group in by_barrier.items():
            members = tuple(dict.fromkeys(c.member for c in group if c.member is not None))
            if len(members) > 1:
                out.append(MergedBarrier(name, line, members, tuple(group)))
        return tuple(out)

    # -- groups -----------------------------------------------------------------------------
    def _groups(self, members: list[Member], accesses: list[Access]) -> tuple[BufferGroup, ...]:
        keyed: dict[str, list[Member]] = {}
        for m in members:
            key = f"buffer.id={m.buffer_id}" if m.buffer_id is not None else m.name
            keyed.setdefault(key, []).append(m)
        out = []
        for key, group in keyed.items():
            names = {m.name for m in group}
            mine = [a for a in accesses if a.member in names]
            out.append(BufferGroup(
                key=key,
                buffer_id=group[0].buffer_id,
                members=tuple(group),
                writers=tuple(a for a in mine if a.kind == "write"),
                readers=tuple(a for a in mine if a.kind == "read"),
            ))
        return tuple(out)

    # -- helpers ----------------------------------------------------------------------------
    def _trace(self, value: str, at: Operation) -> Trace:
        key = (id(at), value)
        trace = self._traces.get(key)
        if trace is None:
            trace = self.tracer.trace(value, at)
            self._traces[key] = trace
        return trace

    def _parts(self, op: Operation) -> tuple[str, ...]:
        return tuple(p.name for p in self.pmap.of(op))


def _use_d(op: Operation, collector: _Collector, index: int) -> str:
    """"true" / "false" when the MMA's useD operand is a constant, else "dynamic"."""
    pos = op.positional
    if index >= len(pos):
        return "dynamic"
    defn = collector.tracer.values.lookup(pos[index], op)
    if isinstance(defn, OpResult) and defn.op.name == "arith.constant" and defn.op.literals:
        lit = defn.op.literals[0]
        if lit in ("true", "false"):
            return lit
    return "dynamic"


def _is_memdesc_operand(op: Operation, index: int) -> bool:
    """warp_group_dot may take A from registers; only memdesc operands are buffers."""
    return index < len(op.types) and op.types[index].startswith("!ttg.memdesc")


def _is_barrier_array(desc: MemDesc) -> bool:
    return desc.dtype == "i64" and desc.space in ("smem", None)


def _int_attr(op: Operation, key: str) -> int | None:
    value = op.attr(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _int_literal(op: Operation) -> int | None:
    for lit in op.literals:
        try:
            return int(lit, 0)
        except ValueError:
            continue
    return None
