"""Deadlock verdicts from running the kernel (see `machine` and `schedule`).

A run that stops with every live partition blocked is a witness: a real interleaving in which
the kernel hangs. The verdict names the condition of the mbarrier phase model it shows:

1. `deadlock.no_producer`: nothing ever arrives on the awaited barrier.
2. `deadlock.parity_cadence`: arrivals exist but complete phases at the wrong rate: too few
   (an init count the arrivals never reach, expected bytes that never land exactly) or too many
   (two completions between polls, so the waiter sees its old parity again).
3. `deadlock.cycle`: the arrival the wait needs is ordered, through other partitions' waits,
   after the wait itself.

A hang that appears only when a producer runs a whole phase ahead of a slow waiter, in a
schedule where the friendliest order completes, is the symptom of a missing acquire: reported as
`race.missing_acquire` with the witness, not as a deadlock.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ...ir.model import Operation
from ...facts.barriers import constant_value
from ...render.words import plural
from ..model.findings import Finding, Kind, Severity, finding
from ..symbolic.source import loop_text
from .budget import Budget
from .extension import installed
from .machine import Params, has_barrier_program
from .schedule import POLICIES, Blocked, RunResult, choose_params, covered_summary, default_trips, run


@dataclass
class DeadlockAnalysis:
    """Every run made, the first deadlocking one, and the findings drawn from it."""

    params: Params
    runs: list[RunResult]
    findings: list[Finding] = field(default_factory=list)
    witness: RunResult | None = None
    budget: Budget | None = None
    covered: dict[str, dict] = field(default_factory=dict)  # policy -> what a bounded run covered
    trips: int = 0  # iterations every barrier loop ran (or finished twice) before a run stopped ("covered")

    @property
    def simulated(self) -> bool:
        return bool(self.runs) and self.runs[0].outcome != "not_simulated"

    @property
    def bound_reached(self) -> bool:
        return any(r.outcome == "bound_reached" for r in self.runs)

    def summary(self) -> dict:
        out = {
            "int_args": self.params.int_args,
            "runs": [{"policy": r.policy, "outcome": r.outcome, "steps": r.steps, **({"reason": r.reason} if r.reason else {}),
                      **({"covered": self.covered[r.policy]} if r.policy in self.covered else {})}
                     for r in self.runs],
        }
        out["races"] = self.race_bound()
        if self.bound_reached:
            out["bound_reached"] = True
            if self.budget is not None:
                out[f"budget_{self.budget.unit}"] = round(self.budget.amount, 3)
        return out


    def race_bound(self) -> dict:
        """The bound within which `check` looked for happens-before races: the schedules whose
        races count (`verdicts.run_races`: run, and not ended by a limit), the launch, and where
        each run stopped. `explore` runs the same schedules at the same launch, then more."""
        ran = {r.policy for r in self.runs}
        # A hang (or a stated limit) ends the simulation: the systematic schedules after it are
        # not run, so their races lie beyond this bound too, and the bound names them.
        not_run = [p for p in POLICIES if p not in ran] if self.simulated else []
        last = self.runs[-1] if self.runs else None
        beyond = "`barrier-viz explore` (" + (f"{', '.join(not_run)}: not run once the {last.policy} schedule "
                                             f"{'hung' if last.deadlocked else 'stopped'}; " if not_run and last else "")
        return {"schedules": [r.policy for r in self.runs if r.machine is not None and r.machine.hb is not None
                              and races_stand(r)],
                "int_args": self.params.int_args, "arg_values": dict(self.params.arg_values),
                "trips": self.trips, "not_run": not_run, "beyond": beyond + "starved, random schedules)"}


def analyse_deadlocks(function: Operation, arrivers: dict[int, set[str]], base: Params | None = None,
                      gated=None, budget: Budget | None = None, adjust=None) -> DeadlockAnalysis:
    """Run every scheduling policy; turn the first deadlock into findings.

    `arrivers` maps id(allocation op) to the partitions that arrive on it anywhere in the IR
    (any mechanism): a barrier with none has no producer. `gated(line, partition)` says whether
    the arrival at `line` is preceded, in its iteration, by a wait on a barrier that `partition`
    arrives on (the backward edge that keeps a producer at most one phase ahead). `adjust(params)`
    replaces chosen values with the user's own launch (`check --args/--pid`)."""
    budget = budget or Budget()
    trips = default_trips(function)
    # Choosing the bounds may use part of the budget; the schedules share the rest.
    params = choose_params(function, base or Params(max_steps=60_000), min_trips=trips, deadline=budget.share(0.5),
                           adjust=adjust)
    if adjust is not None:
        params = adjust(params)
    runs: list[RunResult] = []
    analysis = DeadlockAnalysis(params, runs, budget=budget, trips=trips)
    # Every schedule carries happens-before (vector clocks, `hb`): a race seen on any of them is
    # a finding of `check` (`verdicts.run_races`), not only of `explore`. A function that
    # initialises no barrier stays unsimulated (a tracked run would start it: `Machine.start`).
    tracked = replace(params, track_races=True) if has_barrier_program(function) else params
    favorable_ok = None
    for policy in POLICIES:
        if budget.spent():
            runs.append(RunResult("bound_reached", policy, 0, None, reason="the simulation budget ran out before this schedule"))
            continue
        result = run(function, tracked, policy, stop_trips=trips, deadline=budget.deadline)
        runs.append(result)
        if result.outcome == "bound_reached":
            analysis.covered[policy] = covered_summary(result, function, trips)
        if result.outcome == "not_simulated":
            return analysis
        if policy == "favorable":
            favorable_ok = not result.deadlocked
        if result.deadlocked and _unmodelled(result):
            # The hang involves a barrier an unmodelled op touches: a stated limit, no verdict.
            # What it shows whatever the trip counts still is one (trip_independent).
            result.outcome, result.reason = "limit", _unmodelled(result)
            analysis.findings = trip_independent(result, arrivers, gated)
            return analysis
        if result.deadlocked:
            analysis.witness = result
            analysis.findings = _classify(result, arrivers, adversarial_only=bool(favorable_ok), gated=gated)
            return analysis
    _other_side(function, params, runs, trips, budget)
    return analysis


