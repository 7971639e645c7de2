"""Verdicts read from the IR's structure, without running it.

Each rule looks at one shape the phase model makes suspicious and states its evidence:

* `phase.constant_in_loop`: a wait inside a loop whose parity never changes there, on a barrier
  that is not re-initialised in that loop (ir-semantics §7.3). The loop is the one that repeats
  the wait with its predicate evaluated per iteration (`predicates.py`): a wait on a
  first-iteration flag is repeated by the enclosing loop only.
* `wait.redundant`: a second wait on the same slot with the same parity, or with the inverted
  parity the previous flip already serves, where the first runs whenever the second does;
  harmless over-synchronization (info).
* `expect.bytes_mismatch`: `barrier_expect` bytes differ from the bytes the TMA copies on that
  barrier deliver (the phase never completes exactly).
* `race.unsynchronized_read`: a partition reads a TMA-filled buffer and nowhere in the iteration
  (at the copy's loop level) waits on the barrier the copy signals (a dropped full-wait).
  Software-pipelined loops wait for the next use at the end of the body, so the whole
  iteration counts, not only what precedes the read.
* `race.missing_acquire`: a producer refills a buffer without a wait, in the iteration, on a
  barrier its readers arrive on after reading it (a dropped empty-wait), or a reader arrives on
  nothing after its read and releases the slot in no other way (`silent_readers.py`).
* `channel.same_partition`: a wait whose barrier is only arrived by synchronous arrives of its
  own partition: it orders nothing across partitions (ir-semantics §7.4); info when an own
  arrive precedes it in the iteration (a no-op), a warning otherwise; barriers a peer CTA
  arrives on are cluster barriers, not reported.
"""

from __future__ import annotations

from typing import Iterator

from ...facts.barriers import Barrier, BarrierUse, Role
from ...facts.values import OpResult, reaches_back
from ...ir.model import Operation
from ...ir.vocab import LOOP_OPS
from ..model.findings import Finding, Kind, Severity, finding

_STOP_AT = LOOP_OPS | {"ttg.warp_specialize", "nvws.warp_group", "tt.func", "func.func", "builtin.module"}
# Operand positions (positional operands) that read a buffer, per op.
_READS = {
    "ttng.tc_gen5_mma": (0, 1),
    "ttng.tc_gen5_mma_scaled": (0, 1),
    "ttng.warp_group_dot": (0, 1),
    "tt.dot": (0, 1),
    "ttg.local_load": (0,),
    "ttng.async_tma_copy_local_to_global": (1,),
}


def static_findings(analysis) -> list[Finding]:
    out: list[Finding] = []
    out += constant_phase(analysis)
    out += redundant_waits(analysis)
    out += expect_mismatches(analysis)
    out += tma_channel_races(analysis)
    out += same_partition_channels(analysis)
    from .early_release import early_releases  # its own module; it reuses the helpers below

    out += early_releases(analysis)
    from .tma_store import tma_store_reuses  # its own module: the async store path

    out += tma_store_reuses(analysis)
    from .remote_wait import remote_waits  # its own module: a cluster rule on the barrier's address space

    out += remote_waits(analysis)
    return out


# -- helpers ------------------------------------------------------------------------------------
def innermost_loop(op: Operation) -> Operation | None:
    return next((a for a in op.ancestors() if a.name in LOOP_OPS), None)


def loop_depth(op: Operation) -> int:
    """Loops enclosing `op` inside its partition (or function)."""
    depth = 0
    for a in op.ancestors():
        if a.name in _STOP_AT - LOOP_OPS:
            break
        if a.name in LOOP_OPS:
            depth += 1
    return depth


def _iteration_scopes(op: Operation, levels: int) -> Iterator[tuple[list[Operation], int]]:
    """(block operations, index of the op or its enclosing op) from `op` outwards, up to the
    innermost loop (or `levels` loops further out) or the partition/function boundary."""
    cur = op
    while True:
        block = cur.block
        if block is None:
            return
        yield block.operations, block.operations.index(cur)
        parent = block.region.parent if block.region is not None else None
        if parent is None or parent.name in _STOP_AT - LOOP_OPS:
            return
        if parent.name in LOOP_OPS:
            if levels <= 0:
                return
            levels -= 1
        cur = parent


