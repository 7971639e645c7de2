"""A concrete interpreter of warp-specialized kernels at barrier granularity.

Why: whether a wait deadlocks depends on which phase of which slot it polls at which iteration,
and on the order other partitions can arrive in. Reading formulas gets this wrong in exactly the
cases that matter (peeled iterations, conditional increments, wrap-around counters, rings that
only misbehave after they wrap). So we run the program: integers (loop counters, slot indices,
phases, predicates) are computed concretely, tensors are opaque, and every mbarrier slot keeps the
exact hardware state (parity, pending arrivals, transaction bytes; ir-semantics.md §4).

Each partition of `ttg.warp_specialize` is a Python generator that yields at every barrier
operation; a scheduler (`analyses.sim.schedule`) decides who runs next. Nested regions do not nest
Python calls: a handler yields the generator of a sub-region and `Trampoline` drives the stack
explicitly, so 10,000 nested `scf.if` run like one (no RecursionError, like the parser). Asynchronous arrivals (TMA
bytes landing, tcgen05 commits, MMA barrier lists) complete when the issuing op executes: that is
one legal schedule, the one where the hardware is fast.

Unknown integers (function arguments) take one concrete value for the whole run (`params`), so
every partition computes the same trip counts, including peeled first iterations. Scalars loaded
from arrays the kernel never writes (offsets, sizes) are inputs too (`analyses.program.loaded`): one value
per array element, the same in every partition, from `params.memory`.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from types import GeneratorType
from typing import Any, Iterator

from ...ir.model import Block, Operation, Region
from ...ir.types import memdesc_bytes, parse_memdesc
from ...ir.vocab import LOOP_OPS
from ..cluster import remote_exit as cluster_exit, sim as cluster_sim
from .budget import WORK
from ..program.loaded import Loaded, Memory, Ptr, argument_pointer, loaded_width, written_arguments

Value = Any  # int, Ref, or None (opaque)

_INT_TYPE = re.compile(r"^i(\d+)$")
_BARRIER_MAKERS = frozenset({"ttng.init_barrier", "nvws.create_token"})
_NUM_WARPS = re.compile(r"num_warps\s*\(\s*(\d+)\s*\)")

def has_barrier_program(function: Operation) -> bool:
    """Does `function` initialise an mbarrier (or an NVWS token)? Without one nothing can hang,
    and only a race-tracking run (`explore`) simulates it."""
    return any(o.name in _BARRIER_MAKERS for o in function.walk())


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
        return all(c.done for c in self.children)


@dataclass
class Params:
    """Concrete values for what the IR leaves open."""

    int_args: int = 1024
    program_id: int = 0
    num_programs: int = 1
    unknown_trips: int = 3
    max_steps: int = 200_000
    track_races: bool = False
    arg_values: tuple[tuple[int, int], ...] = ()  # (argument position, value) overriding int_args
    max_ops: int = 3_000_000  # operations executed (visible or not) before a run stops
    unknown_if_else: bool = False  # an scf.if on an unknown condition whose sides differ takes else
    late_clc: bool = False  # CLC responses land only when no partition can go on (cluster_races.cluster_races)
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
    machine: "Machine | None" = field(default=None, repr=False)
    warps: int = 4  # warps running this partition (a `perThread` arrive arrives once per thread)
    cta: int = 0  # rank of the CTA it runs in (clusters)
    polled: bool = False  # its pending wait was already satisfied when it first polled
    partition: str = ""  # the IR's name for it ("main", "default", "partition0"); `name` adds the CTA

    def __post_init__(self) -> None:
        if not self.partition:
            self.partition = self.name


class Machine:
    """Shared state of one run: barrier slots, allocation instances, and the threads."""

    def __init__(self, function: Operation, params: Params | None = None):
        self.function = function
        self.params = params or Params()
        self.slots: dict[tuple, BarrierSlot] = {}
        self.instances: dict[int, int] = {}
        self.notes: list[str] = []
        self.threads: list[Thread] = []
        self.ws_op: Operation | None = None
        self.loop_trips: dict[int, int] = {}  # id(loop op) -> most iterations in one entry
        self.loop_exits: dict[int, int] = {}  # id(loop op) -> how many times the loop finished
        self.hb = None
        self._agent_ids: dict[tuple[int, int], int] = {}
        self.agent_owner: dict[int, int] = {}  # async agent -> the thread that issued it
        self.tcgen05: dict[int, list[int]] = {}  # thread -> its tcgen05 agents not yet committed
        self.ops = 0  # operations executed, all threads together
        self._charged = 0  # of which already charged to the command's step budget
        self.barrier_allocs: set[tuple[int, int]] = set()  # (id(alloc), instance) holding barrier slots
        self.clc_issued: dict[int, int] = {}  # CTA -> CLC try_cancel requests so far ("no more tiles" at a bound)
        self.clc_answers: dict[tuple, int] = {}  # response buffer -> the tile it holds (-1: none)
        self.named: dict[tuple[int, int], BarrierSlot] = {}  # (CTA, named barrier id) -> its state
        self.arith_plans: dict[int, tuple] = {}  # id(op) -> what `_arith` needs of it
        self.assumed: dict[int, set[int]] = {}  # thread -> lines of loops whose trip count was assumed
        self.loaded_sites: dict[int, frozenset] = {}  # line of a loop or if whose bounds or condition were loaded -> elements
        self.loads: dict[tuple[int, int], int] = {}  # (array position, index) -> the value every load of it read
        self.offset_arrays: set[int] = set()  # arrays read as offsets (two of their elements subtracted)
        self.thread_loads: dict[int, set[tuple[int, int]]] = {}  # thread -> the elements it loaded
        self.array_names: dict[int, str] = {}  # array position -> the argument's name
        self._written: set[int] | None = None
        self.unknown_ifs: set[int] = set()  # lines of scf.if on unknown conditions whose sides differ
        self.deadline = None  # a budget.Deadline: the run stops once it has passed
        self.cluster = cluster_sim.cluster_for(function)  # the CTAs run together (analyses.cluster.sim)
        self.cga = cluster_sim.cga_for(function) if self.cluster.cga else None  # facts.cga.CgaModule
        self.cluster_arrived: dict[int, int] = {}  # thread -> generation of its pending cluster arrive
        self._cluster_slot: BarrierSlot | None = None
        self.sync_after: Operation | None = None  # the entry block's last init_barrier (cluster start-up sync)
        # In a cluster the lowering runs the entry block's barrier inits first (see _hoisted_inits).
        self.entry_block: Block | None = None
        self.entry_order: list[Operation] | None = None
        self.early: dict[tuple, list[tuple[int, str]]] = {}  # slot key -> remote uses before its init
        self.deferred: dict[int, list[tuple]] = {}  # thread -> tcgen05 arrivals not landed yet
        self.land_after_pass: dict[int, tuple] = {}  # thread -> barrier whose held CLC answer lands once it passes
        self.late: list[tuple] = []  # CLC responses not landed (params.late_clc): (own slot key, slot, line, who, agent, it)
        self._cta_loops: dict[int, dict[int, list[int]]] = {}  # id(loop) -> CTA -> [most trips, exits, total]
        if self.params.track_races:
            from .hb import HappensBefore

            self.hb = HappensBefore()
        # Remote shared-memory effects of a cluster run (analyses.cluster.remote_exit):
        # (actor, line, target CTA) -> (stamp, issuing thread, tcgen05 order).
        self.remote: dict[tuple, tuple] | None = {} if self.hb is not None and self.cluster.size > 1 else None
        self.agent_issue: dict[int, tuple] = {}  # agent -> (its stamp, tcgen05 order) at its latest issue
        self.tc_issues: dict[int, list[tuple[int, int, bool]]] = {}  # thread -> (agent, stamp, is a commit) per tcgen05 issue
        self.stores: dict[int, list["StoreToken"]] = {}  # thread -> its TMA stores still reading SMEM, oldest first

    # -- synchronisation events (kept here so happens-before tracking sees every one) ---------
    def agent(self, who: int, op: Operation, joins: tuple[int, ...] = ()) -> int | None:
        """The asynchronous agent (a TMA transfer, a tcgen05 op) that thread `who` starts at `op`:
        it knows what `who` knew at issue, but `who`'s later work does not know it has finished.
        One agent per (thread, op) keeps vector clocks as small as the program."""
        if self.hb is None:
            return None
        key = (who, id(op))
        aid = self._agent_ids.get(key)
        if aid is None:
            aid = -len(self._agent_ids) - 2
            self._agent_ids[key] = aid
            self.agent_owner[aid] = who
            self.hb.fork(who, aid)
        else:
            self.hb.join_threads(aid, [who])
        for j in joins:
            self.hb.join_threads(aid, [j])
        stamp = self.hb.tick(aid)
        if self.remote is not None:
            cluster_exit.note_issue(self, who, aid, op, stamp)
        return aid

    def _hb_arrive(self, slot: "BarrierSlot", actor: int, line: int) -> None:
        """An arrival, expect or byte completion by `actor` (a thread or agent), as the clocks
        see it: it joins the phase being built, and in a cluster it is a shared-memory effect on
        the barrier's CTA (`cluster_exit`)."""
        self.hb.arrive(slot.ref.key, actor)
        if self.remote is not None:
            cluster_exit.note(self, slot.ref.cta, actor, line, slot)

    def arrive(self, slot: "BarrierSlot", n: int, line: int, who: int, agent: int | None = None,
               it: tuple[int, ...] = ()) -> None:
        before = slot.completions
        slot.current = (who, it, line)
        if self.hb is not None:
            self._hb_arrive(slot, agent if agent is not None else who, line)
        slot.arrive(n, line, who)
        if self.hb is not None and slot.completions != before:
            self.hb.complete(slot.ref.key)

    def expect(self, slot: "BarrierSlot", nbytes: int, line: int, who: int, it: tuple[int, ...] = ()) -> None:
        before = slot.completions
        slot.current = (who, it, line)
        if self.hb is not None:
            self._hb_arrive(slot, who, line)
        slot.expect(nbytes, line, who)
        if self.hb is not None and slot.completions != before:
            self.hb.complete(slot.ref.key)

    def complete_tx(self, slot: "BarrierSlot", nbytes: int, line: int, who: int, agent: int | None = None,
                    it: tuple[int, ...] = ()) -> None:
        before = slot.completions
        slot.current = (who, it, line)
        if self.hb is not None:
            self._hb_arrive(slot, agent if agent is not None else who, line)
        slot.complete_tx(nbytes, line, who)
        if self.hb is not None and slot.completions != before:
            self.hb.complete(slot.ref.key)

    def passed(self, slot: "BarrierSlot", who: int, parity: int) -> None:
        """A partition passed a wait on `slot`: it now sees everything the last phase saw."""
        slot.seen[who] = slot.completions
        slot.passes[who] = slot.passes.get(who, 0) + 1
        if slot.passes[who] > slot.completions:
            slot.early.add(who)  # on a data barrier: a pass on a phase that was not produced (deadlock._early_async)
        slot.first_parity.setdefault(who, parity)
        if self.hb is not None:
            self.hb.acquire(slot.ref.key, who)

    def access(self, op: Operation, value: Any, kind: str, who: int | None, it: tuple[int, ...]) -> None:
        if self.hb is None or who is None or not isinstance(value, Ref):
            return
        self.hb.access(who, kind, _region(value), op, it)
        if self.remote is not None:
            cluster_exit.note(self, value.cta, who, op.line)

    # -- setup --------------------------------------------------------------------------------
    def start(self) -> list[Thread]:
        """Create the main thread: it runs the function body and forks one thread per partition
        region when it reaches `ttg.warp_specialize` (then waits for them to finish)."""
        body = self.function.regions[0].blocks[0] if self.function.regions and self.function.regions[0].blocks else None
        if body is None:
            raise SimulationError("function has no body")
        module = next((a for a in self.function.ancestors() if a.name == "builtin.module"), None)
        why = cluster_sim.unsupported(self.cluster, self.function)
        if why:
            raise SimulationError(why)
        if not self.params.track_races and not has_barrier_program(self.function):
            # Nothing can hang without a barrier; races between async agents (explore) still can occur.
            raise SimulationError("no mbarrier is initialised (no init_barrier, no NVWS token): there is no barrier "
                                  "program to run")
        if not any(o.name == "ttg.warp_specialize" for o in self.function.walk()):
            if any("async_task_id" in o.attributes or "ttg.partition" in o.attributes for o in self.function.walk()):
                raise SimulationError("pre-partition IR (task ids, no warp_specialize) is not simulated")
        warps = module.attr("ttg.num-warps") if module is not None else None
        ctas = self.cluster.size
        if ctas > 1:
            inits = [o for o in body.operations if o.name == "ttng.init_barrier"]
            self.sync_after = inits[-1] if inits else None
            self.entry_block, self.entry_order = body, _hoisted_inits(body, inits)
        for cta in range(ctas):
            # Every CTA of a cluster runs the whole function: its own allocations, barriers, partitions.
            index = len(self.threads)
            self.threads.append(Thread(index, self.thread_name(cta, "main"), Trampoline(self._run_block_fresh(body, index)),
                                       machine=self, warps=warps if isinstance(warps, int) and warps > 0 else 4,
                                       cta=cta, partition="main"))
        return self.threads

    def thread_name(self, cta: int, partition: str) -> str:
        """`partition0`, or `cta1.partition0` in a cluster: witnesses name the CTA."""
        return f"cta{cta}.{partition}" if self.cluster.size > 1 else partition

    def cluster_slot(self, op: Operation) -> "BarrierSlot":
        """The CTAs' rendezvous (cluster barrier): one arrival per CTA completes a generation."""
        if self._cluster_slot is None:
            self._cluster_slot = BarrierSlot(Ref(self.function, 0, ("cluster",)), self.cluster.size, self.cluster.size,
                                             init_line=op.line, named=-1)
        return self._cluster_slot

    def count_trip(self, loop: Operation, who: int, k: int) -> None:
        """Iteration `k` of one entry of `loop` ran. Coverage counts the most iterations of one
        entry; in a cluster, the fewest over the CTAs that reach the loop (every CTA of a cluster
        must get a second tile, or the launch tested only part of the cluster)."""
        if self.cluster.size <= 1:
            if k > self.loop_trips.get(id(loop), 0):
                self.loop_trips[id(loop)] = k
            return
        per = self._cta_loops.setdefault(id(loop), {}).setdefault(self.threads[who].cta, [0, 0, 0])
        per[0] = max(per[0], k)
        self.loop_trips[id(loop)] = min(v[0] for v in self._cta_loops[id(loop)].values())

    def begin_iteration(self, loop: Operation, who: int) -> None:
        """An iteration of `loop` starts (counted per CTA in a cluster: `iterations_per_cta`)."""
        if self.cluster.size > 1:
            self._cta_loops.setdefault(id(loop), {}).setdefault(self.threads[who].cta, [0, 0, 0])[2] += 1

    def count_exit(self, loop: Operation, who: int) -> None:
        if self.cluster.size <= 1:
            self.loop_exits[id(loop)] = self.loop_exits.get(id(loop), 0) + 1
            return
        per = self._cta_loops.setdefault(id(loop), {}).setdefault(self.threads[who].cta, [0, 0, 0])
        per[1] += 1
        self.loop_trips[id(loop)] = min(v[0] for v in self._cta_loops[id(loop)].values())
        self.loop_exits[id(loop)] = min(v[1] for v in self._cta_loops[id(loop)].values())

    def iterations_per_cta(self) -> dict[int, dict[int, int]]:
        """id(loop) -> CTA -> iterations it started in all (clusters only)."""
        return {loop: {cta: v[2] for cta, v in per.items()} for loop, per in self._cta_loops.items()}

    def arrive_async(self, slot: "BarrierSlot", line: int, who: int, agent: int | None, it: tuple[int, ...]) -> None:
        """A tcgen05 completion (an MMA's barrier list, `tc_gen5_commit`): it lands once the
        tensor-core work is done, which is after the issuing warp's next instructions. So it is
        delivered when that warp next polls a wait (after the poll) or finishes, never before:
        a witness in which a consumer sees the completion before the issuer's very next wait
        (the MMA warp stalled for its whole MMA) is not one the hardware takes."""
        self.deferred.setdefault(who, []).append((slot, line, agent, it))

    def land_late(self, who: int | None = None, key: tuple | None = None) -> bool:
        """Land CLC responses held back by `params.late_clc` (False: none was held): those thread
        `who` requested on its barrier `key` (it now polls that barrier: the answer lands after
        the poll), or, without arguments, the oldest request (the scheduler's call when no
        partition can go on: the hardware answers at some unknown later time, but it answers)."""
        if not self.late:
            return False
        if who is None:
            who, key = self.late[0][3], self.late[0][0]
        held = [e for e in self.late if e[3] == who and e[0] == key]
        if not held:
            return False
        self.late = [e for e in self.late if not (e[3] == who and e[0] == key)]
        for _, slot, line, by, agent, it in held:
            self.complete_tx(slot, 16, line, by, agent, it=it)
        return True

    def land_async(self, who: int) -> None:
        """Deliver `who`'s pending tcgen05 completions (in issue order)."""
        for slot, line, agent, it in self.deferred.pop(who, ()):
            self.arrive(slot, 1, line, who, agent, it=it)

    def early_use(self, ref: Ref, op: Operation, who: int) -> None:
        """A peer CTA arrives on (or delivers bytes to) a barrier its CTA has not initialised yet
        (a barrier initialised inside a partition, after the cluster's start-up sync): the
        later `init_barrier` discards that arrival. Kept so the init can say so."""
        if ref.cta != self.threads[who].cta:
            self.early.setdefault(ref.key, []).append((op.line, self.threads[who].name))

    def new_instance(self, op: Operation, who: int) -> int:
        """A fresh instance of allocation `op` in the CTA thread `who` runs in."""
        key = (self.threads[who].cta, id(op))
        inst = self.instances.get(key, 0) + 1
        self.instances[key] = inst
        return inst

    def _entry_env(self, body: Block) -> dict[str, Value]:
        overrides = dict(self.params.arg_values)
        env: dict[str, Value] = {}
        if self._written is None:
            self._written = written_arguments(self.function)
        for i, arg in enumerate(body.arguments):
            value = self._arg_value(arg.type)
            env[arg.name] = overrides.get(i, value) if value is not None else None
            if value is None and i not in self._written:
                env[arg.name] = argument_pointer(arg.type, i, arg.name)
        return env

    def _run_block_fresh(self, body: Block, who: int = 0) -> Iterator[Wait | Step]:
        yield self._exec_block(body, self._entry_env(body), who, ())

    def _arg_value(self, type_: str | None) -> Value:
        if type_ and _INT_TYPE.match(type_):
            return self.params.int_args
        return None

    # -- execution ----------------------------------------------------------------------------
    def _exec_block(self, block: Block, env: dict[str, Value], who: int, it: tuple[int, ...],
                    skip_terminator: bool = False) -> Iterator[Any]:
        """Run a block's operations; a handler that blocks or enters a region is yielded as a
        generator, for the trampoline to drive."""
        ops = self.entry_order if block is self.entry_block and self.entry_order else block.operations
        for op in ops:
            if skip_terminator and op.name in ("scf.yield", "scf.condition"):
                continue
            self.ops += 1
            if not self.ops & 1023:
                self._check_bounds()
            g = self._exec(op, env, who, it)
            if g is not None:
                yield g

    def _exec(self, op: Operation, env: dict[str, Value], who: int, it: tuple[int, ...]) -> Iterator[Any] | None:
        """Execute `op`: returns the generator of a handler that yields, or None once done."""
        name = op.name
        handler = _HANDLERS.get(name)
        if handler is not None:
            return handler(self, op, env, who, it)
        if name.startswith("arith."):
            _arith(self, op, env)
            return None
        # Opaque op: results unknown. Regions of unknown ops are not entered.
        for r in op.results:
            env[r] = None
        if self.barrier_allocs and name not in _BARRIER_NEUTRAL:
            self._touches_barrier(op, env)
        return None

    def _touches_barrier(self, op: Operation, env: dict[str, Value]) -> None:
        """An op the interpreter does not model takes a barrier operand: whatever it does to the
        barrier is invisible here, so no hang on that barrier may become a verdict."""
        for n in op.operands:
            v = env.get(n)
            if v.__class__ is Ref and v.key[:2] in self.barrier_allocs:
                what = f"{op.name} at line {op.line}"
                for key, slot in self.slots.items():
                    if key[:2] == v.key[:2] and not slot.unmodelled:
                        slot.unmodelled = what
                self.notes.append(f"line {op.line}: {op.name} touches a barrier and is not modelled")

    def charge(self) -> None:
        """Charge the operations run since the last charge to the step clock (`budget.WORK`)."""
        WORK.ops += self.ops - self._charged
        self._charged = self.ops

    def _check_bounds(self) -> None:
        """Checked inside the step loop (every 1024 operations), so a partition that runs long
        stretches without a barrier operation (a loop nest with none) still stops on time."""
        self.charge()  # the step clock of `analyses.sim.budget`
        if self.ops > self.params.max_ops:
            raise BoundReached(f"the run executed {self.params.max_ops} operations")
        if self.deadline is not None and self.deadline.passed():
            raise BoundReached("the simulation budget ran out")

    # -- barrier state --------------------------------------------------------------------------
    def slot(self, ref: Value, op: Operation) -> BarrierSlot | None:
        if not isinstance(ref, Ref):
            return None
        return self.slots.get(ref.key)

    def get(self, env: dict[str, Value], name: str) -> Value:
        return env.get(name)