def _other_side(function: Operation, params: Params, runs: list[RunResult], trips: int, budget: Budget) -> None:
    """Runtime conditions that decide which barrier operations run (`scf.if` on a value read from
    memory) took their then-sides above; run the friendliest schedule once more with their
    else-sides. A hang there is not a verdict — the condition may never be false on the GPU,
    or differ between partitions — so it is reported as the run's `limit`, with the lines."""
    first = runs[0] if runs else None
    ifs = sorted(first.machine.unknown_ifs) if first is not None and first.machine is not None else []
    if not ifs or budget.spent():
        return
    from dataclasses import replace

    result = run(function, replace(params, unknown_if_else=True), "favorable", stop_trips=trips, deadline=budget.deadline)
    result.policy = "favorable:else"
    if result.deadlocked:
        result.outcome = "limit"
        result.reason = (f"hangs when the runtime condition(s) of scf.if at line(s) {', '.join(map(str, ifs))} are false "
                         "(their else-sides run): not judged, the condition may never be false")
    runs.append(result)


def _unmodelled(result: RunResult) -> str:
    """Why this stuck state is not a verdict: a barrier it waits on is touched by an op the
    interpreter does not model (its arrivals may be exactly what is missing), or some
    partitions ran a loop whose trip count is a runtime value we assumed while others' loops
    had known bounds (their counts may agree on the GPU and not here)."""
    m = result.machine
    if m is not None and (why := installed().unequal_work(m, result.blocked)):
        return why
    if m is not None and m.assumed:
        parts = [t for t in m.threads if t.partition != "main" or m.ws_op is None]
        guessed = [t for t in parts if m.assumed.get(t.index) and not _related(m, t, parts)]
        if guessed and len(guessed) < len(parts):
            t = guessed[0]
            lines = ", ".join(map(str, sorted(m.assumed[t.index])))
            loaded = sorted(frozenset().union(*(m.loaded_sites.get(ln, frozenset()) for ln in m.assumed[t.index])))
            loops = "; ".join(f"line {op.line}: {loop_text(op)}" for op in m.function.walk()
                              if op.line in m.assumed[t.index] and op.name in ("scf.for", "scf.while"))
            if loaded and all(ln in m.loaded_sites for ln in m.assumed[t.index]):
                elements = ", ".join(f"{m.array_names.get(p, p)}[{i}]" for p, i in loaded[:4]) + (", ..." if len(loaded) > 4 else "")
                return (f"{t.name} ran the loop(s) at line(s) {lines} ({loops}) with a trip count loaded from memory "
                        f"(this run read {elements}) "
                        "that other partitions, whose loops had known bounds, do not load: the two cannot be related, "
                        "no verdict on this hang")
            return (f"{t.name} ran the loop(s) at line(s) {lines} ({loops}) with an assumed trip count (runtime bounds "
                    "only it reads) while other partitions' loops had known bounds: no verdict on this hang")
    for b in result.blocked:
        if b.wait.slot.unmodelled:
            return (f"{b.thread.name} blocks at line {b.line} on {_barrier_name(b)}, which "
                    f"{b.wait.slot.unmodelled} also uses and the interpreter does not model: no verdict on it")
    return ""


