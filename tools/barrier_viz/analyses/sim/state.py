"""What the interpreter works on: values, exact barrier state, and what a partition yields.

`Ref` is a memory-descriptor value (an allocation instance, the indices applied to it, its CTA);
`BarrierSlot` is one mbarrier's exact hardware state; a partition yields `Wait`, `Step` or
`Join` to the scheduler; `Params` are the values the IR leaves open; `Thread` is one partition's
execution and `Trampoline` runs its nested regions without Python recursion. Kept apart from the
core (`machine`) so the op handlers (`ops/`), which build these, do not import the core that
dispatches to them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import GeneratorType
from typing import Any, Iterator

from ...ir.model import Operation
from ..program.loaded import Memory

Value = Any  # int, Ref, or None (opaque)


class SimulationError(Exception):
    """The interpreter met something it cannot model faithfully (reported, never guessed)."""


class BoundReached(Exception):
    """The run used its time budget or its operation budget: what it covered stands,
    nothing is concluded about the rest (the scheduler reports `bound_reached`)."""


class Trampoline:
    """Runs a stack of handler generators as one iterator of scheduler requests.

    A handler that enters a region yields that region's generator instead of `yield from`-ing
    it: the generator is pushed here, run until it finishes, then its parent resumes. Requests
    (Wait, Step, Join) go to the scheduler. Depth costs a list entry, not a Python frame."""

    __slots__ = ("stack",)

    def __init__(self, gen: Iterator[Any]):
        self.stack: list[Iterator[Any]] = [gen]

    def __iter__(self) -> "Trampoline":
        return self

    def __next__(self) -> Any:
        stack = self.stack
        while stack:
            try:
                item = next(stack[-1])
            except StopIteration:
                stack.pop()
                continue
            if type(item) is GeneratorType:
                stack.append(item)
                continue
            return item
        raise StopIteration


@dataclass(frozen=True, slots=True)
class Ref:
    """A memory descriptor value: allocation instance plus the indices applied to it."""

    alloc: Operation
    instance: int
    indices: tuple[int | None, ...] = ()
    col: int = 0  # first TMEM column of this view inside the allocation
    width: int | None = None  # columns the view spans (None: the allocation's)
    cta: int = 0  # the CTA of the cluster whose shared/tensor memory holds it

    def index(self, i: int | None) -> "Ref":
        return Ref(self.alloc, self.instance, self.indices + (i,), self.col, self.width, self.cta)

    def view(self, col: int = 0, width: int | None = None) -> "Ref":
        return Ref(self.alloc, self.instance, self.indices, self.col + col, width if width is not None else self.width,
                   self.cta)

    def in_cta(self, cta: int) -> "Ref":
        """The same allocation and view in CTA `cta` (every CTA of a cluster runs the same program,
        so its allocations sit at the same offsets: `mapa`, multicast and remote arrivals rely on it)."""
        return Ref(self.alloc, self.instance, self.indices, self.col, self.width, cta)

    @property
    def key(self) -> tuple:
        return (id(self.alloc), self.instance, self.indices, self.cta)


@dataclass(slots=True)
class BarrierSlot:
    """Exact mbarrier state: parity, expected count, pending arrivals, transaction bytes."""

    ref: Ref
    count: int
    pending: int
    tx: int = 0
    parity: int = 0
    completions: int = 0
    arrivals: int = 0
    anomalies: list[str] = field(default_factory=list)
    init_line: int = 0
    history: list[tuple[str, int, int]] = field(default_factory=list)  # (event, line, thread index)
    seen: dict[int, int] = field(default_factory=dict)  # thread index -> completions when it last passed a wait
    passes: dict[int, int] = field(default_factory=dict)  # thread index -> waits it passed on this slot
    loop_waited: bool = False  # some wait on this slot runs inside a loop (coverage wants it to wrap)
    current: tuple = ()  # (thread, iteration, line) of the arrival being applied
    completed_by: list[tuple] = field(default_factory=list)  # (thread, iteration, line) of recent completions
    first_parity: dict[int, int] = field(default_factory=dict)  # thread index -> parity of its first wait
    phase_arrivers: set[int] = field(default_factory=set)  # threads that arrived since the last completion
    unmodelled: str = ""  # an op the interpreter does not model touched this barrier ("op at line N")
    named: int | None = None  # a hardware named barrier (bar.sync/bar.arrive id), not an mbarrier
    early: set[int] = field(default_factory=set)  # threads that passed a wait more often than phases completed

    def arrive(self, n: int, line: int, who: int) -> None:
        self.arrivals += 1
        if n > self.pending:
            self.anomalies.append(f"{n} arrivals at line {line} exceed the {self.pending} pending")
            self.pending = 0
        else:
            self.pending -= n
        self.history.append(("arrive", line, who))
        if len(self.history) > 64:
            del self.history[:32]
        self.phase_arrivers.add(who)
        self._maybe_complete()

    def expect(self, nbytes: int, line: int, who: int) -> None:
        self.tx += nbytes
        self.arrive(1, line, who)

    def complete_tx(self, nbytes: int, line: int, who: int) -> None:
        self.tx -= nbytes
        if self.tx < 0:
            self.anomalies.append(f"TMA bytes at line {line} exceed the bytes expected ({self.tx})")
        self.history.append(("tx", line, who))
        self._maybe_complete()

    def _maybe_complete(self) -> None:
        if self.pending == 0 and self.tx == 0:
            self.parity ^= 1
            self.completions += 1
            self.pending = self.count
            self.phase_arrivers = set()
            self.completed_by.append(self.current)
            if len(self.completed_by) > 16:
                del self.completed_by[:8]


@dataclass(frozen=True, slots=True)
class Wait:
    """A blocking request a partition yields: wait until `slot.parity != parity`."""

    op: Operation
    slot: BarrierSlot
    parity: int
    iteration: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Step:
    """A visible non-blocking barrier operation (arrive, expect, copy, commit) about to run."""

    op: Operation


@dataclass(frozen=True, slots=True)
class Join:
    """The parent of a `ttg.warp_specialize` waits for every partition thread to finish."""

    op: Operation
    children: tuple["Thread", ...]

    @property
    def satisfied(self) -> bool:
        for c in self.children:  # (asked on every step the parent waits)
            if not c.done:
                return False
        return True


@dataclass
class Params:
    """Concrete values for what the IR leaves open."""

    int_args: int = 1024
    program_id: int = 0
    num_programs: int = 1
    unknown_trips: int = 3
    max_steps: int = 200_000
    track_races: bool = False
    track_order: bool = False  # with track_races: which cross-partition access pairs are ordered (hb.order)
    arg_values: tuple[tuple[int, int], ...] = ()  # (argument position, value) overriding int_args
    max_ops: int = 3_000_000  # operations executed (visible or not) before a run stops
    unknown_if_else: bool = False  # an scf.if on an unknown condition whose sides differ takes else
    late_clc: bool = False  # CLC responses land after the asker's next poll, or when no partition can go on
    program_ids: tuple[int, ...] = ()  # per axis (x, y, z), overriding program_id
    grid: tuple[int, ...] = ()  # programs per axis, overriding num_programs
    memory: Memory = Memory()  # what scalar loads from never-written arrays read (analyses.program.loaded)

    def axis_value(self, op: Operation, counts: bool) -> int:
        """`tt.get_program_id` / `tt.get_num_programs` of the axis `op` names."""
        axis = next(({"x": 0, "y": 1, "z": 2}[w] for w in (*op.keywords, *op.literals) if w in ("x", "y", "z")), 0)
        per_axis = self.grid if counts else self.program_ids
        return per_axis[axis] if axis < len(per_axis) else (self.num_programs if counts else self.program_id)


@dataclass
class Thread:
    """One partition's execution."""

    index: int
    name: str
    gen: Iterator[Any]
    pending: Any = None
    done: bool = False
    steps: int = 0
    trail: list[tuple[int, str, tuple[int, ...]]] = field(default_factory=list)  # (line, op, iteration)
    machine: Any = field(default=None, repr=False)  # the `machine.Machine` it runs in
    warps: int = 4  # warps running this partition (a `perThread` arrive arrives once per thread)
    cta: int = 0  # rank of the CTA it runs in (clusters)
    polled: bool = False  # its pending wait was already satisfied when it first polled
    partition: str = ""  # the IR's name for it ("main", "default", "partition0"); `name` adds the CTA

    def __post_init__(self) -> None:
        if not self.partition:
            self.partition = self.name
