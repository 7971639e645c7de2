"""Barrier facts: every synchronizing operation, what it does, and which logical barrier it hits.

Report section 5 (SSA value to barrier map) and the barrier half of section 2 are made of these
facts. Two steps:

1. **Classify** each operation by its written form (`barrier_operands`): which operand is a
   barrier, the role the op plays on it (init, expect, arrive, wait, ...), the mechanism of the
   skill's table it belongs to, its count or bytes, phase and predicate operands. Operand
   positions follow the printed formats of `docs/ir-semantics.md` section 3; bracketed operands
   (`%d[%token]`, `%bar[%pred]`, TMA coordinates) are told apart by `Operation.operand_depths`,
   so the MMA barrier list is found after the fixed operands whatever the token and scale
   operands are.
2. **Resolve** each barrier operand to its logical barrier with `Tracer` (the one place SSA
   values are followed): one logical barrier is one allocation, an `i64` shared-memory array of
   N slots; a named barrier is its constant id (constants are rematerialised in every partition,
   so the id, not the SSA value, is the identity); an aref is its `nvws.aref.create`; a legacy
   NVWS token its `nvws.create_token`. A use that cannot be resolved is kept as `Unresolved`
   with the reason, never dropped.

Step 1 lives in `barrier_ops` (the roles, mechanisms and operand readers, re-exported here);
this module does step 2 and holds the resolved facts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..ir.model import BlockArgument, Operation
from ..ir.types import MemDesc, is_barrier_type, memdesc_bytes, parse_memdesc  # noqa: F401  (re-exported)
from ..ir.vocab import LOOP_OPS
from .barrier_ops import (ALLOCATION_HOP, AREF_CREATE, BarrierKind, BarrierOperand, CONSTANT_HOP, CREATE_MECHANISMS,
                          CREATE_TOKEN, LOCAL_ALLOC, Mechanism, Role, _attr_int, barrier_operands, constant_value)
from .partitions import PartitionMap
from .trace import Trace, Tracer
from .values import OpResult, ValueIndex


# -- resolved facts ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SlotRef:
    """A slot index applied to the barrier on the way from its allocation to the use: the index
    value (from a `memdesc_index`, or a token/aref stage operand), its line, and its value when
    it is a constant."""

    value: str
    line: int
    constant: int | None


@dataclass(frozen=True, slots=True)
class Alias:
    """An SSA name that refers to the barrier, where it is defined, and the hop that made it."""

    name: str
    line: int
    via: str


@dataclass(frozen=True, slots=True)
class BarrierUse:
    """One resolved barrier operand: the op, what it does, where it runs."""

    op: Operation = field(compare=False, repr=False)
    operand: str
    role: Role
    mechanism: Mechanism
    line: int
    partition: str | None
    partitions: tuple[str, ...]
    loop_depth: int
    slots: tuple[SlotRef, ...] = ()
    count: int | None = None
    bytes: int | None = None
    phase: str | None = None
    predicate: str | None = None
    op_predicate: str | None = None
    constraints: dict[str, Any] | None = field(default=None, compare=False)
    trace: Trace | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Unresolved:
    """A barrier operand that could not be followed to its barrier, and why."""

    op: Operation = field(compare=False, repr=False)
    line: int
    operand: str
    role: Role
    reason: str


@dataclass(frozen=True, slots=True)
class Barrier:
    """One logical barrier: an allocation (all its slots), a named-barrier id, an aref or an
    NVWS token, with every name that refers to it and every use."""

    id: str
    kind: BarrierKind
    name: str
    line: int
    loc_name: str | None
    type: str | None
    slots: int | None
    init_counts: tuple[int, ...]
    mechanisms: tuple[Mechanism, ...]
    aliases: tuple[Alias, ...]
    uses: tuple[BarrierUse, ...]
    alloc: Operation | None = field(default=None, compare=False, repr=False)
    named_id: int | None = None


@dataclass(frozen=True, slots=True)
class RemoteUse:
    """A use of (a slot of) `map_to_remote_buffer %bar, %rank`: barrier `%bar` of the CTA the rank
    names. The tracer resolves it (`Trace.remote`); it is kept apart from `Barrier.uses`, which
    hold what a CTA does to its own copy (the rules that count a CTA's own arrivals must not count
    a peer's as local). The graph and the cluster summary show these uses, with their slots, as
    arrivals that cross CTAs (`facts.cluster.cta_reach`)."""

    barrier: Barrier
    use: BarrierUse
    view: Operation = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class BarrierFacts:
    """Every logical barrier in scope (allocation order), every use of a peer CTA's copy, and
    every unresolved use."""

    barriers: tuple[Barrier, ...]
    unresolved: tuple[Unresolved, ...]
    remote: tuple[RemoteUse, ...] = ()
    _uses_by_op: dict[int, list[tuple[Barrier, BarrierUse]]] = field(init=False, repr=False, compare=False)
    _by_alloc: dict[int, Barrier] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        uses: dict[int, list[tuple[Barrier, BarrierUse]]] = {}
        allocs: dict[int, Barrier] = {}
        for b in self.barriers:
            if b.alloc is not None and b.kind is not BarrierKind.NAMED:
                allocs[id(b.alloc)] = b
            for u in b.uses:
                uses.setdefault(id(u.op), []).append((b, u))
        object.__setattr__(self, "_uses_by_op", uses)
        object.__setattr__(self, "_by_alloc", allocs)

    def uses_at(self, op: Operation) -> list[tuple[Barrier, BarrierUse]]:
        """The barriers `op` acts on, with its use of each."""
        return self._uses_by_op.get(id(op), [])

    def by_alloc(self, op: Operation) -> Barrier | None:
        """The logical barrier `op` allocates (None for other ops)."""
        return self._by_alloc.get(id(op))

    @property
    def use_count(self) -> int:
        return sum(len(b.uses) for b in self.barriers)

    def mechanism_of(self, op: Operation) -> str | None:
        """The mechanism an op stands for in listings. An op that serves every mbarrier
        mechanism (wait, init, inval, the allocation) takes the mechanisms of the barrier it acts
        on, joined by `+`, so a wait says what it waits for."""
        if op.name in CREATE_MECHANISMS:
            return CREATE_MECHANISMS[op.name].value
        barrier = self.by_alloc(op)
        if barrier is not None:
            return _joined(barrier.mechanisms) or Mechanism.MBARRIER.value
        found = self.uses_at(op)
        if not found:
            reads = barrier_operands(op)
            return reads[0].mechanism.value if reads else None
        own = found[0][1].mechanism
        if own is not Mechanism.MBARRIER:
            return own.value
        return _joined(tuple(m for b, _ in found for m in b.mechanisms)) or own.value


def _joined(mechanisms: Iterable[Mechanism]) -> str:
    seen: list[str] = []
    for m in mechanisms:
        if m.value not in seen:
            seen.append(m.value)
    return "+".join(seen)


# -- building -----------------------------------------------------------------------------------
@dataclass
class _Draft:
    """A logical barrier while its uses are collected."""

    kind: BarrierKind
    name: str
    line: int
    order: tuple[int, int, int]
    alloc: Operation | None
    loc_name: str | None
    type: str | None
    named_id: int | None = None
    uses: list[BarrierUse] = field(default_factory=list)
    aliases: dict[tuple[str, int, str], Alias] = field(default_factory=dict)


def collect_barriers(
    scope: Iterable[Operation],
    tracer: Tracer,
    partitions: PartitionMap | None = None,
) -> BarrierFacts:
    """Classify every op of `scope`, resolve each barrier operand with `tracer`, and group the
    uses by logical barrier. Allocations in scope that nothing uses are listed too."""
    ops = list(scope)
    drafts: dict[tuple, _Draft] = {}
    unresolved: list[Unresolved] = []
    remote: list[tuple[_Draft, BarrierUse, Operation]] = []
    for op in ops:
        root_kind = _root_kind(op)
        if root_kind is not None:
            _draft_for_root(drafts, op, 0, root_kind)
    for op in ops:
        for read in barrier_operands(op):
            trace = tracer.trace(read.operand, op)
            draft, reason = _resolve(drafts, read, trace)
            if draft is None:
                unresolved.append(Unresolved(op, op.line, read.operand, read.role, reason or "unresolved"))
                continue
            if trace.remote is not None:
                remote.append((draft, _use(read, trace, tracer.values, partitions), trace.remote.op))
                continue
            draft.uses.append(_use(read, trace, tracer.values, partitions))
            for hop in trace.hops:
                if hop.via != ALLOCATION_HOP:
                    draft.aliases.setdefault((hop.name, hop.line, hop.via), Alias(hop.name, hop.line, hop.via))
            if draft.kind is BarrierKind.NAMED and trace.root is not None and trace.root is not draft.alloc:
                name = trace.root_name or read.operand
                alias = Alias(name, trace.root.line, CONSTANT_HOP)
                draft.aliases.setdefault((alias.name, alias.line, alias.via), alias)
    finished = {id(d): _finish(d) for d in sorted(drafts.values(), key=lambda d: d.order)}
    return BarrierFacts(tuple(finished.values()), tuple(unresolved),
                        tuple(RemoteUse(finished[id(d)], u, view) for d, u, view in remote))


def _root_kind(op: Operation) -> BarrierKind | None:
    if op.name == LOCAL_ALLOC and op.results and is_barrier_type(op.result_types[0] if op.result_types else None):
        return BarrierKind.MBARRIER
    if op.name == CREATE_TOKEN:
        return BarrierKind.NVWS_TOKEN
    if op.name == AREF_CREATE:
        return BarrierKind.AREF
    return None


def _draft_for_root(drafts: dict[tuple, _Draft], op: Operation, index: int, kind: BarrierKind) -> _Draft:
    key = (id(op), index)
    draft = drafts.get(key)
    if draft is None:
        name = op.results[index] if index < len(op.results) else op.name
        rtype = op.result_types[index] if index < len(op.result_types) else None
        draft = _Draft(kind, name, op.line, (op.line, op.column, index), op, op.loc_name, rtype)
        drafts[key] = draft
    return draft


def _resolve(drafts: dict[tuple, _Draft], read: BarrierOperand, trace: Trace) -> tuple[_Draft | None, str | None]:
    """The logical barrier a traced operand belongs to, or the reason there is none."""
    if trace.unresolved is not None:
        return None, trace.unresolved
    if read.kind is BarrierKind.NAMED:
        return _resolve_named(drafts, read, trace)
    if trace.root is not None:
        if _root_kind(trace.root) is not read.kind:
            rtype = trace.root.result_types[trace.root_result] if trace.root_result < len(trace.root.result_types) else "?"
            return None, (f"{read.operand} comes from {trace.root.name} at line {trace.root.line} ({rtype}), "
                          f"not a {read.kind.value} allocation")
        return _draft_for_root(drafts, trace.root, trace.root_result, read.kind), None
    arg = trace.root_arg
    if arg is not None:
        if read.kind is BarrierKind.MBARRIER and arg.type is not None and not is_barrier_type(arg.type):
            return None, f"{read.operand} comes from argument {arg.name} ({arg.type}), not a barrier"
        return _draft_for_argument(drafts, read, arg), None
    return None, f"{read.operand} has no definition"


def _resolve_named(drafts: dict[tuple, _Draft], read: BarrierOperand, trace: Trace) -> tuple[_Draft | None, str | None]:
    """Named barriers are identified by their constant id, wherever the constant is written."""
    value = constant_value(trace.root)
    if value is None:
        where = f" (traced to {trace.root_name})" if trace.root_name else ""
        return None, f"named barrier id {read.operand} is not a constant{where}"
    key = ("named", value)
    draft = drafts.get(key)
    if draft is None:
        root = trace.root
        assert root is not None
        draft = _Draft(BarrierKind.NAMED, trace.root_name or read.operand, root.line, (root.line, root.column, 0),
                       root, root.loc_name, root.result_types[0] if root.result_types else None, named_id=value)
        drafts[key] = draft
    return draft, None


def _draft_for_argument(drafts: dict[tuple, _Draft], read: BarrierOperand, arg: BlockArgument) -> _Draft:
    """A barrier passed in as a function argument: its allocation is in a caller."""
    key = (id(arg), -1)
    draft = drafts.get(key)
    if draft is None:
        draft = _Draft(read.kind, arg.name, arg.line, (arg.line, arg.column, -1), None, arg.loc_name, arg.type)
        drafts[key] = draft
    return draft


def _use(read: BarrierOperand, trace: Trace, values: ValueIndex, partitions: PartitionMap | None) -> BarrierUse:
    op = read.op
    parts = partitions.of(op) if partitions is not None else []
    primary = partitions.primary(op) if partitions is not None else None
    constraints = op.attr("constraints")
    return BarrierUse(
        op=op,
        operand=read.operand,
        role=read.role,
        mechanism=read.mechanism,
        line=op.line,
        partition=primary.name if primary is not None else None,
        partitions=tuple(p.name for p in parts),
        loop_depth=sum(1 for a in op.ancestors() if a.name in LOOP_OPS),
        slots=_slots(read, trace, values),
        count=read.count if read.count_operand is None else _constant_at(read.count_operand, op, values),
        bytes=read.bytes,
        phase=read.phase,
        predicate=read.predicate,
        op_predicate=read.op_predicate,
        constraints=constraints if isinstance(constraints, dict) else None,
        trace=trace,
    )


def _slots(read: BarrierOperand, trace: Trace, values: ValueIndex) -> tuple[SlotRef, ...]:
    """Slot indices from the allocation outwards: the `memdesc_index` values met while tracing
    (the trace lists them from the use back), then a stage operand written on the op."""
    refs = [SlotRef(ix.value, ix.line, _constant_at(ix.value, ix.op, values)) for ix in reversed(trace.indices)]
    if read.stage is not None:
        refs.append(SlotRef(read.stage, read.op.line, _constant_at(read.stage, read.op, values)))
    return tuple(refs)


def _constant_at(name: str, at: Operation, values: ValueIndex) -> int | None:
    defn = values.lookup(name, at)
    return constant_value(defn.op) if isinstance(defn, OpResult) else None


def _finish(d: _Draft) -> Barrier:
    uses = sorted(d.uses, key=lambda u: (u.line, u.op.column, u.operand))
    mechanisms: list[Mechanism] = []
    for u in uses:
        if u.mechanism is not Mechanism.MBARRIER and u.mechanism not in mechanisms:
            mechanisms.append(u.mechanism)
    inits = sorted({u.count for u in uses if u.role is Role.INIT and u.count is not None})
    return Barrier(
        id=_barrier_id(d),
        kind=d.kind,
        name=d.name,
        line=d.line,
        loc_name=d.loc_name,
        type=d.type,
        slots=_slot_count(d),
        init_counts=tuple(inits),
        mechanisms=tuple(sorted(mechanisms, key=lambda m: list(Mechanism).index(m))),
        aliases=tuple(sorted(d.aliases.values(), key=lambda a: (a.line, a.name, a.via))),
        uses=tuple(uses),
        alloc=d.alloc,
        named_id=d.named_id,
    )


def _barrier_id(d: _Draft) -> str:
    """Stable across runs and unique in a function: the named-barrier id, else the defining
    SSA name and line (names repeat across partition regions, lines do not)."""
    if d.kind is BarrierKind.NAMED:
        return f"named_bar_{d.named_id}"
    return f"{d.name}@{d.line}"


def _slot_count(d: _Draft) -> int | None:
    """Slots: leading dimension of an mbarrier array or of an aref's buffers; a token's
    `numBuffers`; none for named barriers."""
    if d.kind is BarrierKind.NAMED:
        return None
    if d.kind is BarrierKind.NVWS_TOKEN:
        if d.alloc is not None:
            n = _attr_int(d.alloc, "numBuffers")
            if n is not None:
                return n
        m = re.search(r"tensor<(\d+)x", d.type or "")
        return int(m.group(1)) if m else None
    if d.kind is BarrierKind.AREF:
        types = d.alloc.types if d.alloc is not None else []
        md = next((parse_memdesc(t) for t in types if parse_memdesc(t) is not None), None)
        return md.shape[0] if md is not None and md.shape else None
    md = parse_memdesc(d.type)
    if md is None:
        return None
    return md.shape[0] if md.shape else 1


# -- uses of a peer CTA's copy ------------------------------------------------------------------
def remote_uses(facts: BarrierFacts, tracer: Tracer | None = None,
                partitions: PartitionMap | None = None) -> tuple[RemoteUse, ...]:
    """Every use of a peer CTA's copy of a barrier in scope (`BarrierFacts.remote`)."""
    return facts.remote


__all__ = [
    "Alias",
    "Barrier",
    "BarrierFacts",
    "BarrierKind",
    "BarrierOperand",
    "BarrierUse",
    "MemDesc",
    "Mechanism",
    "Role",
    "SlotRef",
    "RemoteUse",
    "Unresolved",
    "barrier_operands",
    "collect_barriers",
    "constant_value",
    "is_barrier_type",
    "memdesc_bytes",
    "parse_memdesc",
    "remote_uses",
]
