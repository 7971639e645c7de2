"""Schedulers for the barrier-level interpreter, and what a stuck run looks like.

A deadlock found by any schedule is real (every schedule here is one the hardware can take), so
`find_deadlock` tries a few that stress different orders: each partition running as far as it
can in region order and in reverse order (a fast producer overruns a slow waiter; a fast consumer
polls early), and a fair round-robin. Silence means "no deadlock in these schedules within these
bounds", never a proof.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Iterable

from ...ir.model import Operation
from ...progress import tick
from .budget import WORK, as_deadline

# Steps a run costs the budget before its first operation (building the machine, starting the
# partitions): a search of many short runs spends its budget too.
RUN_COST = 256
from .machine import BoundReached, Join, Machine, Params, SimulationError, Step, Thread, Wait
from .trials import Trials


@dataclass
class Blocked:
    """A partition stuck on a wait: which wait, at which iteration, and the slot's state."""

    thread: Thread
    wait: Wait

    @property
    def line(self) -> int:
        return self.wait.op.line

    def describe(self) -> str:
        slot = self.wait.slot
        it = ",".join(str(i) for i in self.wait.iteration) or "-"
        return (
            f"{self.thread.name} blocks at line {self.line} (iteration {it}) waiting for parity "
            f"{self.wait.parity} to complete on slot {_slot_label(slot.ref)}; the slot has completed "
            f"{slot.completions} phase(s) (parity now {slot.parity}), {slot.pending} arrival(s) and "
            f"{slot.tx} byte(s) outstanding"
        )


@dataclass
class RunResult:
    """Outcome of one schedule: "deadlock", "completed", "bound_reached" or "not_simulated"."""

    outcome: str
    policy: str
    steps: int
    machine: Machine | None
    blocked: list[Blocked] = field(default_factory=list)
    reason: str = ""

    @property
    def deadlocked(self) -> bool:
        return self.outcome == "deadlock"


def _slot_label(ref) -> str:
    if ref.indices[:1] == ("cluster",):
        return "the cluster barrier (the CTAs' rendezvous)"
    if ref.indices[:1] == ("named",):
        return f"named barrier {ref.indices[1]} (first used at line {ref.alloc.line})"
    name = ref.alloc.results[0] if ref.alloc.results else ref.alloc.name
    idx = "".join(f"[{i if i is not None else '?'}]" for i in ref.indices)
    where = f" of cta{ref.cta}" if ref.cta else ""
    return f"{name}{idx}{where} (allocated at line {ref.alloc.line})"


def run(function: Operation, params: Params | None = None, policy: str = "in_order", stop_trips: int | None = None,
        observer=None, deadline: float | None = None) -> RunResult:
    """Run the kernel under one scheduling policy:

    * "favorable": one step at a time, a partition whose wait was just satisfied goes first;
    * "in_order" / "reverse": the first runnable partition (region order, or reversed) runs until
      it blocks — producers race ahead of consumers, or the other way round;
    * "round_robin": one visible step each in turn;
    * "starve:NAME": partition NAME runs only when no other one can (a slow waiter);
    * "random:SEED": a random runnable partition runs a random number of steps.

    With `stop_trips`, stop ("covered") once every loop holding barrier operations has run that
    many iterations: enough for rings to wrap and a second tile to start. `observer(machine)` is
    called after every step (for state counting)."""
    tick(f"schedule {policy}")  # progress on a terminal (barrier_viz.progress); free otherwise
    machine = Machine(function, params)
    deadline = as_deadline(deadline)
    machine.deadline = deadline
    WORK.ops += RUN_COST
    try:
        threads = machine.start()
    except SimulationError as exc:
        return RunResult("not_simulated", policy, 0, machine, reason=str(exc))
    watched = _barrier_loops(function) if stop_trips else []
    try:
        if policy == "favorable":
            return _run_favorable(machine, threads, policy, watched, stop_trips or 0, observer, deadline)
        return _run_policy(machine, policy, watched, stop_trips, observer, deadline)
    except BoundReached as exc:
        steps = sum(t.steps for t in machine.threads)
        return RunResult("bound_reached", policy, steps, machine, reason=str(exc))
    finally:
        machine.charge()