# Ops that take a barrier operand without changing its state (or whose effect is its lifetime).
_BARRIER_NEUTRAL = frozenset({"scf.yield", "scf.condition", "ttg.warp_yield", "ttg.warp_return", "tt.return",
                              "ttg.local_dealloc", "ttng.fence_async_shared", "ttg.barrier", "ttng.fence",
                              "ttg.memdesc_index", "ttg.local_alloc"})

CLC_TILES = 8  # tiles one CTA takes through cluster launch control before the answer is "no more tiles"


# -- handlers ---------------------------------------------------------------------------------------
def _truthy(v: Value) -> bool:
    """Unknown predicates are taken as true: the kernel has work to do."""
    return True if v is None else bool(v)


def _pred(op: Operation, env: dict[str, Value], index: int) -> bool:
    if index < len(op.operands) and op.operand_depths and op.operand_depths[index] == 0:
        return _truthy(env.get(op.operands[index]))
    return True


def _bracketed_after(op: Operation, start: int) -> list[tuple[str, str | None]]:
    """`%bar[%pred]` items: a depth-0 operand followed by a depth-1 operand, from position `start`
    of the positional operands on."""
    items: list[tuple[str, str | None]] = []
    ops, depths = op.operands, op.operand_depths or [0] * len(op.operands)
    pos = -1
    i = 0
    while i < len(ops):
        if depths[i] == 0:
            pos += 1
            if pos >= start:
                pred = ops[i + 1] if i + 1 < len(ops) and depths[i + 1] > 0 else None
                items.append((ops[i], pred))
        i += 1
    return items


