"""Mutation operators for kernels whose work is data (issue 21: ragged, jagged, grouped, MoE).

In such a kernel every partition loads the same offsets and derives its own trip counts; a
segment can be empty and persistent programs get unequal numbers of segments. These operators
make one mistake each that only such kernels can make, and whose effect can depend on the data:

* `skip_empty_handoff` — the per-segment hand-off arrive that follows a loop whose trip count is
  loaded from memory is predicated on that loop running at least once ("nothing to hand over"):
  the peer still waits once per segment, so an empty segment leaves its phase incomplete (a hang
  whenever some segment is empty, and only then).
* `restart_ring` — an inner loop's ring counters (slot index and phase) restart at their initial
  values for every segment in one partition, while the peer partition carries them across
  segments: the two agree only while every segment's trip count is a multiple of the ring depth.
* `other_slot_handoff` — the arrive of a two-slot hand-off goes to the other slot (`slot ^ 1`):
  each pair of segments still completes both slots once, so the peer's waits all pass when a
  program handles an even number of segments (reading the other slot's data), and the last wait
  hangs when it handles an odd number.
* `drop_handoff_wait` — a wait of a two-slot per-segment hand-off dropped: the reader reads the
  slot before it is filled, or the writer refills it before it was read (a race by construction).
* `drop_store_wait` / `store_wait_more` — a `tma.store_wait` (async_tma_store_wait) that orders
  the rewrite of a TMA store's staging buffer after the store read it is dropped, or allows one
  more store in flight: the buffer is rewritten while the bulk copy may still read it (a race by
  construction, latent when the copy wins). Dropped after the loop, the program may exit with a
  store in flight.

Like every operator of mutate_ops.py, each edit is located with the parser and states what it causes
from mbarrier / bulk-copy semantics; where the outcome depends on the launch the GPU run decides
(evals/gen/dd_probe.py runs each mutant under several schedules).
"""

from __future__ import annotations

import re
from typing import Iterator

from ..facts.barriers import Role
from ..ir.model import Operation
from .mutate_engine import Mutant, Source

_ITER_ARGS = re.compile(r"iter_args\(([^)]*)\)")
_PAIR = re.compile(r"(%[\w.#]+)\s*=\s*(%[\w.#]+)")


def _iter_args(src: Source, op: Operation) -> list[tuple[str, str]]:
    head = src.op_bytes(op).split(b"{", 1)[0].decode()
    m = _ITER_ARGS.search(head)
    return _PAIR.findall(m.group(1)) if m else []


def _enclosing_for(op: Operation) -> Operation | None:
    return next((p for p in op.ancestors() if p.name == "scf.for"), None)


def _partition(op: Operation) -> str:
    """The warp_specialize region (`default`, `partition0`, ...) the op runs in."""
    region = op.parent_region
    while region is not None:
        if region.parent is not None and region.parent.name == "ttg.warp_specialize":
            return region.label or "default"
        region = region.parent.parent_region if region.parent is not None else None
    return "main"


def _loaded(src: Source, name: str, depth: int = 6) -> bool:
    """Whether `name` is computed from a value loaded from global memory (tt.load)."""
    op = src.defining_op(name)
    if op is None or depth == 0:
        return False
    if op.name == "tt.load":
        return True
    return any(_loaded(src, x, depth - 1) for x in op.operands)


def _data_loops(src: Source) -> list[Operation]:
    """Inner scf.for loops whose upper bound is loaded from memory (a segment's trip count)."""
    out = []
    for op in src.ops:
        if op.name == "scf.for" and len(op.operands) >= 2 and _enclosing_for(op) is not None \
                and _loaded(src, op.operands[1]):
            out.append(op)
    return out


def _fresh(src: Source, base: str) -> str:
    name, k = f"%{base}", 0
    while name.encode() + b" " in src.raw or name.encode() + b"," in src.raw:
        k += 1
        name = f"%{base}{k}"
    return name


