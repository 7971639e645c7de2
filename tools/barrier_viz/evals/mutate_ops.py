"""The generic mutation operators: single-point edits of barrier operations (drop the only
arrival, constant or flipped phase, init count, expect bytes, duplicated arrive or wait, dropped
wait, redundant zero store), each stating why the edited kernel hangs, races or stays correct
(see `mutate` for the semantics they rest on). `BASIC` is their table; `mutate.OPERATORS` joins it
with the other operator modules'.
"""

from __future__ import annotations

import re
from typing import Callable, Iterator

from ..facts.barriers import Barrier, BarrierUse, Role
from ..ir.model import Operation

from .mutate_engine import (ARRIVALS, GPU_NOTE, HANG, NO_ERRORS_BENIGN, NOT_FROM_DROPPED_WAIT, READ_OPS, WRITE_OPS, Mutant,
                            Source)

def _tma_fed(b: Barrier) -> bool:
    return any(u.role in (Role.EXPECT, Role.TMA_ARRIVE) for u in b.uses)


def _p(u: BarrierUse) -> str:
    return u.partition or "main"


# -- operators ---------------------------------------------------------------------------------
def op_drop_only_arrival(src: Source) -> Iterator[Mutant]:
    """Drop the only arrive / commit / MMA-arrival of a barrier that something waits on."""
    for b in src.barriers:
        arr = src.arrivals(b)
        ops = {id(u.op) for u in arr}
        if len(ops) != 1 or not src.needs_completion(b):
            continue
        u = arr[0]
        why = (f"{u.op.name} at line {u.line} is the only arrival on barrier {b.name} (checked over every use "
               f"of its {b.slots or 1} slot(s)); without it no phase of {b.name} ever completes, and a wait on it "
               f"inside a loop (or on parity 0) needs one: the waiter blocks forever.")
        text = None
        if u.role in (Role.ARRIVE, Role.COMMIT):
            text = src.delete_op(u.op)
        elif u.role is Role.MMA_ARRIVE:
            text = _drop_mma_barrier(src, u)
        if text is None:
            continue
        yield Mutant(f"drop_only_arrival_L{u.line}", "drop_only_arrival", text,
                     [{"kind": "deadlock.no_producer"}], ["race.*"], why, u.line, f"removed {u.op.name} arrival on {u.operand}")


def _drop_mma_barrier(src: Source, u: BarrierUse) -> str | None:
    """Remove `, %bar[%pred]` from an MMA's barrier list and one barrier type from its types."""
    seg = src.op_bytes(u.op).decode()
    m = list(re.finditer(re.escape(", " + u.operand) + r"\[[^\]]*\]", seg))
    if len(m) != 1:
        return None
    head, sep, types = seg.rpartition(" : ")
    if not sep:
        return None
    bar_types = [t for t in re.split(r",\s*(?=!)", types) if "xi64" in t and "#smem" in t]
    if not bar_types:
        return None
    k = types.rfind(", " + bar_types[-1])
    if k < 0:
        return None
    new_types = types[:k] + types[k + len(", " + bar_types[-1]):]
    new_head = head[:m[0].start()] + head[m[0].end():]
    new = new_head + sep + new_types
    return src.splice([(u.op.start_byte, u.op.end_byte, new.encode())])


def _loop_waits(src: Source) -> Iterator[tuple[Barrier, BarrierUse]]:
    seen: set[int] = set()
    for b in src.barriers:
        for w in src.waits(b):
            if w.loop_depth >= 1 and w.phase and src.constant_of(w.phase) is None and id(w.op) not in seen:
                seen.add(id(w.op))
                yield b, w


def _wait_kind(src: Source, b: Barrier, w: BarrierUse) -> str | None:
    """'data' for a wait on a TMA-fed (full) barrier by a partition that does not issue that
    barrier's expect; 'release' for a wait, on a barrier other partitions arrive on, that guards
    this partition's next TMA load into a slot (a producer's acquire); None otherwise."""
    arrivers = src.partitions_of(src.arrivals(b))
    if _tma_fed(b):
        expecters = src.partitions_of([u for u in b.uses if u.role is Role.EXPECT])
        nxt = src.next_sync_or_memory_op(w.op)
        if _p(w) not in expecters or (nxt is not None and nxt.name in READ_OPS):
            return "data"
        return None
    if arrivers and _p(w) not in arrivers:
        nxt = src.next_sync_or_memory_op(w.op)
        if nxt is not None and nxt.name in ("ttng.barrier_expect", "ttng.async_tma_copy_global_to_local"):
            return "release"
    return None