def races_stand(result: RunResult) -> bool:
    """Do the races this run observed stand as verdicts? Every access of a run happened on a
    schedule the hardware can take, so a race seen before the run stopped is real whether the run
    then completed, was stopped by a bound, or hung; not when the interpreter could not run the
    kernel faithfully (`not_simulated`), nor when the run's hang is itself no verdict
    (`_unmodelled`): the orders it drew from those barriers and loops are not the kernel's."""
    if result.outcome in ("completed", "covered", "bound_reached"):
        return True
    if result.outcome == "deadlock":
        return not _unmodelled(result)
    return False


def _related(m, t, parts) -> bool:
    """Are `t`'s assumed trip counts ones its peers share? True when every such loop's bounds
    were loaded from memory (analyses.program.loaded: the same values in every partition) and every
    peer whose work they must match loaded some of the elements that decided them: they derive
    their work from the same input, so a hang between them is the kernel's at that input.

    Which peers must match: those that use a barrier `t` used in a way the loaded values decided
    (inside a loop or `scf.if` they decide, or with a slot index, phase or predicate computed from
    them: `Machine.note_use`), and each such peer must read the array of every decision somewhere
    in its program (`Machine.partition_arrays`: from the IR, since a peer blocked one segment
    behind has not loaded that segment's elements yet): its work then comes from the same
    memory the run reads, so the two agree as the simulated memory says. A peer that reads the
    query lengths does not match a loop over key lengths it never reads, even inside a branch
    on the query length both take. A peer that shares only barriers `t` uses the same way whatever
    was loaded (a writer that takes one result per segment from a reducer whose per-segment row
    loop is loaded) runs counts the launch decides on both sides: nothing is assumed between
    them. A peer that loads none of the elements but shares such a barrier cannot be related
    (its count may equal the loaded one on the GPU through a host-side relation, a total passed
    as an argument): that stays the limit. A cluster run keeps the whole-kernel rule (remote
    uses are not all noted)."""
    lines = m.assumed.get(t.index, set())
    if not lines or any(ln not in m.loaded_sites for ln in lines):
        return False
    keys = frozenset().union(*(m.loaded_sites[ln] for ln in lines))
    if m.cluster.size > 1:
        return all(m.thread_loads.get(p.index, set()) & keys for p in parts if p is not t)
    peers = [p for p in parts if p is not t]
    for key, users in m.barrier_uses.items():
        groups = users.get(t.index)
        if not groups:
            continue
        # Peers that use this barrier in the run, or anywhere in their program (one blocked
        # before its use still shares it).
        sharing = [p.index for p in peers if p.index in users or key[0] in m.partition_barriers(p.index)]
        for group in groups:
            arrays = {pos for pos, _ in group}
            if not all(m.partition_arrays(p) & arrays for p in sharing):
                return False
    return True


def classify_run(result: RunResult, arrivers: dict[int, set[str]], gated=None) -> list[Finding]:
    """Findings of a deadlocked run of the favorable schedule (an input point's run). A hang
    that is not a verdict (an unmodelled op, assumed trip counts, a cluster whose CTAs got
    unequal work) turns the run's outcome into `limit` and gives none."""
    why = _unmodelled(result)
    if why:
        result.outcome, result.reason = "limit", why
        return trip_independent(result, arrivers, gated)
    return _classify(result, arrivers, adversarial_only=False, gated=gated)


