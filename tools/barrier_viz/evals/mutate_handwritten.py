"""Mutation operators for idioms of hand-written warp specialization (Gluon, TLX, CUTLASS style).

Compiler-generated warp specialization derives every phase from the loop counter and starts its
producers on the `phase ^ 1` of a fresh barrier. Hand-written kernels add idioms of their own,
each with its own way to go wrong, and these operators make exactly one such mistake:

* `drop_pre_arrive` — an empty barrier is pre-arrived once before the partitions start, so the
  producer's first wait on each slot (parity 0) passes; dropping one pre-arrival leaves that
  slot's phase 0 to the consumer's release, which needs data the producer has not loaded.
* `phase_no_flip` — the phase bit is a loop-carried value flipped when the ring index wraps
  (`select(wrap, phase ^ 1, phase)`); not flipping it leaves the wait on one parity forever.
* `early_release` — the release of a ring slot moved before the `warpgroup_mma_wait` that
  retires the asynchronous wgmma still reading the slot.
* `init_count_less` — a barrier released by several partitions (init count n >= 2) initialized
  for n - 1 arrivals.

The same engine (`mutate_engine.Source`, `Mutant`; `mutate.mutants()`) applies them; like every
other operator, each states what its edit must cause from mbarrier semantics, and where that
depends on timing it says so and leaves the outcome to the GPU run (evals/gen/gluon_probe.py).
"""

from __future__ import annotations

from typing import Iterator

from ..facts.barriers import Role
from ..ir.model import Operation
from .mutate_engine import HANG, Mutant, Source


def _loop_arrivals(src: Source, b) -> list:
    return [u for u in src.arrivals(b) if u.loop_depth >= 1]


def op_drop_pre_arrive(src: Source) -> Iterator[Mutant]:
    """Drop one pre-arrival (an arrive outside every loop and partition) of a barrier that is
    also arrived on and waited on inside loops."""
    for b in src.barriers:
        loop_waits = [w for w in src.waits(b) if w.loop_depth >= 1]
        if not loop_waits or not _loop_arrivals(src, b):
            continue
        for u in src.arrivals(b):
            if u.role is not Role.ARRIVE or u.loop_depth != 0 or u.partition is not None:
                continue
            text = src.delete_op(u.op)
            if text is None:
                continue
            why = (f"arrive_barrier at line {u.line} pre-arrives one slot of {b.name} before the partitions start, "
                   "completing its phase 0 so that the producer's first wait on that slot (parity 0) passes. "
                   "Without it phase 0 of that slot completes only when a consumer releases the slot, which it "
                   "does only after consuming data the producer loads after that wait: a cycle, the kernel hangs.")
            yield Mutant(f"drop_pre_arrive_L{u.line}", "drop_pre_arrive", text, [{"kind": HANG}], ["race.*"], why,
                         u.line, f"removed pre-arrival on {u.operand}")


def _yield_of(block) -> Operation | None:
    ops = block.operations if block is not None else []
    return ops[-1] if ops and ops[-1].name == "scf.yield" else None


def op_phase_no_flip(src: Source) -> Iterator[Mutant]:
    """Keep a loop-carried phase bit from flipping when the ring index wraps: the yielded
    `select(wrap, phase ^ 1, phase)` becomes `select(wrap, phase, phase)` (the `phase ^ 1` itself
    stays, since CSE may share it with a wait's `phase ^ 1` operand)."""
    waited = {u.phase for b in src.barriers for u in src.waits(b) if u.phase}
    for op in src.ops:
        if op.name != "arith.xori" or len(op.operands) != 2 or op.block is None:
            continue
        phase, one = op.operands
        if src.constant_of(one) != 1:
            phase, one = one, phase
            if src.constant_of(one) != 1:
                continue
        args = {a.name: a for a in op.block.arguments}
        if phase not in args:
            continue
        users = [x for x in op.block.operations if x.name == "arith.select" and len(x.operands) == 3
                 and x.operands[1] == op.results[0] and x.operands[2] == phase]
        yld = _yield_of(op.block)
        if len(users) != 1 or yld is None or not users[0].results:
            continue
        pos = args[phase].index - 1  # block argument 0 is the induction variable
        if pos < 0 or pos >= len(yld.operands) or yld.operands[pos] != users[0].results[0]:
            continue
        # The bit must be a phase: some wait in the loop reads it (or its negation).
        negations = {x.results[0] for x in op.block.operations if x.name == "arith.xori" and phase in x.operands
                     and x.results}
        if not ({phase} | negations) & waited:
            continue
        sel = users[0]
        text = src.replace_in_op(sel, f"{sel.operands[0]}, {op.results[0]}, {phase}", f"{sel.operands[0]}, {phase}, {phase}")
        if text is None:
            continue
        why = (f"the phase bit {phase} is carried by the loop and flipped (line {sel.line}) when the ring index "
               "wraps; without the flip every round waits on the parity of the first round. The barrier's phases "
               "still alternate, so from the second round on the wait either passes on a phase completed a round "
               "earlier (a read before the data lands, or a refill before the slot is released: a race, and the "
               "extra completions can then leave a later wait unsatisfied) or waits for a phase that needs this "
               "partition's own progress (a hang). Which one happens depends on which wait reads the bit; the GPU "
               "run decides.")
        yield Mutant(f"phase_no_flip_L{sel.line}", "phase_no_flip", text, [], ["expect.bytes_mismatch"], why,
                     sel.line, f"select(wrap, {op.results[0]}, {phase}) -> select(wrap, {phase}, {phase})")


