"""Happens-before races: vector clocks carried by mbarrier phases, accesses by memory region.

Why: a race between partitions is invisible to arrive/wait counting (every barrier can be
balanced while two partitions touch the same columns unordered). During a run of the
interpreter each partition keeps a vector clock; an arrival adds the arriver's clock to the
phase being built, a completed phase publishes it, and a partition that passes a wait on that
slot joins it. Two accesses to overlapping memory from different partitions, at least one a
write, with neither clock covering the other, are a race.

Memory regions: an SMEM buffer slot is one region; TMEM is addressed by columns, and TMEM
allocations sharing a `buffer.id` share storage (the owner at column 0, packed siblings at their
`buffer.offset`), so the useD=false MMA that rewrites the owner's 128 columns overlaps the
scalars packed at columns 64-66.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...ir.model import Operation

Clock = dict[int, int]


@dataclass(frozen=True, slots=True)
class Region:
    """Physical storage an access touches: storage id, slot indices, column range [lo, hi)."""

    storage: tuple
    slots: tuple
    lo: int
    hi: int

    def overlaps(self, other: "Region") -> bool:
        if self.storage != other.storage:
            return False
        return _slots_meet(self.slots, other.slots) and self.lo < other.hi and other.lo < self.hi


def _slots_meet(a: tuple, b: tuple) -> bool:
    """Can two slot index tuples name the same slot (an unknown index, None, meets any)?"""
    for x, y in zip(a, b):
        if x is not None and y is not None and x != y:
            return False
    return True


@dataclass(frozen=True, slots=True)
class Access:
    thread: int
    stamp: int
    kind: str  # "read" | "write"
    region: Region
    op: Operation = field(compare=False)
    iteration: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Race:
    first: Access
    second: Access


class HappensBefore:
    """Vector clocks of one run and the access log that races are checked against."""

    def __init__(self, history: int = 48):
        self.clocks: dict[int, Clock] = {}
        self.building: dict[tuple, Clock] = {}
        self.published: dict[tuple, Clock] = {}
        self.log: dict[tuple, list[Access]] = {}
        self.races: list[Race] = []
        self._seen_pairs: set[tuple[int, int, str]] = set()
        self.history = history
        # (earlier line, later line) -> ordered every time: for every pair of accesses to one
        # storage from two partitions (not both reads), overlapping or not. None: not recorded.
        # What deleting an op changes (`claims`: is a "redundant" wait really redundant?).
        self.order: dict[tuple[int, int], bool] | None = None

    # -- clocks -----------------------------------------------------------------------------
    def clock(self, t: int) -> Clock:
        c = self.clocks.get(t)
        if c is None:
            c = self.clocks[t] = {t: 0}
        return c

    def tick(self, t: int) -> int:
        c = self.clock(t)
        c[t] = c.get(t, 0) + 1
        return c[t]

    def fork(self, parent: int, child: int) -> None:
        self.clocks[child] = dict(self.clock(parent))
        self.clocks[child].setdefault(child, 0)

    def join_threads(self, parent: int, children: list[int]) -> None:
        c = self.clock(parent)
        for ch in children:
            _join(c, self.clock(ch))

    def arrive(self, slot_key: tuple, t: int) -> None:
        self.tick(t)
        _join(self.building.setdefault(slot_key, {}), self.clock(t))

    def complete(self, slot_key: tuple) -> None:
        self.published[slot_key] = self.building.pop(slot_key, {})

    def acquire(self, slot_key: tuple, t: int) -> None:
        done = self.published.get(slot_key)
        if done:
            _join(self.clock(t), done)
        self.tick(t)

    # -- accesses ---------------------------------------------------------------------------
    def access(self, t: int, kind: str, region: Region, op: Operation, iteration: tuple[int, ...]) -> None:
        stamp = self.tick(t)
        mine = self.clock(t)
        entries = self.log.setdefault(region.storage, [])
        if self.order is not None:
            self._record_order(t, kind, op, entries, mine)
        lo, hi, slots = region.lo, region.hi, region.slots
        for prev in entries:  # one storage: `Region.overlaps` without its storage test, inlined (hot)
            if prev.thread == t or (prev.kind == "read" and kind == "read"):
                continue
            if mine.get(prev.thread, 0) >= prev.stamp:
                continue  # ordered: prev happens before this access (the common case: test it first)
            other = prev.region
            if other.lo >= hi or lo >= other.hi or (other.slots != slots and not _slots_meet(other.slots, slots)):
                continue
            # One race per pair of ops and CTA whose memory it is in: a cluster check needs to
            # know whether a pair that races across CTAs also races inside one CTA.
            pair = (id(prev.op), id(op), _cta_tag(region.storage))
            if pair in self._seen_pairs:
                continue
            self._seen_pairs.add(pair)
            self.races.append(Race(prev, Access(t, stamp, kind, region, op, iteration)))
        entries.append(Access(t, stamp, kind, region, op, iteration))
        if len(entries) > self.history:
            del entries[: len(entries) - self.history]


    def _record_order(self, t: int, kind: str, op: Operation, entries: list[Access], mine: Clock) -> None:
        for prev in entries:
            if prev.thread == t or (prev.kind == "read" and kind == "read"):
                continue
            key = (prev.op.line, op.line)
            self.order[key] = self.order.get(key, True) and mine.get(prev.thread, 0) >= prev.stamp


def _cta_tag(storage: tuple) -> str:
    """The `cta<k>` a storage id ends with in a cluster run ("" for CTA 0 and single-CTA runs)."""
    last = storage[-1] if storage else None
    return last if isinstance(last, str) and last.startswith("cta") else ""


def _join(into: Clock, other: Clock) -> None:
    for k, v in other.items():
        if into.get(k, 0) < v:
            into[k] = v