def trip_independent(result: RunResult, arrivers: dict[int, set[str]], gated=None) -> list[Finding]:
    """Verdicts a hang that stopped at a limit still gives: causes that hold whatever the trip
    counts (the limit is trip counts assumed for runtime bounds, which do not change them; the
    else-side run of a runtime `scf.if` is not asked: that side may never run). A barrier nothing in the IR arrives on; an init count
    the arrivals of one phase cannot reach although every arriving partition has arrived for
    it; one arrival op bringing more arrivals or bytes than the phase expects; a partition
    completing two phases in one iteration through identical arrivals. Overruns and cycles
    depend on how many times each side ran, so they stay the limit's. A hang that involves an
    op the interpreter does not model (its arrivals may be the missing ones) or a cluster whose
    CTAs got unequal work gives nothing."""
    m = result.machine
    if m is None or any(b.wait.slot.unmodelled for b in result.blocked) or installed().unequal_work(m, result.blocked):
        return []
    out = []
    for f in _classify(result, arrivers, adversarial_only=False, gated=gated):
        cause = str(f.evidence.get("cause", ""))
        if f.kind == Kind.DEADLOCK_NO_PRODUCER.value and cause != "arrivers finished" or cause == "duplicated arrival" \
                or "the init count is not reachable" in cause or " exceed the " in cause:
            f.evidence["trip_independent"] = True
            f.message += (" This holds whatever the trip counts: the simulation stopped at a limit "
                          f"({result.reason or 'assumed trip counts'}) and still shows it.")
            out.append(f)
    return out


