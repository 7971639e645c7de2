"""`phase.unpaced_release`: a consumer releases a ring slot it never waited to be filled.

What it does
    For each mbarrier that one partition R arrives on (a plain `arrive_barrier`) inside a loop,
    after reading a buffer that another partition W writes (a TMA copy or a store into it), and
    that W waits on before writing: it asks whether R's progress depends on W at all. R is
    paced by W when, in the iteration of the loop around its release, R waits on a barrier whose
    arrivals come from W, directly or through other partitions (W arrives on what Z waits on, Z on what
    R waits on). When nothing R waits on there leads back to W, the release is reported.
    It needs no trip count and no simulation: it holds whatever the segment lengths are, so it
    runs when the simulation stopped at a limit (a loop bound loaded from memory).

Why is this bad
    R's releases then run at R's own speed: R reads slot i before W filled it (the data is
    not there yet) and completes a phase of the empty barrier for a use W has not acquired.
    W's acquire polls a parity that has already come back: it blocks until R releases the
    slot once more, and for good once R has finished (a hang); or W polls in between and its
    copy lands in a slot R is reading. On the H200 this shape hung (a jagged hand-off whose
    writer dropped its wait; a MoE grouped GEMM whose consumer dropped its data wait) or
    faulted (a TMA engine writing into a slot released early), never completed cleanly.
    A consumer that still waits, in the same iteration, on anything W signals (another
    operand's full barrier) is paced, however loosely, and is left to the race rules
    (`race.unsynchronized_read`): on the H200 such kernels completed with wrong values. A wait
    once per tile or segment, outside the loop that releases, does not pace those releases:
    within a tile they can still overtake the fills.
    How it ends depends on the two sides' speeds (a consumer slower than the fills may even
    complete), which is why it is a `phase.*` kind like `phase.constant_in_loop`, not a
    `deadlock.*`: an error whose outcome is a hang or a fault, never a certainty of either.

Example
    partition1 (writer of the results), its wait on `res_ready` dropped:

        scf.for %s = %pid to %S step %nprog iter_args(%slot = %c0, ...) {
          %v = ttg.local_load %res[%slot]            // filled by default's local_store
          ttng.arrive_barrier %res_empty[%slot], 1   // release, paced by nothing
          ...
        }

    default waits `res_empty[%slot]` (parity `rphase ^ 1`) before each `local_store` into
    `res[%slot]`: once partition1 has released a slot twice before default polls it, default's
    wait never passes.
"""

from __future__ import annotations

from ...facts.barriers import Role
from ...ir.model import Operation
from ..model.findings import Finding, Kind, Severity, finding
from ..model.kinds import KindDoc, Rule
from ..model.outcome import HANG_OR_FAULT
from ..program.operands import READ_OPERANDS, remotely_arrived, traced_root
from ..program.order import innermost_loop, loop_depth, same_iteration

# Operand positions that write a buffer, per op (the destination of a fill).
_WRITES = {
    "ttng.async_tma_copy_global_to_local": (1,),
    "ttg.local_store": (1,),
    "ttg.async_copy_global_to_local": (1,),
    "ttng.tmem_store": (1,),
}
_WAITS = (Role.WAIT, Role.ACQUIRE)


