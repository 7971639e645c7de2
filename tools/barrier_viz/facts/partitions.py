"""Partitions: which warp group executes each operation.

Three sources, in order of preference:

* `ttg.warp_specialize` (or upstream `nvws.warp_group`) regions: `default` and `partitionN`,
  each a partition. AutoWS numbers them as task ids: default = 0, partitionN = N + 1.
* `async_task_id = array<i32: ...>` on operations (pre-code-partition AutoWS IR): one partition
  per task id; an op tagged with several ids belongs to each.
* `ttg.partition = array<i32: ...>` (partition-scheduled IR), read like task ids.

Operations outside every partition (allocations and barrier inits at function scope) belong to
no partition: they run before the warp groups fork.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..ir.attrs import int_list
from ..ir.model import Operation, Region

WS_OPS = ("ttg.warp_specialize", "nvws.warp_group")
_NUM_WARPS = re.compile(r"num_warps\s*\(\s*(\d+)\s*\)")


@dataclass(eq=False)
class Partition:
    """One concurrently running warp group (or, before code partitioning, one task id)."""

    name: str
    task_id: int | None
    warps: int | None
    source: str  # "warp_specialize" | "async_task_id" | "ttg.partition"
    region: Region | None = None
    ws_op: Operation | None = None
    type: str | None = None
    task_ids: list[int] = field(default_factory=list)
    start_line: int = 0
    end_line: int = 0

    @property
    def lines(self) -> tuple[int, int]:
        return (self.start_line, self.end_line)


class PartitionMap:
    """Partitions of one function (or unit) and the membership of every operation."""

    def __init__(self, scope_ops: list[Operation], module_warps: int | None):
        self.partitions: list[Partition] = []
        self._by_op: dict[int, list[Partition]] = {}
        ws_ops = [op for op in scope_ops if op.name in WS_OPS]
        if ws_ops:
            self._from_regions(ws_ops, module_warps)
        else:
            self._from_attribute(scope_ops, "async_task_id") or self._from_attribute(scope_ops, "ttg.partition")

    @property
    def derived_from(self) -> str | None:
        return self.partitions[0].source if self.partitions else None

    def of(self, op: Operation) -> list[Partition]:
        """Every partition that executes `op` (several for replicated pre-partition ops)."""
        return self._by_op.get(id(op), [])

    def primary(self, op: Operation) -> Partition | None:
        found = self._by_op.get(id(op))
        return found[0] if found else None

    def by_name(self, name: str) -> Partition | None:
        return next((p for p in self.partitions if p.name == name), None)

    # -- construction -------------------------------------------------------------------------
    def _from_regions(self, ws_ops: list[Operation], module_warps: int | None) -> None:
        multiple = len(ws_ops) > 1
        for k, ws in enumerate(ws_ops):
            types = ws.attr("ttg.partition.types")
            types = types if isinstance(types, list) else []
            upstream = ws.name == "nvws.warp_group"
            for region in ws.regions:
                label = region.label or f"region{region.index}"
                if upstream and label == "partition0":
                    label = "default"
                    task: int | None = 0
                elif label == "default":
                    task = 0
                else:
                    m = re.fullmatch(r"partition(\d+)", label)
                    task = int(m.group(1)) + (0 if upstream else 1) if m else None
                if upstream and m and label != "default":
                    label = f"partition{int(m.group(1)) - 1}"
                m_w = _NUM_WARPS.search(region.header)
                warps = int(m_w.group(1)) if m_w else (module_warps if label == "default" else None)
                name = f"ws{k}.{label}" if multiple else label
                part = Partition(
                    name=name,
                    task_id=task,
                    warps=warps,
                    source="warp_specialize",
                    region=region,
                    ws_op=ws,
                    type=str(types[task]) if task is not None and task < len(types) else None,
                    start_line=region.line,
                    end_line=region.end_line,
                )
                ids: set[int] = set()
                for block in region.blocks:
                    for top in block.operations:
                        for op in top.walk():
                            self._by_op.setdefault(id(op), []).append(part)
                            ids.update(int_list(op.attr("async_task_id")))
                part.task_ids = sorted(ids) if ids else ([task] if task is not None else [])
                self.partitions.append(part)

    def _from_attribute(self, ops: list[Operation], key: str) -> bool:
        by_id: dict[int, Partition] = {}
        types: list = []
        for op in ops:
            if not types:
                t = op.attr("ttg.partition.types")
                if isinstance(t, list):
                    types = t
            ids = int_list(op.attr(key)) if key in op.attributes else []
            for tid in ids:
                part = by_id.get(tid)
                if part is None:
                    part = Partition(name=f"task{tid}", task_id=tid, warps=None, source=key, task_ids=[tid],
                                     start_line=op.line, end_line=op.end_line)
                    by_id[tid] = part
                part.start_line = min(part.start_line, op.line)
                part.end_line = max(part.end_line, op.end_line)
                self._by_op.setdefault(id(op), []).append(part)
        for tid in sorted(by_id):
            part = by_id[tid]
            if tid < len(types):
                part.type = str(types[tid])
            self.partitions.append(part)
        for lst in self._by_op.values():
            lst.sort(key=lambda p: p.task_id if p.task_id is not None else -1)
        return bool(by_id)


def module_warps(ops: list[Operation]) -> int | None:
    """`"ttg.num-warps"` of the enclosing module, the default partition's warp count."""
    for op in ops:
        for anc in [op, *op.ancestors()]:
            if anc.name == "builtin.module":
                value = anc.attr("ttg.num-warps")
                return value if isinstance(value, int) else None
    return None