def _classify(result: RunResult, arrivers: dict[int, set[str]], adversarial_only: bool, gated=None) -> list[Finding]:
    blocked = result.blocked
    if not blocked:
        return []
    witness = _witness(result)
    lines = [b.line for b in blocked]
    parts = [b.thread.name for b in blocked]
    # Condition 1: a blocked wait on a barrier nothing arrives on.
    for b in blocked:
        if b.wait.slot.named is None and not arrivers.get(id(b.wait.slot.ref.alloc)):
            return [finding(
                Kind.DEADLOCK_NO_PRODUCER, Severity.error,
                f"{b.thread.name} waits at line {b.line} on {_barrier_name(b)}, but no operation ever arrives on "
                "that barrier, so the phase it needs is never produced.",
                lines=lines, partitions=parts, barrier=_barrier_name(b), evidence=witness,
                suggestion="Add the missing arrive (or the MMA/commit barrier operand) that releases this barrier.")]
    # Condition 2: phases complete at the wrong rate. A slot that one partition completed twice
    # within one iteration (a duplicated arrival) is the root cause wherever it appears in the
    # stuck set: try it first.
    threads = result.machine.threads if result.machine else []
    ops_by_line = {op.line: op for op in result.machine.function.walk()} if result.machine else {}
    duplicated = [s for s in (result.machine.slots.values() if result.machine else [])
                  if _completed_twice(s, ops_by_line)]
    if duplicated:
        slot = duplicated[0]
        lines_dup = sorted({c[2] for c in slot.completed_by if c})
        name = slot.ref.alloc.results[0] if slot.ref.alloc.results else slot.ref.alloc.name
        return [finding(
            Kind.DEADLOCK_PARITY_CADENCE, Severity.error,
            f"{name} (allocated at line {slot.ref.alloc.line}) completes two phases per use: identical arrivals at "
            f"line(s) {', '.join(map(str, lines_dup))} each complete a phase, so its parity returns to what its "
            f"waiters poll and the partitions block ({'; '.join(f'{b.thread.name} at line {b.line}' for b in blocked)}).",
            lines=sorted(set(lines) | set(lines_dup)), partitions=parts, barrier=name,
            evidence={**witness, "cause": "duplicated arrival"},
            suggestion="Remove the duplicated arrive: one completion per use.")]
    for b in blocked:
        slot = b.wait.slot
        reason = _cadence_problem(b, threads, arrivers.get(id(slot.ref.alloc), set()),
                                  _pre_completions(slot, result.machine.function if result.machine else None))
        if reason is None:
            continue
        if reason.startswith("overrun"):
            # Arrivals that overran the waiter without themselves waiting on anything the waiter
            # does are the mark of a missing wait on their side: that race is the root cause (on
            # hardware such kernels mostly complete, with wrong data), the hang its consequence.
            arrive_lines = sorted(_arrive_lines(slot))
            # One partition completing two phases in one iteration is a cadence bug whatever
            # waits precede it (a duplicated arrive), not a missing wait.
            twice = _completed_twice(slot, ops_by_line)
            ungated = (not twice and gated is not None
                       and not all(gated(ln, b.thread.partition, b.wait.op) for ln in arrive_lines))
            if ungated:
                producers = sorted(_arriving_partitions(slot, threads) - {b.thread.name})
                consumer_side = _first_parity(b) == 0
                if consumer_side:  # the fills overran a reader: the producer does not acquire
                    kind, what = Kind.RACE_MISSING_ACQUIRE, (
                        f"{', '.join(producers) or 'a producer'} can complete two phases of {_barrier_name(b)} before "
                        f"{b.thread.name} polls it at line {b.line}: nothing makes the producer wait for the consumer's "
                        "release, so it overwrites a slot still in use (and can hang the consumer).")
                    hint = "Wait on the slot's empty barrier (released by the consumer) before writing it."
                else:  # the releases overran the producer: a consumer releases what it never waited for
                    kind, what = Kind.RACE_UNSYNCHRONIZED_READ, (
                        f"{', '.join(producers) or 'a consumer'} releases {_barrier_name(b)} faster than {b.thread.name} "
                        f"refills it (line {b.line}): the consumer does not wait for the data before using and releasing "
                        "the slot.")
                    hint = "Wait on the slot's full barrier (with the use's parity) before reading it."
                return [finding(kind, Severity.error, what,
                                lines=sorted(set(lines) | set(arrive_lines)), partitions=producers + [b.thread.name],
                                barrier=_barrier_name(b), evidence={**witness, "cause": reason}, suggestion=hint)]
        return [finding(
            Kind.DEADLOCK_PARITY_CADENCE, Severity.error,
            f"{b.thread.name} blocks at line {b.line} on {_barrier_name(b)}: {reason}.",
            lines=sorted(set(lines) | _arrive_lines(slot) | ({slot.init_line} if slot.init_line else set())), partitions=parts, barrier=_barrier_name(b),
            evidence={**witness, "cause": reason},
            suggestion="Make the arrivals per use match the barrier's init count and expected bytes, one completion per use.")
        ] + _early_pass(b, threads, reason, witness)
    # Condition 3: every needed arrival is held behind a blocked wait.
    # The root: the partition that got stuck earliest in its own program (smallest iteration).
    root = min(blocked, key=lambda b: (b.wait.iteration, b.thread.index))
    blocked = [root] + [b for b in blocked if b is not root]
    lines = [b.line for b in blocked]
    parts = [b.thread.name for b in blocked]
    chain = [b.describe() for b in blocked]
    own = arrivers.get(id(root.wait.slot.ref.alloc), set())
    cluster = result.machine is not None and result.machine.cluster.size > 1
    gone = _finished_arrivers(root, threads, own) if not cluster and root.wait.slot.named is None else []
    if gone:
        # Every partition that arrives on the barrier has already finished: the arrival this
        # phase needs was skipped on the path it took (an empty segment, a branch not taken).
        return [finding(
            Kind.DEADLOCK_NO_PRODUCER, Severity.error,
            f"{root.thread.name} waits at line {root.line} for a phase of {_barrier_name(root)}, but every partition "
            f"that arrives on it ({', '.join(t.name for t in gone)}) has finished without producing that phase: its "
            "arrive was skipped on the path it took.",
            lines=lines, partitions=parts + [t.name for t in gone], barrier=_barrier_name(root),
            evidence={**witness, "cause": "arrivers finished"},
            suggestion="Make the arrive unconditional (or predicate the matching wait on the same condition).")]
    if root.wait.slot.named is None and own == {root.thread.partition} and not cluster:
        # A cycle of one: the only arrivals on the barrier are the waiter's own later operations.
        return [finding(
            Kind.DEADLOCK_CYCLE, Severity.error,
            f"{root.thread.name} waits at line {root.line} (iteration {','.join(map(str, root.wait.iteration)) or '-'}) for "
            f"a phase of {_barrier_name(root)}, but only {root.thread.name} itself arrives on that barrier, later in its "
            "own program: it waits for its own future arrival, on every schedule"
            + (f" (then {'; '.join(f'{b.thread.name} at line {b.line}' for b in blocked[1:])} block behind it)." if blocked[1:] else "."),
            lines=lines, partitions=parts, barrier=_barrier_name(root), evidence={**witness, "chain": chain, "cause": "self-wait"},
            suggestion="Issue the operation that arrives on this barrier before the wait, or wait on the phase it "
                       "completes one use later.")]
    return [finding(
        Kind.DEADLOCK_CYCLE, Severity.error,
        f"Cross-partition cycle: {root.thread.name} waits at line {root.line} for a phase of "
        f"{_barrier_name(root)} whose arrival is ordered after waits that are themselves blocked "
        f"({'; '.join(f'{b.thread.name} at line {b.line}' for b in blocked)})."
        + (" It appears only when one partition runs ahead." if adversarial_only else ""),
        lines=lines, partitions=parts, barrier=_barrier_name(root), evidence={**witness, "chain": chain},
        suggestion="Check the parity each of these waits polls at its first iterations (the producer's acquire "
                   "starts pre-inverted, the consumer's wait does not).")]