def _h_alloc(m: Machine, op: Operation, env, who, it):
    inst = m.new_instance(op, who)
    cta = m.threads[who].cta
    for r in op.results:
        env[r] = Ref(op, inst, cta=cta) if not r.endswith("#1") else None


def _h_view(m: Machine, op: Operation, env, who, it):
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
        width = _last_dim(op.result_types[0] if op.result_types else None)
        base = base.view(n if isinstance(n, int) and not isinstance(n, bool) else 0, width)
    for r in op.results:
        env[r] = base


def _h_init(m: Machine, op: Operation, env, who, it):
    ref = env.get(op.operands[0]) if op.operands else None
    count = int(op.literals[0]) if op.literals and op.literals[0].lstrip("-").isdigit() else 1
    if isinstance(ref, Ref) and m.cga is not None:
        # A broadcast barrier: only its group's leader holds (and initialises) it (None).
        count = cluster_sim.cga_init(m, op, ref.cta, count)
    if isinstance(ref, Ref) and count is not None:
        slot = m.slots[ref.key] = BarrierSlot(ref, count, count, init_line=op.line)
        m.barrier_allocs.add(ref.key[:2])
        for line, name in m.early.pop(ref.key, []):
            slot.anomalies.append(f"{name} arrived on it remotely at line {line} before this CTA initialised it at "
                                  f"line {op.line}: the init discards that arrival (a peer may arrive only after the "
                                  "barrier's init and a cluster sync)")
    if op is m.sync_after:
        # The lowering fences and cluster-syncs after the entry block's last barrier init
        # (TritonGPUToLLVM's maybeInsertClusterSync): no CTA runs on before every CTA's inits.
        return _cluster_rendezvous(m, op, who, it)


