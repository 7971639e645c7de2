"""Bounded exploration of interleavings: deadlock witnesses and happens-before races.

Static rules find most hangs; two classes escape them: deadlocks that appear only once rings
wrap or one partition runs ahead, and races no arrive/wait count can see (column-packed TMEM).
`explore` runs the kernel's barrier-level program (`machine`) under many schedules — the four
systematic ones of `schedule`, one that starves each partition in turn (a slow waiter is how a
duplicated arrive or a missing acquire hangs), then seeded random ones until the budget or the
timeout — with vector clocks on (`hb`).

Only barrier operations are visible steps (everything between two of them is local to a
partition, so interleaving it changes nothing: the partial-order reduction that makes this
affordable). Distinct global states (every partition's position and every barrier slot's
parity, pending count and bytes) are counted by hash. The verdict says which bound was hit;
silence means "nothing found within these bounds", never a proof.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from ...ir.model import Operation
from .budget import Backstop, Budget, default_steps
from .extension import installed
from .machine import Params
from .schedule import POLICIES, RunResult, choose_params, covered_summary, default_trips, run


@dataclass
class RaceReport:
    """Two unordered conflicting accesses from different partitions (or async agents)."""

    first_line: int
    first_op: str
    first_kind: str
    first_partition: str
    second_line: int
    second_op: str
    second_kind: str
    second_partition: str
    storage: str
    columns: tuple[int, int]
    policy: str
    tmem: bool = False  # in tensor memory
    aliased: bool = False  # inside one CTA, two TMEM views of different extent, reinterpreted or packed: placed approximately


@dataclass
class ExploreResult:
    result: str  # "deadlock" | "race" | "clean_within_bounds" | "bound_reached" | "not_simulated" | "not_judged"
    params: Params
    stop_trips: int
    runs: list[RunResult] = field(default_factory=list)
    deadlock: RunResult | None = None
    races: list[RaceReport] = field(default_factory=list)
    # races that are no verdict, with why: first seen on a schedule that only the CTA groups' pace
    # forbids (the extension's pace_excuse), or placed only approximately (its approximate_races)
    paced: dict[tuple[int, int], str] = field(default_factory=dict)
    states: int = 0
    seconds: float = 0.0
    setup_seconds: float = 0.0
    reason: str = ""
    budget: Budget | None = None
    spent_steps: int = 0  # of `budget`, when the exploration ended
    timed_out: bool = False  # the wall-clock backstop stopped something: the bounds below are not all explored

    def bounds(self) -> dict:
        out = {"int_args": self.params.int_args, "arg_values": dict(self.params.arg_values), "trips": self.stop_trips,
               "max_steps_per_run": self.params.max_steps, "schedules": len(self.runs),
               "bounds_seconds": round(self.setup_seconds, 3)}
        if self.budget is not None:
            out.update(steps=int(self.budget.amount), spent_steps=self.spent_steps, timed_out=self.timed_out)
        return out


EXPLORE_STEPS_FACTOR = 4  # explore's step budget: this many times `check`'s (`budget.default_steps`)


def default_explore_steps() -> int:
    """`explore`'s step budget when `--steps` is not given: four times `check`'s whole
    simulation budget (`BARRIER_VIZ_SIM_STEPS` scales both), since it runs up to 4 + P + 8
    schedules where `check` runs four."""
    return int(default_steps() * EXPLORE_STEPS_FACTOR)


def explore(function: Operation, *, trips: int | None = None, max_states: int = 200_000, timeout: float = 10.0,
            steps: int | None = None, random_runs: int = 8, adjust=None) -> ExploreResult:
    """`adjust(params)` moves the chosen launch to one the kernel admits (`check`'s own:
    `input_points.admissible`). A hang whose stuck barrier an unmodelled op touches, or that
    rests on a trip count assumed in some partitions only, is what `check` states as a limit:
    here too it is no verdict (`not_judged`, with the reason) unless another schedule hangs
    without it."""
    from .deadlock import _unmodelled, races_stand
    from .ops.clc import CLC_TRY_OPS

    chosen_at = time.perf_counter()
    budget = Budget(amount=steps or default_explore_steps())  # the bound: the same on every machine and load
    backstop = Backstop(timeout)  # --timeout: what the user waits, reported apart when it cuts
    stop = trips or default_trips(function)
    base = Params(max_steps=60_000, unknown_trips=max(3, stop))
    # One budget for the whole command: choosing the bounds may use part of it (reported
    # apart as bounds_seconds), the schedules share the rest.
    params = choose_params(function, base, min_trips=stop, deadline=backstop.over(budget.share(0.4)), adjust=adjust)
    params = replace(adjust(params) if adjust is not None else params, track_races=True)
    limits: list[str] = []
    started = time.perf_counter()
    out = ExploreResult("clean_within_bounds", params, stop, budget=budget)
    seen: set[int] = set()

    def observer(machine) -> None:
        if len(seen) >= max_states:
            return
        seen.add(_state_hash(machine))

    clc = any(op.name in CLC_TRY_OPS for op in function.walk())
    partitions: list[str] = []
    queue = list(POLICIES)  # the systematic schedules must all run for a "clean" verdict
    k = 0
    while True:
        mandatory = bool(queue)
        if queue:
            policy = queue.pop(0)
        elif k < random_runs:
            policy = f"random:{k}"
            k += 1
        else:
            break
        spent = budget.spent()
        if spent or backstop.passed() or len(seen) >= max_states:
            if mandatory and not backstop.fired:
                out.reason = f"the step budget ({int(budget.amount)} steps) ran out" if spent else "max states"
            break
        result = run(function, replace(params, late_clc=_late_clc(policy, clc)), policy, stop_trips=stop,
                     observer=observer, deadline=backstop.over(budget.deadline))
        out.runs.append(result)
        if result.outcome == "not_simulated":
            out.result, out.reason = "not_simulated", result.reason
            break
        if not partitions and result.machine is not None:
            partitions = [t.name for t in result.machine.threads if t.partition != "main"]
            queue.extend(f"starve:{name}" for name in partitions)
        pace = installed().pace_excuse(result)
        if result.machine is not None and result.machine.hb is not None and races_stand(result):
            before = len(out.races)
            _collect_races(out, result)
            if pace:
                out.paced.update({(r.first_line, r.second_line): pace for r in out.races[before:]})
            approx = installed().approximate_races(result)
            out.paced.update({(r.first_line, r.second_line): approx[(r.first_line, r.second_line)]
                              for r in out.races[before:] if (r.first_line, r.second_line) in approx})
        if result.deadlocked and out.deadlock is None:
            why = _unmodelled(result) or pace
            if why:
                limits.append(f"{policy}: {why}")
            else:
                out.deadlock = result
        if result.outcome == "bound_reached" and mandatory and not out.reason:
            got = covered_summary(result, function, stop)
            out.reason = (f"the {policy} schedule stopped before covering every loop ({result.reason or 'step bound'}; "
                          f"{got.get('loops_at_trips', 0)} of {got.get('barrier_loops', 0)} barrier loops at {stop} trips, "
                          f"{got.get('rings_wrapped', 0)} of {got.get('rings_waited_in_loops', 0)} rings wrapped)")
    if out.deadlock is not None:
        out.result = "deadlock"
    elif len(out.paced) < len(out.races):
        out.result = "race"
    elif limits and out.result == "clean_within_bounds":
        out.result, out.reason = "not_judged", limits[0]
    elif out.reason and out.result == "clean_within_bounds":
        out.result = "bound_reached"  # a systematic schedule could not finish: say so, never pass silently
    out.spent_steps = int(budget.used())
    if backstop.fired:
        _timed_out(out, timeout)
    out.states = len(seen)
    out.seconds = time.perf_counter() - chosen_at
    out.setup_seconds = started - chosen_at
    return out


def _timed_out(out: ExploreResult, timeout: float) -> None:
    """The wall clock, not the step budget, stopped the exploration: what was not run is not
    judged. A deadlock or race already witnessed stands (it happened on a schedule that ran);
    anything else is "not judged within time", never "clean" or "bound reached"."""
    out.timed_out = True
    note = (f"not judged within time: the --timeout {timeout:g} s wall-clock backstop stopped the exploration "
            f"after {len(out.runs)} schedule(s), {out.spent_steps} of {int(out.budget.amount)} steps; "
            "a larger --timeout explores the rest")
    if out.result in ("deadlock", "race"):
        out.reason = note + "; more schedules may find more"
    elif out.result in ("clean_within_bounds", "bound_reached"):
        out.result, out.reason = "not_judged", note


def races_of(runs: list[RunResult]) -> list[RaceReport]:
    """The distinct races observed in `runs` (by the pair of lines involved)."""
    holder = ExploreResult("", None, 0)  # type: ignore[arg-type]
    for r in runs:
        if r.machine is not None and r.machine.hb is not None:
            _collect_races(holder, r)
    return holder.races


def _collect_races(out: ExploreResult, result: RunResult) -> None:
    machine = result.machine
    names = {t.index: t.name for t in machine.threads}
    known = {(r.first_line, r.second_line) for r in out.races}
    for race in machine.hb.races:
        a, b = race.first, race.second
        key = (a.op.line, b.op.line)
        if key in known or (b.op.line, a.op.line) in known:
            continue
        known.add(key)
        tmem = _in_tmem(a.region.storage, machine)
        # A race across CTAs (`ext.crosses`) is the cluster check's, judged exactly there.
        out.races.append(RaceReport(
            first_line=a.op.line, first_op=a.op.name, first_kind=a.kind, first_partition=_who(a.thread, names, machine),
            second_line=b.op.line, second_op=b.op.name, second_kind=b.kind, second_partition=_who(b.thread, names, machine),
            storage=_storage_name(a.region.storage, machine), columns=(max(a.region.lo, b.region.lo), min(a.region.hi, b.region.hi)),
            policy=result.policy, tmem=tmem,
            aliased=tmem and not machine.ext.crosses(machine, race) and ((a.region.lo, a.region.hi) != (b.region.lo, b.region.hi)
                                                             or _aliased_tmem(a.region.storage, machine))))


def _in_tmem(storage: tuple, machine) -> bool:
    if storage[:1] == ("tmem",):
        return True
    return len(storage) > 1 and storage[0] == "alloc" and any(
        op.name == "ttng.tmem_alloc" and op.results and f"{op.results[0]}@{op.line}" == storage[1]
        for op in machine.function.walk())


def _aliased_tmem(storage: tuple, machine) -> bool:
    """Is this tensor memory seen through several views: allocations packed under one
    `buffer.id`, or an allocation reinterpreted to another shape or element type
    (`memdesc_reinterpret`: TLX `storage_alias_spec`, Gluon `_reinterpret`)?"""
    ops = list(machine.function.walk())
    if storage[:1] == ("tmem",):
        return sum(1 for op in ops if op.name == "ttng.tmem_alloc" and op.attr("buffer.id") == storage[1]) > 1
    if len(storage) < 2 or storage[0] != "alloc" or not _in_tmem(storage, machine):
        return False
    name = storage[1].rsplit("@", 1)[0]
    return any(op.name == "ttg.memdesc_reinterpret" and op.operands[:1] == [name] for op in ops)


TMEM_APPROXIMATE = ("the run places tensor memory seen through several views (reinterpreted to another shape or "
                    "element type, or packed under one buffer.id) by column only, approximately, and the coverage "
                    "table (exact column extents) finds no unordered overwrite there")


def tmem_not_judged(found: list, static: list) -> list:
    """A run's race on tensor memory several views share is a verdict only where the coverage rule, which places
    every view by its exact column extent, also finds an unordered overwrite on one of its lines
    (`race.packed_tmem_overwrite` error); otherwise a warning that says why (`check` and
    `explore` alike). The run's placement of a reinterpreted view (TLX `storage_alias_spec`, an
    f16 P over an f32 QK) or of packed scalar columns is approximate."""
    from ..model.findings import Kind, Severity

    confirmed = [s for s in static if s.kind == Kind.RACE_PACKED_TMEM_OVERWRITE.value and s.severity is Severity.error]
    return not_judged(found, {tuple(f.lines[:2]): TMEM_APPROXIMATE for f in found
                              if f.evidence.get("aliased")
                              and not any(set(f.lines) & set(s.lines) for s in confirmed)})


def _who(thread: int, names: dict[int, str], machine) -> str:
    if thread >= 0:
        return names.get(thread, str(thread))
    owner = machine.agent_owner.get(thread)
    return f"{names.get(owner, '?')} (async)" if owner is not None else "async"


def _storage_name(storage: tuple, machine) -> str:
    if storage and storage[0] == "tmem":
        return f"TMEM buffer.id {storage[1]}"
    return f"{storage[1]}" if len(storage) > 1 else str(storage)


def _late_clc(policy: str, clc: bool) -> bool:
    """Every other random schedule of a CLC kernel lands each try-cancel response late (after the
    asker's next poll: `Params.late_clc`), the timing under which a consumer wait that passes on
    the fresh barrier reads the response before it is written; the others land it at issue."""
    return clc and policy.startswith("random:") and int(policy.split(":")[1]) % 2 == 1


def _state_hash(machine) -> int:
    threads = tuple((t.index, id(getattr(t.pending, "op", None)), getattr(t.pending, "iteration", None), t.done)
                    for t in machine.threads)
    slots = tuple((s.parity, s.pending, s.tx) for s in machine.slots.values())
    return hash((threads, slots))


def not_judged(found: list, why: dict[tuple[int, int], str]) -> list:
    """Race findings whose pair of lines `why` names (a schedule only the CTA groups' pace
    forbids, TMEM placed only approximately): warnings that say so, never verdicts; `check`
    (`verdicts.run_races`) and `explore` alike."""
    from ..model.findings import Severity

    for f in found:
        reason = why.get(tuple(f.lines[:2])) or why.get(tuple(reversed(f.lines[:2])))
        if reason and f.severity == Severity.error:
            f.severity = Severity.warning
            f.message = f"Possible, not judged: {f.message} Seen only where {reason}"
            f.evidence["not_judged"] = reason
            f.settle_outcome()
    return found


def _engine(op: str) -> str:
    if op.startswith(("ttng.tc_gen5_mma", "ttng.warp_group_dot")):
        return "MMA"
    return "TMA" if "tma" in op else "asynchronous"


def _async_write_unordered(r: RaceReport) -> str:
    """How an engineer reads a partition's read racing an asynchronous write (an MMA into its
    accumulator, a TMA load into its tile), whichever the run logged first: the read waits on
    nothing that write's completion arrives on. Logged read-first, the same pair is also the
    write not issued after the read's release (a refill overrunning its reader): both are said.
    Empty when the pair is not of that shape."""
    pair = [(r.first_line, r.first_op, r.first_kind, r.first_partition),
            (r.second_line, r.second_op, r.second_kind, r.second_partition)]
    write = next((a for a in pair if a[2] == "write" and a[3].endswith("(async)")), None)
    read = next((a for a in pair if a[2] == "read" and not a[3].endswith("(async)")), None)
    if write is None or read is None:
        return ""
    engine = _engine(write[1])
    unordered = (f"the read at line {read[0]} is not ordered after the completion of the {engine} write at line "
                 f"{write[0]} ({read[3]} waits on no barrier that write's completion arrives on)")
    if pair[0] is write:
        return f"{unordered}, so it may read the data before or while the {engine} writes it"
    return (f"{unordered}, nor is that write issued after the read is released: the {engine} may write the data "
            "before, while or after it is read")


def race_findings(races: list[RaceReport]):
    """Turn happens-before races into findings of the architecture's race kinds: the one place
    both `check` (`verdicts.run_races`, on its own schedules) and `explore` make them. A race
    first seen on a schedule `check` does not run (a starved partition, a random one) says so."""
    from ..model.findings import Kind, Severity, finding
    from ..program.operands import TMA_STORE_OPS

    out = []
    for r in races:
        if r.first_line == r.second_line and any(o is not r and o.storage == r.storage for o in races):
            continue  # two runs of one copy unordered: a consequence of the other race on this storage
        partitions = [r.first_partition.split(" ")[0], r.second_partition.split(" ")[0]]
        ops = (r.first_op, r.second_op)
        tmem_pack = (r.storage.startswith("TMEM") and any(o.startswith("ttng.tc_gen5_mma") for o in ops)
                     and any(o in ("ttng.tmem_load", "ttng.tmem_store") for o in ops))
        store = next((k for k, o in zip((r.first_kind, r.second_kind), ops) if o in TMA_STORE_OPS and k == "read"), None)
        if tmem_pack:
            kind = Kind.RACE_PACKED_TMEM_OVERWRITE
            what = "an MMA overwrite and a TMEM access in another partition touch the same columns"
        elif store is not None and "write" in (r.first_kind, r.second_kind):
            kind = Kind.RACE_TMA_STORE_REUSE
            what = ("the TMA store may still be reading its SMEM source when it is rewritten: no store wait "
                    "(async_tma_store_wait / store token wait) retires the store before the write")
        elif r.first_kind == "write" and r.second_kind == "read":
            kind = Kind.RACE_UNSYNCHRONIZED_READ
            what = _async_write_unordered(r) or "a read is not ordered after the write it should see"
        else:
            kind = Kind.RACE_MISSING_ACQUIRE
            what = _async_write_unordered(r) or "a write is not ordered after the earlier access to the same slot"
        beyond = "" if r.policy in POLICIES else (f" Seen on the {r.policy} schedule, beyond the schedules `check` "
                                                    "runs.")
        out.append(finding(
            kind, Severity.error,
            f"{r.first_op} at line {r.first_line} ({r.first_partition}, {r.first_kind}) and {r.second_op} at line "
            f"{r.second_line} ({r.second_partition}, {r.second_kind}) access {r.storage} columns {r.columns[0]}-{r.columns[1] - 1} "
            f"with no happens-before order between them: {what}.{beyond}",
            lines=[r.first_line, r.second_line], partitions=partitions,
            evidence={"schedule": r.policy, "storage": r.storage, "columns": list(r.columns),
                      "memory": "tmem" if r.tmem else "smem", "aliased": r.aliased,
                      "first": {"line": r.first_line, "op": r.first_op, "access": r.first_kind, "partition": r.first_partition},
                      "second": {"line": r.second_line, "op": r.second_op, "access": r.second_kind, "partition": r.second_partition}},
            suggestion="Add the barrier (wait on the consumer's release, or on the producer's completion) that orders these accesses."))
    return out
