"""Dropped waits around TMA-filled buffers: `race.unsynchronized_read` and `race.missing_acquire`.

* `race.unsynchronized_read`: a partition reads a TMA-filled buffer and nowhere in the iteration
  (at the copy's loop level) waits on the barrier the copy signals (a dropped full-wait).
  Software-pipelined loops wait for the next use at the end of the body, so the whole
  iteration counts, not only what precedes the read.
* `race.missing_acquire`: a producer refills a buffer without a wait, in the iteration, on a
  barrier its readers arrive on after reading it (a dropped empty-wait), or a reader arrives on
  nothing after its read and releases the slot in no other way (`silent_readers.py`).
"""

from __future__ import annotations

from ...facts.barriers import Role
from ...ir.model import Operation
from ..model.findings import Finding, Kind, Severity, finding
from ..model.kinds import KindDoc, Rule
from ..program.operands import READ_OPERANDS, buffer_name, traced_root
from ..program.order import following_in_iteration, loop_depth, preceding_in_iteration, same_iteration
from .silent_readers import unreleased  # the readers that release a slot in no other way



def tma_channel_races(analysis) -> list[Finding]:
    """Dropped full-waits (readers) and dropped empty-waits (writers) of TMA-filled buffers."""
    barrier_of_use: dict[int, list[tuple]] = {}
    waits_by_op: dict[int, list[tuple]] = {}
    for b in analysis.barriers.barriers:
        key = (id(b.alloc), 0) if b.alloc is not None else None
        for u in b.uses:
            if u.role in (Role.WAIT, Role.ACQUIRE):
                waits_by_op.setdefault(id(u.op), []).append((key, b))
            elif u.role in (Role.ARRIVE, Role.MMA_ARRIVE, Role.COMMIT, Role.RELEASE, Role.EXPECT):
                barrier_of_use.setdefault(id(u.op), []).append((key, b))
    # Writers: TMA copies, with the buffer they fill and the barrier they signal.
    writes: dict[tuple, list[tuple[Operation, tuple | None]]] = {}
    for op in analysis.ops:
        if op.name != "ttng.async_tma_copy_global_to_local":
            continue
        pos = op.positional
        if len(pos) < 3:
            continue
        buf, bar = traced_root(analysis, pos[1], op), traced_root(analysis, pos[2], op)
        if buf is not None:
            writes.setdefault(buf, []).append((op, bar))
    if not writes:
        return []
    reads: dict[tuple, list[Operation]] = {}
    for op in analysis.ops:
        positions = READ_OPERANDS.get(op.name)
        if not positions:
            continue
        pos = op.positional
        for k in positions:
            if k < len(pos):
                root = traced_root(analysis, pos[k], op)
                if root in writes:
                    reads.setdefault(root, []).append(op)
    out: list[Finding] = []
    pname = analysis.partition_name
    for buf, all_writers in writes.items():
        # A copy issued before the partitions fork (function prologue) is ordered before every
        # partition by the fork itself.
        writers = [(w, bar) for w, bar in all_writers if pname(w) is not None]
        if not writers:
            continue
        writer_parts = {pname(w) for w, _ in writers}
        depth = min(loop_depth(w) for w, _ in writers)
        readers = [r for r in reads.get(buf, []) if pname(r) is not None and pname(r) not in writer_parts]
        full_bars = {bar for _, bar in writers if bar is not None}
        # A reader of what its own partition just stored needs no full-wait (program order), but
        # it still reads the slot: the copy that refills it must wait for its release (below).
        for r in (r for r in readers if not _reads_own_write(analysis, r, buf)):
            up = max(0, loop_depth(r) - depth)
            waited = {k for p in same_iteration(r, up) for k, _ in waits_by_op.get(id(p), [])}
            if full_bars and not (waited & full_bars):
                out.append(finding(
                    Kind.RACE_UNSYNCHRONIZED_READ, Severity.error,
                    f"{pname(r)} reads {buffer_name(buf, writers)} at line {r.line} without first waiting "
                    f"on the barrier its TMA copy signals (line {writers[0][0].line}): it can read the slot before the data lands.",
                    lines=[r.line] + [w.line for w, _ in writers], partitions=[pname(r)],
                    evidence={"buffer": buffer_name(buf, writers), "copy_lines": [w.line for w, _ in writers]},
                    suggestion="Wait on the slot's full barrier (with the use's parity) before the read."))
        by_partition: dict[str | None, set] = {}
        levels: dict[str | None, list[tuple[Operation, int]]] = {}
        for r in readers:
            up = max(0, loop_depth(r) - depth)
            released = {k for f in following_in_iteration(r, up) for k, _ in barrier_of_use.get(id(f), [])}
            by_partition.setdefault(pname(r), set()).update(released)
            levels.setdefault(pname(r), []).append((r, up))
        reader_depth = min((loop_depth(r) for r in readers), default=None)
        # A buffer one TMA copy outside any loop fills (a single tile's load) is written once:
        # there is no refill that could overwrite it while it is read.
        once = len(all_writers) == 1 and loop_depth(all_writers[0][0]) == 0
        for w, _ in ([] if once else writers):
            # A reader at an outer loop level (a tile's epilogue reading what an inner loop
            # filled) is released once per outer iteration: the refill's acquire may sit at that
            # level, before the inner loop.
            up = max(0, loop_depth(w) - reader_depth) if reader_depth is not None else 0
            waited = {k for p in same_iteration(w, up) for k, _ in waits_by_op.get(id(p), [])}
            if any(k[0] is not None and not analysis.arrivers.get(k[0]) for k in waited):
                continue  # it waits on a barrier nothing arrives on: a deadlock, reported as such
            missing = [q for q, rel in by_partition.items() if rel and not (waited & rel)]
            # Readers that arrive on nothing after the read (silent_readers.py).
            silent = {q: waits for q, rel in by_partition.items() if not rel and (waits := unreleased(
                analysis, w, levels[q], waits_by_op, barrier_of_use)) is not None}
            if missing:
                out.append(finding(
                    Kind.RACE_MISSING_ACQUIRE, Severity.error,
                    f"{pname(w)} refills {buffer_name(buf, writers)} at line {w.line} without waiting for "
                    f"the release of its reader(s) {', '.join(str(m) for m in missing)}: a slot still being read can be overwritten.",
                    lines=[w.line] + [r.line for r in readers if pname(r) in missing],
                    partitions=[p for p in [pname(w), *missing] if p],
                    evidence={"buffer": buffer_name(buf, writers), "readers": [r.line for r in readers]},
                    suggestion="Wait on the empty barrier the readers arrive on (pre-inverted parity) before the copy."))
            if silent:
                out.append(_silent_finding(analysis, buf, writers, w, readers, silent))
    return out


