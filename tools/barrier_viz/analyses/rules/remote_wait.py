"""`wait.remote_barrier`: a wait on an mbarrier through a shared::cluster view.

Why it is an error: an mbarrier can be *arrived on* from a peer CTA (`map_to_remote_buffer`
gives the `mapa` address, and the arrive lowers to `mbarrier.arrive.shared::cluster`), but it can
be *waited on* only by its own CTA through its CTA-local address: the fork lowers
`ttng.wait_barrier` to `mbarrier.try_wait.parity.shared::cta.b64` (`test_wait` before sm90) on
the operand's address as it is, and a `shared::cluster` address is not a `shared::cta` one. The
wait then polls memory that is not the barrier, whatever rank the view names (its own included),
so it never sees the phase flip: the multi-CTA deadlock of the fork's 51dd02098 ("arrive remote,
wait local": `barrier_wait` on a remote barrier is forbidden). The interpreter follows the view to
the barrier it names, so without this rule such a run completes.

A barrier operand is a cluster view when its memdesc type is in `#ttng.shared_cluster_memory`
(the type `map_to_remote_buffer` gives its result and views of it keep), or when it is
(a view of) a `map_to_remote_buffer` result through any chain of views and partition captures.
The finding names the CTAs that run the wait (`cta0.main` for a wait predicated on rank 0): a
CTA whose predicate is known false there never polls.
"""

from __future__ import annotations

from ...facts.cluster import RankEvaluator, _may_run, cluster_of, remote_view
from ...ir.model import Operation
from ..model.findings import Finding, Kind, Severity, finding
from ..model.kinds import KindDoc, Rule

CLUSTER_MEMORY = "#ttng.shared_cluster_memory"
WAIT_OPS = frozenset({"ttng.wait_barrier"})


def thread_label(op: Operation) -> str:
    """The interpreter's name for the thread that runs `op`: its warp_specialize region's label
    (`default`, `partition0`, ...), or `main` outside the partitions."""
    child = op
    for anc in op.ancestors():
        if anc.name == "ttg.warp_specialize":
            region = child.block.region if child.block is not None else None
            if region is not None:
                return region.label or f"region{region.index}"
        child = anc
    return "main"


def _cluster_view(analysis, op: Operation) -> Operation | None:
    """The `map_to_remote_buffer` behind `op`'s barrier operand (the op itself when only the type
    says so), or None for a CTA-local barrier."""
    pos = op.positional
    if not pos:
        return None
    via = remote_view(pos[0], op, analysis.values)
    if via is not None:
        return via
    return op if op.types and CLUSTER_MEMORY in op.types[0] else None


def remote_waits(analysis) -> list[Finding]:
    out: list[Finding] = []
    cluster = cluster_of(analysis.sel.ir)
    ranks = RankEvaluator(analysis.values)
    n = max(cluster.size, 1)
    for op in analysis.ops:
        if op.name not in WAIT_OPS:
            continue
        view = _cluster_view(analysis, op)
        if view is None:
            continue
        pred = op.positional[2] if len(op.positional) > 2 else None
        waiters = [r for r in range(n) if _may_run(op, (pred,), r, ranks)]
        if not waiters:
            continue  # no CTA runs it
        label = thread_label(op)
        names = [f"cta{r}.{label}" if n > 1 else label for r in waiters]
        made = f" (made by map_to_remote_buffer at line {view.line})" if view is not op else ""
        out.append(finding(
            Kind.WAIT_REMOTE_BARRIER, Severity.error,
            f"The wait at line {op.line} ({', '.join(names)}) polls its barrier through a shared::cluster view"
            f"{made}: mbarrier try_wait/test_wait take a CTA-local (shared::cta) address only, so it polls memory "
            "that is not the barrier and never sees its phase complete (a hang, whatever rank the view names). "
            "A barrier is arrived on remotely, but waited on only by its own CTA.",
            lines=[op.line] + ([view.line] if view is not op else []), partitions=names,
            evidence={"view_line": view.line, "waiting_ctas": waiters, "operand": op.positional[0]},
            suggestion="Wait on the CTA's own barrier (the local view, before map_to_remote_buffer), predicated on "
                       "the CTA that owns it; keep the remote view for arrives."))
    return out


RULE = Rule("remote_wait", __name__, remote_waits, docs=(KindDoc(
    Kind.WAIT_REMOTE_BARRIER,
    "A wait on an mbarrier through a shared::cluster (peer CTA) view.",
    "Finds a `wait_barrier` whose barrier operand is a `map_to_remote_buffer` result (or a view "
    "of one), or has a `#ttng.shared_cluster_memory` type, and names the CTAs that run it.",
    "A peer CTA may arrive on a barrier, but only its own CTA may wait on it, through its "
    "CTA-local address. `mbarrier.try_wait.shared::cta` on a cluster address polls memory that "
    "is not the barrier, so it never sees the phase flip: a hang.",
    "%r = ttng.map_to_remote_buffer %bar, %c1\n"
    "ttng.wait_barrier %r, %ph                 // forbidden: arrive remote, wait local",
    "Wait on `%bar` itself; arrive on `%r`.",
    (Severity.error,), "Always an error (outcome: hang)."),))