def _run_policy(machine: Machine, policy: str, watched: list[int], stop_trips: int | None, observer,
                deadline: float | None) -> RunResult:
    budget = machine.params.max_steps
    rng = random.Random(int(policy.split(":", 1)[1])) if policy.startswith("random:") else None
    victim = policy.split(":", 1)[1] if policy.startswith("starve:") else None
    steps = 0
    try:
        while True:
            threads = machine.threads
            if all(t.done for t in threads):
                return RunResult("completed", policy, steps, machine)
            runnable = [t for t in threads if not t.done and _runnable(t)]
            if not runnable:
                if machine.land_late():
                    continue
                return RunResult("deadlock", policy, steps, machine, _blocked(machine))
            if rng is not None:
                t = rng.choice(runnable)
                quantum = rng.randint(1, 24)
            elif policy == "round_robin":
                t = min(runnable, key=lambda x: (x.steps, x.index))
                quantum = 1
            else:
                order = list(reversed(runnable)) if policy == "reverse" else list(runnable)
                if victim is not None:
                    order.sort(key=lambda x: x.name == victim)
                t = order[0]
                quantum = 1 if victim is not None else budget
            n = _advance(t, quantum)
            steps += n
            if observer is not None:
                observer(machine)
            if steps > budget:
                return RunResult("bound_reached", policy, steps, machine, reason=f"the schedule took {budget} steps")
            if _late(deadline, steps):
                return RunResult("bound_reached", policy, steps, machine, reason="the simulation budget ran out")
            if watched and _covered(machine, watched, stop_trips or 0):
                return RunResult("covered", policy, steps, machine)
    except SimulationError as exc:
        return RunResult("not_simulated", policy, steps, machine, reason=str(exc))


def _blocked(machine: Machine) -> list[Blocked]:
    return [Blocked(t, t.pending) for t in machine.threads if not t.done and isinstance(t.pending, Wait)]


def _runnable(t: Thread) -> bool:
    req = t.pending
    cls = req.__class__  # (the requests have no subclasses; asked on every step of every run)
    if cls is Wait:
        return t.polled or req.slot.parity != req.parity
    if cls is Join:
        return req.satisfied
    return True


OUTER_TRIPS = 2  # a persistent loop must start a second tile


def _barrier_loops(function: Operation) -> list[int]:
    """Every loop holding barrier operations (asked by every run and every coverage question:
    found once per function)."""
    cached = _BARRIER_LOOPS.get(id(function))
    if cached is None or cached[0] is not function:
        if len(_BARRIER_LOOPS) > 64:
            _BARRIER_LOOPS.clear()
        cached = _BARRIER_LOOPS[id(function)] = (function, [
            id(op) for op in function.walk()
            if op.name in ("scf.for", "scf.while") and any(o.name in _BARRIER_NAMES for o in op.walk())])
    return cached[1]


_BARRIER_LOOPS: dict[int, tuple] = {}  # id(function) -> (function, its barrier loops)


RING_WRAPS = 2  # every barrier slot waited on in a loop must complete this many phases


def _covered(machine: Machine, watched: list[int], trips: int) -> bool:
    """Coverage of one run: every barrier loop ran `trips` iterations (or finished twice, when
    its bounds say it is shorter), and every slot waited on inside a loop completed RING_WRAPS
    phases, i.e. every ring wrapped twice at its own cadence (per iteration or per tile).
    A barrier allocated inside a loop is a fresh barrier each iteration (re-initialised per
    tile): it has no ring to wrap, so only the loop's trips count for it."""
    got, exits = machine.loop_trips, machine.loop_exits
    if not all(got.get(i, 0) >= trips or exits.get(i, 0) >= 2 for i in watched):
        return False
    return all(_ring_wrapped(ring) for ring in _rings(machine).values())


def _rings(machine: Machine) -> dict[tuple, list]:
    """Long-lived slots waited on in loops, grouped by ring (one allocation instance, every
    index but the slot's own)."""
    rings: dict[tuple, list] = {}
    for s in machine.slots.values():
        if s.loop_waited and _long_lived(s):
            rings.setdefault((id(s.ref.alloc), s.ref.instance, s.ref.indices[:-1]), []).append(s)
    return rings


def _ring_wrapped(ring: list) -> bool:
    """Every slot of the ring completed RING_WRAPS phases: the ring wrapped twice, which is
    what a producer that overruns its consumer (a dropped acquire) needs to show. (Asking only
    for the first slot's second use lost those hangs on the attention kernels.)"""
    return all(s.completions >= RING_WRAPS for s in ring)


def _long_lived(slot) -> bool:
    alloc = slot.ref.alloc
    cached = _LONG_LIVED.get(id(alloc))
    if cached is None or cached[0] is not alloc:
        cached = (alloc, not any(a.name in ("scf.for", "scf.while") for a in alloc.ancestors()))
        _LONG_LIVED[id(alloc)] = cached
    return cached[1]


_LONG_LIVED: dict[int, tuple] = {}


def default_trips(function: Operation) -> int:
    """Iterations every barrier loop must run by default: a second iteration (a persistent loop
    starts a second tile); ring wrapping is judged per slot by `_covered`."""
    return OUTER_TRIPS


def _late(deadline, steps: int) -> bool:
    if deadline is None or steps % 64:
        return False
    return deadline.passed()


