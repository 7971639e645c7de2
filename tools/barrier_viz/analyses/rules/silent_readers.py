"""Readers of a TMA-filled slot that release nothing after their read (part of
`race.missing_acquire`).

A TMA refill of a slot must be ordered after every read of the slot by another partition, and
only the reader can say when its read is over: by arriving on a barrier the producer waits on.
`tma_channel.tma_channel_races` checks readers that arrive on something after the read (the
refill must wait on one of those barriers). This module handles the reader that, in its
iteration, arrives on nothing after the read: AutoWS FA backward's computation task
TMA-stores dk from a staging view of the `do` operand SMEM at the end of each tile, and the
Load task refills `do` in the next tile's first inner iteration, ordered by nothing
(facebookexperimental/triton b6180744c added the missing barrier).

Such a reader may still release the slot one iteration later, at the top of its next
iteration, before the read (a rotated release: "done with the previous tile" signalled when
the next one starts). That arrival follows the read in program order, so it orders the read
before the refill when the producer waits on its barrier at the same cadence: the reader
arrives directly in the body of the loop whose iterations reuse the slot (not in a loop nested
in it), and the producer waits on that barrier directly in the body of its corresponding loop.
An arrival at another cadence does not count: FA backward's computation task releases its `m`
ring slots once per inner iteration (and in the peeled first one), and the Load task waits on
them inside its inner loop, two uses later; that wait orders a later refill, never the first
one after the tile's last read. Which phase a wait pairs with is not computed here, and a chain
through a third partition (the MMA partition's release of `do`) is not followed for the same
reason: each hop pairs with its own iteration.

Only a refill inside a loop, read inside a loop, is judged: a copy issued once fills the slot
once and has nothing to wait for.
"""

from __future__ import annotations

from ...ir.model import Operation
from ..program.order import loop_depth, same_iteration


def _at_depth(ops, part: str, depth: int, analysis):
    return (o for o in ops if loop_depth(o) == depth and analysis.partition_name(o) == part)


def unreleased(analysis, copy: Operation, readers: list[tuple[Operation, int]], waits_by_op: dict,
               barrier_of_use: dict) -> list[Operation] | None:
    """For the (reader, levels out to the loop that reuses the slot) of one partition, none of
    which arrives on anything after its read: None when the refill `copy` is ordered after the
    reads, or is not judged; else the producer's waits at the reuse loop's cadence (for the
    finding). Loop nests of partitions correspond by depth (every partition runs the same tile
    loop), so the producer's loop at the depth of the readers' reuse loop is the one compared."""
    if loop_depth(copy) == 0 or not readers or any(loop_depth(r) == 0 for r, _ in readers):
        return None
    readers = [(r, min(up, loop_depth(r) - 1)) for r, up in readers]  # a loop, not the whole partition
    part = analysis.partition_name(readers[0][0])
    wpart = analysis.partition_name(copy)
    released = {k for r, up in readers for o in _at_depth(same_iteration(r, up), part, loop_depth(r) - up, analysis)
                for k, _ in barrier_of_use.get(id(o), []) if k is not None}
    level = min(loop_depth(r) - up for r, up in readers)
    up_copy = max(0, loop_depth(copy) - level)
    level = loop_depth(copy) - up_copy
    waits = [o for o in _at_depth(same_iteration(copy, up_copy), wpart, level, analysis) if waits_by_op.get(id(o))]
    if any(k in released for o in waits for k, _ in waits_by_op[id(o)]):
        return None
    return waits