def _silent_finding(analysis, buf: tuple, writers, w: Operation, readers: list[Operation],
                    silent: dict) -> Finding:
    pname = analysis.partition_name
    names = ", ".join(str(q) for q in silent)
    reads = [r.line for r in readers if pname(r) in silent]
    waits = sorted({op.line for ops in silent.values() for op in ops})
    level = (f"{pname(w)}'s waits at that loop level (line(s) {', '.join(map(str, waits))}) are on barriers {names} does not "
             "arrive on there" if waits else f"{pname(w)} waits on nothing at that loop level")
    return finding(
        Kind.RACE_MISSING_ACQUIRE, Severity.error,
        f"{pname(w)} refills {buffer_name(buf, writers)} at line {w.line}, which {names} read(s) at line(s) "
        f"{', '.join(map(str, reads))} once per iteration of an enclosing loop; {names} arrive(s) on no barrier "
        f"after those reads in that iteration, and {level}: nothing orders the refill after the reads, so a slot "
        "still being read can be overwritten.",
        lines=[w.line] + reads, partitions=[p for p in [pname(w), *silent] if p],
        evidence={"buffer": buffer_name(buf, writers), "readers": reads, "wait_lines": waits},
        suggestion="After the reads are done (for a TMA store, after its token wait), arrive on a barrier the "
                   "producer waits on before this copy.")