def _hoisted_inits(body: Block, inits: list[Operation]) -> list[Operation] | None:
    """The entry block in the order a cluster kernel runs it: TritonGPUToLLVM's
    ensureEarlyEntryBarInit moves every entry-block `init_barrier` (with the entry-block ops it
    depends on: its allocation, view, index constant) to the start of the block, then
    maybeInsertClusterSync fences and cluster-syncs after the last one. So a peer's remote arrive
    written before a later init in the source still finds every CTA's barriers initialised.
    None when the order is the block's own."""
    if not inits:
        return None
    ops = body.operations
    defined = {r: o for o in ops for r in o.results}
    move: set[int] = set()
    work = list(inits)
    while work:
        op = work.pop()
        if id(op) in move:
            continue
        move.add(id(op))
        work.extend(defined[n] for n in op.operands if n in defined)
    order = [o for o in ops if id(o) in move] + [o for o in ops if id(o) not in move]
    return None if all(a is b for a, b in zip(order, ops)) else order


def _cluster_rendezvous(m: Machine, op: Operation, who: int, it):
    yield Step(op)
    generation = cluster_sim.cluster_arrive(m, op, who, it)
    yield Wait(op, m.cluster_slot(op), generation, it)


def _h_inval(m: Machine, op: Operation, env, who, it):
    return None


def _need_slot(m: Machine, op: Operation, env, name: str, who: int | None = None) -> BarrierSlot | None:
    ref = env.get(name)
    slot = m.slot(ref, op)
    if slot is None and isinstance(ref, Ref):
        m.notes.append(f"line {op.line}: barrier used before init_barrier (or with an unknown slot index)")
        if who is not None:
            m.early_use(ref, op, who)
    return slot


def _h_wait(m: Machine, op: Operation, env, who, it):
    pos = op.positional
    if len(pos) > 2 and not _truthy(env.get(pos[2])):
        return
    if m.cga is not None and not cluster_sim.cga_waits(m, op, m.threads[who].cta):
        return  # the wait on a broadcast barrier is predicated on its leader
    slot = _need_slot(m, op, env, pos[0])
    phase = env.get(pos[1]) if len(pos) > 1 else None
    if phase is None and op.literals:
        phase = int(op.literals[0]) if op.literals[0].lstrip("-").isdigit() else None
    if slot is None or phase is None:
        return
    if it:
        slot.loop_waited = True
    yield Wait(op, slot, int(phase) & 1, it)


def _h_arrive(m: Machine, op: Operation, env, who, it):
    """`arrive_barrier %b, COUNT[, %pred]` and `barrier_expect %b, BYTES[, %pred]` (one arrival
    plus a transaction-byte expectation): same operands, different effect."""
    pos = op.positional
    if len(pos) > 1 and not _truthy(env.get(pos[1])):
        return
    expect = op.name == "ttng.barrier_expect"
    amount = int(op.literals[0]) if op.literals and op.literals[0].isdigit() else (0 if expect else 1)
    if m.cga is not None:
        ref = env.get(pos[0])
        home = cluster_sim.cga_arrival_home(m, op, m.threads[who].cta)
        if isinstance(ref, Ref) and home != ref.cta:
            # A non-leader's expect or arrive is one arrival on its group leader's copy.
            slot = m.slots.get(ref.in_cta(home).key)
            if slot is None:
                m.early_use(ref.in_cta(home), op, who)
                return
            yield Step(op)
            m.arrive(slot, 1, op.line, who, it=it)
            return
        if expect:
            amount = cluster_sim.cga_expect_bytes(m, op, amount)
    slot = _need_slot(m, op, env, pos[0], who)
    if slot is None:
        return
    if not expect and "perThread" in op.attributes:
        # Every thread of the partition arrives (no elected leader): TLX's warp barriers init
        # the count to the arriving threads (128 for one warpgroup), not to 1.
        amount *= 32 * m.threads[who].warps
    yield Step(op)
    if expect:
        m.expect(slot, amount, op.line, who, it=it)
    else:
        m.arrive(slot, amount, op.line, who, it=it)


def _h_tma_load(m: Machine, op: Operation, env, who, it):
    pos = op.positional  # desc, dst, bar, pred
    if len(pos) < 3:
        return
    if len(pos) > 3 and not _truthy(env.get(pos[3])):
        return
    bar = env.get(pos[2])
    if m.cga is not None and isinstance(bar, Ref):
        # The CTA's share lands on its group's barrier copy (its own copy may not exist).
        per_cta = cluster_sim.cga_tx(m, op, m.threads[who].cta)
        if not per_cta:
            return  # a multicast is issued by its group's first CTA
        yield Step(op)
        agent = m.agent(who, op)
        m.access(op, env.get(pos[1]), "write", agent, it)
        for home, nb in sorted(per_cta.items()):
            target = m.slots.get(bar.in_cta(home).key)
            if target is None:
                m.early_use(bar.in_cta(home), op, who)
            else:
                m.complete_tx(target, nb, op.line, who, agent, it=it)
        return
    slot = _need_slot(m, op, env, pos[2])
    nbytes = memdesc_bytes(op.types[-1] if op.types else None)
    if slot is None or nbytes is None:
        return
    yield Step(op)
    agent = m.agent(who, op)
    cluster_sim.deliver_tma(m, op, env, who, it, slot, env.get(pos[1]), nbytes, agent)


def _h_bulk_copy(m: Machine, op: Operation, env, who, it):
    """`ttg.async_copy_global_to_local %ptr, %dst bulk_size %n barrier %bar {useBulk}`: a bulk
    copy (`cp.async.bulk ... mbarrier::complete_tx::bytes`) that completes `%n` bytes on `%bar`,
    like a TMA load. Without `barrier` it is a plain cp.async (no barrier: only its write)."""
    pos = op.positional
    for r in op.results:
        env[r] = None
    if "barrier" not in op.keywords or len(pos) < 4:
        if len(pos) > 1:
            m.access(op, env.get(pos[1]), "write", who, it)
        return
    nbytes = env.get(pos[2])
    slot = _need_slot(m, op, env, pos[-1], who)
    if slot is None or not isinstance(nbytes, int):
        if slot is not None:
            slot.unmodelled = slot.unmodelled or f"{op.name} at line {op.line} (bulk size unknown)"
        return
    yield Step(op)
    agent = m.agent(who, op)
    m.access(op, env.get(pos[1]), "write", agent, it)
    m.complete_tx(slot, nbytes, op.line, who, agent, it=it)


def _h_mma(m: Machine, op: Operation, env, who, it):
    pos = op.positional
    first_bar = 7 if op.name.endswith("_scaled") else 5
    pred_at = first_bar - 1
    if len(pos) > pred_at and not _truthy(env.get(pos[pred_at])):
        return  # predicated off: no MMA, no arrivals
    ctas = cluster_sim.mma_targets(m, op, m.threads[who].cta)
    if m.cga is not None:
        from ...facts.cga import issues_commit

        if not issues_commit(op, m.cga, m.threads[who].cta):
            return  # a two-CTA MMA is issued by the even CTA of the pair only
        has_barriers = bool(_bracketed_after(op, first_bar))
        arrive_in = sorted(cluster_sim.cga_commit(m, op, m.threads[who].cta)) if has_barriers else []
        # Its data: a two-CTA MMA reads and writes the pair's halves; its arrivals: `arrive_in`.
        ctas = list(cluster_sim.pair_of(m.threads[who].cta)) if m.cga.two_ctas else [m.threads[who].cta]
    if ctas is None:
        return  # a paired MMA is issued by the even CTA of the pair only
    items = _bracketed_after(op, first_bar)
    if items:
        yield Step(op)
    # tcgen05 ops complete in issue order: this one's completion implies the earlier ones'.
    agent = m.agent(who, op, tuple(m.tcgen05.get(who, [])[-1:]))
    if agent is not None:
        m.tcgen05[who] = [agent]
    # Without `is_async` and without completion barriers the MMA is the synchronous form (the
    # lowering waits for it; its token orders the accumulator's next use): its accesses are
    # the issuing thread's, in program order.
    actor = agent if items or "is_async" in op.attributes or agent is None else who
    if actor == who and agent is not None:
        # Waiting for it waits for every tcgen05 op issued before it (issue order): a `tmem_copy`
        # into the accumulator it then reads (Gluon's matmul_accumulate) is ordered.
        m.hb.join_threads(who, [agent])
    if len(pos) > 2:
        use_d = env.get(pos[pred_at - 1]) if len(pos) > pred_at - 1 else None
        for cta in ctas:  # a paired MMA reads both CTAs' operand halves and writes both accumulators
            a, b, d = (_in_cta(env.get(pos[k]), cta) for k in range(3))
            m.access(op, a, "read", actor, it)
            m.access(op, b, "read", actor, it)
            if use_d is None or use_d:
                m.access(op, d, "read", actor, it)
            m.access(op, d, "write", actor, it)
    for bar, pred in items:
        if pred is not None and not _truthy(env.get(pred)):
            continue
        for slot in _slots_in(m, op, env, bar, arrive_in if m.cga is not None else ctas, who):
            m.arrive_async(slot, op.line, who, agent, it)