def _subsumed(src: Source, b: Barrier, w: BarrierUse, kind: str) -> bool:
    """Whether dropping `w` might not open a race, so the operator must not claim one:
    another wait of the same block is on a barrier completed by exactly the same arrival ops
    (it proves the same event), or, for a producer's acquire, more than one wait guards the
    same write (several readers release the slot; which one is the last is not structural)."""
    block = w.op.block
    if block is None:
        return True
    mine = frozenset(id(u.op) for u in src.arrivals(b))
    same_block = []
    for other in src.barriers:
        for x in src.waits(other):
            if x.op is not w.op and x.op.block is block:
                same_block.append((other, x))
    for other, x in same_block:
        if other is not b and frozenset(id(u.op) for u in src.arrivals(other)) == mine:
            return True
    if kind == "release":
        ops = block.operations
        k = ops.index(w.op)
        lo = k
        while lo > 0 and ops[lo - 1].name not in WRITE_OPS:
            lo -= 1
        hi = k
        while hi + 1 < len(ops) and ops[hi + 1].name not in WRITE_OPS:
            hi += 1
        guards = [op for op in ops[lo:hi + 1] if op.name == "ttng.wait_barrier"]
        if len(guards) > 1:
            return True
    return False


def op_const_phase(src: Source) -> Iterator[Mutant]:
    """Make a loop wait's phase a constant 0 or 1."""
    for b, w in _loop_waits(src):
        for value in (0, 1):
            new = f"%mut_phase{value}"
            text = src.replace_in_op(w.op, f"{w.operand}, {w.phase}", f"{w.operand}, {new}",
                                     before=[f"{new} = arith.constant {value} : i32"])
            if text is None:
                continue
            why = (f"the wait at line {w.line} on {b.name} sits in a loop; with its phase fixed to {value} it awaits "
                   "the same parity every iteration while the barrier's phases alternate, so every second "
                   "iteration it waits for a phase that is already past or not produced yet (a wait on a phase "
                   f"constant in a loop; hang {GPU_NOTE}).")
            yield Mutant(f"const_phase{value}_L{w.line}", "const_phase", text,
                         [{"kind": "phase.constant_in_loop"}], [], why, w.line, f"phase {w.phase} -> {value}")


def op_flip_parity(src: Source) -> Iterator[Mutant]:
    """Flip the parity of a producer's acquire (a cycle) or of a consumer's data wait."""
    for b, w in _loop_waits(src):
        kind = _wait_kind(src, b, w)
        if kind is None:
            continue
        new = "%mut_flip"
        text = src.replace_in_op(w.op, f"{w.operand}, {w.phase}", f"{w.operand}, {new}",
                                 before=["%mut_one = arith.constant 1 : i32", f"{new} = arith.xori {w.phase}, %mut_one : i32"])
        if text is None:
            continue
        if kind == "release":
            why = (f"the producer's acquire at line {w.line} on {b.name} now awaits the opposite parity: on the first "
                   "use of a slot it blocks until the consumer releases that slot, but the consumer first waits "
                   "for the data this producer has not loaded yet: a cycle, the kernel hangs.")
        else:
            why = (f"the consumer's data wait at line {w.line} on {b.name} now awaits the opposite parity: it passes "
                   "before the data lands and releases the slot early, so the producer re-arms the barrier "
                   "(barrier_expect) while the previous phase is pending; two loads' bytes complete one phase, a "
                   f"phase is lost and a later wait never returns ({GPU_NOTE}).")
        yield Mutant(f"flip_parity_{kind}_L{w.line}", "flip_parity", text, [{"kind": HANG}], [], why, w.line,
                     f"phase {w.phase} -> xori 1", {"wait_kind": kind})


def op_init_count(src: Source) -> Iterator[Mutant]:
    """Raise a barrier's init count by one."""
    for b in src.barriers:
        if not src.needs_completion(b) or not src.arrivals(b):
            continue
        for u in b.uses:
            if u.role is not Role.INIT or u.count is None:
                continue
            n = u.count
            text = src.replace_in_op(u.op, f"{u.operand}, {n}", f"{u.operand}, {n + 1}")
            if text is None:
                continue
            why = (f"{b.name} is initialized at line {u.line} for {n + 1} arrivals per phase but its arrivals still "
                   f"deliver {n} per round; a waiter needs one completion per round and gets fewer, so the "
                   "pipeline stalls (an arrive-count mismatch; hang observed on H200 in ../shared/corpus/gpu).")
            yield Mutant(f"init_count_L{u.line}_{n + 1}", "init_count", text, [{"kind": "deadlock.parity_cadence"}],
                         ["race.*"], why, u.line, f"init count {n} -> {n + 1}")
            break