def _finished_arrivers(b: Blocked, threads, arrivers: set[str]) -> list:
    """The threads of the partitions that arrive on `b`'s barrier, when every one has finished."""
    mine = [t for t in threads if t.partition in arrivers and t.cta == b.thread.cta]
    return mine if mine and all(t.done for t in mine) and b.thread.partition not in arrivers else []


def _pre_completions(slot, function: Operation | None) -> int:
    """Phases of `slot` completed before any partition starts: arrivals in the function body
    itself, outside loops and partitions (a hand-written kernel pre-arrives its empty barriers so
    that its producers start on parity 0). They are the slot's initial state, not releases that
    ran ahead of anyone."""
    body = function.regions[0].blocks[0].operations if function is not None and function.regions \
        and function.regions[0].blocks else []
    defs = {r: op for op in body for r in op.results}
    alloc = slot.ref.alloc.results[0] if slot.ref.alloc.results else None
    n = 0
    for op in body:
        if op.name != "ttng.arrive_barrier" or not op.operands:
            continue
        view, indices = op.operands[0], ()
        d = defs.get(view)
        if d is not None and d.name == "ttg.memdesc_index" and len(d.operands) == 2:
            view, indices = d.operands[0], (constant_value(defs.get(d.operands[1])),)
        if view == alloc and indices == slot.ref.indices:
            count = next((int(t) for t in op.literals if t.isdigit()), 1)
            n += count
    return n // slot.count if slot.count else 0


def _cadence_problem(b: Blocked, threads, arrivers: set[str], pre: int = 0) -> str | None:
    """Why the awaited slot cannot produce the phase this wait needs, if the reason is the rate
    of completions rather than the order of arrivals; None otherwise. `pre` phases were
    completed before the partitions started (pre-arrivals): they do not count as an overrun."""
    slot = b.wait.slot
    if slot.anomalies:
        return slot.anomalies[0]
    if slot.tx != 0:
        return (f"its phase cannot complete: {slot.tx} transaction byte(s) remain "
                f"{'expected but never delivered' if slot.tx > 0 else 'delivered beyond what was expected'}")
    # One completion per use. A consumer (its first wait polls parity 0) that passed n waits
    # has seen n completions and may be waiting for the next: n + 2 means a phase it never
    # observed. A producer's acquire is pre-inverted (first parity 1): n + 1 already is.
    passed = slot.passes.get(b.thread.index, 0)
    ahead = 1 if _first_parity(b) == 0 else 0
    if slot.completions - pre >= passed + ahead + 1:
        return (f"overrun: the slot completed {plural(slot.completions, 'phase')} while this partition passed "
                f"{plural(passed, 'wait')} on it, so the parity it polls came back before it looked")
    came = {threads[i].partition for i in slot.phase_arrivers if i < len(threads)}
    if 0 < slot.pending < slot.count and arrivers and arrivers <= came:
        return (f"every partition that arrives on it ({', '.join(sorted(arrivers))}) has arrived for this phase, "
                f"yet {slot.pending} of {slot.count} expected arrivals are missing: the init count is not reachable")
    return None


def _completed_twice(slot, ops_by_line: dict | None = None) -> bool:
    """Did one partition complete two consecutive phases of `slot` in the same iteration through
    two identical operations (a duplicated arrival)?"""
    for a, b in zip(slot.completed_by, slot.completed_by[1:]):
        if not a or not b or a[:2] != b[:2]:
            continue
        if a[2] == b[2]:
            return True
        if ops_by_line is not None:
            x, y = ops_by_line.get(a[2]), ops_by_line.get(b[2])
            if x is not None and y is not None and x.name == y.name and x.operands == y.operands:
                return True
    return False