def unpaced_releases(analysis) -> list[Finding]:
    arrivers = analysis.arrivers
    remote = remotely_arrived(analysis)
    waited_by: dict[str, set[int]] = {}  # partition -> allocations it waits on (anywhere)
    for b in analysis.barriers.barriers:
        if b.alloc is None:
            continue
        for u in b.uses:
            if u.role in _WAITS and u.partition:
                waited_by.setdefault(u.partition, set()).add(id(b.alloc))
    out: list[Finding] = []
    for b in analysis.barriers.barriers:
        if b.alloc is None:
            continue
        # Pre-arrivals in the function body (before the partitions fork) are the ring's initial
        # state, not a consumer's releases.
        owners = {p for u in b.uses if u.role is Role.ARRIVE for p in u.partitions or (u.partition,) if p}
        releases = [u for u in b.uses if u.role is Role.ARRIVE and u.partition and loop_depth(u.op) > 0]
        if len(owners) != 1 or not releases or id(b.alloc) in remote \
                or any(u.role not in (Role.ARRIVE, Role.INIT, *_WAITS) for u in b.uses):
            continue  # arrivals from several partitions or async engines: not one consumer's release
        r = releases[0].partition
        if owners != {r}:
            continue
        acquirers = sorted({u.partition for u in b.uses if u.role in _WAITS and u.partition not in (None, r)})
        for w in acquirers:
            release = releases[0]
            read = _released_buffer(analysis, release.op, r, w)
            if read is None:
                continue
            top = innermost_loop(release.op)
            if _paced(analysis, release.op, w, arrivers, waited_by):
                continue
            buf, read_op, write_op = read
            wait_lines = sorted({u.line for u in b.uses if u.role in _WAITS and u.partition == w})
            out.append(finding(
                Kind.PHASE_UNPACED_RELEASE, Severity.error,
                f"{r} releases {b.name} at line {release.line} after reading {buf} (line {read_op.line}), which {w} "
                f"fills at line {write_op.line}; in an iteration of the loop at line {top.line}, {r} waits on nothing that {w} "
                f"signals, so its releases run ahead of {w}'s fills: it reads slots before they are filled and "
                f"completes phases {w} has not acquired yet, so {w}'s wait at line(s) "
                f"{', '.join(map(str, wait_lines))} polls a parity that already came back (a hang), or passes "
                "between two releases and refills a slot still being read. This holds whatever the trip counts.",
                lines=[release.line, read_op.line, write_op.line, *wait_lines], partitions=[r, w], barrier=b.name,
                evidence={"consequence": HANG_OR_FAULT, "release_line": release.line, "read_line": read_op.line,
                          "fill_line": write_op.line, "acquire_lines": wait_lines, "loop_line": top.line,
                          "trip_independent": True},
                suggestion=f"Before reading the slot, wait on the barrier {w} arrives on (or its copy completes) "
                           "when the slot is full, with the use's parity."))
    return out


def _released_buffer(analysis, release: Operation, reader: str, writer: str):
    """(buffer, read op, write op): a buffer `reader` reads in the loop around `release` that
    `writer` writes (in a loop): the arrive then releases that buffer to its writer."""
    pname = analysis.partition_name
    loop = innermost_loop(release)
    if loop is None:
        return None
    written: dict[tuple, Operation] = {}
    for op in analysis.ops:
        if pname(op) != writer or loop_depth(op) == 0:
            continue
        for k in _WRITES.get(op.name, ()):
            if k < len(op.positional):
                root = traced_root(analysis, op.positional[k], op)
                if root is not None:
                    written.setdefault(root, op)
    for op in loop.walk():
        for k in READ_OPERANDS.get(op.name, ()):
            if k < len(op.positional) and pname(op) == reader:
                root = traced_root(analysis, op.positional[k], op)
                if root in written:
                    return op.positional[k], op, written[root]
    return None


def _paced(analysis, release: Operation, writer: str, arrivers: dict, waited_by: dict) -> bool:
    """Does any wait in the iteration of the release's loop (before or after it: a rotated
    wait sits at the end of the body) depend on `writer`'s progress, directly or through the
    partitions whose arrivals it needs? A wait at an outer level (once per tile or segment)
    does not pace the releases inside: they can still overtake the fills of that tile."""
    seen: set[str] = set()
    frontier: set[str] = set()
    for op in same_iteration(release):
        for b, u in analysis.barriers.uses_at(op):
            if u.role in _WAITS and b.alloc is not None:
                if not arrivers.get(id(b.alloc)):
                    return True  # a wait nothing arrives on: it blocks for good (deadlock.no_producer)
                frontier |= arrivers[id(b.alloc)]
    while frontier:
        p = frontier.pop()
        if p == writer:
            return True
        if p in seen:
            continue
        seen.add(p)
        for alloc in waited_by.get(p, ()):
            frontier |= arrivers.get(alloc, set()) - seen
    return False


RULE = Rule("unpaced_release", __name__, unpaced_releases, docs=(
    KindDoc(
        Kind.PHASE_UNPACED_RELEASE,
        'A consumer releases a ring slot it never waited to be filled.',
        'Finds a plain arrive that releases a buffer another partition fills, in a loop iteration where the releasing partition waits on nothing that partition signals (directly or through others). Needs no trip count: it runs when the simulation stopped at a limit.',
        "The releases run at the consumer's own speed: it reads slots before they are filled and completes phases the producer has not acquired. The producer's acquire then blocks for good (a hang) or its copy lands in a slot still being read (a fault or corrupted data); on the H200 this shape hung or faulted.",
        'scf.for ... {\n  %v = ttg.local_load %res[%slot]            // filled by another partition\n  ttng.arrive_barrier %res_empty[%slot], 1   // release, paced by nothing\n}',
        "Wait on the slot's full barrier (the producer's arrival) before reading and releasing it.",
        (Severity.error,), 'An error; the outcome depends on timing (hang, or a fault / corruption if a wait passes early).'),
))