def _reads_own_write(analysis, reader: Operation, buf: tuple) -> bool:
    """Does `reader` read what its own partition stored into the buffer earlier in the same
    iteration (a `local_store` into a staging view of it, then a TMA store of that view)? Then
    it reads its own data, not the TMA copy's, and needs no wait on the copy's full barrier:
    program order orders the store before the read."""
    part = analysis.partition_name(reader)
    read = [_view(analysis, pos[k], reader) for k in READ_OPERANDS.get(reader.name, ()) if k < len(pos := reader.positional)]
    for prev in preceding_in_iteration(reader):
        if prev.name != "ttg.local_store" or analysis.partition_name(prev) != part:
            continue
        pos = prev.positional
        if len(pos) > 1 and traced_root(analysis, pos[1], prev) == buf and _view(analysis, pos[1], prev) in read:
            return True
    return False


def _view(analysis, name: str, at: Operation) -> tuple:
    """Which part of an allocation a memory operand is: allocation, slot indices applied."""
    t = analysis.tracer.trace(name, at)
    return (t.key, tuple(i.value for i in t.indices), t.column_offset)


RULE = Rule("tma_channel", __name__, tma_channel_races, docs=(
    KindDoc(
        Kind.RACE_UNSYNCHRONIZED_READ,
        "A partition reads a TMA-filled buffer without waiting on the barrier the copy signals.",
        "Finds a read (MMA operand, `local_load`, TMA store source) of a buffer a TMA copy fills, "
        "in another partition, with no wait in the iteration on the barrier that copy signals "
        "(a dropped full-wait). Runs report it too, when their vector clocks leave a write and a "
        "read unordered.",
        "The copy is asynchronous: only its barrier says the data has landed. Without the wait the "
        "reader may consume the slot before (or while) it is filled: wrong results.",
        "// producer\n"
        "ttng.async_tma_copy_global_to_local %desc ... %slot, %full\n"
        "// consumer: missing `ttng.wait_barrier %full, %ph` before\n"
        "ttng.warp_group_dot %slot, %b, %acc",
        "Wait on the slot's full barrier, with the use's parity, before the read.",
        (Severity.error, Severity.warning, Severity.info),
        "An error; a warning when the only evidence is an unpaired arrive whose wait was its guard "
        "and no run shows the accesses unordered, or when a run's race is not judged (approximate "
        "TMEM placement, a schedule only the cluster's pace forbids); info when `check` demotes "
        "it (a launch the IR excludes)."),
    KindDoc(
        Kind.RACE_MISSING_ACQUIRE,
        "A producer refills a buffer without waiting for its readers to release it.",
        "Finds a TMA copy into a buffer other partitions read, with no wait in the iteration on a "
        "barrier those readers arrive on after their reads (a dropped empty-wait), or readers that "
        "arrive on nothing after reading and so release the slot in no other way. Runs report it "
        "when a refill is unordered with a read, or when a producer a whole phase ahead hangs.",
        "The refill can overwrite a slot that is still being read: the reader sees the next tile's "
        "data (wrong results), or, with the ring's parity lapping, a partition waits for a phase "
        "already gone (a hang).",
        "// producer, every iteration: missing `ttng.wait_barrier %empty, %ph_inv`\n"
        "ttng.async_tma_copy_global_to_local %desc ... %slot, %full\n"
        "// consumer: reads %slot, then ttng.arrive_barrier %empty",
        "Wait on the empty barrier the readers arrive on (pre-inverted parity) before the copy.",
        (Severity.error, Severity.warning, Severity.info),
        "As `race.unsynchronized_read`; its outcome reads as a hang when the run that shows it "
        "blocks on the friendliest schedule."),
))
