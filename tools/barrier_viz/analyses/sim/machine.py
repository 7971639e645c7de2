"""The interpreter's core: one run of a warp-specialized kernel at barrier granularity.

Why: whether a wait deadlocks depends on which phase of which slot it polls at which iteration,
and on the order other partitions can arrive in. Reading formulas gets this wrong in exactly the
cases that matter (peeled iterations, conditional increments, wrap-around counters, rings that
only misbehave after they wrap). So we run the program: integers (loop counters, slot indices,
phases, predicates) are computed concretely, tensors are opaque, and every mbarrier slot keeps the
exact hardware state (parity, pending arrivals, transaction bytes; ir-semantics.md §4).

Each partition of `ttg.warp_specialize` is a Python generator that yields at every barrier
operation; a scheduler (`analyses.sim.schedule`) decides who runs next. `Machine._exec` looks an
op's name up in one handler table (`registry.HANDLERS`, filled by the op families of `ops/` and
by the installed extension, `extension`), evaluates `arith.*` (`ops.arith`) and treats anything
else as opaque. Nested regions do not nest Python calls: a handler yields the generator of a
sub-region and `Trampoline` drives the stack explicitly, so 10,000 nested `scf.if` run like one
(no RecursionError, like the parser).

When asynchronous work completes on its barrier:
* TMA loads and gathers, bulk copies (`async_copy_global_to_local ... barrier`) and remote
  copies deliver their bytes (`complete_tx`) when the issuing op executes: the schedule in which
  the copy engine is fast.
* tcgen05 completions (an MMA's barrier list, `tc_gen5_commit`) do not: `arrive_async` holds them
  per issuing thread, and they land (`land_async`, in issue order) when that thread next yields a
  wait or a join, after the wait has polled (the poll sees the barrier as it was before they
  land), or when the thread finishes. A consumer never sees them before the issuer's next wait.
* A CLC try-cancel's 16 bytes complete at issue, unless `Params.late_clc`: then they land after
  the asking thread's next poll of that barrier, or when no partition can go on (`land_late`).
* A TMA store is an agent reading its SMEM source until a store wait of the thread retires it
  (`ops.tma`); it arrives on no barrier.

Unknown integers (function arguments) take one concrete value for the whole run (`params`), so
every partition computes the same trip counts, including peeled first iterations. Scalars loaded
from arrays the kernel never writes (offsets, sizes) are inputs too (`analyses.program.loaded`): one value
per array element, the same in every partition, from `params.memory`.

Every CTA of a cluster runs here as its own main thread with its own partitions, allocations and
barriers (`Ref.cta`); what crosses CTAs (remote arrivals, multicast, paired MMAs, the CGA form)
is the cluster extension's, reached only through `self.ext` (`analyses.sim.extension`).
"""

from __future__ import annotations

from typing import Any, Iterator

from ...facts.cluster import Cluster, cluster_of_module
from ...ir.model import Block, Operation
from ..program.loaded import Loaded, argument_pointer, partition_arrays, written_arguments
from . import ops as op_families  # noqa: F401  (importing it registers every op family's handlers)
from .budget import WORK
from .extension import installed
from .ops.arith import INT_TYPE, arith_value, execute_arith, int_width, wrap_int  # noqa: F401 (re-exported)
from .ops.clc import CLC_TILES  # noqa: F401 (re-exported)
from .ops.control import region_barriers
from .ops.memory import access_region
from .ops.tma import StoreToken, retire_stores  # noqa: F401 (re-exported)
from .registry import HANDLERS
from .state import (  # noqa: F401 (re-exported: the names callers import from the interpreter)
    BarrierSlot, BoundReached, Join, Params, Ref, SimulationError, Step, Thread, Trampoline, Value, Wait)


def cluster_for(function: Operation) -> Cluster:
    """The cluster `function` runs in (one CTA outside a module)."""
    module = next((a for a in function.ancestors() if a.name == "builtin.module"), None)
    return cluster_of_module(module) if module is not None else Cluster(1, (1, 1, 1))


_BARRIER_MAKERS = frozenset({"ttng.init_barrier", "nvws.create_token"})


