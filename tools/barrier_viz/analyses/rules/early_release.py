"""`race.early_release`: a reader releases a TMA-filled slot before its read of it is done.

A consumer frees a ring slot by arriving on the barrier its producer waits on before the next
TMA copy into that slot (the empty barrier). The arrival is the consumer's promise that it no
longer reads the slot, so it must come after the read has finished:

* after the `local_load` of the slot (a synchronous read: it must precede the release);
* after the `warp_group_dot_wait` that retires an asynchronous `warp_group_dot` reading the slot
  (wgmma reads shared memory until it retires, not when it is issued).

A release placed before either lets the producer refill the slot while it is still read: the
reader sees the next tile's data (hand-written kernels get this wrong by moving the arrive up to
overlap it with the MMA; on the H200 such a Gluon GEMM computed wrong values,
evals/cases/gpu-h200.gluon-gemm_ws.early_release_L67).

The scan is conservative: any `warp_group_dot_wait` (whatever its `pendings`) is taken to retire
the reads before it, and only arrivals on a barrier the slot's writer waits on right before
filling that buffer (not before filling another one), in the same iteration as the read and on
the same slot index, count as its release.
"""

from __future__ import annotations

from ...facts.barriers import Role
from ...ir.model import Operation
from ...ir.vocab import LOOP_OPS
from ..model.findings import Finding, Kind, Severity, finding
from ..model.kinds import KindDoc, Rule
from ..program.operands import buffer_name, traced_root
from ..program.order import following_in_iteration, loop_depth, preceding_in_iteration

_SYNC_READS = ("ttg.local_load",)
_ASYNC_READS = ("ttng.warp_group_dot",)


def early_releases(analysis) -> list[Finding]:
    waits_by_op: dict[int, set] = {}
    arrives_by_op: dict[int, set] = {}
    fills_by_op: dict[int, set] = {}  # the barrier a TMA copy completes (the slot's full barrier)
    for b in analysis.barriers.barriers:
        if b.alloc is None:
            continue
        for u in b.uses:
            if u.role in (Role.WAIT, Role.ACQUIRE):
                waits_by_op.setdefault(id(u.op), set()).add(id(b.alloc))
            elif u.role is Role.ARRIVE and u.slots:
                arrives_by_op.setdefault(id(u.op), set()).add((id(b.alloc), u.slots[-1].value))
            elif u.role is Role.TMA_ARRIVE:
                fills_by_op.setdefault(id(u.op), set()).add(id(b.alloc))
    pname = analysis.partition_name
    # TMA copies into each buffer, and the barriers their partition waits on before the copy.
    writers: dict[tuple, list[Operation]] = {}
    acquired: dict[tuple, set] = {}
    for op in analysis.ops:
        if op.name != "ttng.async_tma_copy_global_to_local" or pname(op) is None or len(op.positional) < 3:
            continue
        buf = traced_root(analysis, op.positional[1], op)
        if buf is None:
            continue
        writers.setdefault(buf, []).append(op)
        acquired.setdefault(buf, set()).update(_acquires(op, waits_by_op))
    out: list[Finding] = []
    seen: set[tuple[int, int]] = set()
    for r in analysis.ops:
        if r.name not in _SYNC_READS + _ASYNC_READS or not r.positional or pname(r) is None:
            continue
        if r.name in _ASYNC_READS and not r.attr("isAsync"):
            continue
        for k in ((0,) if r.name in _SYNC_READS else (0, 1)):
            if k >= len(r.positional):
                continue
            buf = traced_root(analysis, r.positional[k], r)
            if buf not in writers or pname(r) in {pname(w) for w in writers[buf]}:
                continue
            slot = _slot_index(analysis, r.positional[k], r)
            if slot is None:
                continue
            released = {(a, slot) for a in acquired[buf]}  # the same slot's empty barrier
            full = set().union(*(fills_by_op.get(id(w), set()) for w in writers[buf]))
            release = _release_before_done(r, released, arrives_by_op, writers[buf], full, waits_by_op)
            if release is None or (id(r), id(release)) in seen:
                continue
            seen.add((id(r), id(release)))
            how = ("the asynchronous warp_group_dot reading it has not been retired by a warp_group_dot_wait yet"
                   if r.name in _ASYNC_READS else "it is read after the release")
            out.append(finding(
                Kind.RACE_EARLY_RELEASE, Severity.error,
                f"{pname(r)} releases {buffer_name(buf, [(w, None) for w in writers[buf]])} at line {release.line} "
                f"while reading it at line {r.line}: {how}, so the producer's TMA copy (line {writers[buf][0].line}) "
                "can overwrite the slot during the read.",
                lines=sorted({r.line, release.line, writers[buf][0].line}), partitions=[pname(r)],
                evidence={"read_line": r.line, "release_line": release.line,
                          "copy_lines": [w.line for w in writers[buf]]},
                suggestion=("Arrive on the empty barrier after the warp_group_dot_wait that retires this MMA."
                            if r.name in _ASYNC_READS else "Arrive on the empty barrier after the read.")))
    return out