def _in_cta(v: Value, cta: int) -> Value:
    return v.in_cta(cta) if isinstance(v, Ref) and v.cta != cta else v


def _slots_in(m: Machine, op: Operation, env, name: str, ctas: list[int], who: int) -> list[BarrierSlot]:
    """The barrier `name` names, in each CTA of `ctas` (its own CTA only, outside a pair)."""
    ref = env.get(name)
    if not isinstance(ref, Ref) or ctas == [ref.cta]:
        slot = _need_slot(m, op, env, name, who)
        return [slot] if slot is not None else []
    out = []
    for c in ctas:
        slot = m.slots.get(ref.in_cta(c).key)
        if slot is None:
            m.early_use(ref.in_cta(c), op, who)
        else:
            out.append(slot)
    return out


def _h_tmem_copy(m: Machine, op: Operation, env, who, it):
    """`tmem_copy %src, %dst` (`tcgen05.cp`): a tensor-core copy from shared to tensor memory,
    asynchronous and ordered with the thread's other tcgen05 ops, so it is a tcgen05 agent of the
    issuing thread (a later commit covers it, as it covers the MMA that reads the scales). In a
    paired (2-CTA) module the lowering predicates it on the leader CTA
    (`TensorMemoryCopyOpConversion`: `createLeaderCTAPredicate`, `cta_group::2`): the even CTA of
    the pair copies for both, reading and writing each CTA's half, and the odd CTA issues nothing."""
    for r in op.results:
        env[r] = None
    if m.hb is None:
        return
    pos = op.positional
    cta = m.threads[who].cta
    paired = (m.cga.two_ctas if m.cga is not None else m.cluster.paired) and m.cluster.size > 1
    if paired and cta % 2:
        return
    agent = m.agent(who, op, tuple(m.tcgen05.get(who, [])[-1:]))
    if agent is not None:
        m.tcgen05[who] = [agent]
    actor = agent if agent is not None else who
    for c in (cluster_sim.pair_of(cta) if paired else (cta,)):
        if len(pos) > 1:
            m.access(op, _in_cta(env.get(pos[0]), c), "read", actor, it)
            m.access(op, _in_cta(env.get(pos[1]), c), "write", actor, it)


def _accessor(reads: tuple[int, ...], writes: tuple[int, ...], pred: int | None = None):
    """Handler for an op that only touches memory: records its accesses (for races)."""

    def handler(m: Machine, op: Operation, env, who, it):
        for r in op.results:
            env[r] = None
        if m.hb is None:
            return
        pos = op.positional
        if pred is not None and len(pos) > pred and not _truthy(env.get(pos[pred])):
            return
        for k in reads:
            if k < len(pos):
                m.access(op, env.get(pos[k]), "read", who, it)
        for k in writes:
            if k < len(pos):
                m.access(op, env.get(pos[k]), "write", who, it)

    return handler


def _region(ref: Ref):
    from .hb import Region

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
    return tmem, base, _last_dim(alloc.result_types[0] if alloc.result_types else None)


_ALLOC_PLACES: dict[int, tuple] = {}


def _last_dim(type_: str | None) -> int | None:
    md = parse_memdesc(type_)
    return md.shape[-1] if md is not None and md.shape else None


def _h_clc_try_cancel(m: Machine, op: Operation, env, who, it):
    """`async_clc_try_cancel %bar, %response` (TLX) or `clc_try_cancel %response, %bar`
    (Gluon/upstream): asks the hardware for a cluster not launched yet;
    the 16-byte answer lands in `%response` and completes 16 transaction bytes on `%bar`
    (complete_tx, like a TMA copy). The answer is a new tile for the first CLC_TILES - 1
    requests, then "no more tiles" (-1), so a CLC persistent loop ends after a bounded number
    of tiles, as it does when the grid is used up."""
    pos = op.positional
    if len(pos) < 2:
        return
    bar, response = (pos[1], pos[0]) if op.name == "ttng.clc_try_cancel" else (pos[0], pos[1])
    slot = _need_slot(m, op, env, bar)
    res = env.get(response)
    cta = m.threads[who].cta
    cga_tx = cluster_sim.cga_tx(m, op, cta) if m.cga is not None else None
    if slot is None and cga_tx and isinstance(env.get(bar), Ref):
        slot = m.slots.get(env.get(bar).in_cta(min(cga_tx)).key)
    if slot is None or not cluster_sim.issues(m, op, cta) or cga_tx == {}:
        return
    yield Step(op)
    m.clc_issued[cta] = m.clc_issued.get(cta, 0) + 1
    n = m.clc_issued[cta]
    answer = m.params.num_programs * n + m.params.program_id if n < CLC_TILES else -1
    agent = m.agent(who, op)
    # A multicast request answers every CTA of the cluster: a response and 16 bytes each.
    for k in (sorted(cga_tx) if cga_tx else cluster_sim.targets(m, op, cta)):
        if isinstance(res, Ref):
            m.clc_answers[res.in_cta(k).key] = answer
            m.access(op, res.in_cta(k), "write", agent, it)
        target = m.slots.get(slot.ref.in_cta(k).key)
        if target is not None and m.params.late_clc:
            # The response lands late: after the asking partition's next poll of this barrier,
            # or once no partition can go on (`Machine.land_late`). The partition that asks
            # usually reads the answer too, so landing at issue would hide every read that
            # polls before the answer came (a flipped consumer wait on a fresh barrier). The
            # answer itself is known at issue, only for the run's control flow.
            m.late.append((slot.ref.key, target, op.line, who, agent, it))
        elif target is not None:
            m.complete_tx(target, 16, op.line, who, agent, it=it)


def _h_clc_query(m: Machine, op: Operation, env, who, it):
    """`clc_query_cancel %response` -> (x, y, z) of the cancelled cluster's first CTA, or -1."""
    res = env.get(op.operands[0]) if op.operands else None
    answer = m.clc_answers.get(res.key) if isinstance(res, Ref) else None
    values = (None,) * 3 if answer is None else ((answer, 0, 0) if answer >= 0 else (-1, -1, -1))
    for r, v in zip(op.results, values):
        env[r] = v
    m.access(op, res, "read", who, it)


def _h_clc_load(m: Machine, op: Operation, env, who, it):
    """`clc_load_result %response -> i128`: the answer, kept as the tile it names (-1: none)."""
    res = env.get(op.operands[0]) if op.operands else None
    if op.results:
        env[op.results[0]] = m.clc_answers.get(res.key) if isinstance(res, Ref) else None
    m.access(op, res, "read", who, it)


def _h_clc_is_canceled(m: Machine, op: Operation, env, who, it):
    answer = env.get(op.operands[0]) if op.operands else None
    if op.results:
        env[op.results[0]] = None if answer is None else int(answer >= 0)


def _h_clc_program_id(m: Machine, op: Operation, env, who, it):
    """`clc_get_program_id %answer, x|y|z`: the cancelled cluster's first CTA (tiles are
    numbered along x here)."""
    answer = env.get(op.operands[0]) if op.operands else None
    dim = next((w for w in list(op.literals) + list(getattr(op, "keywords", [])) if w in ("x", "y", "z")), "x")
    if op.results:
        env[op.results[0]] = None if answer is None else (answer if dim == "x" else 0)


