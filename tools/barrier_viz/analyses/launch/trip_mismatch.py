"""A hang whose cause is a trip-count mismatch between partitions, named as such.

Why: a kernel engineer reading "cross-partition cycle, check the parities" after a split-K GEMM
hangs on its empty last split is sent the wrong way. The hang is one partition's loop running
no iteration (the producer's K loop over an empty split, a persistent CTA without a tile) while
another partition waits, outside any loop of that count, for the arrival that loop would have
made: a peeled first iteration or an unconditional wait. The fix is about loop bounds (guard
the peeled step with the loop's own condition, or skip the empty tile in every partition), not
about phases.

`mismatch(result, analysis)` reads this from a deadlocked run: a blocked wait on a barrier
whose only arrivals from other partitions sit in a loop that the arriving partition (same CTA,
finished or itself blocked) entered and ran no iteration of (`Machine.empty_loops`), in the outer
iteration the wait is in or a later one (`_not_earlier`). `refine`
turns the run's cycle, or its "every arriver finished" no-producer finding, into
`deadlock.trip_count_mismatch` with the same lines, witness and outcome; other causes (a
cadence anomaly, a barrier nothing arrives on) are left as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...analysis import ARRIVE_ROLES
from ...ir.model import Operation
from ..model.findings import Finding, Kind, Severity, finding
from ..sim.deadlock import _barrier_name as barrier_name
from ..sim.schedule import Blocked, RunResult
from .trip_counts import render_trips

_LOOPS = ("scf.for", "scf.while")
# The findings a mismatch explains better: the generic cycle, and the "arrivers finished"
# no-producer (its arrive was skipped because the loop holding it ran empty).
_REFINED = {Kind.DEADLOCK_CYCLE.value: {None}, Kind.DEADLOCK_NO_PRODUCER.value: {"arrivers finished"}}


@dataclass
class Mismatch:
    """The starved wait, the loop that ran empty, and the partition that ran it."""

    waiter: Blocked
    loop: Operation
    producer: str  # thread name of the partition whose loop ran empty
    arrive_line: int  # an arrival on the awaited barrier inside that loop
    trips: str  # the loop's trip count as written ("" for a while loop)

    def as_dict(self) -> dict:
        return {"loop_line": self.loop.line, "loop_partition": self.producer, "arrive_line": self.arrive_line,
                "trip_count": self.trips, "wait_line": self.waiter.line, "wait_partition": self.waiter.thread.name}


def mismatch(result: RunResult | None, analysis) -> Mismatch | None:
    """The trip-count mismatch a deadlocked run shows, if any (first blocked wait that has one)."""
    m = result.machine if result is not None else None
    if m is None or not result.blocked or not m.empty_loops:
        return None
    for b in sorted(result.blocked, key=lambda b: (b.wait.iteration, b.thread.index)):
        slot = b.wait.slot
        if slot.named is not None or slot.ref.indices[:1] == ("cluster",):
            continue
        arrivals = _arrivals(analysis, slot.ref.alloc, b.thread.partition)
        if not arrivals:
            continue
        hit = None
        for op, parts in arrivals:
            loops = [a for a in op.ancestors() if a.name in _LOOPS]
            for t in m.threads:
                if t.partition not in parts or t.cta != b.thread.cta or t is b.thread:
                    continue
                if not (t.done or any(x.thread is t for x in result.blocked)):
                    continue
                entries = m.empty_loops.get(t.index, {})
                empty = next((lp for lp in loops
                              if any(_not_earlier(e, b.wait.iteration) for e in entries.get(id(lp), ()))), None)
                if empty is not None:
                    hit = hit or Mismatch(b, empty, t.name, op.line, _trips(analysis, empty))
        # Every arrival on the awaited barrier must be one the empty loop held back: a wait
        # that other arrivals could have served is not starved by the loop.
        if hit is not None and all(any(a is hit.loop for a in op.ancestors()) for op, _ in arrivals):
            return hit
    return None


def _not_earlier(entry: tuple, waiting: tuple) -> bool:
    """Could the empty entry (the producer's iterations of its enclosing loops) be the one the
    waiter waits for (its iterations, outermost first)? Not when it was in an earlier outer
    iteration: a jagged reduction whose producer ran an empty segment, then blocked on that
    segment's hand-off, starves the consumer's next segment by the hand-off, not by the empty
    loop (both partitions walk the same outer loop, compared on the depth they share)."""
    n = min(len(entry), len(waiting))
    return tuple(entry[:n]) >= tuple(waiting[:n])


def _arrivals(analysis, alloc: Operation, waiter_partition: str) -> list[tuple[Operation, set[str]]]:
    """The operations that arrive on `alloc`'s barriers from partitions other than the waiter's."""
    out = []
    for bar in analysis.barriers.barriers:
        if bar.alloc is not alloc:
            continue
        for u in bar.uses:
            if u.role not in ARRIVE_ROLES:
                continue
            parts = set(u.partitions or ((u.partition,) if u.partition else ("main",)))
            if parts - {waiter_partition}:
                out.append((u.op, parts - {waiter_partition}))
    return out


def _trips(analysis, loop: Operation) -> str:
    from .input_points import model_of

    model = model_of(analysis)
    site = next((s for s in (model.sites if model else []) if s.op is loop), None)
    return render_trips(site) if site is not None and site.kind == "for" else ""


def refine(findings: list[Finding], result: RunResult | None, analysis) -> list[Finding]:
    """`findings` of a deadlocked run with a cycle or skipped-arrival finding replaced by the
    trip-count mismatch the run shows (same lines, witness; the starved wait first)."""
    hit = mismatch(result, analysis)
    if hit is None:
        return findings
    out = []
    for f in findings:
        allowed = _REFINED.get(f.kind)
        if allowed is None or f.evidence.get("cause") not in allowed:
            out.append(f)
            continue
        out.append(_finding(hit, f))
    return out


def _finding(hit: Mismatch, old: Finding) -> Finding:
    b = hit.waiter
    others = [x for x in old.evidence.get("blocked", []) if x.get("partition") != b.thread.name]
    stuck = "; ".join(f"{x.get('partition')} at line {x.get('line')}" for x in others)
    behind = f" Then {stuck} {'blocks' if len(others) == 1 else 'block'} behind it." if others else ""
    evidence = {k: v for k, v in old.evidence.items() if k not in ("cause", "chain")}
    evidence.update(cause="trip count mismatch", mismatch=hit.as_dict())
    barrier = barrier_name(b)
    return finding(
        Kind.DEADLOCK_TRIP_COUNT_MISMATCH, Severity.error,
        f"Trip-count mismatch: {b.thread.name} waits at line {b.line} on {barrier}, but the loop at line "
        f"{hit.loop.line} ({hit.producer}) that holds every arrival on it (line {hit.arrive_line}) ran no "
        "iteration while the wait still ran (a peeled or unconditional wait, or one in a loop of another "
        f"count): the phase is never produced.{behind}",
        lines=sorted(set(old.lines) | {b.line, hit.loop.line}),
        partitions=[b.thread.name, hit.producer] + [p for p in old.partitions if p not in (b.thread.name, hit.producer)],
        barrier=barrier, evidence=evidence,
        suggestion=(f"Make the partitions agree on the loop bounds: run the wait at line {b.line} (and the work it "
                    f"guards) only when the loop at line {hit.loop.line} runs"
                    + (f" ({hit.trips} > 0)" if hit.trips else "")
                    + ", e.g. skip an empty tile or split in every partition, or launch only programs with at "
                      "least one iteration; the parities are not the cause."))