def preceding_in_iteration(op: Operation, levels: int = 0) -> Iterator[Operation]:
    """Operations executed before `op` in the same iteration of its innermost loop (or since the
    partition started), nearest first; nested regions of earlier ops included. With `levels`,
    the iteration is the one of the loop that many levels further out (what runs before the
    inner loop in the enclosing iteration counts too)."""
    for ops, idx in _iteration_scopes(op, levels):
        for prev in reversed(ops[:idx]):
            yield from reversed(list(prev.walk()))


def following_in_iteration(op: Operation, levels: int = 0) -> Iterator[Operation]:
    """`op` itself, then what runs after it in the same iteration of its innermost loop (or of
    the loop `levels` further out)."""
    yield op
    for ops, idx in _iteration_scopes(op, levels):
        for nxt in ops[idx + 1 :]:
            yield from nxt.walk()


def _varies_in(name: str, at: Operation, loop: Operation, analysis, budget: int = 400) -> bool:
    """Does value `name` (used at `at`) change from one iteration of `loop` to the next?"""

    def visit(defn):
        if defn is None:
            return None
        if isinstance(defn, OpResult):
            op = defn.op
            if loop not in op.ancestors():
                return None
            if op.name in LOOP_OPS or op.name == "scf.if":
                return True  # results of nested control flow: assume they vary
            return [(o, op) for o in op.operands]
        block = defn.block
        owner = block.region.parent if block is not None and block.region is not None else None
        if owner is loop and _yielded_unchanged(defn, loop):
            return [(loop.operands[defn.index - 1 + 3], loop)]  # the iter-arg keeps its initial value
        return True if owner is not None and (owner is loop or loop in owner.ancestors()) else None

    return reaches_back(analysis.values, name, at, visit, budget)


def _yielded_unchanged(arg, loop: Operation) -> bool:
    """Is `arg`, an iter-arg of the scf.for `loop`, yielded back as itself (directly or through
    `select(c, arg, arg)`), so that it holds its initial value in every iteration (a phase bit
    whose flip on wrap was lost)?"""
    if loop.name != "scf.for" or arg.index < 1 or len(loop.operands) < arg.index + 3:
        return False
    ops = arg.block.operations
    if not ops or ops[-1].name != "scf.yield" or len(ops[-1].operands) < arg.index:
        return False
    defs = {r: op for op in ops for r in op.results}
    value = ops[-1].operands[arg.index - 1]
    for _ in range(8):
        if value == arg.name:
            return True
        op = defs.get(value)
        if op is None or op.name != "arith.select" or len(op.operands) != 3 or op.operands[1] != op.operands[2]:
            return False
        value = op.operands[1]
    return False


def _slot_key(use: BarrierUse) -> tuple:
    return tuple(s.constant if s.constant is not None else s.value for s in use.slots)


def _barrier_label(b: Barrier, use: BarrierUse | None = None) -> str:
    slots = "".join(f"[{s.constant if s.constant is not None else s.value}]" for s in (use.slots if use else ()))
    return f"{b.name}{slots}"


# -- rules --------------------------------------------------------------------------------------
def constant_phase(analysis) -> list[Finding]:
    out: list[Finding] = []
    for b in analysis.barriers.barriers:
        if b.alloc is None:
            continue  # a barrier passed in as an argument: its initialisation is the caller's, unseen
        inits = [u for u in b.uses if u.role is Role.INIT]
        for u in b.uses:
            if u.role not in (Role.WAIT, Role.ACQUIRE) or u.phase is None:
                continue
            loop = _loop_it_repeats_in(analysis, u)
            if loop is None:
                continue
            if any(loop in i.op.ancestors() for i in inits) or (b.alloc is not None and loop in b.alloc.ancestors()):
                continue  # re-initialised every iteration: its phase restarts, a constant is right
            if _varies_in(u.phase, u.op, loop, analysis):
                continue
            if _turn_token(b, u, analysis):
                continue
            out.append(finding(
                Kind.PHASE_CONSTANT_IN_LOOP, Severity.error,
                f"The wait at line {u.line} polls a parity that never changes inside the loop at line {loop.line}, "
                f"on {_barrier_label(b, u)}, which is reused every iteration: after the first completion it either "
                "always passes (no protection) or never passes (hang).",
                lines=[u.line, loop.line], partitions=[u.partition] if u.partition else [], barrier=_barrier_label(b, u),
                evidence={"phase_operand": u.phase, "loop_line": loop.line},
                suggestion="Derive the phase from the loop's use counter: ((n / depth) & 1), inverted for the producer's acquire."))
    return out


