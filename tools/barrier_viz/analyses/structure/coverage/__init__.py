"""Coverage tables: the barriers that *should* exist, enumerated, each marked present or missing.

Per-barrier checks only see barriers that exist. Two hazard classes are an *absent* barrier
(ir-semantics §7.1, §7.2), so they are invisible to arrive/wait balancing:

* **Column-packed TMEM overwrite.** The memory planner packs small TMEM buffers (alpha, m_ij,
  l_i0) into spare columns of a larger allocation (the *owner*). An MMA with `useD = false` (or a
  full-tile `tmem_store`) rewrites every column of the owner, so before it runs again the writer's
  partition must wait for every other-partition reader of every aliased column range — at that
  reader's cadence. One row per aliased range, ✓ or ✗, so an omission is visible.
* **Operand-D accumulator init.** An accumulator the MMA already zeroes (`useD = false` on the
  first iteration) needs no explicit zero `tmem_store`; one surviving in another partition of a
  persistent loop is a redundant cross-partition channel that races the MMA across tiles unless
  barriers order it. One row per accumulator, clean or not.

Both tables work on pre-code-partition IR (task ids, no barriers: the rows say which back-edges
the partitioner must create) and on post-partition IR (regions and barriers: the rows say whether
the wait exists in the writer's partition, at the right loop cadence).

Ordering is decided from program order inside a partition plus barrier edges between
partitions: partition C *releases* after an op when it arrives on a barrier later in the same
iteration; partition W *waits* for it when it waits on that barrier (same full/empty side of a
token) at the same loop depth (same cadence). Chains of such edges through other partitions are
followed (bounded search). Slot indices and exact phases are not compared here; the phase
evaluator and the deadlock simulation check those.

`token.not_loop_carried` is deliberately not reported: in real compiler output (the FA
memory-planner snapshot) every persistent tile re-seeds the inner loop's TMEM tokens from the
allocation's token (`iter_args(%s_31 = %s_6, ...)`) and drops the tile's last token; the code
partitioner orders cross-tile reuse with explicit back-edges instead, which this package and the
missing-acquire rule check. A token that is not carried is the normal form, not evidence of a race.

The package splits these concepts into one module each: `rows` (the tables as JSON-ready rows),
`common` (shared facts and program-order helpers), `ordering` (stage, partitions, release -> wait
chains and pre-partition data flow), `accesses` (TMEM reads and writes), `packed` (table 1 and its
findings), `accumulators` (table 2 and its findings), `single_copy` (`buffer.single_copy`) and
`tables` (both tables of one analysis, `coverage_findings`). Callers import from the package.
"""

from __future__ import annotations

from .common import _memory_operands
from .rows import AccumulatorRow, ConsumerInfo, Coverage, PackedRow, PackedTable, WriterInfo
from .single_copy import single_copy_findings
from .tables import _Coverage, coverage, coverage_findings, happens_before

__all__ = ["AccumulatorRow", "ConsumerInfo", "Coverage", "PackedRow", "PackedTable", "WriterInfo", "_Coverage",
           "_memory_operands", "coverage", "coverage_findings", "happens_before", "single_copy_findings"]
