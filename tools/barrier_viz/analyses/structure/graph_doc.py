"""The document of report section 2, the barrier dependency graph: the JSON shape `graph --format
json` prints and every rendering reads (`render.ascii_graph`, `render.dot`, `render.mermaid`,
`render.svg_graph`), so the formats cannot disagree. Built from `structure.graph.build_graph`;
it lives here, below the renderers and the commands, so that neither imports the other for it.
"""

from __future__ import annotations

from pydantic import ConfigDict, Field

from ...schemas import InputRef, _Model
from .cluster_info import ClusterModel
from .graph_model import DependencyGraph, GraphEdge


class GraphNodeModel(_Model):
    id: str = Field(description="partition name as written in the IR (`main`: outside partitions)")
    label: str = Field(description="role from the partition's key operations")
    task_id: int | None = None
    warps: int | None = None
    type: str | None = Field(None, description="ttg.partition.types entry (a compiler hint)")
    lines: list[int] | None = None
    rank: int = Field(0, description="pipeline position: depth from the sources over forward edges")


class DataModel(_Model):
    name: str
    alloc: str = Field(description="SSA name of the allocation")
    line: int
    shape: str = Field(description="one slot: dims x element type")
    space: str | None = None
    buffer_id: int | None = None


class EdgeLines(_Model):
    arrive: list[int]
    wait: list[int]


class CtaHopModel(_Model):
    line: int
    op: str
    reach: str = Field(description="remote | multicast | pair | cluster | layout")
    text: str = Field(description="which CTAs it reaches, in words")
    issuers: list[int]
    targets: list[list[int] | None] = Field(description="per rank: CTAs reached ([] for non-issuers, null: unknown)")
    crosses: bool | None


class GraphEdgeModel(_Model):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")
    from_: str = Field(alias="from", description="arriving partition")
    to: str = Field(description="waiting partition")
    barrier: str = Field(description="logical barrier id (as in `barriers`)")
    barrier_name: str
    channel: str | None = Field(None, description="full / empty for NVWS token and aref channels")
    slots: int | None = None
    mechanism: str
    mechanisms: list[str]
    agent: str | None = Field(None, description="engine that performs the arrival for the issuing partition")
    data: list[DataModel]
    data_source: str = Field(description="ends | iteration | any-access | arriver | waiter | none")
    direction: str = Field(description="forward | backward")
    source: str = Field(description="what decided the direction: constraints | lowering | tma | named | phase | dataflow")
    source_note: str
    lines: EdgeLines
    self_loop: bool
    return_edge: bool = Field(description="backward edge of a persistent kernel: feeds the next iteration")
    dst_task_mismatch: bool = False
    crosses_ctas: bool | None = Field(False, description="in a cluster: some arrival of the edge lands in another "
                                                          "CTA's barrier (null: not computable from the IR)")
    ctas: list[CtaHopModel] = Field(default_factory=list, description="arrive lines that can leave the issuing CTA")


class UnmatchedModel(_Model):
    barrier: str
    barrier_name: str
    partition: str
    kind: str
    lines: list[int]


class GraphDoc(_Model):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")
    schema_: str = Field("barrier-viz/graph/v1", alias="schema")
    input: InputRef
    persistent: bool
    nodes: list[GraphNodeModel]
    edges: list[GraphEdgeModel]
    unmatched: list[UnmatchedModel]
    cluster: ClusterModel = Field(default_factory=ClusterModel, description="the CTA cluster (as in `partitions`)")
    warnings: list[str] = []


def document_from_graph(input_ref: dict, g: DependencyGraph, *, warnings: list[str] | None = None,
                        cluster: ClusterModel | None = None) -> GraphDoc:
    return GraphDoc(
        cluster=cluster or ClusterModel(),
        input=InputRef(**input_ref),
        persistent=g.persistent,
        nodes=[GraphNodeModel(id=n.id, label=n.label, task_id=n.task_id, warps=n.warps, type=n.type,
                              lines=list(n.lines) if n.lines else None, rank=g.ranks.get(n.id, 0)) for n in g.nodes],
        edges=[_edge(e) for e in g.edges],
        unmatched=[UnmatchedModel(barrier=u.barrier, barrier_name=u.barrier_name, partition=u.partition, kind=u.kind,
                                  lines=list(u.lines)) for u in g.unmatched],
        warnings=warnings or [],
    )


def _edge(e: GraphEdge) -> GraphEdgeModel:
    return GraphEdgeModel(
        from_=e.source_node, to=e.target_node, barrier=e.barrier, barrier_name=e.barrier_name, channel=e.channel,
        slots=e.slots, mechanism=e.mechanism, mechanisms=list(e.mechanisms), agent=e.agent,
        data=[DataModel(name=d.name, alloc=d.alloc, line=d.line, shape=d.shape, space=d.space, buffer_id=d.buffer_id)
              for d in e.data],
        data_source=e.data_source, direction=e.direction, source=e.direction_source, source_note=e.direction_note,
        lines=EdgeLines(arrive=list(e.arrive_lines), wait=list(e.wait_lines)), self_loop=e.self_loop,
        return_edge=e.return_edge, dst_task_mismatch=e.dst_task_mismatch, crosses_ctas=e.crosses_ctas,
        ctas=[CtaHopModel(line=h.line, op=h.op, reach=h.reach, text=h.text, issuers=list(h.issuers),
                          targets=[list(t) if t is not None else None for t in h.targets], crosses=h.crosses)
              for h in e.ctas],
    )