def _loop_it_repeats_in(analysis, u: BarrierUse) -> Operation | None:
    """The innermost loop in which the op of `u` runs in more than one iteration of an entry,
    with its predicate evaluated per iteration (`predicates.py`): a wait on a first-iteration
    flag runs once per entry of its loop, like an op just before that loop, so the loop that
    repeats it is the enclosing one. None when no loop repeats it (or it never runs)."""
    from ..program.predicates import FIRST, NEVER, iteration_runs

    loop = innermost_loop(u.op)
    while loop is not None:
        runs = iteration_runs(analysis, u.op, u.predicate, loop)
        if runs == NEVER:
            return None
        if runs != FIRST:
            return loop
        loop = innermost_loop(loop)
    return None


def _runs_whenever(analysis, earlier: BarrierUse, later: BarrierUse) -> bool:
    """Does `earlier` run in every iteration in which `later` runs? Unpredicated (or constant
    true), or on the very same predicate value. A wait on a first-iteration flag, a pid or a
    `k_tiles > 0` guard does not: a later unpredicated wait is then the only one there."""
    from ..program.predicates import constant_bool

    if earlier.predicate is None or earlier.predicate == later.predicate:
        return True
    return constant_bool(analysis, earlier.predicate, earlier.op) is True


def _constant_phase(u: BarrierUse, analysis) -> int | None:
    from ...facts.barriers import constant_value

    defn = analysis.values.lookup(u.phase, u.op) if u.phase else None
    return constant_value(defn.op) if isinstance(defn, OpResult) else None


def _turn_token(b: Barrier, u: BarrierUse, analysis) -> bool:
    """Is the slot `u` waits on a turn token passed between two partitions (the hand-written
    ping-pong of two consumer warpgroups, TLX `pingpong_mma_bar`)? Count 1; each of exactly two
    partitions waits on it with its own constant parity, the two parities opposite, and arrives
    on it after that wait in the same iteration. Every arrival flips the parity, so parity p
    means "the other side has handed over": neither side can arrive twice in a row, the
    parity never laps, and a constant parity per side is the protocol, not a lost flip."""
    inits = [i for i in b.uses if i.role is Role.INIT and _slot_key(i) == _slot_key(u)]
    if len(inits) != 1 or inits[0].count != 1:
        return False
    key = _slot_key(u)
    same = [x for x in b.uses if _slot_key(x) == key]
    waits = [x for x in same if x.role is Role.WAIT]
    arrives = [x for x in same if x.role is Role.ARRIVE]
    if len(arrives) != len(same) - len(waits) - 1:  # only waits, plain arrives and the init
        return False
    sides = {x.partition for x in waits}
    if len(sides) != 2 or None in sides or {x.partition for x in arrives} != sides:
        return False
    parity: dict[str, set] = {}
    for w in waits:
        parity.setdefault(w.partition, set()).add(_constant_phase(w, analysis))
        loop = innermost_loop(w.op)
        if loop is None or _varies_in(w.phase, w.op, loop, analysis):
            return False
        mine = {id(a.op) for a in arrives if a.partition == w.partition}
        if not any(id(o) in mine for o in following_in_iteration(w.op)):
            return False
    values = [next(iter(v)) for v in parity.values() if len(v) == 1]
    return len(values) == 2 and None not in values and values[0] != values[1]