def _named_slot(m: Machine, op: Operation, env, who: int) -> tuple[BarrierSlot | None, int]:
    """The named barrier `op` uses and the threads it expects; (None, 0) when either operand
    is unknown (the op is then reported as a limit, like any barrier op we cannot follow)."""
    pos = op.positional
    bar = env.get(pos[0]) if pos else None
    threads = env.get(pos[1]) if len(pos) > 1 else None
    if not isinstance(bar, int) or not isinstance(threads, int) or threads <= 0:
        m.notes.append(f"line {op.line}: named barrier with an unknown id or thread count; not modelled")
        return None, 0
    cta = m.threads[who].cta
    slot = m.named.get((cta, bar))
    if slot is None or slot.count != threads:
        # A generation completes when `threads` threads have arrived; it then re-arms (per CTA).
        slot = BarrierSlot(Ref(op, 0, ("named", bar), cta=cta), threads, threads, init_line=op.line, named=bar)
        m.named[(cta, bar)] = slot
    return slot, threads


def _h_named_arrive(m: Machine, op: Operation, env, who, it):
    """`arrive_barrier_named %id, %threads` (bar.arrive): every thread of the partition arrives
    on hardware barrier `id`, without waiting."""
    slot, _ = _named_slot(m, op, env, who)
    if slot is None:
        return
    yield Step(op)
    m.arrive(slot, min(32 * m.threads[who].warps, slot.pending or slot.count), op.line, who, it=it)


def _h_named_wait(m: Machine, op: Operation, env, who, it):
    """`wait_barrier_named %id, %threads` (bar.sync): the partition's threads arrive, then wait
    until the generation they arrived in has its `threads` arrivals."""
    slot, _ = _named_slot(m, op, env, who)
    if slot is None:
        return
    yield Step(op)
    generation = slot.parity
    m.arrive(slot, min(32 * m.threads[who].warps, slot.pending or slot.count), op.line, who, it=it)
    yield Wait(op, slot, generation, it)


def _h_commit(m: Machine, op: Operation, env, who, it):
    pos = op.positional
    if len(pos) > 1 and not _truthy(env.get(pos[1])):
        return
    ctas = cluster_sim.mma_targets(m, op, m.threads[who].cta)
    if m.cga is not None:
        ctas = sorted(cluster_sim.cga_commit(m, op, m.threads[who].cta)) or None
    if ctas is None:
        return  # in a paired (2-CTA) module the even CTA of the pair commits for both
    slots = _slots_in(m, op, env, pos[0], ctas, who)
    if not slots:
        return
    yield Step(op)
    # The commit arrives once every tcgen05 op this thread issued before it has completed.
    agent = m.agent(who, op, tuple(m.tcgen05.get(who, [])[-1:]))
    for slot in slots:
        m.arrive_async(slot, op.line, who, agent, it)


@dataclass(frozen=True, slots=True)
class StoreToken:
    """One issue of a TMA store (`async_tma_copy_local_to_global` and its reduce / scatter
    forms): the async agent reading its SMEM source and the clock stamp of that read. It is
    the op's token value, so `async_tma_store_token_wait %tok` knows which store it retires."""

    agent: int
    stamp: int


def _h_tma_store(m: Machine, op: Operation, env, who, it):
    """A bulk tensor store reads its SMEM source asynchronously (`cp.async.bulk.tensor` from
    shared::cta): the read belongs to an async agent of the thread and ends only when a store
    wait retires it, so a rewrite of the source before that wait is unordered with the read."""
    for r in op.results:
        env[r] = None
    if m.hb is None:
        return
    pos = op.positional
    agent = m.agent(who, op)
    if agent is None or len(pos) < 2:
        return
    m.access(op, env.get(pos[1]), "read", agent, it)
    token = StoreToken(agent, m.hb.clock(agent)[agent])
    m.stores.setdefault(who, []).append(token)
    for r in op.results:
        env[r] = token


def retire_stores(m: Machine, who: int, tokens) -> None:
    """The thread has seen these stores finish reading SMEM (a store wait passed): it now
    knows each read, up to the read's own stamp (not the agent's later issues, which a
    `pendings = N` wait leaves in flight)."""
    if m.hb is None:
        return
    clock = m.hb.clock(who)
    for t in tokens:
        if clock.get(t.agent, 0) < t.stamp:
            clock[t.agent] = t.stamp


def _h_tma_store_wait(m: Machine, op: Operation, env, who, it):
    """`async_tma_store_wait {pendings = N}` (`cp.async.bulk.wait_group.read N`): at most the N
    most recent stores of this thread are still reading; the older ones are retired."""
    pending = m.stores.get(who)
    if not pending:
        return
    n = op.attr("pendings")
    n = n if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else 0
    keep = len(pending) - n if n < len(pending) else 0
    retire_stores(m, who, pending[:keep])
    m.stores[who] = pending[keep:]


def _h_store_wait(m: Machine, op: Operation, env, who, it):
    """`async_tma_store_token_wait %tok (, %bar[%pred])*`: the store of `%tok` has finished
    reading SMEM (an unknown token: every store of the thread so far), then the barriers get
    one arrival each."""
    pending = m.stores.get(who)
    if pending:
        token = env.get(op.positional[0]) if op.positional else None
        done = [token] if isinstance(token, StoreToken) and token in pending else list(pending)
        retire_stores(m, who, done)
        m.stores[who] = [t for t in pending if t not in done]
    items = _bracketed_after(op, 1)
    if not items:
        return
    yield Step(op)
    for bar, pred in items:
        if pred is not None and not _truthy(env.get(pred)):
            continue
        slot = _need_slot(m, op, env, bar)
        if slot is not None:
            m.arrive(slot, 1, op.line, who, it=it)


def _h_addptr(m: Machine, op: Operation, env, who, it):
    """`tt.addptr` of an input array's pointer by a known offset: the element it points at."""
    p, off = (env.get(n) for n in op.operands[:2]) if len(op.operands) >= 2 else (None, None)
    env[op.results[0]] = Ptr(p.position, p.name, p.offset + int(off)) if p.__class__ is Ptr and isinstance(off, int) \
        else None


def _h_load(m: Machine, op: Operation, env, who, it):
    """A scalar `tt.load` from an input array: the element's value (`params.memory`), the same
    in every partition; anything else is opaque."""
    p = env.get(op.operands[0]) if len(op.operands) == 1 else None
    width = loaded_width(op) if p.__class__ is Ptr else None
    for r in op.results:
        env[r] = None
    if width is None:
        return
    key = (p.position, p.offset)
    v = m.params.memory.value(p.position, p.offset, m.params.int_args)
    if v is None:
        return
    m.loads[key] = v
    m.thread_loads.setdefault(who, set()).add(key)
    m.array_names[p.position] = p.name
    env[op.results[0]] = Loaded(_wrap(v, width), frozenset({key}))


def _loaded_bounds(m: Machine, op: Operation, who: int, values) -> None:
    """A loop whose bounds were loaded from memory runs an input-decided trip count: it counts as
    assumed (deadlock._unmodelled) and remembers which elements decided it."""
    keys = frozenset().union(*(v.keys for v in values if v.__class__ is Loaded))
    if keys:
        m.assumed.setdefault(who, set()).add(op.line)
        m.loaded_sites[op.line] = m.loaded_sites.get(op.line, frozenset()) | keys


def _h_for(m: Machine, op: Operation, env, who, it):
    lb, ub, step = (env.get(n) for n in op.operands[:3])
    _loaded_bounds(m, op, who, (lb, ub, step))
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
    m.count_exit(op, who)
    for r, v in zip(op.results, carried):
        env[r] = v


def _exec_body(m: Machine, block: Block, env, who, it):
    return m._exec_block(block, env, who, it, skip_terminator=True)


def _yielded(block: Block, env, n: int) -> list[Value]:
    term = block.operations[-1] if block.operations else None
    if term is None or term.name not in ("scf.yield", "scf.condition"):
        return [None] * n
    return [env.get(name) for name in term.operands]


