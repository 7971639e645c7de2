"""`ops`: operations with their lines, for people (a table) and agents (JSON)."""

from __future__ import annotations

from rich.table import Table

from ..facts.barriers import BarrierFacts, collect_barriers
from ..facts.partitions import PartitionMap, module_warps
from ..facts.trace import Tracer
from ..ir.model import Operation, function_name
from ..ir.vocab import is_barrier_relevant
from ..render.console import console, shorten
from ..schemas import InputRef, OpInfo, OpsDoc
from ..session import Selection, loop_depth

_KEY_ATTRS = ("async_task_id", "ttg.partition", "buffer.id", "buffer.copy", "buffer.offset", "constraints")


def op_info(op: Operation, partitions: PartitionMap | None = None, barriers: BarrierFacts | None = None) -> OpInfo:
    """One op as JSON. `partition` is its primary partition (null outside partitions);
    `mechanism` the barrier mechanism of a synchronizing op or barrier allocation (a wait takes
    the mechanisms of the barrier it waits on, e.g. `mbarrier_tma`)."""
    fn = next((a for a in op.ancestors() if a.name in ("tt.func", "func.func", "llvm.func")), None)
    primary = partitions.primary(op) if partitions is not None else None
    return OpInfo(
        name=op.name,
        line=op.line,
        column=op.column,
        end_line=op.end_line,
        results=op.results,
        result_types=op.result_types,
        operands=op.operands,
        attributes=op.attrs,
        loc_name=op.loc_name,
        regions=len(op.regions),
        loop_depth=loop_depth(op),
        function=function_name(fn) if fn is not None else None,
        partition=primary.name if primary is not None else None,
        mechanism=barriers.mechanism_of(op) if barriers is not None else None,
    )


def ops_document(sel: Selection, *, include_all: bool, warnings: list[str]) -> OpsDoc:
    """The ops in scope; partitions and barrier facts are computed once for the whole scope."""
    scope = list(sel.operations())
    chosen = [op for op in scope if include_all or is_barrier_relevant(op.name)]
    partitions = PartitionMap(scope, module_warps(scope))
    barriers = collect_barriers(scope, Tracer(sel.ir), partitions)
    return OpsDoc(
        input=InputRef(**sel.input_ref()),
        ops=[op_info(op, partitions, barriers) for op in chosen],
        warnings=warnings,
    )


def render_ops_text(doc: OpsDoc) -> None:
    out = console()
    where = doc.input.path + (f" [unit {doc.input.unit_index}: {doc.input.unit}]" if doc.input.unit else "")
    table = Table(title=f"{where}: {len(doc.ops)} operation(s)", title_justify="left")
    for col in ("line", "loop", "partition", "op", "mechanism", "results", "operands", "key attributes"):
        table.add_column(col, overflow="fold")
    for op in doc.ops:
        attrs = ", ".join(f"{k}={_short(op.attributes[k])}" for k in _KEY_ATTRS if k in op.attributes)
        table.add_row(
            str(op.line),
            str(op.loop_depth) if op.loop_depth else "",
            op.partition or "",
            op.name,
            op.mechanism or "",
            shorten(", ".join(op.results), 30),
            shorten(", ".join(op.operands), 60),
            shorten(attrs, 70),
        )
    out.print(table)


def _short(value: object) -> str:
    if isinstance(value, list):
        return "[" + ",".join(str(v) for v in value) + "]"
    return str(value)
