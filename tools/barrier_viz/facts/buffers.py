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

The facts themselves are defined in `buffer_model` and the expect check in `expects`; this module
collects members, accesses and groups, and re-exports the facts for its callers.
"""

from __future__ import annotations

import re
from math import prod

from ..ir.model import Operation, ParsedIR
from ..ir.types import MemDesc, element_bits, memdesc_bytes, parse_memdesc  # noqa: F401  (re-exported)
from .buffer_model import ALLOC_OPS, Access, BufferFacts, BufferGroup, Member, TMA_LOADS, Unresolved
from .buffer_model import BarrierRef, ExpectCheck, MergedBarrier, TmaCopy  # noqa: F401  (re-exported)
from .cga import cga_module
from .cluster import cluster_of
from .expects import _ExpectChecks
from .partitions import PartitionMap, module_warps
from .trace import Trace, Tracer, VIEW_OPS
from .transactions import REMOTE_COPY, REMOTE_STORE
from .values import OpResult


_LOAD_OPS = frozenset({"tt.descriptor_load", "tt.load", "nvws.descriptor_load"})
_AREF_CREATE = "nvws.aref.create"
_AREF_ENTER = frozenset({"nvws.aref.put.enter", "nvws.aref.get.enter"})
_MAX_AREF_DEPTH = 8
_VIEW_KINDS = frozenset(VIEW_OPS.values())
_ALLOC_SHAPE = re.compile(r"^\d+(?:x\d+)*$")


# -- collection -------------------------------------------------------------------------------
def buffer_facts(
    ir: ParsedIR,
    ops: list[Operation],
    partitions: PartitionMap | None = None,
    tracer: Tracer | None = None,
) -> BufferFacts:
    """Every buffer fact of the operations in scope (one function's, usually)."""
    return _Collector(ir, ops, partitions, tracer).run()


class _Collector(_ExpectChecks):
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
