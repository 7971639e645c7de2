"""Partitions: which warp group executes each operation.

Three sources, in order of preference (the first one present in the scope wins):

* Region ops, `ttg.warp_specialize` (post-code-partition and upstream final IR) and upstream
  `nvws.warp_group` (between `TritonGPUPartitionLoops` and `NVWSLowerWarpGroup`). Every region is
  one partition, named as the text writes it (`default`, `partition0`, ...), so a reader can find
  it in the IR. Task ids follow the AutoWS numbering, which upstream's `ttg.partition` shares:
  `ttg.warp_specialize` default = 0 and partitionN = N + 1; `nvws.warp_group` partitionN = N
  (its partition0 becomes the `default` region when it is lowered).
  `num_warps(W)` gives a region's warps; `default` runs with the module's `"ttg.num-warps"`.
  `requestedRegisters` has one entry per `partitionN` region. `ttg.partition.types` is indexed
  by task id (its length need not match the number of regions).
* `async_task_id = array<i32: ...>` on operations (pre-code-partition AutoWS IR): one partition
  per task id, named `task<N>`; an op tagged with several ids is replicated into each, so it
  belongs to each. Such partitions have no regions and no warp count yet.
* `ttg.partition = array<i32: ...>` (partition-scheduled IR), read like task ids.

Several region ops in one function are told apart by prefixing `ws<k>.`; a region op nested in a
partition of another is prefixed by that partition's name (`default/partition0`), and its ops
belong to the inner partition first (`primary`) and to the enclosing one too (`of`).

Operations outside every partition (allocations and barrier inits at function scope) belong to
no partition: they run before the warp groups fork.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator

from ..ir.attrs import int_list
from ..ir.model import Operation, Region

WS_OPS = ("ttg.warp_specialize", "nvws.warp_group")
TERMINATORS = frozenset({"ttg.warp_yield", "ttg.warp_return", "nvws.warp_group.yield", "nvws.warp_group.return"})
_NUM_WARPS = re.compile(r"num_warps\s*\(\s*(\d+)\s*\)")
_PARTITION_LABEL = re.compile(r"partition(\d+)")


@dataclass(eq=False)
class Partition:
    """One concurrently running warp group (or, before code partitioning, one task id).

    `source` says what the partition was derived from: "warp_specialize" or "nvws.warp_group"
    (a region), "async_task_id" or "ttg.partition" (task ids on operations). `label` is the
    region keyword as written (None for task-id partitions); `name` is unique in the map.
    """

    name: str
    task_id: int | None
    warps: int | None
    source: str
    region: Region | None = None
    ws_op: Operation | None = None
    type: str | None = None
    task_ids: list[int] = field(default_factory=list)
    start_line: int = 0
    end_line: int = 0
    label: str | None = None
    requested_registers: int | None = None
    parent: "Partition | None" = None

    @property
    def lines(self) -> tuple[int, int]:
        return (self.start_line, self.end_line)

    @property
    def from_regions(self) -> bool:
        return self.region is not None


class PartitionMap:
    """Partitions of one function (or unit) and the membership of every operation."""

    def __init__(self, scope_ops: list[Operation], module_warps: int | None):
        self.partitions: list[Partition] = []
        self._by_op: dict[int, list[Partition]] = {}
        self._members: dict[int, list[Operation]] = {}
        ws_ops = [op for op in scope_ops if op.name in WS_OPS]
        if ws_ops:
            self._from_regions(ws_ops, module_warps)
        else:
            self._from_attribute(scope_ops, "async_task_id") or self._from_attribute(scope_ops, "ttg.partition")

    @property
    def derived_from(self) -> str | None:
        """What the partitions were read from (see `Partition.source`); None without any."""
        return self.partitions[0].source if self.partitions else None

    def of(self, op: Operation) -> list[Partition]:
        """Every partition that executes `op` (several for replicated pre-partition ops, and
        innermost first for an op of a nested region op)."""
        return self._by_op.get(id(op), [])

    def primary(self, op: Operation) -> Partition | None:
        found = self._by_op.get(id(op))
        return found[0] if found else None

    def by_name(self, name: str) -> Partition | None:
        return next((p for p in self.partitions if p.name == name), None)

    def members(self, part: Partition) -> list[Operation]:
        """The operations `part` executes, in IR order (replicated and nested ones included)."""
        return self._members.get(id(part), [])

    def body(self, part: Partition) -> Iterator[Operation]:
        """The operations `part` itself runs: `members` without region terminators
        (`ttg.warp_return`, ...) and without ops of region ops nested in it, which belong to the
        inner partitions (replicated task-id ops are kept: each of their tasks runs them)."""
        for op in self.members(part):
            if op.name in TERMINATORS:
                continue
            if part.region is not None and self.primary(op) is not part:
                continue
            yield op

    # -- construction -------------------------------------------------------------------------
    def _add(self, op: Operation, part: Partition) -> None:
        self._by_op.setdefault(id(op), []).append(part)
        self._members.setdefault(id(part), []).append(op)

    def _from_regions(self, ws_ops: list[Operation], module_warps: int | None) -> None:
        ws_set = {id(op) for op in ws_ops}
        top_level = [ws for ws in ws_ops if not any(id(a) in ws_set for a in ws.ancestors())]
        multiple = len(top_level) > 1
        made: dict[int, list[Partition]] = {}  # id(ws op) -> its partitions
        region_of: dict[int, Partition] = {}  # id(region) -> partition
        for ws in ws_ops:  # IR order: an enclosing region op precedes the ones nested in it
            enclosing = next((region_of[id(r)] for r in _enclosing_regions(ws) if id(r) in region_of), None)
            prefix = (
                f"{enclosing.name}/" if enclosing is not None else (f"ws{top_level.index(ws)}." if multiple else "")
            )
            parts = self._regions_of(ws, module_warps, prefix, enclosing)
            made[id(ws)] = parts
            for part in parts:
                region_of[id(part.region)] = part
        # Membership: innermost partition first. Ops are visited once per enclosing region op,
        # innermost op last, so inner partitions are inserted at the front.
        for ws in ws_ops:
            for part in made[id(ws)]:
                assert part.region is not None
                ids: set[int] = set()
                for top in part.region.operations():
                    for op in top.walk():
                        lst = self._by_op.setdefault(id(op), [])
                        lst.insert(0, part)
                        self._members.setdefault(id(part), []).append(op)
                        ids.update(int_list(op.attr("async_task_id")))
                if ids:
                    part.task_ids = sorted(ids)
                elif part.task_id is not None:
                    part.task_ids = [part.task_id]
                self.partitions.append(part)

    def _regions_of(
        self, ws: Operation, module_warps: int | None, prefix: str, enclosing: Partition | None
    ) -> list[Partition]:
        types = ws.attr("ttg.partition.types")
        types = types if isinstance(types, list) else []
        regs = int_list(ws.attr("requestedRegisters"))
        upstream = ws.name == "nvws.warp_group"
        parts: list[Partition] = []
        for region in ws.regions:
            label = region.label or f"region{region.index}"
            m = _PARTITION_LABEL.fullmatch(label)
            task: int | None
            if label == "default":
                task = 0
            elif m:
                task = int(m.group(1)) + (0 if upstream else 1)
            else:
                task = None
            m_w = _NUM_WARPS.search(region.header)
            if m_w:
                warps: int | None = int(m_w.group(1))
            elif label == "default":
                warps = enclosing.warps if enclosing is not None else module_warps
            else:
                warps = None
            reg = None
            if m and not upstream and int(m.group(1)) < len(regs):
                reg = regs[int(m.group(1))]
            parts.append(
                Partition(
                    name=prefix + label,
                    task_id=task,
                    warps=warps,
                    source="nvws.warp_group" if upstream else "warp_specialize",
                    region=region,
                    ws_op=ws,
                    type=str(types[task]) if task is not None and task < len(types) else None,
                    start_line=region.line,
                    end_line=region.end_line,
                    label=label,
                    requested_registers=reg,
                    parent=enclosing,
                )
            )
        return parts

    def _from_attribute(self, ops: list[Operation], key: str) -> bool:
        by_id: dict[int, Partition] = {}
        types: list = []
        for op in ops:
            if not types:
                t = op.attr("ttg.partition.types")
                if isinstance(t, list):
                    types = t
            ids = int_list(op.attr(key)) if key in op.attributes else []
            for tid in dict.fromkeys(ids):
                part = by_id.get(tid)
                if part is None:
                    part = Partition(name=f"task{tid}", task_id=tid, warps=None, source=key, task_ids=[tid],
                                     start_line=op.line, end_line=op.end_line)
                    by_id[tid] = part
                part.start_line = min(part.start_line, op.line)
                part.end_line = max(part.end_line, op.end_line)
                self._add(op, part)
        for tid in sorted(by_id):
            part = by_id[tid]
            if 0 <= tid < len(types):  # a negative id (bad IR) names no type
                part.type = str(types[tid])
            self.partitions.append(part)
        for lst in self._by_op.values():
            lst.sort(key=lambda p: p.task_id if p.task_id is not None else -1)
        return bool(by_id)


def _enclosing_regions(op: Operation) -> Iterator[Region]:
    """The regions around `op`, innermost first."""
    region = op.parent_region
    while region is not None:
        yield region
        parent = region.parent
        region = parent.parent_region if parent is not None else None


def module_warps(ops: list[Operation]) -> int | None:
    """`"ttg.num-warps"` of the enclosing module, the default partition's warp count."""
    for op in ops:
        for anc in [op, *op.ancestors()]:
            if anc.name == "builtin.module":
                value = anc.attr("ttg.num-warps")
                return value if isinstance(value, int) else None
    return None