def _acquires(copy: Operation, waits_by_op: dict) -> set:
    """The barriers the producer waits on to acquire the slot `copy` fills: the waits just
    before the copy's group (the copies after one `barrier_expect` on the copy's barrier), back
    to the previous copy or expect. A producer that fills several buffers in one iteration
    acquires each right before filling it; an earlier buffer's acquire is not this one's."""
    ops = copy.block.operations if copy.block is not None else []
    k = ops.index(copy) if copy in ops else 0
    bar = copy.positional[2] if len(copy.positional) > 2 else None
    fills = ("ttng.async_tma_copy_global_to_local", "ttng.barrier_expect")
    out: set = set()
    in_group = True
    for o in reversed(ops[:k]):
        if o.name in fills:
            pos = o.positional
            target = (pos[2] if len(pos) > 2 else None) if o.name == fills[0] else (pos[0] if pos else None)
            if in_group and target == bar:
                continue  # the copy's own group: its expect, its sibling copies
            break
        if waits_by_op.get(id(o)):
            in_group = False
            out |= waits_by_op[id(o)]
    return out


def _slot_index(analysis, name: str, at: Operation) -> str | None:
    """The SSA index of the ring slot a buffer operand selects (`memdesc_index %bufs[%i]`)."""
    d = analysis.values.lookup(name, at)
    op = getattr(d, "op", None)
    if op is not None and op.name == "ttg.memdesc_index" and len(op.operands) == 2:
        return op.operands[1]
    return None


def _release_before_done(read: Operation, released: set, arrives_by_op: dict,
                         writers: list[Operation], full: set = frozenset(),
                         waits_by_op: dict | None = None) -> Operation | None:
    """The arrival on the slot's empty barrier (one the writer acquires, same slot index) that
    precedes the end of `read`, if any. Scanning back from a synchronous read stops at the
    read's own wait on the slot's full barrier (the one the TMA copies complete): a release
    before that wait ended the previous use of the slot (the loop's last step, before a peeled
    epilogue step re-acquires it), not this read."""
    up = max(0, loop_depth(read) - min(loop_depth(w) for w in writers))
    if read.name in _SYNC_READS:
        for p in preceding_in_iteration(read, up):
            if arrives_by_op.get(id(p), set()) & released:
                return p
            if full and waits_by_op is not None and waits_by_op.get(id(p), set()) & full:
                return None
        return None
    it = following_in_iteration(read, up)
    next(it)  # the read itself
    for p in it:
        if p.name == "ttng.warp_group_dot_wait":
            return None
        if arrives_by_op.get(id(p), set()) & released:
            return p
    return None


RULE = Rule("early_release", __name__, early_releases, docs=(KindDoc(
    Kind.RACE_EARLY_RELEASE,
    "A reader releases a TMA-filled slot before its read of it is done.",
    "Finds an arrive on the empty barrier of a slot placed before the `local_load` of that slot, "
    "or before the `warp_group_dot_wait` that retires an asynchronous wgmma reading it.",
    "The arrive promises the producer that the slot is free. Issued early, it lets the next TMA "
    "copy overwrite the slot while the read is still going on: the reader computes with the next "
    "tile's data (an H200 Gluon GEMM computed wrong values this way).",
    "%acc = ttng.warp_group_dot %slot, %b, %acc {isAsync = true}\n"
    "ttng.arrive_barrier %empty, 1              // too early: the wgmma still reads %slot\n"
    "ttng.warp_group_dot_wait %acc {pendings = 0}",
    "Move the arrive after the wait that retires the wgmma (after the `local_load`).",
    (Severity.error,), "Always an error (outcome: wrong results)."),))