def op_expect_bytes(src: Source) -> Iterator[Mutant]:
    """Double or halve a barrier_expect's byte count."""
    seen: set[int] = set()
    for b in src.barriers:
        for u in b.uses:
            if u.role is not Role.EXPECT or u.bytes is None or id(u.op) in seen or u.bytes < 2:
                continue
            seen.add(id(u.op))
            for tag, n in (("more", 2 * u.bytes), ("less", u.bytes // 2)):
                text = src.replace_in_op(u.op, f"{u.operand}, {u.bytes}", f"{u.operand}, {n}")
                if text is None:
                    continue
                why = (f"barrier_expect at line {u.line} now announces {n} bytes while its TMA copies deliver "
                       f"{u.bytes}: the transaction count of the phase does not return to zero when the copies "
                       "land (or reaches zero early and goes negative with the rest), so the waiter's phase never "
                       "completes as expected (hang observed on H200 in ../shared/corpus/gpu).")
                # Fewer bytes can also complete the phase while the copy still writes (a read of a
                # half-landed tile), so races are unjudged for "less"; more bytes only delay.
                yield Mutant(f"expect_{tag}_L{u.line}", "expect_bytes", text, [{"kind": "expect.bytes_mismatch"}],
                             ["race.*"] if tag == "more" else [], why, u.line, f"expect {u.bytes} -> {n}")


def op_dup_arrive(src: Source) -> Iterator[Mutant]:
    """Duplicate the only explicit arrive_barrier of a barrier whose count it fills."""
    for b in src.barriers:
        arr = src.arrivals(b)
        if len({id(u.op) for u in arr}) != 1 or arr[0].role is not Role.ARRIVE or not src.needs_completion(b):
            continue
        u = arr[0]
        if u.count is None or not b.init_counts or u.count != max(b.init_counts):
            continue
        # The extra completion must be awaited: the arrive repeats (in a loop) and a loop wait
        # follows it; a once-only arrive after the last wait changes nothing anyone observes.
        if u.loop_depth < 1 or not any(w.loop_depth >= 1 for w in src.waits(b)):
            continue
        text = src.duplicate_op(u.op)
        if text is None:
            continue
        why = (f"arrive_barrier at line {u.line} fills the whole count of {b.name}; done twice it completes two "
               "phases per round, so the barrier's parity returns to where the waiter started and the waiter "
               f"sees its phase as not completed (a skipped parity; {GPU_NOTE}).")
        yield Mutant(f"dup_arrive_L{u.line}", "dup_arrive", text, [{"kind": HANG}], [], why, u.line,
                     "arrive duplicated")


def op_dup_wait(src: Source) -> Iterator[Mutant]:
    """Duplicate a wait in place: benign."""
    for b, w in _loop_waits(src):
        text = src.duplicate_op(w.op)
        if text is None:
            continue
        why = (f"the wait at line {w.line} is repeated with the same barrier and parity; when the first returns its "
               "phase has completed, and the barrier cannot complete another phase of the same parity before this "
               "partition moves on (it needs two more completions), so the copy returns at once: harmless "
               f"(ok on H200 for this operator, ../shared/corpus/gpu).")
        yield Mutant(f"dup_wait_L{w.line}", "dup_wait", text, [{"kind": "wait.redundant"}], NO_ERRORS_BENIGN,
                     why, w.line, "wait duplicated")


def op_drop_wait(src: Source) -> Iterator[Mutant]:
    """Drop a producer's acquire (race.missing_acquire) or a consumer's data wait
    (race.unsynchronized_read)."""
    for b, w in _loop_waits(src):
        kind = _wait_kind(src, b, w)
        if kind is None or _subsumed(src, b, w, kind):
            continue
        text = src.delete_op(w.op)
        if text is None:
            continue
        if kind == "release":
            why = (f"the producer's wait at line {w.line} on {b.name} was its acquire of the slot it then loads "
                   "into; without it the TMA load overwrites the slot while a consumer may still read it (a hang "
                   "through parity aliasing is possible too and is left unjudged).")
            exp = [{"kind": "race.missing_acquire", "partition": _p(w)}]
        else:
            why = (f"the wait at line {w.line} on TMA-fed barrier {b.name} was the consumer's only proof that the "
                   "data landed; without it the reader reads the slot unsynchronized (and, unthrottled, may complete "
                   "two phases of its release barrier before the producer polls: a possible hang, left unjudged).")
            exp = [{"kind": "race.unsynchronized_read", "partition": _p(w)}]
        yield Mutant(f"drop_wait_{kind}_L{w.line}", "drop_wait", text, exp, NOT_FROM_DROPPED_WAIT, why, w.line,
                     "wait removed", {"wait_kind": kind})


def op_zero_store(src: Source) -> Iterator[Mutant]:
    """Insert, after the epilogue's release of an accumulator, a zero tmem_store into it from the
    epilogue partition, inside the persistent loop; the MMA partition self-zeroes it (useD)."""
    mmas = [op for op in src.ops if op.name == "ttng.tc_gen5_mma"]
    for load in src.ops:
        if load.name != "ttng.tmem_load" or not load.operands:
            continue
        if sum(1 for a in load.ancestors() if a.name in ("scf.for", "scf.while")) < 1:
            continue
        tr = src.analysis.tracer.trace(load.operands[0], load)
        root_op = tr.root
        if root_op is None or tr.column_offset is not None:  # a packed column view is another buffer
            continue
        part = src.analysis.partition_name(load)
        writer = None
        for m in mmas:
            if len(m.operands) >= 4 and src.analysis.tracer.trace(m.operands[2], m).root is root_op \
                    and src.analysis.partition_name(m) != part and _self_zeroing(src, m):
                writer = m
        if writer is None:
            continue
        # The release after the read: an arrive on a barrier the writer's partition waits on.
        wpart = src.analysis.partition_name(writer)
        nxt = src.next_sync_or_memory_op(load)
        while nxt is not None and not any(
                u.role is Role.ARRIVE and any(w.partition == wpart for w in src.waits(b))
                for b, u in src.analysis.barriers.uses_at(nxt)):
            nxt = src.next_sync_or_memory_op(nxt)
        if nxt is None or nxt.block is not load.block or not src.alone_on_line(nxt):
            continue
        # Unordered only if the release is the reader's only signal to the writer's partition in
        # the whole loop body: any other arrive it waits on, later in this iteration or earlier in
        # the next (the back edge), would order the store before the writer's next MMA.
        loop = next(a for a in load.ancestors() if a.name in ("scf.for", "scf.while"))
        body = [x for x in loop.walk() if x is not loop and x is not nxt]
        if any(u.role in ARRIVALS and any(w.partition == wpart for w in src.waits(b))
               for x in body for b, u in src.analysis.barriers.uses_at(x)):
            continue
        seg = src.op_bytes(load).decode()
        m = re.search(r":\s*(!ttg\.memdesc<[^>]*>)\s*->\s*(tensor<[^>]*>)", seg)
        if not m:
            continue
        md_type, tensor_type = m.group(1), m.group(2)
        text = src.insert_after(nxt, [
            f"%mut_zero = arith.constant dense<0.000000e+00> : {tensor_type}",
            "%mut_true = arith.constant true",
            f"ttng.tmem_store %mut_zero, {load.operands[0]}, %mut_true : {tensor_type} -> {md_type}",
        ])
        why = (f"partition {part} zeroes the accumulator it read at line {load.line} after releasing it (line "
               f"{nxt.line}); the MMA at line {writer.line} in another partition initializes it itself (useD), so "
               "the store is redundant and, being after the release, unordered with the next tile's MMA: it can "
               "clobber the next accumulation (the seed's redundant-zero-store race).")
        yield Mutant(f"zero_store_L{load.line}", "zero_store", text,
                     [{"kind": "race.redundant_zero_store"}], ["deadlock.*", "phase.constant_in_loop", "expect.bytes_mismatch"],
                     why, nxt.line, "zero tmem_store inserted")
        return


def _self_zeroing(src: Source, mma: Operation) -> bool:
    """An MMA that initializes its accumulator itself inside a persistent loop: its useD is the
    constant false (the first MMA of a tile, peeled), or a non-constant flag while the MMA sits
    two loops deep (tile loop around K loop), where the flag restarts false every tile."""
    use_d = mma.operands[3]
    value = src.constant_of(use_d)
    depth = sum(1 for a in mma.ancestors() if a.name in ("scf.for", "scf.while"))
    if value == 0:
        return depth >= 1
    return value is None and depth >= 2


BASIC: dict[str, Callable[[Source], Iterator[Mutant]]] = {
    "drop_only_arrival": op_drop_only_arrival,
    "const_phase": op_const_phase,
    "flip_parity": op_flip_parity,
    "init_count": op_init_count,
    "expect_bytes": op_expect_bytes,
    "dup_arrive": op_dup_arrive,
    "dup_wait": op_dup_wait,
    "drop_wait": op_drop_wait,
    "zero_store": op_zero_store,
}
