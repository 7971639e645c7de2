"""The cluster a kernel runs in, as the partition summary and the graph show it (issue 12).

Static facts only, read from the IR (no simulation): the cluster shape (`facts.cluster.cluster_of`),
which form the IR is written in (TLX per-CTA program or Triton's cluster-wide CGA program), where
the program asks for its CTA rank, and every barrier operation whose arrival or transaction bytes
can land in another CTA's copy of its barrier, with the CTAs it reaches
(`facts.cluster.cta_targets`, the answer the static rules and the interpreter share). A kernel
without a cluster gets `ctas = 1`, `form = "single"` and nothing else, so one-CTA outputs read as
before.
"""

from __future__ import annotations

from pydantic import Field

from ...analysis import ARRIVE_ROLES, Analysis
from ...facts.barriers import Role, remote_uses
from ...facts.cluster import RANK_OPS, RankEvaluator, ReachKind, cluster_of, cta_targets
from ...schemas import _Model

# Ops that make every thread of every CTA of the cluster rendezvous (no mbarrier involved).
CLUSTER_SYNC_OPS = frozenset({"ttng.cluster_barrier", "ttng.cluster_arrive", "ttng.cluster_wait",
                              "nvvm.barrier.cluster.arrive", "nvvm.barrier.cluster.wait"})
_FORM_TEXT = {
    "per-cta": "per-CTA program (TLX form: every CTA runs this IR; its rank is nvg.cluster_id)",
    "cga": "cluster-wide program (Triton CGA form: types and layouts describe the whole cluster)",
    "single": "one CTA",
}


class CrossCtaOp(_Model):
    """One barrier operation whose effect can land outside the issuing CTA."""

    line: int
    op: str
    partition: str | None = Field(None, description="issuing partition (null: outside partitions)")
    barrier: str = Field(description="logical barrier id (as in `barriers`)")
    reach: str = Field(description="remote | multicast | pair | cluster | layout (facts.cluster.ReachKind)")
    text: str = Field(description="which CTAs it reaches, in words (`to the peer CTA (rank ^ 1)`)")
    issuers: list[int] = Field(description="CTA ranks that issue it (the lowering may elect one)")
    targets: list[list[int] | None] = Field(description="per rank: the CTAs it reaches ([] for non-issuers, "
                                                          "null when the IR does not determine it)")
    crosses: bool | None = Field(description="some issuing CTA reaches another CTA (null: not computable)")


class ClusterModel(_Model):
    ctas: int = Field(1, description="CTAs per cluster (1: no cluster)")
    num_ctas: int = Field(1, description="the module's ttg.num-ctas")
    dims: list[int] = Field(default_factory=lambda: [1, 1, 1], description="ttg.cluster-dim-x/y/z")
    form: str = Field("single", description="single | per-cta (TLX) | cga (Triton cluster-wide program)")
    paired_mma: bool = Field(False, description="2-CTA tensor-core pairs (ttng.two-ctas / tlx.enable_paired_cta_mma)")
    rank_lines: list[int] = Field(default_factory=list, description="lines asking for the CTA rank")
    cluster_sync_lines: list[int] = Field(default_factory=list, description="cluster-wide barriers (all CTAs meet)")
    cross_cta_ops: list[CrossCtaOp] = []


def cluster_model(a: Analysis) -> ClusterModel:
    """The cluster block of the `partitions` and `graph` documents."""
    c = cluster_of(a.sel.ir)
    if c.size <= 1 and not c.cga:
        return ClusterModel(num_ctas=c.num_ctas, dims=list(c.dims))
    ranks = RankEvaluator(a.values)
    uses = [(b.id, u) for b in a.barriers.barriers for u in b.uses
            if u.role in ARRIVE_ROLES or u.role is Role.TMA_ARRIVE]
    uses += [(r.barrier.id, r.use) for r in remote_uses(a.barriers, a.tracer, a.partitions)]
    found: dict[tuple[int, int, str], CrossCtaOp] = {}
    for bid, u in uses:
        t = cta_targets(u.op, u.operand, c, a.values, ranks, (u.predicate, u.op_predicate))
        key = (u.line, u.op.column, bid)
        if t.reach.kind is ReachKind.OWN or key in found:
            continue
        found[key] = CrossCtaOp(
            line=u.line, op=u.op.name, partition=u.partition, barrier=bid, reach=t.reach.kind.value, text=t.describe(),
            issuers=[s for s, on in enumerate(t.issues) if on],
            targets=[(sorted(x) if x is not None else None) if t.issues[s] else [] for s, x in enumerate(t.targets)],
            crosses=t.crosses)
    return ClusterModel(
        ctas=c.size, num_ctas=c.num_ctas, dims=list(c.dims), form=c.form, paired_mma=c.paired,
        rank_lines=sorted({op.line for op in a.ops if op.name in RANK_OPS}),
        cluster_sync_lines=sorted({op.line for op in a.ops if op.name in CLUSTER_SYNC_OPS}),
        cross_cta_ops=[found[k] for k in sorted(found)],
    )


def cluster_lines(m: ClusterModel) -> list[str]:
    """The cluster in words for the text renderings; empty without a cluster."""
    if m.ctas <= 1 and m.form != "cga":
        return []
    dims = "x".join(str(d) for d in m.dims)
    head = f"Cluster: {m.ctas} CTAs ({f'cluster dims {dims}' if m.form != 'cga' else f'ttg.num-ctas = {m.num_ctas}'})"
    head += f", {_FORM_TEXT[m.form]}"
    if m.rank_lines:
        head += f"; rank read at line(s) {_list(m.rank_lines)}"
    if m.paired_mma:
        head += "; paired 2-CTA MMA: tc_gen5_mma/commit issued by the even CTA of each pair, arriving on both"
    out = [head + "."]
    if m.cluster_sync_lines:
        out.append(f"  Cluster-wide barriers (every CTA meets): line(s) {_list(m.cluster_sync_lines)}.")
    if m.cross_cta_ops:
        out.append(f"  Barrier operations that reach other CTAs ({len(m.cross_cta_ops)}):")
        for o in m.cross_cta_ops:
            where = o.partition or "main"
            out.append(f"    line {o.line} {o.op.split('.', 1)[-1]} ({where}, {o.barrier}): {o.text}")
    else:
        out.append("  No barrier operation reaches another CTA's barrier.")
    return out


def _list(lines: list[int]) -> str:
    return ", ".join(str(n) for n in lines)