def _run_favorable(machine: Machine, threads: list[Thread], policy: str, watched: list[int], trips: int,
                   observer=None, deadline: float | None = None) -> RunResult:
    """One visible step at a time; a partition whose wait has just been satisfied runs before
    anyone else may arrive again, so no waiter misses a phase it was entitled to see. A deadlock
    here happens in the friendliest schedule the hardware can take."""
    budget = machine.params.max_steps
    steps = 0
    rr = 0
    try:
        while True:
            threads = machine.threads
            if all(t.done for t in threads):
                return RunResult("completed", policy, steps, machine)
            n = len(threads)
            chosen = None  # the first partition whose wait was just satisfied, if any
            for t in threads:
                if not t.done and t.pending is not None and t.pending.__class__ is not Step and _runnable(t):
                    chosen = t
                    break
            if chosen is None:
                for k in range(n):
                    t = threads[(rr + k) % n]
                    if not t.done and _runnable(t):
                        chosen = t
                        rr = (rr + k + 1) % n
                        break
            if chosen is None:
                if machine.land_late():
                    continue
                return RunResult("deadlock", policy, steps, machine, _blocked(machine))
            steps += _advance(chosen, 1)
            if observer is not None:
                observer(machine)
            if steps > budget:
                return RunResult("bound_reached", policy, steps, machine, reason=f"the schedule took {budget} steps")
            if _late(deadline, steps):
                return RunResult("bound_reached", policy, steps, machine, reason="the simulation budget ran out")
            if watched and steps % 64 == 0 and _covered(machine, watched, trips):
                return RunResult("covered", policy, steps, machine)
    except SimulationError as exc:
        return RunResult("not_simulated", policy, steps, machine, reason=str(exc))


def _advance(t: Thread, quantum: int) -> int:
    """Resume `t` for up to `quantum` visible steps; returns how many it took."""
    taken = 0
    while taken < quantum:
        if not _runnable(t):
            return taken  # still blocked
        if isinstance(t.pending, Wait):
            t.machine.passed(t.pending.slot, t.index, t.pending.parity)
            if t.machine.land_after_pass:
                key = t.machine.land_after_pass.pop(t.index, None)
                if key is not None:
                    t.machine.land_late(t.index, key)
        try:
            nxt = next(t.gen)
        except StopIteration:
            t.done = True
            t.pending = None
            t.machine.land_async(t.index)
            return taken + 1
        t.pending = nxt
        t.polled = False
        if isinstance(nxt, Wait) and t.machine.late:
            # A CLC response this partition asked for on this barrier lands after this poll; a
            # poll that already passes acquires what the barrier held before it (the answer
            # lands once the wait is passed).
            t.polled = nxt.slot.parity != nxt.parity
            if t.polled:
                t.machine.land_after_pass[t.index] = nxt.slot.ref.key
            else:
                t.machine.land_late(t.index, nxt.slot.ref.key)
        if isinstance(nxt, (Wait, Join)) and t.machine.deferred.get(t.index):
            # The wait polls first; the issuer's tcgen05 completions land after that poll (a
            # wait that found its phase done then passes). Without pending completions the poll
            # stays free to happen late, as it may on the hardware (a waiter that misses a phase).
            t.polled = isinstance(nxt, Wait) and nxt.slot.parity != nxt.parity
            t.machine.land_async(t.index)
        taken += 1
        t.steps += 1
        if isinstance(nxt, (Wait, Step)):
            it = nxt.iteration if isinstance(nxt, Wait) else ()
            t.trail.append((nxt.op.line, nxt.op.name, it))
            if len(t.trail) > 12:
                del t.trail[0]
    return taken


POLICIES = ("favorable", "in_order", "reverse", "round_robin")


def find_deadlock(function: Operation, params: Params | None = None, policies: Iterable[str] = POLICIES) -> tuple[RunResult | None, list[RunResult]]:
    """Run each policy; return the first deadlocking run (or None) and every run made."""
    runs: list[RunResult] = []
    for policy in policies:
        result = run(function, params, policy)
        runs.append(result)
        if result.deadlocked:
            return result, runs
        if result.outcome == "not_simulated":
            break
    return None, runs


def _ran_empty(machine: Machine, function: Operation) -> bool:
    """Did some loop holding barrier operations finish without running an iteration?"""
    return any(machine.loop_exits.get(i, 0) and not machine.loop_trips.get(i, 0) for i in _barrier_loops(function))


def covered_summary(result: RunResult, function: Operation, trips: int) -> dict:
    """What a run covered (for a run stopped by a bound): how many barrier loops reached `trips`
    iterations (or finished twice) and how many slots waited on in loops wrapped twice."""
    m = result.machine
    if m is None:
        return {}
    watched = _barrier_loops(function)
    loops = sum(1 for i in watched if m.loop_trips.get(i, 0) >= trips or m.loop_exits.get(i, 0) >= 2)
    rings = list(_rings(m).values())
    return {"barrier_loops": len(watched), "loops_at_trips": loops, "rings_waited_in_loops": len(rings),
            "rings_wrapped": sum(1 for r in rings if _ring_wrapped(r)), "operations": m.ops}