def op_skip_empty_handoff(src: Source) -> Iterator[Mutant]:
    """Predicate the arrive that follows a data-trip-count loop (in the same segment body) on
    that loop running at least once."""
    for loop in _data_loops(src):
        body = loop.block
        if body is None:
            continue
        ops = body.operations
        after = ops[ops.index(loop) + 1:]
        for op in after:
            uses = src.analysis.barriers.uses_at(op)
            if op.name != "ttng.arrive_barrier" or not uses or uses[0][1].role is not Role.ARRIVE:
                continue
            pred = op.operands[-1] if len(op.operands) >= 2 else None
            if pred is None or src.constant_of(pred) not in (1, -1):
                continue
            lb, ub = loop.operands[0], loop.operands[1]
            cond = _fresh(src, "dd_nonempty")
            text = src.replace_in_op(op, f", {pred} :", f", {cond} :", before=[f"{cond} = arith.cmpi sgt, {ub}, {lb} : i32"])
            if text is None:
                continue
            b, u = uses[0]
            bname = b.name
            why = (f"the arrive at line {u.line} hands the segment over to the partition waiting on {bname}, once "
                   f"per segment; predicated on the loop at line {loop.line} running at least once (its trip count "
                   f"{ub} is loaded from memory), it is skipped for an empty segment while the peer still waits once "
                   "per segment: that phase never completes, a hang whenever some program meets an empty segment "
                   "(a launch without empty segments completes).")
            yield Mutant(f"skip_empty_handoff_L{u.line}", "skip_empty_handoff", text, [], [], why, u.line,
                         f"arrive predicated on {ub} > {lb}")
            break


def op_restart_ring(src: Source) -> Iterator[Mutant]:
    """Restart an inner data-trip-count loop's carried ring counters at the outer loop's
    initial values (constants) in one partition, for every segment."""
    for loop in _data_loops(src):
        outer = _enclosing_for(loop)
        outer_init = dict(_iter_args(src, outer))
        pairs = _iter_args(src, loop)
        old, new = [], []
        for inner, init in pairs:
            const = outer_init.get(init)
            if const is not None and src.constant_of(const) == 0:
                old.append(f"{inner} = {init}")
                new.append(f"{inner} = {const}")
        if len(old) < 1 or len(old) != sum(1 for _, i in pairs if i in outer_init):
            continue
        head_old = ", ".join(f"{a} = {b}" for a, b in pairs)
        head_new = head_old
        for o, n in zip(old, new):
            head_new = head_new.replace(o, n)
        text = src.replace_in_op(loop, head_old, head_new)
        if text is None:
            continue
        part = _partition(loop)
        why = (f"the loop at line {loop.line} (partition {part}) carries its ring slot index and phase across "
               f"segments, as its peer does; restarted at slot 0, phase 0 for every segment here while the peer "
               "carries them, the two sides disagree on which slot and parity come next as soon as a segment's "
               "trip count is not a multiple of the ring depth: the waiter polls a slot the peer did not fill (or "
               "a parity already passed). Depending on the lengths that hangs or reads a slot out of turn; with "
               "every length a multiple of the ring depth nothing changes. The GPU runs decide.")
        yield Mutant(f"restart_ring_L{loop.line}", "restart_ring", text, [], [], why, loop.line,
                     f"iter_args {head_old} -> {head_new}", {"partition": part})


def op_other_slot_handoff(src: Source) -> Iterator[Mutant]:
    """Send the arrive of a two-slot hand-off (barrier array of 2, indexed by a loop-carried
    slot) to the other slot."""
    for b in src.barriers:
        if b.slots != 2:
            continue
        for u in src.arrivals(b):
            if u.role is not Role.ARRIVE or u.loop_depth < 1:
                continue
            # (names repeat across isolated partition regions: look in the arrive's own block)
            idx_op = next((o for o in u.op.block.operations if u.op.operands[0] in o.results), None)
            if idx_op is None or idx_op.name != "ttg.memdesc_index" or len(idx_op.operands) != 2:
                continue
            slot = idx_op.operands[1]
            if src.constant_of(slot) is not None:
                continue
            scope = idx_op.parent_op
            if scope is None or sum(idx_op.results[0] in o.operands for o in scope.walk()) != 1:
                continue  # the indexed barrier is shared with another use
            one, other = _fresh(src, "dd_one"), _fresh(src, "dd_other_slot")
            text = src.replace_in_op(idx_op, f"[{slot}]", f"[{other}]",
                                     before=[f"{one} = arith.constant 1 : i32", f"{other} = arith.xori {slot}, {one} : i32"])
            if text is None:
                continue
            why = (f"the arrive at line {u.line} completes slot {slot} of the two-slot hand-off {b.name}; sent to slot "
                   f"{slot} ^ 1, each pair of segments still completes both slots once, so with an even number of "
                   "segments per program every wait passes (on the other slot's data: a read out of turn), and with "
                   "an odd number the program's last wait, on the slot nobody arrived on, never passes: a hang.")
            yield Mutant(f"other_slot_handoff_L{u.line}", "other_slot_handoff", text, [], [], why, u.line,
                         f"arrive on {b.name}[{slot} ^ 1]")


