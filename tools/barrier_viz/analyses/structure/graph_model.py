"""The parts of the barrier dependency graph (`graph`): partitions as nodes, one edge per
(channel, arriving partition, waiting partition) with the data it protects and the CTAs its
arrivals reach, the arrive or wait sites left unmatched, and the channel an edge is built from.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...analysis import ARRIVE_ROLES, WAIT_ROLES
from ...facts.barriers import Barrier, BarrierUse
from ...facts.cluster import Cluster


MAIN = "main"
ARRIVES = ARRIVE_ROLES
WAITS = WAIT_ROLES


@dataclass(frozen=True, slots=True)
class GraphNode:
    """One partition: its name as written in the IR and its role label (facts/roles.py)."""

    id: str
    label: str
    task_id: int | None
    warps: int | None
    type: str | None
    lines: tuple[int, int] | None


@dataclass(frozen=True, slots=True)
class DataRef:
    """One buffer an edge protects: the allocation's label and the shape of one slot."""

    name: str
    alloc: str
    line: int
    shape: str
    space: str | None
    buffer_id: int | None

    @property
    def text(self) -> str:
        return f"{self.name} [{self.shape}{' ' + self.space if self.space else ''}]"


@dataclass(frozen=True, slots=True)
class GraphEdge:
    """arriving partition -> waiting partition through one channel (see the module docstring)."""

    source_node: str
    target_node: str
    barrier: str
    barrier_name: str
    channel: str | None  # "full" / "empty" for token and aref channels
    slots: int | None
    mechanism: str
    mechanisms: tuple[str, ...]
    agent: str | None
    direction: str  # "forward" | "backward"
    direction_source: str  # constraints | lowering | tma | named | phase | dataflow
    direction_note: str
    data: tuple[DataRef, ...]
    data_source: str  # both | arriver | waiter | none
    arrive_lines: tuple[int, ...]
    wait_lines: tuple[int, ...]
    self_loop: bool
    return_edge: bool
    dst_task_mismatch: bool = False
    crosses_ctas: bool | None = False
    ctas: tuple["CtaHop", ...] = ()


@dataclass(frozen=True, slots=True)
class CtaHop:
    """One arrive line of an edge whose arrival can land outside the issuing CTA."""

    line: int
    op: str
    reach: str  # facts.cluster.ReachKind value
    text: str  # CtaTargets.describe()
    issuers: tuple[int, ...]
    targets: tuple[tuple[int, ...] | None, ...]  # per rank (empty for non-issuers); None: not computable
    crosses: bool | None


@dataclass(frozen=True, slots=True)
class Unmatched:
    """A channel end with nobody at the other end: waits nothing arrives on, or arrivals nobody waits for."""

    barrier: str
    barrier_name: str
    partition: str
    kind: str  # "wait without arrive" | "arrive without wait"
    lines: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class DependencyGraph:
    nodes: tuple[GraphNode, ...]
    edges: tuple[GraphEdge, ...]
    unmatched: tuple[Unmatched, ...]
    persistent: bool
    ranks: dict[str, int] = field(default_factory=dict, compare=False)
    cluster: Cluster = field(default_factory=lambda: Cluster(1, (1, 1, 1)), compare=False)

    def forward(self) -> list[GraphEdge]:
        return [e for e in self.edges if e.direction == "forward"]

    def backward(self) -> list[GraphEdge]:
        return [e for e in self.edges if e.direction == "backward"]


@dataclass
class _Channel:
    barrier: Barrier
    name: str | None
    arrives: list[BarrierUse]
    waits: list[BarrierUse]
