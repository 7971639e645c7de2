"""`ops`: operations with their lines, for people (a table or one line each) and agents (JSON).

Attributes print as the IR wrote them (MLIR syntax: `isAsync = true`, `async_task_id =
array<i32: 1>`), never as Python values. The key-attribute column keeps the ones that decide
barrier behaviour (see `key_attributes`); `--format json` carries every attribute.
"""

from __future__ import annotations

import re

from ..errors import InputError
from ..facts.barriers import BarrierFacts, collect_barriers
from ..facts.partitions import PartitionMap, module_warps
from ..facts.trace import Tracer
from ..ir.model import Operation, function_name
from ..ir.vocab import is_barrier_relevant
from ..render.console import console, shorten, table as make_table
from ..schemas import InputRef, OpInfo, OpsDoc
from ..session import Selection, loop_depth

# Attributes that change what a barrier-relevant op does, or place it: partition and buffer
# placement, whether an MMA or a wgmma is asynchronous (and its commit group), how many wgmma
# groups a wait leaves pending, whether the MMA accumulates, the 2-CTA form.
_KEY_ATTRS = ("async_task_id", "ttg.partition", "buffer.id", "buffer.copy", "buffer.offset", "isAsync", "is_async",
              "pendings", "useAccumulator", "two_ctas", "constraints")
# Literal operands worth naming, per op: the arrival count of an init or arrive, the expected
# transaction bytes of an expect.
_LITERALS = {"ttng.init_barrier": "count", "ttng.arrive_barrier": "count", "ttng.barrier_expect": "bytes",
             "nvws.aref.create": "count"}
# Positional operands worth naming: the tcgen05 MMA's accumulate flag (`useD`).
_OPERANDS = {"ttng.tc_gen5_mma": {3: "useD"}, "ttng.tc_gen5_mma_scaled": {5: "useD"}}


def key_attributes(op: Operation) -> dict[str, str]:
    """The attributes (MLIR text) and literal operands that matter for this op, in a fixed order."""
    out: dict[str, str] = {}
    name = _LITERALS.get(op.name)
    if name and op.literals:
        out[name] = op.literals[0]
    pos = op.positional
    for k, label in _OPERANDS.get(op.name, {}).items():
        if k < len(pos):
            out[label] = pos[k]
    for k in _KEY_ATTRS:
        if k in op.attributes:
            out[k] = " ".join(op.attributes[k].split())
    return out


def mlir_attrs(attrs: dict[str, str]) -> str:
    """`{a = 1 : i32, two_ctas}`: a unit attribute (no value) prints bare, as in MLIR."""
    return "{" + ", ".join(f"{k} = {v}" if v not in ("", "unit") else k for k, v in attrs.items()) + "}" if attrs else ""


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
        key_attributes=key_attributes(op),
        loc_name=op.loc_name,
        regions=len(op.regions),
        loop_depth=loop_depth(op),
        function=function_name(fn) if fn is not None else None,
        partition=primary.name if primary is not None else None,
        mechanism=barriers.mechanism_of(op) if barriers is not None else None,
    )


def parse_line_range(text: str | None, path: str) -> tuple[int, int] | None:
    """`--lines A-B` (or `A`, `A-`, `-B`) as an inclusive range of 1-based lines."""
    if text is None:
        return None
    m = re.fullmatch(r"\s*(\d*)\s*(?:-\s*(\d*)\s*)?", text)
    if not m or (not m.group(1) and not m.group(2)):
        raise InputError(path, f"--lines {text!r}: expected A-B (1-based lines, e.g. 120-180), A, A- or -B")
    lo = int(m.group(1)) if m.group(1) else 1
    if "-" not in text:
        hi = lo
    else:
        hi = int(m.group(2)) if m.group(2) else 10**12
    if lo < 1 or hi < lo:
        raise InputError(path, f"--lines {text!r}: the range must start at 1 or later and not end before it starts")
    return lo, hi


def ops_document(sel: Selection, *, include_all: bool, warnings: list[str], partition: str | None = None,
                 lines: tuple[int, int] | str | None = None) -> OpsDoc:
    """The ops in scope; partitions and barrier facts are computed once for the whole scope.
    `partition` keeps the ops of one partition (`main`: those outside every partition);
    `lines` the ops that start in an inclusive line range."""
    if isinstance(lines, str):
        lines = parse_line_range(lines, sel.unit.path)
    scope = list(sel.operations())
    partitions = PartitionMap(scope, module_warps(scope))
    chosen = [op for op in scope if include_all or is_barrier_relevant(op.name)]
    if lines is not None:
        chosen = [op for op in chosen if lines[0] <= op.line <= lines[1]]
    if partition is not None:
        known = sorted({p.name for p in partitions.partitions})
        want = partition.strip()
        if want != "main" and want not in known:
            raise InputError(sel.unit.path, f"--partition {partition!r}: no such partition (known: {', '.join(known + ['main'])})")

        def name_of(op: Operation) -> str:
            p = partitions.primary(op)
            return p.name if p is not None else "main"

        chosen = [op for op in chosen if name_of(op) == want]
    barriers = collect_barriers(scope, Tracer(sel.ir), partitions)
    return OpsDoc(
        input=InputRef(**sel.input_ref()),
        ops=[op_info(op, partitions, barriers) for op in chosen],
        warnings=warnings,
    )


def _title(doc: OpsDoc) -> str:
    where = doc.input.path + (f" [unit {doc.input.unit_index}: {doc.input.unit}]" if doc.input.unit else "")
    return f"{where}: {len(doc.ops)} operation(s)"


NARROW = 120  # below this width the eight-column table cannot show its identifiers whole


def render_ops_text(doc: OpsDoc) -> None:
    """The table; on a terminal narrower than NARROW, the compact one-line-per-op form (wrapped
    between words), which keeps every identifier whole."""
    out = console()
    if out.width < NARROW:
        for line in ops_compact_lines(doc):
            out.print(line)
        return
    table = make_table(_title(doc), ("line", "loop", "partition", "op", "mechanism", "results", "operands", "key attributes"),
                       keep=("line", "loop", "partition", "op"))
    for op in doc.ops:
        table.add_row(
            str(op.line),
            str(op.loop_depth) if op.loop_depth else "",
            op.partition or "",
            op.name,
            op.mechanism or "",
            shorten(", ".join(op.results), 30),
            shorten(", ".join(op.operands), 60),
            shorten(mlir_attrs(op.key_attributes), 90),
        )
    out.print(table)


def ops_compact_lines(doc: OpsDoc) -> list[str]:
    """One line per op: `L108 d2 partition0 %r = ttng.tc_gen5_mma %a, %b [mma_barrier] {isAsync = true}`."""
    rows = [_title(doc)]
    for op in doc.ops:
        res = f"{', '.join(op.results)} = " if op.results else ""
        mech = f" [{op.mechanism}]" if op.mechanism else ""
        attrs = mlir_attrs(op.key_attributes)
        rows.append(f"L{op.line} d{op.loop_depth} {op.partition or 'main'} {res}{op.name} {', '.join(op.operands)}".rstrip()
                    + mech + (f" {attrs}" if attrs else ""))
    return rows


def render_ops_compact(doc: OpsDoc) -> None:
    import sys

    sys.stdout.write("\n".join(ops_compact_lines(doc)) + "\n")