def op_early_release(src: Source) -> Iterator[Mutant]:
    """Move the release of a ring slot above the read it releases: above the
    `warp_group_dot_wait` that retires an asynchronous wgmma reading the slot, or above the
    `local_load` that reads it (the release follows that read, perhaps after a proxy fence)."""
    for b in src.barriers:
        for u in src.arrivals(b):
            if u.role is not Role.ARRIVE or u.loop_depth < 1 or u.op.block is None:
                continue
            ops = u.op.block.operations
            k = ops.index(u.op)
            read = None
            between: list[Operation] = []
            for j in range(k - 1, -1, -1):
                if ops[j].name in ("ttng.warp_group_dot_wait", "ttg.local_load"):
                    read = ops[j]
                    break
                if ops[j].name.startswith(("ttng.", "scf.")) and ops[j].name != "ttng.fence_async_shared":
                    break
                between.append(ops[j])
            if read is None:
                continue
            r = ops.index(read)
            if read.name == "ttng.warp_group_dot_wait" and not any(
                    x.name == "ttng.warp_group_dot" and b"isAsync = true" in src.op_bytes(x) for x in ops[:r]):
                continue
            # Ops between the read and the arrive that the arrive needs (its barrier's index) move too.
            needed = [x for x in reversed(between) if set(x.results) & set(u.op.operands)]
            if any(set(x.operands) & set(r for y in between for r in y.results) for x in needed):
                continue
            moved = needed + [u.op]
            if not all(src.alone_on_line(x) for x in moved + [read]):
                continue
            start_r, _ = src.line_span(read)
            edits = [(start_r, start_r, b"".join(src.raw[slice(*src.line_span(x))] for x in moved))]
            edits += [(*src.line_span(x), b"") for x in moved]
            text = src.splice(edits)
            if read.name == "ttng.warp_group_dot_wait":
                what = (f"the asynchronous warp_group_dot retired by the warp_group_dot_wait at line {read.line} reads "
                        "from shared memory; moved above that wait, the producer may refill the slot (TMA) while the "
                        "wgmma still reads it")
            else:
                what = (f"the local_load at line {read.line} reads; moved above that read, the producer may refill the "
                        "slot (TMA) before or while it is read")
            why = (f"the arrive at line {u.line} releases a slot of {b.name} that {what}: a race on the slot (wrong "
                   "operands when the refill wins). Every arrival still happens, so no phase is lost: no hang.")
            yield Mutant(f"early_release_L{u.line}", "early_release", text, [], ["deadlock.*", "hang"], why, u.line,
                         f"arrive moved above {read.name}", {"read": read.name})


def op_init_count_less(src: Source) -> Iterator[Mutant]:
    """Lower by one the init count of a barrier that several arrivals complete (count >= 2)."""
    for b in src.barriers:
        if not src.needs_completion(b) or len({id(u.op) for u in src.arrivals(b)}) < 2:
            continue
        for u in b.uses:
            if u.role is not Role.INIT or u.count is None or u.count < 2:
                continue
            n = u.count
            text = src.replace_in_op(u.op, f"{u.operand}, {n}", f"{u.operand}, {n - 1}")
            if text is None:
                continue
            why = (f"{b.name} is initialized at line {u.line} for {n - 1} arrivals per phase while {n} partitions "
                   "arrive on it every round: a phase completes before the last of them released the slot, so the "
                   "waiter refills a slot still being read (a race), and the surplus arrival completes a further "
                   "phase, which shifts the parity the waiter expects (a skipped parity: a hang when the waiter "
                   "polls late). Which one shows depends on timing; the GPU run decides.")
            yield Mutant(f"init_count_less_L{u.line}_{n - 1}", "init_count_less", text, [], ["expect.bytes_mismatch"],
                         why, u.line, f"init count {n} -> {n - 1}")
            break


HANDWRITTEN = {
    "drop_pre_arrive": op_drop_pre_arrive,
    "phase_no_flip": op_phase_no_flip,
    "early_release": op_early_release,
    "init_count_less": op_init_count_less,
}
