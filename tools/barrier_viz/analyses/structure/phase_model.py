"""The results of the index and phase analysis (`phases`, report section 3): per logical
barrier (`BarrierPhases`) its waits (`WaitPhase`: slot and phase formulas, the loop that
advances them, sampled parities) and arrives (`ArrivePhase`: what each contributes to a phase),
the data it guards, barriers merged into it, stagger groups of barriers that share a buffer, and
the words for loop levels (`INNER`, `OUTER`, `CONSTANT`, ...).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from ...facts.barriers import Barrier, BarrierUse, Role
from ...facts.buffers import ExpectCheck
from ..symbolic import SymbolicValue


WAIT_BARRIER = "ttng.wait_barrier"
INNER, OUTER, CONSTANT, MIXED = "inner", "outer", "constant", "mixed"
# Uses with no slot or phase operand: named barriers (none) and arefs before stage/phase assignment.
NONE, IMPLICIT = "none", "implicit"
_STILL = frozenset({CONSTANT, NONE, IMPLICIT})
_PRODUCER_ROLES = frozenset({Role.ACQUIRE, Role.PUT_ENTER})
_CONSUMER_ROLES = frozenset({Role.WAIT, Role.GET_ENTER})


# -- results ------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Advance:
    """One loop that advances a use's counter: its line, its level (inner/outer) and the step."""

    loop: int
    level: str
    amount: int | None
    condition: str | None = None


@dataclass(frozen=True, slots=True)
class Sample:
    """Slot and parity a wait polls at its i-th use; `n` binds each counter of the formula."""

    i: int
    n: dict[str, int]
    slot: int | None
    parity: int | None


@dataclass(frozen=True, slots=True)
class Offset:
    """A slot formula of the form `(counter + offset) % modulus` (offset 0: `counter % modulus`)."""

    counter: str
    offset: int
    modulus: int
    key: str = field(default="", compare=True, repr=False)  # the counter's identity (names repeat across partitions)


@dataclass(frozen=True, slots=True)
class WaitPhase:
    """One wait on the barrier with its slot and phase formulas and what they evaluate to."""

    use: BarrierUse = field(repr=False)
    slot: SymbolicValue | None
    phase: SymbolicValue | None
    cadence: str
    advances: tuple[Advance, ...]
    samples: tuple[Sample, ...]
    samples_note: str | None
    side: str | None  # "producer" (first use passes on a fresh slot) | "consumer" | None
    offset: Offset | None

    @property
    def resolved(self) -> bool:
        """Slot and phase both traced without an unknown leaf (named barriers have neither)."""
        return self.slot is not None and self.phase is not None and self.slot.resolved and self.phase.resolved


@dataclass(frozen=True, slots=True)
class ArrivePhase:
    """One arrive site: the slot it completes and what it contributes to that slot's phase."""

    use: BarrierUse = field(repr=False)
    slot: SymbolicValue | None
    cadence: str
    advances: tuple[Advance, ...]
    offset: Offset | None
    arrivals: int | None  # arrivals towards the init count (0 for a TMA copy: bytes only)
    init_count: int | None
    tx_bytes: int | None  # bytes expected (barrier_expect) or delivered (TMA copy)
    expect: ExpectCheck | None = field(default=None, repr=False)
    contributes: str = ""


@dataclass(frozen=True, slots=True)
class DataItem:
    """A buffer the barrier protects, as the dependency graph found it."""

    name: str
    shape: str
    space: str | None
    buffer_id: int | None


@dataclass(frozen=True, slots=True)
class Merged:
    """Several buffers behind one barrier, and the expect size that must cover them all."""

    members: tuple[tuple[str, int | None], ...]  # (label, bytes one copy delivers)
    expect_bytes: tuple[int, ...]
    delivered: int | None
    status: str  # matched | mismatched | unknown
    expect_lines: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class BarrierPhases:
    barrier: Barrier = field(repr=False)
    depth: int | None
    cadence: str
    cadence_lines: dict[str, tuple[int, ...]]
    constant_phase: bool
    data: tuple[DataItem, ...]
    merged: Merged | None
    offsets: tuple[tuple[Offset, tuple[int, ...]], ...]  # distinct slot offsets and the lines using each
    waits: tuple[WaitPhase, ...]
    arrives: tuple[ArrivePhase, ...]
    notes: tuple[str, ...]

    @property
    def buffer_ids(self) -> tuple[int, ...]:
        return tuple(sorted({d.buffer_id for d in self.data if d.buffer_id is not None}))

    @property
    def stagger(self) -> tuple[tuple[Offset, tuple[int, ...]], ...]:
        """Waits (or arrives) that index this barrier with one counter at several offsets
        (`(cnt + 1) % N` next to `cnt % N`): data-partitioned operands, or a use one iteration
        ahead. An arrive one slot ahead of the waits is not stagger: it is a wait for the
        previous arrival (ir-semantics 5.4), see `lead`."""
        out: list[tuple[Offset, tuple[int, ...]]] = []
        for group in (self.waits, self.arrives):
            lines: dict[Offset, list[int]] = {}
            for u in group:
                if u.offset is not None:
                    lines.setdefault(u.offset, []).append(u.use.line)
            per_key: dict[str, set[int]] = {}
            for o in lines:
                per_key.setdefault(o.key, set()).add(o.offset)
            out.extend((o, tuple(sorted(set(ls)))) for o, ls in lines.items() if len(per_key[o.key]) > 1)
        return tuple(sorted(out, key=lambda x: (x[0].counter, x[0].offset, x[1])))

    @property
    def wait_offsets(self) -> tuple[Offset, ...]:
        return tuple(dict.fromkeys(w.offset for w in self.waits if w.offset is not None))


@dataclass(frozen=True, slots=True)
class StaggerGroup:
    """Barriers whose data share one `buffer.id`, with the slot offsets their waits use."""

    buffer_id: int
    members: tuple[tuple[str, tuple[Offset, ...]], ...]  # (barrier id, its offsets)

    @property
    def staggered(self) -> bool:
        """Some counter indexes the waits of the group's barriers at more than one offset."""
        seen: dict[str, set[int]] = {}
        for _, offs in self.members:
            for o in offs:
                seen.setdefault(o.key, set()).add(o.offset)
        return any(len(v) > 1 for v in seen.values())


@dataclass(frozen=True, slots=True)
class PhaseReport:
    barriers: tuple[BarrierPhases, ...]
    stagger_groups: tuple[StaggerGroup, ...]

    def waits(self) -> Iterable[WaitPhase]:
        for b in self.barriers:
            yield from b.waits


def depth_word(depth: int | None) -> str:
    return {1: "single-buffered", 2: "double-buffered", 3: "triple-buffered", 4: "quadruple-buffered"}.get(
        depth or 0, f"{depth}-buffered" if depth else "no slots")


def flip_period(samples: tuple[Sample, ...]) -> int | None:
    """Uses between parity flips, when the samples show one regular period (first run excluded:
    the counter may start mid-period)."""
    parities = [s.parity for s in samples]
    if len(parities) < 3 or any(p is None for p in parities):
        return None
    runs: list[int] = []
    count = 1
    for a, b in zip(parities, parities[1:]):
        if a == b:
            count += 1
        else:
            runs.append(count)
            count = 1
    inner = runs[1:]
    if not inner or len(set(inner)) != 1:
        return None
    return inner[0]