def coverage_ok(result: RunResult, function: Operation, min_trips: int) -> bool:
    """Did the run reach the coverage `_covered` asks for (rings wrapped, a second tile)?"""
    if result.machine is None:
        return True
    return _covered(result.machine, _barrier_loops(function), min_trips)


_BARRIER_NAMES = frozenset({"ttng.wait_barrier", "ttng.arrive_barrier", "ttng.barrier_expect",
                            "ttng.tc_gen5_commit", "ttng.async_tma_copy_global_to_local"})
INT_ARG_CANDIDATES = (16, 64, 256, 1024, 4096, 16384)


def choose_params(function: Operation, base: Params | None = None, min_trips: int = 3,
                  deadline: float | None = None, adjust=None) -> Params:
    """Pick concrete values for unknown integer arguments: the smallest common value that makes
    every loop holding barrier operations run `min_trips` times (rings wrap, a persistent loop
    starts a second tile), judged by a favorable run; then, argument by argument, the smallest
    value that keeps that coverage (a K far larger than needed only makes every run longer).
    `adjust(params)` moves every trial to a launch the kernel admits (divisibility, block
    multiples: `input_points.admissible`), so the values judged are the values simulated."""
    from dataclasses import replace as _replace

    def replace(p, **kw):
        q = _replace(p, **kw)
        return adjust(q) if adjust is not None else q

    if deadline is None:  # choosing bounds must not cost more than exploring: half a budget
        from .budget import Budget

        deadline = Budget().share(0.5)
    deadline = as_deadline(deadline)
    trials = Trials(function, min_trips, deadline, run)  # a trial differing only in unread arguments is not run twice
    base = base or Params()
    chosen = base
    degenerate: Params | None = None  # the first launch that hung with a barrier loop run empty
    for value in INT_ARG_CANDIDATES:
        if deadline.passed():
            return degenerate or chosen
        params = replace(base, int_args=value, arg_values=())
        result = trials.run(params)
        chosen = params
        if result.deadlocked and result.machine is not None and result.machine.ext.unequal_work(result.machine,
                                                                                        _blocked(result.machine)):
            continue  # a launch where one CTA of a cluster runs out of work first tests nothing: larger
        if result.deadlocked and result.machine is not None and _ran_empty(result.machine, function):
            # A hang at a launch where a barrier loop runs no iteration (a sequence shorter than
            # one block) is that input's: the input points name it. The main launch is one where
            # the loops have work; if none does, this hang is the verdict after all.
            degenerate = degenerate or params
            continue
        if result.outcome != "completed" or coverage_ok(result, function, min_trips):
            if result.outcome not in ("completed", "covered"):
                return chosen  # deadlock, bound or not simulated: nothing to refine
            break
    else:
        return degenerate or chosen
    body = function.regions[0].blocks[0] if function.regions and function.regions[0].blocks else None
    int_positions = [i for i, a in enumerate(body.arguments if body else []) if a.type and a.type.startswith("i")
                     and a.type[1:].isdigit()]
    overrides: dict[int, int] = {}

    def keeps_coverage(pos: int, value: int) -> bool:
        return keeps_group([pos], value)

    def keeps_group(group: list[int], value: int) -> bool:
        if deadline.passed():
            return False
        trial = replace(chosen, arg_values=tuple(sorted({**overrides, **{pos: value for pos in group}}.items())))
        result = trials.run(trial)
        return result.outcome in ("completed", "covered") and coverage_ok(result, function, min_trips)

    # First the cheapest question for every argument (can it be the smallest value?), so that
    # the later, longer trials already run with every argument that does not matter made small.
    # Most arguments (strides, shapes of descriptors) do not matter: ask for whole groups at
    # once and split a group only when it loses coverage (a few trials, not one per argument).
    groups = [int_positions] if int_positions else []
    while groups:
        group = groups.pop(0)
        if keeps_group(group, INT_ARG_CANDIDATES[0]):
            overrides.update({pos: INT_ARG_CANDIDATES[0] for pos in group})
        elif len(group) > 1:
            groups[:0] = [group[:len(group) // 2], group[len(group) // 2:]]
    for pos in int_positions:
        if pos in overrides:
            continue
        for value in INT_ARG_CANDIDATES[1:]:
            if value >= chosen.int_args:
                break
            if keeps_coverage(pos, value):
                overrides[pos] = value
                break
    return replace(chosen, arg_values=tuple(sorted(overrides.items())))
