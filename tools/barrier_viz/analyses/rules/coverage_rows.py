"""The coverage tables' missing rows as findings: `race.packed_tmem_overwrite`,
`race.redundant_zero_store`, `buffer.single_copy` (`structure/coverage.py` computes the tables;
this module declares what their rows mean as verdicts).

`token.not_loop_carried` is declared here too, and deliberately not reported: compiler output
re-seeds a persistent tile's TMEM tokens from the allocation and orders cross-tile reuse with
explicit back-edges, which the packed-TMEM rows and `race.missing_acquire` check instead.
"""

from __future__ import annotations

from ..model.findings import Kind, Severity
from ..model.kinds import KindDoc, Rule
from ..structure.coverage import coverage_findings

RULE = Rule("coverage_rows", __name__, coverage_findings, also_emits=(Kind.MODEL_LIMIT,), docs=(
    KindDoc(
        Kind.RACE_PACKED_TMEM_OVERWRITE,
        "An MMA overwrites column-packed TMEM that another partition may still read.",
        "The packed-TMEM coverage table lists, for every small buffer the memory planner packed "
        "into spare columns of a larger TMEM allocation, whether the full-overwrite writer (an MMA "
        "with `useD = false`, a full-tile `tmem_store`) waits for each other-partition reader of "
        "those columns at that reader's cadence. A missing row is this finding; runs report the "
        "same race.",
        "The overwrite rewrites every column of the owner, the packed ones included: a reader not "
        "yet done (a softmax reading `alpha` or `m_ij`) sees the next tile's values. The missing "
        "barrier is an absent back-edge, invisible to arrive/wait balancing.",
        "%qk = ttng.tmem_alloc ...                 // alpha packed into spare columns of %qk\n"
        "ttng.tc_gen5_mma %q, %k, %qk, %false ...  // overwrites alpha; no wait on its reader's release",
        "In the writer's partition, wait on the range's release at the reader's loop level.",
        (Severity.error, Severity.warning, Severity.info),
        "An error; a warning when the range is ordered today only incidentally (through another "
        "channel), or when a run's race on aliased TMEM is not judged; info when `check` demotes "
        "it. In a CTA cluster the rows become one `model.limit` note."),
    KindDoc(
        Kind.RACE_REDUNDANT_ZERO_STORE,
        "A zero store into an accumulator the MMA initialises anyway (useD = false).",
        "The accumulator coverage table finds an explicit `tmem_store` of zeros into an MMA "
        "accumulator whose first MMA already ignores it (`useD = false`), in another partition of "
        "a persistent loop, and says whether barriers order it against the MMA across tiles.",
        "The store is wasted work at best. Unordered, the zeroing of one tile can land while the "
        "MMA of another still accumulates into the same TMEM: wrong results.",
        "// partition A, each tile\n"
        "ttng.tmem_store %zeros, %acc\n"
        "// partition B, each tile\n"
        "ttng.tc_gen5_mma %a, %b, %acc, %first ...  // useD = false on the first k-step",
        "Drop the zero store; the first MMA of each tile initialises the accumulator.",
        (Severity.error, Severity.warning),
        "An error when the store is unordered with the MMA; a warning (outcome: harmless) when it "
        "is ordered before it."),
    KindDoc(
        Kind.BUFFER_SINGLE_COPY,
        "A buffer with a single copy crosses partitions: producer and consumer serialize.",
        "Finds a shared buffer (`buffer.copy = 1`) written in one partition and read in another.",
        "Not a bug: the producer must wait for every release before refilling it, so the two "
        "partitions take turns instead of overlapping (no pipelining).",
        "%buf = ttg.local_alloc {buffer.copy = 1 : i32, buffer.id = 3 : i32}",
        "Give the buffer two or more copies if the partitions should overlap.",
        (Severity.info,), "Always info (harmless)."),
    KindDoc(
        Kind.TOKEN_NOT_LOOP_CARRIED,
        "An NVWS token or aref stage not carried through the loop it is used in (not reported).",
        "Declared for the shape, not raised by any rule: in real compiler output every persistent "
        "tile re-seeds its TMEM tokens from the allocation and drops the tile's last token, and "
        "the code partitioner orders cross-tile reuse with explicit back-edges.",
        "A token that is not carried is the normal form, not evidence of a race: the packed-TMEM "
        "rows and `race.missing_acquire` judge the reuse it would stand for.",
        "scf.for ... iter_args(%tok = %alloc_tok) {  // each tile restarts from the allocation's token\n"
        "  ...\n"
        "}",
        "Nothing to fix: the reuse it would stand for is judged by the packed-TMEM rows and `race.missing_acquire`.",
        (Severity.warning,), "Would be a warning (outcome: wrong results); never emitted today."),
))
