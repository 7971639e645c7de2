"""The buffer facts (`buffers`, report section 4): one data allocation (`Member`), one write
or read of it (`Access`), a TMA copy and the barrier it signals (`TmaCopy`, `BarrierRef`), the
`barrier_expect` byte check (`ExpectCheck`), merged barriers, unresolved operands, `buffer.id`
groups (`BufferGroup`) and all of them for one function (`BufferFacts`); plus the op names they
are read from.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ir.model import Operation
from .transactions import BULK_COPY, REMOTE_COPY_OPS, TX_OPS


ALLOC_OPS = frozenset({"ttg.local_alloc", "ttng.tmem_alloc"})
TMA_LOADS = frozenset({"ttng.async_tma_copy_global_to_local", "ttng.async_tma_gather"})
# Every op that completes transaction bytes on a barrier (TMA loads, CLC responses, remote copies).
TX_DELIVERY_OPS = frozenset(TX_OPS) | REMOTE_COPY_OPS | {BULK_COPY}
EXPECT = "ttng.barrier_expect"
WAIT = "ttng.wait_barrier"


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