def _h_while(m: Machine, op: Operation, env, who, it):
    if len(op.regions) < 2:
        return
    before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
    carried = [env.get(n) for n in op.operands]
    k = 0
    limit = None
    while True:
        for a, v in zip(before.arguments, carried):
            env[a.name] = v
        yield _exec_body(m, before, env, who, it + (k,))
        term = before.operations[-1] if before.operations else None
        if term is None or term.name != "scf.condition":
            return
        cond = env.get(term.operands[0]) if term.operands else None
        forwarded = [env.get(n) for n in term.operands[1:]]
        if cond.__class__ is Loaded:
            _loaded_bounds(m, op, who, (cond,))
        if cond is None:
            # A runtime condition (a tile count read from memory): run `unknown_trips` iterations.
            limit = m.params.unknown_trips if limit is None else limit
            cond = k < limit
            m.assumed.setdefault(who, set()).add(op.line)
            if not cond:
                m.notes.append(f"line {op.line}: while condition unknown; ran {limit} iterations")
        if not cond:
            m.count_exit(op, who)
            for r, v in zip(op.results, forwarded):
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


def _h_if(m: Machine, op: Operation, env, who, it):
    cond = env.get(op.operands[0]) if op.operands else None
    if cond.__class__ is Loaded:  # decided by loaded values: input points vary them (input_points.memory_points)
        m.loaded_sites[op.line] = m.loaded_sites.get(op.line, frozenset()) | cond.keys
    if cond is None and _branches_differ(op):
        # A runtime condition deciding which barrier operations run: one run takes then, the
        # other (`unknown_if_else`) takes else; which side the GPU takes is not known here.
        m.unknown_ifs.add(op.line)
        branch = 1 if m.params.unknown_if_else else 0
    else:
        branch = 0 if _truthy(cond) else 1
    if branch >= len(op.regions) or not op.regions[branch].blocks:
        for r in op.results:
            env[r] = None
        return
    block = op.regions[branch].blocks[0]
    yield _exec_body(m, block, env, who, it)
    values = _yielded(block, env, len(op.results))
    for r, v in zip(op.results, values):
        env[r] = v


def _h_program_id(m: Machine, op: Operation, env, who, it):
    value = m.params.axis_value(op, counts=False)
    axis = next(({"x": 0, "y": 1, "z": 2}[w] for w in (*op.keywords, *op.literals) if w in ("x", "y", "z")), 0)
    env[op.results[0]] = cluster_sim.program_id(m, value, axis, m.threads[who].cta)


def _h_num_programs(m: Machine, op: Operation, env, who, it):
    env[op.results[0]] = m.params.axis_value(op, counts=True)


def _h_warp_specialize(m: Machine, op: Operation, env, who, it):
    """Fork: each region runs as its own thread; the default region sees the parent's values,
    partitionN regions see the captures as block arguments. The parent waits for all."""
    captures = [env.get(name) for name in op.operands]
    if m.cluster.size > 1 and m.sync_after is None:
        # No barrier init in the entry block to sync after: the CTAs still start their
        # partitions together (no peer can reach a barrier before it exists).
        yield _cluster_rendezvous(m, op, who, it)
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


def _h_create_token(m: Machine, op: Operation, env, who, it):
    """An NVWS token stands for a full and an empty barrier array of `numBuffers` slots, each
    expecting one arrival (the token-lowering pass makes exactly these)."""
    inst = m.new_instance(op, who)
    cta = m.threads[who].cta
    n = op.attr("numBuffers")
    n = n if isinstance(n, int) and n > 0 else 1
    ref = Ref(op, inst, cta=cta)
    for side in ("full", "empty"):
        for i in range(n):
            slot_ref = Ref(op, inst, (side, i), cta=cta)
            m.slots[slot_ref.key] = BarrierSlot(slot_ref, 1, 1, init_line=op.line)
    for r in op.results:
        env[r] = ref


def _token_slot(m: Machine, op: Operation, env, side: str) -> BarrierSlot | None:
    pos = op.positional
    tok = env.get(pos[0]) if pos else None
    idx = env.get(pos[1]) if len(pos) > 1 else None
    if not isinstance(tok, Ref) or not isinstance(idx, int):
        return None
    return m.slots.get(Ref(tok.alloc, tok.instance, (side, idx), cta=tok.cta).key)


def _h_token_wait(m: Machine, op: Operation, env, who, it):
    pos = op.positional
    producer = op.name == "nvws.producer_acquire"
    if len(pos) > 3 and not _truthy(env.get(pos[3])):
        return
    slot = _token_slot(m, op, env, "empty" if producer else "full")
    phase = env.get(pos[2]) if len(pos) > 2 else None
    if slot is None or phase is None:
        return
    yield Wait(op, slot, (int(phase) ^ (1 if producer else 0)) & 1, it)


def _h_token_arrive(m: Machine, op: Operation, env, who, it):
    slot = _token_slot(m, op, env, "full" if op.name == "nvws.producer_commit" else "empty")
    if slot is None:
        return
    yield Step(op)
    m.arrive(slot, 1, op.line, who, it=it)


_HANDLERS = {
    "nvws.create_token": _h_create_token,
    "nvws.producer_acquire": _h_token_wait,
    "nvws.consumer_wait": _h_token_wait,
    "nvws.producer_commit": _h_token_arrive,
    "nvws.consumer_release": _h_token_arrive,
    "ttg.local_alloc": _h_alloc,
    "ttng.tmem_alloc": _h_alloc,
    "ttg.memdesc_index": _h_view,
    "ttg.memdesc_subview": _h_view,
    "ttg.memdesc_subslice": _h_view,
    "ttng.tmem_subslice": _h_view,
    "ttg.memdesc_reinterpret": _h_view,
    "ttg.memdesc_trans": _h_view,
    "ttg.memdesc_reshape": _h_view,
    "ttng.init_barrier": _h_init,
    "ttng.inval_barrier": _h_inval,
    "ttng.wait_barrier": _h_wait,
    "ttng.arrive_barrier": _h_arrive,
    "ttng.barrier_expect": _h_arrive,
    "ttng.async_tma_copy_global_to_local": _h_tma_load,
    "ttng.async_tma_gather": _h_tma_load,
    "ttg.async_copy_global_to_local": _h_bulk_copy,
    "ttng.tc_gen5_mma": _h_mma,
    "ttng.tc_gen5_mma_scaled": _h_mma,
    "ttng.tc_gen5_commit": _h_commit,
    "ttng.async_clc_try_cancel": _h_clc_try_cancel,
    "ttng.clc_query_cancel": _h_clc_query,
    "ttng.clc_try_cancel": _h_clc_try_cancel,
    "ttng.clc_load_result": _h_clc_load,
    "ttng.clc_is_canceled": _h_clc_is_canceled,
    "ttng.clc_get_program_id": _h_clc_program_id,
    "nvg.cluster_id": cluster_sim.h_cluster_id,
    "ttng.cluster_cta_id": cluster_sim.h_cluster_id,
    "nvgpu.cluster_id": cluster_sim.h_cluster_id,
    "ttng.map_to_remote_buffer": cluster_sim.h_map_to_remote,
    "ttg.async_remote_shmem_copy": cluster_sim.h_remote_copy,
    "ttg.async_remote_shmem_store": cluster_sim.h_remote_copy,
    "ttg.remote_shmem_store": cluster_sim.h_remote_store_plain,
    "ttng.cluster_arrive": cluster_sim.h_cluster_sync,
    "ttng.cluster_wait": cluster_sim.h_cluster_sync,
    "ttng.cluster_barrier": cluster_sim.h_cluster_sync,
    "ttng.arrive_barrier_named": _h_named_arrive,
    "ttng.wait_barrier_named": _h_named_wait,
    "ttng.async_tma_store_token_wait": _h_store_wait,
    "ttng.tmem_load": _accessor(reads=(0,), writes=()),
    "ttng.tmem_store": _accessor(reads=(), writes=(1,), pred=2),
    "ttg.local_load": _accessor(reads=(0,), writes=()),
    "ttg.local_store": _accessor(reads=(), writes=(1,)),
    "ttng.warp_group_dot": _accessor(reads=(0, 1), writes=()),
    "ttng.async_tma_copy_local_to_global": _h_tma_store,
    "ttng.async_tma_reduce": _h_tma_store,
    "ttng.async_tma_scatter": _h_tma_store,
    "ttng.async_tma_store_wait": _h_tma_store_wait,
    "ttng.tmem_copy": _h_tmem_copy,
    "scf.for": _h_for,
    "tt.addptr": _h_addptr,
    "tt.load": _h_load,
    "scf.while": _h_while,
    "scf.if": _h_if,
    "tt.get_program_id": _h_program_id,
    "tt.get_num_programs": _h_num_programs,
    "ttg.warp_specialize": _h_warp_specialize,
}


