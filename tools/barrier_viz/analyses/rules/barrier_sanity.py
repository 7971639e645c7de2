"""Barrier declarations no kernel can mean: counts and byte counts the hardware cannot honour.

* `barrier.init_count_invalid`: `init_barrier` with a count of 0 or less, or above PTX's
  maximum (2^20 - 1). `mbarrier.init` requires 1 <= count < 2^20; the pending-arrival counter
  is 20 bits, so 0 and -1 become a count no set of arrivals brings back to zero: the first wait
  on the barrier never returns (hang). The simulator cannot judge such a slot (it would
  complete at once), so the rule says it, statically.
* `barrier.count_unreachable`: a count above what every thread of the cluster can arrive with
  in one phase (threads x the largest per-op arrival count on the barrier). Each arrival counts
  against one phase, so a phase needs `count` arrivals before its waiters go on: unless some
  thread arrives several times per phase (a loop of arrivals between two waits), the phase
  never completes (hang). A warning, because that loop is possible; the simulation confirms
  the hang when it reaches it.
* `expect.zero_bytes`: `barrier_expect` of 0 bytes on a barrier no TMA copy signals: an
  arrival written as an expect (harmless, an info); with copies, `expect.bytes_mismatch`
  reports the missing bytes as an error.
"""

from __future__ import annotations

from ...facts.barriers import BarrierKind, Role
from ..model.findings import Finding, Kind, Severity, finding
from ..model.kinds import KindDoc, Rule

PTX_MAX_COUNT = (1 << 20) - 1
THREADS_PER_WARP = 32
_ARRIVALS = frozenset({Role.ARRIVE, Role.EXPECT, Role.COMMIT, Role.MMA_ARRIVE})


def barrier_sanity(analysis) -> list[Finding]:
    out: list[Finding] = []
    threads = _cluster_threads(analysis)
    for b in analysis.barriers.barriers:
        if b.kind is not BarrierKind.MBARRIER:
            continue
        arrive_counts = [u.count for u in b.uses if u.role in _ARRIVALS and u.count]
        per_op = max([c for c in arrive_counts if c > 0] or [1])
        for u in b.uses:
            if u.role is not Role.INIT or u.count is None:
                continue
            count = u.count
            if count <= 0 or count > PTX_MAX_COUNT:
                out.append(finding(
                    Kind.BARRIER_INIT_COUNT_INVALID, Severity.error,
                    f"init_barrier at line {u.line} sets {b.name}'s arrival count to {count}; mbarrier.init needs "
                    f"1 <= count <= {PTX_MAX_COUNT:,} (the pending count is 20 bits): no set of arrivals completes "
                    "its phase, so the first wait on it never returns.",
                    lines=[u.line], partitions=[u.partition] if u.partition else [], barrier=b.name,
                    evidence={"count": count, "consequence": "hang"},
                    suggestion="Initialise the barrier with the number of arrivals one phase needs (at least 1)."))
            elif threads is not None and count > threads * per_op:
                reach = threads * per_op
                out.append(finding(
                    Kind.BARRIER_COUNT_UNREACHABLE, Severity.warning,
                    f"init_barrier at line {u.line} asks for {count} arrivals per phase of {b.name}, but the "
                    f"{threads} threads of the {'cluster' if _ctas(analysis) > 1 else 'CTA'} arriving "
                    f"{per_op} at a time give at most {reach}: unless a thread arrives several times per phase, "
                    "the phase never completes and its waiters hang.",
                    lines=[u.line], partitions=[u.partition] if u.partition else [], barrier=b.name,
                    evidence={"count": count, "threads": threads, "max_arrive_count": per_op, "consequence": "hang"},
                    suggestion="Count the arrivals one phase really gets (one per arriving thread or op)."))
    for check in analysis.buffers.expects:
        if check.declared == 0 and not check.copies:
            out.append(finding(
                Kind.EXPECT_ZERO_BYTES, Severity.info,
                f"barrier_expect at line {check.line} expects 0 bytes and no TMA copy signals its barrier: it is a "
                "plain arrival written as an expect.",
                lines=[check.line], partitions=list(check.partitions),
                evidence={"declared": 0, "consequence": "harmless"},
                suggestion="Use arrive_barrier for an arrival without transaction bytes."))
    return out


def _ctas(analysis) -> int:
    try:
        return max(1, int(analysis.num_ctas))
    except (AttributeError, TypeError, ValueError):
        return 1


def _cluster_threads(analysis) -> int | None:
    """Threads of every partition in every CTA of the cluster (None when a warp count is unknown)."""
    warps = 0
    for p in analysis.partitions.partitions:
        if p.parent is not None:
            continue
        if p.warps is None:
            return None
        warps += p.warps
    if warps == 0:
        return None
    return warps * THREADS_PER_WARP * _ctas(analysis)


RULE = Rule("barrier_sanity", __name__, barrier_sanity, docs=(
    KindDoc(
        Kind.BARRIER_INIT_COUNT_INVALID,
        "init_barrier with a count PTX does not allow (0 or less, or 2^20 or more).",
        "Finds an `init_barrier` whose arrival count is outside 1 <= count < 2^20.",
        "The pending-arrival counter is 20 bits: 0 or -1 become a count no set of arrivals brings "
        "back to zero, so the first wait on the barrier never returns. The simulator cannot see "
        "it (such a slot would complete at once), so the rule says it.",
        "ttng.init_barrier %bar, 0                 // count 0",
        "Initialise with the number of arrivals per phase (at least 1).",
        (Severity.error,), "An error; its outcome is the one stated in the evidence (hang)."),
    KindDoc(
        Kind.BARRIER_COUNT_UNREACHABLE,
        "A barrier count above what every thread of the cluster can arrive with in one phase.",
        "Finds an `init_barrier` count larger than threads x the largest per-op arrival count on "
        "that barrier.",
        "A phase completes after `count` arrivals. Unless some thread arrives several times per "
        "phase (a loop of arrivals between two waits), the phase never completes: a hang.",
        "ttng.init_barrier %bar, 512               // 4 warps x 32 threads arrive once each: 128",
        "Set the count to the arrivals one phase really gets.",
        (Severity.warning,), "A warning (the repeated arrival is possible); the outcome in the evidence is a hang."),
    KindDoc(
        Kind.EXPECT_ZERO_BYTES,
        "barrier_expect of 0 bytes on a barrier no TMA copy signals.",
        "Finds a `barrier_expect` of zero bytes on a barrier with no copy completing transactions on it.",
        "Nothing is wrong: it is an arrival written as an expect. With copies on the barrier, "
        "`expect.bytes_mismatch` reports the missing bytes as an error instead.",
        "ttng.barrier_expect %bar, 0, %true        // an arrive in disguise",
        "Write `ttng.arrive_barrier %bar, 1` if an arrival is meant.",
        (Severity.info,), "Info; the outcome in the evidence is harmless."),
))
