"""Schedulers for the barrier-level interpreter, and what a stuck run looks like.

A deadlock found by any schedule is real (every schedule here is one the hardware can take), so
`find_deadlock` tries a few that stress different orders: each partition running as far as it
can in region order and in reverse order (a fast producer overruns a slow waiter; a fast consumer
polls early), and a fair round-robin. Silence means "no deadlock in these schedules within these
bounds", never a proof.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from ..ir.model import Operation
from .machine import Join, Machine, Params, SimulationError, Step, Thread, Wait


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
    name = ref.alloc.results[0] if ref.alloc.results else ref.alloc.name
    idx = "".join(f"[{i if i is not None else '?'}]" for i in ref.indices)
    return f"{name}{idx} (allocated at line {ref.alloc.line})"


def run(function: Operation, params: Params | None = None, policy: str = "in_order", stop_trips: int | None = None) -> RunResult:
    """Run the kernel under one scheduling policy: "favorable", "in_order", "reverse" or
    "round_robin". With `stop_trips`, stop ("covered") once every loop holding barrier operations
    has run that many iterations: enough for rings to wrap and a second tile to start."""
    machine = Machine(function, params)
    try:
        threads = machine.start()
    except SimulationError as exc:
        return RunResult("not_simulated", policy, 0, machine, reason=str(exc))
    watched = _barrier_loops(function) if stop_trips else []
    if policy == "favorable":
        return _run_favorable(machine, threads, policy, watched, stop_trips or 0)
    budget = machine.params.max_steps
    steps = 0
    try:
        while True:
            progressed = False
            threads = machine.threads
            order = list(threads) if policy != "reverse" else list(reversed(threads))
            for t in order:
                if t.done:
                    continue
                quantum = 1 if policy == "round_robin" else budget
                n = _advance(t, quantum)
                steps += n
                progressed |= n > 0
                if steps > budget:
                    return RunResult("bound_reached", policy, steps, machine)
                if watched and _covered(machine, watched, stop_trips or 0):
                    return RunResult("covered", policy, steps, machine)
                if policy != "round_robin" and n > 0:
                    break  # restart from the first thread in the order: it may be runnable again
            if all(t.done for t in machine.threads):
                return RunResult("completed", policy, steps, machine)
            if not progressed:
                return RunResult("deadlock", policy, steps, machine, _blocked(machine))
    except SimulationError as exc:
        return RunResult("not_simulated", policy, steps, machine, reason=str(exc))


def _blocked(machine: Machine) -> list[Blocked]:
    return [Blocked(t, t.pending) for t in machine.threads if not t.done and isinstance(t.pending, Wait)]


def _runnable(t: Thread) -> bool:
    req = t.pending
    if isinstance(req, Wait):
        return req.slot.parity != req.parity
    if isinstance(req, Join):
        return req.satisfied
    return True


def _barrier_loops(function: Operation) -> list[int]:
    return [id(op) for op in function.walk()
            if op.name in ("scf.for", "scf.while") and any(o.name in _BARRIER_NAMES for o in op.walk())]


def _covered(machine: Machine, watched: list[int], trips: int) -> bool:
    got, exits = machine.loop_trips, machine.loop_exits
    return all(got.get(i, 0) >= trips or exits.get(i, 0) >= 2 for i in watched)


def _run_favorable(machine: Machine, threads: list[Thread], policy: str, watched: list[int], trips: int) -> RunResult:
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
            woken = [t for t in threads if not t.done and t.pending is not None and not isinstance(t.pending, Step) and _runnable(t)]
            chosen = woken[0] if woken else None
            if chosen is None:
                for k in range(n):
                    t = threads[(rr + k) % n]
                    if not t.done and _runnable(t):
                        chosen = t
                        rr = (rr + k + 1) % n
                        break
            if chosen is None:
                return RunResult("deadlock", policy, steps, machine, _blocked(machine))
            steps += _advance(chosen, 1)
            if steps > budget:
                return RunResult("bound_reached", policy, steps, machine)
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
            t.pending.slot.seen[t.index] = t.pending.slot.completions
        try:
            nxt = next(t.gen)
        except StopIteration:
            t.done = True
            t.pending = None
            return taken + 1
        t.pending = nxt
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


def coverage_ok(result: RunResult, function: Operation, min_trips: int) -> bool:
    """Did every loop that holds barrier operations run at least `min_trips` iterations in one
    entry (or complete with fewer because its bounds say so)?"""
    if result.machine is None:
        return True
    trips = result.machine.loop_trips
    for op in function.walk():
        if op.name in ("scf.for", "scf.while") and any(o.name in _BARRIER_NAMES for o in op.walk()):
            if trips.get(id(op), 0) < min_trips and id(op) in trips:
                return False
    return True


_BARRIER_NAMES = frozenset({"ttng.wait_barrier", "ttng.arrive_barrier", "ttng.barrier_expect",
                            "ttng.tc_gen5_commit", "ttng.async_tma_copy_global_to_local"})
INT_ARG_CANDIDATES = (1024, 4096, 16384)


def choose_params(function: Operation, base: Params | None = None, min_trips: int = 3) -> Params:
    """Pick the smallest value for unknown integer arguments that makes every loop holding
    barrier operations run at least `min_trips` times (rings wrap, persistent loops see a
    second tile), judged by a favorable run."""
    base = base or Params()
    chosen = base
    for value in INT_ARG_CANDIDATES:
        params = Params(int_args=value, program_id=base.program_id, num_programs=base.num_programs,
                        unknown_trips=base.unknown_trips, max_steps=base.max_steps)
        result = run(function, params, "favorable", stop_trips=min_trips)
        chosen = params
        if result.outcome != "completed" or coverage_ok(result, function, min_trips):
            break
    return chosen