# -- arith ------------------------------------------------------------------------------------------
def _width(type_: str | None) -> int | None:
    if type_ is None:
        return None
    if type_ == "index":
        return 64
    m = _INT_TYPE.match(type_)
    return int(m.group(1)) if m else None


def _wrap(v: int, width: int | None) -> int:
    """Canonical form of an integer of `width` bits: two's complement signed (i1: 0 or 1)."""
    if width is None:
        return v
    v &= (1 << width) - 1
    if width > 1 and v >> (width - 1):
        v -= 1 << width
    return v


def _u(v: int, width: int | None) -> int:
    """The unsigned reading of a canonical value."""
    return v if width is None else v & ((1 << width) - 1)


def _signed(v: int, width: int | None) -> int:
    if width is None:
        return v
    v &= (1 << width) - 1
    return v - (1 << width) if width > 1 and v >> (width - 1) else v


def _constant(op: Operation) -> Value:
    lits = [x for x in op.literals if x not in ("<", ">", "dense")]
    if not lits or "dense" in op.literals:
        return None
    t = lits[0]
    if t in ("true", "false"):
        return 1 if t == "true" else 0
    try:
        return _wrap(int(t, 0), _width(op.result_types[0] if op.result_types else None))
    except ValueError:
        return None


def _arith(m: Machine, op: Operation, env: dict[str, Value]) -> None:
    plan = m.arith_plans.get(id(op))
    if plan is None or plan[0] is not op:
        plan = m.arith_plans[id(op)] = _arith_plan(op)
    _, name, width, src_width, fn, result_name, operands = plan
    if result_name is None:
        return
    if name == "constant":
        env[result_name] = fn
        return
    args = [env.get(n) for n in operands]
    if name == "select" and len(args) == 3 and args[0] is not None:
        # Only the chosen operand matters (a CLC tile id selected against an unknown offset).
        chosen = args[1] if args[0] else args[2]
        env[result_name] = _wrap(chosen, width) if isinstance(chosen, int) else None
        if chosen.__class__ is Loaded:
            env[result_name] = Loaded(env[result_name], chosen.keys)
        return
    if None in args or not args:
        env[result_name] = None
        return
    try:
        result = fn(args, width, src_width, op)
    except (ZeroDivisionError, ValueError, TypeError, IndexError):  # as arith_value: too few operands is unknown
        result = None
    env[result_name] = _wrap(result, width) if isinstance(result, int) else None
    if isinstance(result, int) and any(a.__class__ is Loaded for a in args):
        # A value computed from loaded ones stays an input (analyses.program.loaded); `a[i + 1] - a[i]`
        # marks `a` as an array of offsets.
        keys = frozenset().union(*(a.keys for a in args if a.__class__ is Loaded))
        env[result_name] = Loaded(env[result_name], keys)
        if name == "subi" and all(a.__class__ is Loaded for a in args) and len({k[0] for k in keys}) == 1:
            m.offset_arrays.add(next(iter(keys))[0])


def _arith_plan(op: Operation) -> tuple:
    """What `_arith` needs of an op, computed once per op (types parsed, handler looked up):
    (op, name, result width, source width, handler or constant value, result, operands)."""
    name = op.name[6:]
    width = _width(op.result_types[0] if op.result_types else None)
    result_name = op.results[0] if op.results else None
    if name == "constant":
        return (op, name, width, width, _constant(op), result_name, ())
    src_width = _width(op.types[0]) if op.types else width
    return (op, name, width, src_width, _ARITH.get(name, _unknown), result_name, tuple(op.operands))


def _unknown(args, width, src_width, op):
    return None


def _cmp(args, width, src_width, op):
    pred = next((a for a in _cmp_pred(op)), "eq")
    a, b = args
    sa, sb = _signed(a, src_width), _signed(b, src_width)
    ua, ub = _u(a, src_width), _u(b, src_width)
    table = {"eq": ua == ub, "ne": ua != ub, "slt": sa < sb, "sle": sa <= sb, "sgt": sa > sb, "sge": sa >= sb,
             "ult": ua < ub, "ule": ua <= ub, "ugt": ua > ub, "uge": ua >= ub}
    return int(table[pred])


def _cmp_pred(op: Operation) -> list[str]:
    words = list(getattr(op, "keywords", [])) + list(op.literals)
    preds = [t for t in words if t in ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")]
    if preds:
        return preds
    raw = op.attributes.get("predicate", "")
    return [raw.strip()] if raw else []


def _div_s(a, b, w):
    sa, sb = _signed(a, w), _signed(b, w)
    q = abs(sa) // abs(sb)
    return q if (sa >= 0) == (sb >= 0) else -q


def _rem_s(a, b, w):
    sa, sb = _signed(a, w), _signed(b, w)
    r = abs(sa) % abs(sb)
    return r if sa >= 0 else -r


_ARITH = {
    "addi": lambda a, w, sw, op: a[0] + a[1],
    "subi": lambda a, w, sw, op: a[0] - a[1],
    "muli": lambda a, w, sw, op: a[0] * a[1],
    "divui": lambda a, w, sw, op: _u(a[0], w) // _u(a[1], w),
    "divsi": lambda a, w, sw, op: _div_s(a[0], a[1], w),
    "ceildivsi": lambda a, w, sw, op: -(-_signed(a[0], w) // _signed(a[1], w)),
    "ceildivui": lambda a, w, sw, op: -(-_u(a[0], w) // _u(a[1], w)),
    "floordivsi": lambda a, w, sw, op: _signed(a[0], w) // _signed(a[1], w),
    "remui": lambda a, w, sw, op: _u(a[0], w) % _u(a[1], w),
    "remsi": lambda a, w, sw, op: _rem_s(a[0], a[1], w),
    "andi": lambda a, w, sw, op: a[0] & a[1],
    "ori": lambda a, w, sw, op: a[0] | a[1],
    "xori": lambda a, w, sw, op: a[0] ^ a[1],
    "shli": lambda a, w, sw, op: a[0] << _u(a[1], w),
    "shrui": lambda a, w, sw, op: _u(a[0], w) >> _u(a[1], w),
    "shrsi": lambda a, w, sw, op: _signed(a[0], w) >> _u(a[1], w),
    "extui": lambda a, w, sw, op: _u(a[0], sw),
    "extsi": lambda a, w, sw, op: _signed(a[0], sw),
    "trunci": lambda a, w, sw, op: a[0],
    "index_cast": lambda a, w, sw, op: _signed(a[0], sw),
    "index_castui": lambda a, w, sw, op: _u(a[0], sw),
    "select": lambda a, w, sw, op: a[1] if a[0] else a[2],
    "cmpi": _cmp,
    "maxsi": lambda a, w, sw, op: max(_signed(a[0], w), _signed(a[1], w)),
    "minsi": lambda a, w, sw, op: min(_signed(a[0], w), _signed(a[1], w)),
    "maxui": lambda a, w, sw, op: max(_u(a[0], w), _u(a[1], w)),
    "minui": lambda a, w, sw, op: min(_u(a[0], w), _u(a[1], w)),
}


# -- for other analyses: the same integer semantics ------------------------------------------------
def arith_value(op: Operation, args: list[int]) -> int | None:
    """The value `op` (an `arith.*` op) computes from concrete operands, exactly as a run does:
    `trip_counts` evaluates loop bounds with it, so its trip counts are the simulation's."""
    name = op.name[6:]
    width = _width(op.result_types[0] if op.result_types else None)
    if name == "constant":
        return _constant(op)
    if not args or any(a is None for a in args):
        return None
    src_width = _width(op.types[0]) if op.types else width
    try:
        result = _ARITH.get(name, _unknown)(args, width, src_width, op)
    except (ZeroDivisionError, ValueError, TypeError, IndexError):
        return None
    return _wrap(result, width) if isinstance(result, int) else None


def int_width(type_: str | None) -> int | None:
    return _width(type_)


def wrap_int(v: int, width: int | None) -> int:
    return _wrap(v, width)
