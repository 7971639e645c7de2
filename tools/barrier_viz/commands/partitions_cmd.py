"""`partitions`: report section 1, the partition summary (name, role, key ops, warps).

Roles come from the operations each partition executes (`facts.roles`); `ttg.partition.types`
is shown next to them as the compiler's own label, never used to decide the role.
"""

from __future__ import annotations

from typing import Optional

from pydantic import ConfigDict, Field

from ..analysis import Analysis
from ..analyses.structure.cluster_info import ClusterModel, cluster_lines, cluster_model
from ..facts.partitions import PartitionMap, module_warps
from ..facts.roles import PartitionRole, assign_roles
from ..render.console import console, table as make_table
from ..schemas import InputRef, _Model
from ..session import Selection


class RoleInfo(_Model):
    """One kind of work found in a partition, with the evidence for it."""

    kind: str = Field(description="mma | tma_load | softmax | correction | store | reduce_store | remote_copy | "
                                  "clc_scheduler | global_load | sync | memory")
    key_ops: dict[str, int]
    touches: list[str] = Field(description="loc names (or MMA operand letters, or shapes) of what the ops touch")


class PartitionInfo(_Model):
    name: str
    warps: Optional[int] = Field(description="num_warps(N); default = the module's warps; null before code partitioning")
    role: str = Field(description="role label, kinds in precedence order joined by ' + '")
    key_ops: dict[str, int] = Field(description="op name -> count, the ops the role was read from")
    task_ids: list[int]
    type: Optional[str] = Field(description="ttg.partition.types entry for this task id, as the compiler wrote it")
    lines: list[int] = Field(description="[start, end] lines of the region (or of the ops with this task id)")
    requested_registers: Optional[int] = None
    empty: bool = False
    roles: list[RoleInfo] = []


class PartitionsDoc(_Model):
    schema_: str = Field("barrier-viz/partitions/v1", alias="schema")
    input: InputRef
    derived_from: Optional[str] = Field(
        description="warp_specialize | nvws.warp_group (regions) | async_task_id | ttg.partition (task ids) | null"
    )
    partitions: list[PartitionInfo]
    cluster: ClusterModel = Field(default_factory=ClusterModel,
                                  description="the CTA cluster: shape, form, barrier ops that reach other CTAs")
    warnings: list[str] = []

    model_config = ConfigDict(populate_by_name=True, extra="forbid")


def partitions_document(sel: Selection, *, warnings: list[str] | None = None) -> PartitionsDoc:
    """Build the `partitions` document for the function (or unit) in `sel`."""
    ops = list(sel.operations())
    pm = PartitionMap(ops, module_warps(ops))
    roles = assign_roles(pm, sel.ir, ops)
    infos = []
    for part in pm.partitions:
        role: PartitionRole = roles[part.name]
        infos.append(
            PartitionInfo(
                name=part.name,
                warps=part.warps,
                role=role.label,
                key_ops=dict(role.key_ops),
                task_ids=list(part.task_ids),
                type=part.type,
                lines=[part.start_line, part.end_line],
                requested_registers=part.requested_registers,
                empty=role.empty,
                roles=[RoleInfo(kind=ev.kind.value, key_ops=dict(ev.key_ops), touches=list(ev.touches)) for ev in role.kinds],
            )
        )
    return PartitionsDoc(input=InputRef(**sel.input_ref()), derived_from=pm.derived_from, partitions=infos,
                         cluster=cluster_model(Analysis.of(sel)), warnings=warnings or [])


def short_op(name: str) -> str:
    """`ttng.tc_gen5_mma` -> `tc_gen5_mma`: the report's Key Ops column drops the dialect."""
    return name.split(".", 1)[1] if "." in name else name


def key_ops_cell(key_ops: dict[str, int]) -> str:
    """`tc_gen5_mma x2, tmem_load` as in the skill's Section 1 table."""
    return ", ".join(short_op(n) + (f" x{c}" if c > 1 else "") for n, c in key_ops.items())


def render_partitions_text(doc: PartitionsDoc) -> None:
    out = console()
    where = doc.input.path + (f" [unit {doc.input.unit_index}: {doc.input.unit}]" if doc.input.unit else "")
    fn = f" @{doc.input.function}" if doc.input.function else ""
    if not doc.partitions:
        out.print(f"{where}{fn}: no partitions (no warp_specialize regions, async_task_id or ttg.partition)")
        _print_cluster(out, doc)
        return
    source = {"async_task_id": "task ids (async_task_id)", "ttg.partition": "task ids (ttg.partition)"}.get(
        doc.derived_from or "", doc.derived_from or ""
    )
    table = make_table(f"{where}{fn}: {len(doc.partitions)} partition(s) from {source}",
                       ("Partition", "Role", "Key Ops", "Warps", "Tasks", "Type", "Lines"),
                       keep=("Partition", "Warps", "Tasks", "Lines"))
    for p in doc.partitions:
        table.add_row(
            p.name,
            p.role,
            key_ops_cell(p.key_ops),
            "" if p.warps is None else str(p.warps),
            ",".join(str(t) for t in p.task_ids),
            p.type or "",
            f"{p.lines[0]}-{p.lines[1]}",
        )
    out.print(table)
    _print_cluster(out, doc)


def _print_cluster(out, doc: PartitionsDoc) -> None:
    for line in cluster_lines(doc.cluster):
        out.print(line, markup=False, highlight=False)