def has_barrier_program(function: Operation) -> bool:
    """Does `function` initialise an mbarrier (or an NVWS token)? Without one nothing can hang,
    and only a race-tracking run (`explore`) simulates it."""
    return any(o.name in _BARRIER_MAKERS for o in function.walk())


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
        # thread -> id(loop op) -> the iterations of the enclosing loops at each entry that ran no iteration
        self.empty_loops: dict[int, dict[int, list[tuple]]] = {}
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
        self.arith_plans: dict[int, tuple] = {}  # id(op) -> what `execute_arith` needs of it
        self.assumed: dict[int, set[int]] = {}  # thread -> lines of loops whose trip count was assumed
        self.loaded_sites: dict[int, frozenset] = {}  # line of a loop or if whose bounds or condition were loaded -> elements
        self.loads: dict[tuple[int, int], int] = {}  # (array position, index) -> the value every load of it read
        self.offset_arrays: set[int] = set()  # arrays read as offsets (two of their elements subtracted)
        self.thread_loads: dict[int, set[tuple[int, int]]] = {}  # thread -> the elements it loaded
        self.array_names: dict[int, str] = {}  # array position -> the argument's name
        self.loaded_steps: dict[int, int] = {}  # array position -> step of a loop whose bounds it decided
        self.loaded_context: dict[int, list[frozenset]] = {}  # thread -> elements deciding the loops / ifs it is in
        # (id(alloc), instance) of a barrier -> thread -> the groups of loaded elements its uses of it
        # depended on (one group per deciding loop or `scf.if`, slot index or operand)
        self.barrier_uses: dict[tuple, dict[int, set[frozenset]]] = {}
        self._written: frozenset[int] | None = None
        self._partition_arrays: dict[str, frozenset[int]] | None = None
        self._partition_barriers: dict[str, frozenset[int]] | None = None
        self.unknown_ifs: set[int] = set()  # lines of scf.if on unknown conditions whose sides differ
        self.deadline = None  # a budget.Deadline: the run stops once it has passed
        self.ext = installed()  # what the cluster model (or another extension) adds: `analyses.sim.extension`
        self.cluster = cluster_for(function)  # the CTAs run together (facts.cluster)
        self.cga = self.ext.cga_for(function) if self.cluster.cga else None  # facts.cga.CgaModule
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
            if self.params.track_order:
                self.hb.order = {}
        # Remote shared-memory effects of a cluster run (recorded by the extension's `note`):
        # (actor, line, target CTA) -> (stamp, issuing thread, tcgen05 order).
        self.remote: dict[tuple, tuple] | None = {} if self.hb is not None and self.cluster.size > 1 else None
        self.agent_issue: dict[int, tuple] = {}  # agent -> (its stamp, tcgen05 order) at its latest issue
        self.tc_issues: dict[int, list[tuple[int, int, bool]]] = {}  # thread -> (agent, stamp, is a commit) per tcgen05 issue
        self.stores: dict[int, list] = {}  # thread -> its TMA stores still reading SMEM, oldest first

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
            self.ext.note_issue(self, who, aid, op, stamp)
        return aid

    def _hb_arrive(self, slot: "BarrierSlot", actor: int, line: int) -> None:
        """An arrival, expect or byte completion by `actor` (a thread or agent), as the clocks
        see it: it joins the phase being built, and in a cluster it is a shared-memory effect on
        the barrier's CTA (the extension's `note`)."""
        self.hb.arrive(slot.ref.key, actor)
        if self.remote is not None:
            self.ext.note(self, slot.ref.cta, actor, line, slot)

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
        self.hb.access(who, kind, access_region(value), op, it)
        if self.remote is not None:
            self.ext.note(self, value.cta, who, op.line)

    def note_use(self, ref: "Ref", op: Operation, env: dict[str, Value], who: int) -> None:
        """Thread `who` uses barrier `ref` at `op`. Remember which loaded elements decided the
        use, one group per decision: each loop and `scf.if` it runs in whose trip count or condition
        was loaded (`loaded_context`), a slot index and each operand (a phase, a predicate) computed
        from loaded values. `deadlock._related` asks it: a peer that uses the same barrier must
        load some element of every group, or the two cannot be related."""
        groups = self.barrier_uses.setdefault(ref.key[:2], {}).setdefault(who, set())
        groups.update(self.loaded_context.get(who, ()))
        groups.update(v.keys for v in ref.indices if v.__class__ is Loaded)
        groups.update(v.keys for n in op.operands if (v := env.get(n)).__class__ is Loaded)

    def partition_arrays(self, who: int) -> frozenset[int]:
        """The input arrays thread `who`'s partition reads anywhere in its program (from the IR:
        `loaded.partition_arrays`), with those it already loaded in this run."""
        if self._partition_arrays is None:
            self._partition_arrays = partition_arrays(self.function)
        t = self.threads[who]
        return self._partition_arrays.get(t.partition, frozenset()) | {p for p, _ in self.thread_loads.get(who, ())}

    def partition_barriers(self, who: int) -> frozenset[int]:
        """id() of the barrier allocations thread `who`'s partition uses anywhere in its program
        (from the IR: `ops.control.region_barriers`)."""
        if self._partition_barriers is None:
            self._partition_barriers = region_barriers(self.function, self.ws_op) if self.ws_op is not None else {}
        return self._partition_barriers.get(self.threads[who].partition, frozenset())

    # -- setup --------------------------------------------------------------------------------
    def start(self) -> list[Thread]:
        """Create the main thread: it runs the function body and forks one thread per partition
        region when it reaches `ttg.warp_specialize` (then waits for them to finish)."""
        body = self.function.regions[0].blocks[0] if self.function.regions and self.function.regions[0].blocks else None
        if body is None:
            raise SimulationError("function has no body")
        module = next((a for a in self.function.ancestors() if a.name == "builtin.module"), None)
        why = self.ext.unsupported(self.cluster, self.function)
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

    def cluster_arrive(self, op: Operation, who: int, it) -> int:
        """Arrive on the cluster rendezvous; returns the generation arrived in."""
        slot = self.cluster_slot(op)
        generation = slot.parity
        self.arrive(slot, 1, op.line, who, it=it)
        return generation

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

    def count_exit(self, loop: Operation, who: int, trips: int = 1, it: tuple = ()) -> None:
        """One entry of `loop` finished after `trips` iterations (an entry of none is kept per
        thread with `it`, the iterations of the loops around it: a producer's empty loop against a
        consumer's unconditional wait in the same outer iteration is a trip-count mismatch,
        `analyses/launch/trip_mismatch.py`)."""
        if trips == 0:
            self.empty_loops.setdefault(who, {}).setdefault(id(loop), []).append(tuple(it))
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
            cached = _WRITTEN.get(id(self.function))
            if cached is None or cached[0] is not self.function:
                if len(_WRITTEN) > 64:
                    _WRITTEN.clear()
                cached = _WRITTEN[id(self.function)] = (self.function, frozenset(written_arguments(self.function)))
            self._written = cached[1]  # (a fact of the function: found once, not once per run)
        for i, arg in enumerate(body.arguments):
            value = self._arg_value(arg.type)
            env[arg.name] = overrides.get(i, value) if value is not None else None
            if value is None and i not in self._written:
                env[arg.name] = argument_pointer(arg.type, i, arg.name)
        return env

    def _run_block_fresh(self, body: Block, who: int = 0) -> Iterator[Wait | Step]:
        yield self._exec_block(body, self._entry_env(body), who, ())

    def _arg_value(self, type_: str | None) -> Value:
        if type_ and INT_TYPE.match(type_):
            return self.params.int_args
        return None

    # -- execution ----------------------------------------------------------------------------
    def _exec_block(self, block: Block, env: dict[str, Value], who: int, it: tuple[int, ...],
                    skip_terminator: bool = False) -> Iterator[Any]:
        """Run a block's operations; a handler that blocks or enters a region is yielded as a
        generator, for the trampoline to drive."""
        ops = self.entry_order if block is self.entry_block and self.entry_order else block.operations
        handlers = HANDLERS
        for op in ops:
            name = op.name
            if skip_terminator and name in ("scf.yield", "scf.condition"):
                continue
            self.ops += 1
            if not self.ops & 1023:
                self._check_bounds()
            # `_exec`, inlined for its two common cases (this loop runs every operation of a run).
            handler = handlers.get(name)
            if handler is not None:
                g = handler(self, op, env, who, it)
            elif name.startswith("arith."):
                execute_arith(self, op, env)
                continue
            else:
                g = self._exec(op, env, who, it)
            if g is not None:
                yield g

    def _exec(self, op: Operation, env: dict[str, Value], who: int, it: tuple[int, ...]) -> Iterator[Any] | None:
        """Execute `op`: returns the generator of a handler that yields, or None once done."""
        name = op.name
        handler = HANDLERS.get(name)
        if handler is not None:
            return handler(self, op, env, who, it)
        if name.startswith("arith."):
            execute_arith(self, op, env)
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


_WRITTEN: dict[int, tuple] = {}  # id(function) -> (function, its written pointer arguments)


# Ops that take a barrier operand without changing its state (or whose effect is its lifetime).
_BARRIER_NEUTRAL = frozenset({"scf.yield", "scf.condition", "ttg.warp_yield", "ttg.warp_return", "tt.return",
                              "ttg.local_dealloc", "ttng.fence_async_shared", "ttg.barrier", "ttng.fence",
                              "ttg.memdesc_index", "ttg.local_alloc"})


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