def _early_pass(b: Blocked, threads, reason: str, witness: dict) -> list[Finding]:
    """The race behind an overrun of a data consumer whose first wait polls parity 1: a fresh
    barrier satisfies that at once, so the consumer read its first slot before the TMA data
    landed and stays a phase behind (the hang is one outcome; on the H200 such a kernel also
    completed with wrong values, gpu-h200.gluon-gemm_2c.flip_parity_data_L51)."""
    slot = b.wait.slot
    if not reason.startswith("overrun") or _first_parity(b) != 1 \
            or b.thread.name in _arriving_partitions(slot, threads) \
            or not any(event == "tx" for event, _, _ in slot.history):
        return []
    return [finding(
        Kind.RACE_UNSYNCHRONIZED_READ, Severity.error,
        f"{b.thread.name}'s first wait on {_barrier_name(b)} (line {b.line}) polls parity 1, which a freshly "
        "initialized barrier satisfies at once: the consumer reads the slot before its TMA data lands, and each "
        "later wait passes on the previous phase.",
        lines=sorted({b.line} | _arrive_lines(slot)), partitions=[b.thread.name], barrier=_barrier_name(b),
        evidence={**witness, "cause": "a consumer's wait passed on a fresh barrier"},
        suggestion="A consumer's first wait on a full barrier polls parity 0 (only the producer's acquire starts "
                   "pre-inverted).")]


def _first_parity(b: Blocked) -> int:
    return b.wait.slot.first_parity.get(b.thread.index, b.wait.parity)


def _arriving_partitions(slot, threads) -> set[str]:
    return {threads[who].name for event, _, who in slot.history if event == "arrive" and 0 <= who < len(threads)}


def _arrive_lines(slot) -> set[int]:
    return {line for event, line, _ in slot.history[-8:] if event in ("arrive", "tx")}


def _barrier_name(b: Blocked) -> str:
    ref = b.wait.slot.ref
    if ref.indices[:1] == ("cluster",):
        return "the cluster barrier"
    if b.wait.slot.named is not None:
        return f"named barrier {b.wait.slot.named}" + (f" of cta{ref.cta}" if ref.cta else "")
    name = ref.alloc.results[0] if ref.alloc.results else ref.alloc.name
    return name + "".join(f"[{i if i is not None else '?'}]" for i in ref.indices) + (f" of cta{ref.cta}" if ref.cta else "")


def _early_async(result: RunResult) -> list[dict]:
    """Waits on a barrier the TMA engine completes (transaction bytes) that passed more often
    than its phases completed: they went through on a phase that was not produced, so the data
    they guard was read, released and refilled while the engine could still write it. On the
    H200 such kernels faulted ("unspecified launch failure") as often as they hung
    (evals/cases/gpu-h200.gluon-*: const_phase1, flip_parity_data, phase_no_flip, init_count_less)."""
    m = result.machine
    if m is None:
        return []
    out = []
    for slot in m.slots.values():
        if slot.early and any(event == "tx" for event, _, _ in slot.history):
            ref = slot.ref
            name = (ref.alloc.results[0] if ref.alloc.results else ref.alloc.name) + "".join(
                f"[{i if i is not None else '?'}]" for i in ref.indices)
            out.append({"barrier": name, "partitions": sorted(m.threads[w].name for w in slot.early if w < len(m.threads))})
    return out


def _witness(result: RunResult) -> dict:
    early = _early_async(result)
    return {
        **({"early_pass": early} if early else {}),
        "policy": result.policy,
        "steps": result.steps,
        "blocked": [
            {
                "partition": b.thread.name,
                "line": b.line,
                "iteration": list(b.wait.iteration),
                "parity_awaited": b.wait.parity,
                "slot_parity": b.wait.slot.parity,
                "completions": b.wait.slot.completions,
                "pending_arrivals": b.wait.slot.pending,
                "pending_bytes": b.wait.slot.tx,
                "last_ops": [{"line": ln, "op": name, "iteration": list(it)} for ln, name, it in b.thread.trail[-6:]],
            }
            for b in result.blocked
        ],
    }