def op_store_wait(src: Source) -> Iterator[Mutant]:
    """Drop a `ttng.async_tma_store_wait`, or let it leave one more store in flight."""
    for op in src.ops:
        if op.name != "ttng.async_tma_store_wait":
            continue
        m = re.search(rb"pendings = (\d+)", src.op_bytes(op))
        if not m:
            continue
        n = int(m.group(1))
        in_loop = _enclosing_for(op) is not None
        if in_loop:
            hazard = ("the staging buffer the next local_store rewrites may still be read by a TMA store in flight: "
                      "a race by construction (wrong values in global memory when the rewrite wins; latent when the "
                      "bulk copy finishes first). No barrier changes: no hang.")
        else:
            hazard = ("the program may exit with a TMA store still reading its shared memory (a race with the next "
                      "CTA on that SM, or a fault); no barrier changes: no hang.")
        text = src.delete_op(op)
        if text is not None:
            yield Mutant(f"drop_store_wait_L{op.line}", "drop_store_wait", text, [], ["deadlock.*", "hang"],
                         f"the tma.store_wait(pendings={n}) at line {op.line} removed: {hazard}", op.line,
                         f"removed async_tma_store_wait pendings={n}", {"in_loop": in_loop})
        if in_loop:
            text = src.replace_in_op(op, f"pendings = {n}", f"pendings = {n + 1}")
            if text is not None:
                yield Mutant(f"store_wait_more_L{op.line}", "store_wait_more", text, [], ["deadlock.*", "hang"],
                             f"the tma.store_wait at line {op.line} allows {n + 1} stores in flight instead of {n}: "
                             f"{hazard}", op.line, f"pendings {n} -> {n + 1}", {"in_loop": in_loop})


def op_drop_handoff_wait(src: Source) -> Iterator[Mutant]:
    """Drop a wait on a two-slot hand-off barrier inside the segment loop."""
    for b in src.barriers:
        if b.slots != 2:
            continue
        for w in src.waits(b):
            if w.loop_depth < 1:
                continue
            text = src.delete_op(w.op)
            if text is None:
                continue
            reads = any(o.name == "ttg.local_load" for o in w.op.block.operations[w.op.block.operations.index(w.op):])
            what = ("reads the hand-off slot before the producer filled it (a read out of turn)" if reads else
                    "rewrites the hand-off slot before the reader released it (a write over unread data)")
            why = (f"the wait at line {w.line} on {b.name} orders this partition after its peer's hand-off; without "
                   f"it the partition {what}: a race by construction. Every arrival still happens, but the waiter "
                   "no longer throttles its side, so a fast side can complete two phases of its own barrier before "
                   "the other polls (parity aliasing): a hang is possible too. The GPU run decides.")
            yield Mutant(f"drop_handoff_wait_L{w.line}", "drop_handoff_wait", text, [], [], why, w.line,
                         f"removed wait on {b.name}")


DATA_DEPENDENT = {
    "drop_handoff_wait": op_drop_handoff_wait,
    "skip_empty_handoff": op_skip_empty_handoff,
    "restart_ring": op_restart_ring,
    "other_slot_handoff": op_other_slot_handoff,
    "store_wait": op_store_wait,
}
# Edits that race by construction: a GPU run that completed correctly did not take the bad
# schedule (a latent race), so such a case still expects the race.
RACE_BY_CONSTRUCTION = frozenset({"drop_store_wait", "store_wait_more", "drop_handoff_wait"})


def data_mutants(text: str) -> list[Mutant]:
    """Every data-dependent mutant of `text`, each re-parsed to make sure the edit is valid."""
    from .mutate_engine import _original_line, _parses_cleanly

    src = Source(text)
    out = []
    for fn in DATA_DEPENDENT.values():
        for m in fn(src):
            if _parses_cleanly(m.text):
                m.extra.setdefault("original", _original_line(text, m.line))
                out.append(m)
    return out