def redundant_waits(analysis) -> list[Finding]:
    out: list[Finding] = []
    for b in analysis.barriers.barriers:
        waits = [u for u in b.uses if u.role is Role.WAIT and u.phase is not None]
        arrive_ops = {id(u.op) for u in b.uses if u.role not in (Role.WAIT, Role.INIT, Role.INVAL)}
        for later in waits:
            for prev in preceding_in_iteration(later.op):
                if id(prev) in arrive_ops:
                    break
                earlier = next((w for w in waits if w.op is prev), None)
                if earlier is None or _slot_key(earlier) != _slot_key(later) or earlier.partition != later.partition:
                    continue
                relation = _phase_relation(earlier, later, analysis)
                if relation is None or not _runs_whenever(analysis, earlier, later):
                    continue
                out.append(finding(
                    Kind.WAIT_REDUNDANT, Severity.info,
                    f"The wait at line {later.line} repeats the wait at line {earlier.line} on {_barrier_label(b, later)} "
                    + ("with the same parity: the phase it needs has already completed, so it passes at once."
                       if relation == "same" else
                       "with the opposite parity: it is served by the previous flip, the correct 'redundant acquire' pattern."),
                    lines=[earlier.line, later.line], partitions=[later.partition] if later.partition else [],
                    barrier=_barrier_label(b, later), evidence={"relation": relation}))
                break
    return out


def _phase_relation(a: BarrierUse, b: BarrierUse, analysis) -> str | None:
    if a.phase == b.phase:
        return "same"
    for x, y in ((a, b), (b, a)):
        defn = analysis.values.lookup(y.phase, y.op)
        if isinstance(defn, OpResult) and defn.op.name == "arith.xori" and x.phase in defn.op.operands:
            return "inverted"
    return None


def expect_mismatches(analysis) -> list[Finding]:
    """`expect.bytes_mismatch` per expect whose bytes are counted, per CTA of the cluster; one
    `model.limit` note for the expects whose delivering ops could not be counted."""
    out: list[Finding] = []
    limits = []
    for check in analysis.buffers.expects:
        if check.status == "unknown" and check.reason is not None and (check.declared or 0) > 0:
            limits.append(check)
        if check.status != "mismatched":
            continue
        lines = [check.line] + [c.line for c in check.copies]
        name = check.barrier.name if check.barrier else None
        ctas = check.mismatched_ctas
        where = "" if check.per_cta is None or len(check.per_cta) == 1 else \
            f" in CTA {', '.join(map(str, ctas))} of the {len(check.per_cta)}-CTA cluster (per CTA: {list(check.per_cta)})"
        if check.expected_per_cta is not None and ctas:
            where = (f" to the copy of the barrier in CTA {ctas[0]}, which expects {check.expects(ctas[0])} (the declared "
                     f"bytes once per CTA sharing it; received per CTA's copy: {list(check.per_cta)}, expected: "
                     f"{list(check.expected_per_cta)})")
        out.append(finding(
            Kind.EXPECT_BYTES_MISMATCH, Severity.error,
            f"barrier_expect at line {check.line} declares {check.declared} bytes but the ops that complete "
            f"transaction bytes on it (TMA loads, CLC responses, remote copies) deliver {check.delivered}{where}: "
            "the transaction count never returns to zero exactly, so the phase never completes.",
            lines=lines, partitions=list(check.partitions), barrier=name,
            evidence={"declared": check.declared, "delivered": check.delivered,
                      "per_cta": list(check.per_cta) if check.per_cta is not None else None,
                      "copies": [{"line": c.line, "bytes": c.bytes, "buffer": c.member} for c in check.copies]},
            suggestion="Set the expect size to the sum of the bytes of every copy signalling this barrier."))
        if check.expected_per_cta is not None:
            out[-1].evidence["expected_per_cta"] = list(check.expected_per_cta)
    if limits:
        by_reason: dict[str, list[int]] = {}
        for c in limits:
            by_reason.setdefault(c.reason or "", []).append(c.line)
        out.append(finding(
            Kind.MODEL_LIMIT, Severity.info,
            "expect-bytes not checked for barrier_expect at line(s) "
            + "; ".join(f"{', '.join(map(str, lines))} ({reason})" for reason, lines in by_reason.items()) + ".",
            lines=[c.line for c in limits], evidence={"rule": Kind.EXPECT_BYTES_MISMATCH.value,
                                                     "expects": [{"line": c.line, "reason": c.reason} for c in limits]}))
    return out


def _root(analysis, name: str, at: Operation):
    t = analysis.tracer.trace(name, at)
    return t.key if t.resolved else None


def tma_channel_races(analysis) -> list[Finding]:
    """Dropped full-waits (readers) and dropped empty-waits (writers) of TMA-filled buffers."""
    from .silent_readers import unreleased  # its own module; it reuses the helpers of this one

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
        buf, bar = _root(analysis, pos[1], op), _root(analysis, pos[2], op)
        if buf is not None:
            writes.setdefault(buf, []).append((op, bar))
    if not writes:
        return []
    reads: dict[tuple, list[Operation]] = {}
    for op in analysis.ops:
        positions = _READS.get(op.name)
        if not positions:
            continue
        pos = op.positional
        for k in positions:
            if k < len(pos):
                root = _root(analysis, pos[k], op)
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
            waited = {k for p in _same_iteration(r, up) for k, _ in waits_by_op.get(id(p), [])}
            if full_bars and not (waited & full_bars):
                out.append(finding(
                    Kind.RACE_UNSYNCHRONIZED_READ, Severity.error,
                    f"{pname(r)} reads {_buf_name(buf, writers)} at line {r.line} without first waiting "
                    f"on the barrier its TMA copy signals (line {writers[0][0].line}): it can read the slot before the data lands.",
                    lines=[r.line] + [w.line for w, _ in writers], partitions=[pname(r)],
                    evidence={"buffer": _buf_name(buf, writers), "copy_lines": [w.line for w, _ in writers]},
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
            waited = {k for p in _same_iteration(w, up) for k, _ in waits_by_op.get(id(p), [])}
            if any(k[0] is not None and not analysis.arrivers.get(k[0]) for k in waited):
                continue  # it waits on a barrier nothing arrives on: a deadlock, reported as such
            missing = [q for q, rel in by_partition.items() if rel and not (waited & rel)]
            # Readers that arrive on nothing after the read (silent_readers.py).
            silent = {q: waits for q, rel in by_partition.items() if not rel and (waits := unreleased(
                analysis, w, levels[q], waits_by_op, barrier_of_use)) is not None}
            if missing:
                out.append(finding(
                    Kind.RACE_MISSING_ACQUIRE, Severity.error,
                    f"{pname(w)} refills {_buf_name(buf, writers)} at line {w.line} without waiting for "
                    f"the release of its reader(s) {', '.join(str(m) for m in missing)}: a slot still being read can be overwritten.",
                    lines=[w.line] + [r.line for r in readers if pname(r) in missing],
                    partitions=[p for p in [pname(w), *missing] if p],
                    evidence={"buffer": _buf_name(buf, writers), "readers": [r.line for r in readers]},
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
        f"{pname(w)} refills {_buf_name(buf, writers)} at line {w.line}, which {names} read(s) at line(s) "
        f"{', '.join(map(str, reads))} once per iteration of an enclosing loop; {names} arrive(s) on no barrier "
        f"after those reads in that iteration, and {level}: nothing orders the refill after the reads, so a slot "
        "still being read can be overwritten.",
        lines=[w.line] + reads, partitions=[p for p in [pname(w), *silent] if p],
        evidence={"buffer": _buf_name(buf, writers), "readers": reads, "wait_lines": waits},
        suggestion="After the reads are done (for a TMA store, after its token wait), arrive on a barrier the "
                   "producer waits on before this copy.")


def _reads_own_write(analysis, reader: Operation, buf: tuple) -> bool:
    """Does `reader` read what its own partition stored into the buffer earlier in the same
    iteration (a `local_store` into a staging view of it, then a TMA store of that view)? Then
    it reads its own data, not the TMA copy's, and needs no wait on the copy's full barrier:
    program order orders the store before the read."""
    part = analysis.partition_name(reader)
    read = [_view(analysis, pos[k], reader) for k in _READS.get(reader.name, ()) if k < len(pos := reader.positional)]
    for prev in preceding_in_iteration(reader):
        if prev.name != "ttg.local_store" or analysis.partition_name(prev) != part:
            continue
        pos = prev.positional
        if len(pos) > 1 and _root(analysis, pos[1], prev) == buf and _view(analysis, pos[1], prev) in read:
            return True
    return False


def _view(analysis, name: str, at: Operation) -> tuple:
    """Which part of an allocation a memory operand is: allocation, slot indices applied."""
    t = analysis.tracer.trace(name, at)
    return (t.key, tuple(i.value for i in t.indices), t.column_offset)


def _same_iteration(op: Operation, levels: int = 0) -> Iterator[Operation]:
    """Everything in `op`'s loop iteration: what precedes it, and what follows it (which, in a
    software-pipelined loop, is the previous iteration's tail: rotated waits sit there)."""
    yield from preceding_in_iteration(op, levels)
    yield from following_in_iteration(op, levels)


def _buf_name(key: tuple, writers) -> str:
    op = writers[0][0]
    pos = op.positional
    return pos[1] if len(pos) > 1 else "buffer"


def same_partition_channels(analysis) -> list[Finding]:
    """Waits only their own partition's synchronous arrives satisfy (ir-semantics §7.4).

    A barrier a peer CTA also arrives on (through `map_to_remote_buffer`) synchronizes the CTAs
    of a cluster, not partitions: not reported. When the partition's own arrive on the slot
    precedes the wait in the same iteration, the wait is self-satisfied: it never blocks and
    orders only what program order already orders in that partition (AutoWS emits such
    same-task acquires for TMEM reuse, e.g. a P store into columns aliasing the QK tile the
    partition has just loaded): a no-op, reported as info. Otherwise the wait waits for an
    arrive its own partition makes later (or in another loop): a warning."""
    out: list[Finding] = []
    remote = _remotely_arrived(analysis)
    for b in analysis.barriers.barriers:
        arrives = [u for u in b.uses if u.role not in (Role.WAIT, Role.ACQUIRE, Role.INIT, Role.INVAL)]
        if not arrives or any(u.role is not Role.ARRIVE for u in arrives):
            continue  # asynchronous arrivals (TMA, tcgen05) make even a same-partition wait meaningful
        if b.alloc is not None and id(b.alloc) in remote:
            continue  # a peer CTA arrives on it too: a cluster barrier
        for u in b.uses:
            if u.role is not Role.WAIT or u.partition is None:
                continue
            if not all(a.partition == u.partition for a in arrives):
                continue
            lines = ", ".join(str(a.line) for a in arrives)
            own = {id(a.op) for a in arrives if _slot_key(a) == _slot_key(u)}
            before = next((p for p in preceding_in_iteration(u.op) if id(p) in own), None)
            if before is not None:
                nxt = next((x for x in following_in_iteration(u.op) if x is not u.op and x.name not in _VIEWS), None)
                guarded = f" (the {nxt.name} at line {nxt.line} after it)" if nxt is not None else ""
                out.append(finding(
                    Kind.CHANNEL_SAME_PARTITION, Severity.info,
                    f"The wait at line {u.line} on {_barrier_label(b, u)} is a no-op: only synchronous arrives of its "
                    f"own partition ({u.partition}, lines {lines}) complete its barrier, and the one at line "
                    f"{before.line} precedes it in the same iteration, so it never blocks. It orders nothing across "
                    f"partitions; what it sits before{guarded} is ordered after the partition's earlier ops by "
                    "program order alone.",
                    lines=[u.line] + [a.line for a in arrives], partitions=[u.partition], barrier=_barrier_label(b, u),
                    evidence={"arrive_lines": [a.line for a in arrives], "self_satisfied_by": before.line}))
                continue
            out.append(finding(
                Kind.CHANNEL_SAME_PARTITION, Severity.warning,
                f"The wait at line {u.line} on {_barrier_label(b, u)} is only ever satisfied by synchronous arrives of "
                f"its own partition ({u.partition}, lines {lines}), none of them before it in its iteration: it "
                "waits for its own partition's later progress (a hang if that phase is needed) and orders nothing "
                "across partitions.",
                lines=[u.line] + [a.line for a in arrives], partitions=[u.partition], barrier=_barrier_label(b, u),
                evidence={"arrive_lines": [a.line for a in arrives]}))
    return out


_VIEWS = frozenset({"ttg.memdesc_index", "ttg.memdesc_reinterpret", "ttng.tmem_subslice", "ttg.memdesc_subslice",
                    "arith.constant"})


def _remotely_arrived(analysis) -> set[int]:
    """Allocations of barriers some op reaches through `map_to_remote_buffer` (a peer CTA's copy)."""
    out: set[int] = set()
    for op in analysis.ops:
        if op.name == "ttng.map_to_remote_buffer" and op.operands:
            t = analysis.tracer.trace(op.operands[0], op)
            if t.root is not None:
                out.add(id(t.root))
    return out
