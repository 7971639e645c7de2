"""`coverage`: the two coverage tables, always printed in full — the rows marked ✓ are what make an
absent ✗ row noticeable, so the table is the artifact, not a list of problems."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from ..analyses.structure.coverage import AccumulatorRow, Coverage, PackedRow, PackedTable, coverage
from ..analysis import Analysis
from ..render.console import print_lines
from ..schemas import InputRef, _Model
from ..session import Selection


class CoverageSummary(_Model):
    packed_tables: int
    packed_rows: int
    packed_missing: int = Field(description="✗ rows (missing or mis-cadenced backward edges)")
    required_edges: int = Field(description="pre-partition rows: back-edges the partitioner must create")
    accumulators: int
    redundant_zero_stores: int


class CoverageDoc(_Model):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")
    schema_: str = Field("barrier-viz/coverage/v1", alias="schema")
    input: InputRef
    stage: str
    partitions: dict[str, str] = Field(description="partition name -> 'task N, role'")
    summary: CoverageSummary
    packed_tmem: list[PackedTable]
    accumulators: list[AccumulatorRow]
    warnings: list[str] = []


def coverage_document(sel: Selection, *, warnings: list[str] | None = None) -> CoverageDoc:
    analysis = Analysis.of(sel)
    cov = coverage(analysis)
    rows = [r for t in cov.packed for r in t.rows]
    return CoverageDoc(
        input=InputRef(**sel.input_ref()),
        stage=_stage(cov, analysis),
        partitions={p.name: _legend(p) for p in analysis.partitions.partitions},
        summary=CoverageSummary(
            packed_tables=len(cov.packed), packed_rows=len(rows), packed_missing=sum(1 for r in rows if not r.ok),
            required_edges=sum(1 for r in rows if r.status == "required"), accumulators=len(cov.accumulators),
            redundant_zero_stores=sum(1 for r in cov.accumulators if r.zero_store_lines and r.self_zeroing
                                      and not r.same_partition)),
        packed_tmem=list(cov.packed),
        accumulators=list(cov.accumulators),
        warnings=warnings or [],
    )


def _stage(cov: Coverage, analysis: Analysis) -> str:
    src = analysis.partitions.derived_from
    if src in ("warp_specialize", "nvws.warp_group"):
        return "post-partition"
    return "pre-partition" if src else "single"


def _legend(p) -> str:
    bits = [f"task {p.task_id}"] if p.task_id is not None else []
    if p.type:
        bits.append(p.type)
    return ", ".join(bits)


# -- text -----------------------------------------------------------------------------------------
def render_coverage_text(doc: CoverageDoc) -> None:
    print_lines(coverage_lines(doc))


def coverage_lines(doc: CoverageDoc) -> list[str]:
    """The tables as lines of text (the `report` command can reuse them)."""
    inp = doc.input
    lines = [f"{inp.path} [unit {inp.unit_index}: {inp.unit}]" + (f" @{inp.function}" if inp.function else ""),
             ""]
    what = {"pre-partition": "pre-code-partition IR: back-edges the partitioner must create",
            "post-partition": "post-partition IR: waits verified in the writer's partition",
            "single": "no partitions: every access is in program order"}[doc.stage]
    lines.append(f"== Column-packed TMEM overwrite coverage ({what}) ==")
    if not doc.packed_tmem:
        lines.append("  (no TMEM allocation has column-packed members or column views)")
    for t in doc.packed_tmem:
        lines += _packed_lines(t, doc.partitions)
    lines += ["", "== Operand-D accumulator init coverage =="]
    if not doc.accumulators:
        lines.append("  (no tc_gen5_mma accumulator)")
    for r in doc.accumulators:
        lines += _accumulator_lines(r, doc.partitions)
    s = doc.summary
    lines += ["", f"summary: {s.packed_tables} packed table(s), {s.packed_rows} row(s), {s.packed_missing} missing, "
                  f"{s.required_edges} required back-edge(s); {s.accumulators} accumulator(s), "
                  f"{s.redundant_zero_stores} redundant cross-partition zero store(s)"]
    return lines


def _p(name: str, legend: dict[str, str]) -> str:
    """`partition0 (task 1, gemm)`, or `task1 (gemm)` for task-id partitions."""
    extra = legend.get(name, "")
    if name.startswith("task"):
        extra = extra.split(", ", 1)[1] if ", " in extra else ""
    return f"{name} ({extra})" if extra else name


def _cols(c: tuple[int, int]) -> str:
    return f"col  {c[0]}" if c[0] == c[1] else f"cols {c[0]}-{c[1]}"


def _packed_lines(t: PackedTable, legend: dict[str, str]) -> list[str]:
    bid = t.buffer_id if t.buffer_id is not None else "-"
    width = t.rows[0].columns[1] + 1 if t.rows else 0
    out = ["", f"Physical buffer.id = {bid} (owner: {t.owner}, line {t.owner_line}, {width} cols)  {t.owner_type}"]
    if not t.writers:
        out.append("  Writer: none overwrites the whole allocation (no useD=false MMA, no full-tile tmem_store)")
    for w in t.writers:
        what = f"tc_gen5_mma useD={w.use_d}" if w.use_d != "store" else "full-tile tmem_store"
        loop = f", loop line {w.loop_line}" if w.loop_line else ""
        out.append(f"  Writer: {what}  ({_p(w.partition, legend)}{loop})  line {w.line}  "
                   f"write-extent: cols {w.columns[0]}-{w.columns[1]}")
    out.append("  Aliased buffers overwritten:")
    for r in t.rows:
        out += ["    " + line for line in _row_text(r, legend)]
    return out


_MARKS = {"same_partition": "✓ same partition", "ordered": "✓ ordered", "ordered_by_channel": "✓ ordered",
          "no_reader": "✓ no reader", "no_overwrite": "✓ not overwritten", "required": "⇠ REQUIRED back-edge",
          "missing": "✗ MISSING", "missing_incidental": "✗ MISSING (incidentally ordered)",
          "cadence_mismatch": "✗ CADENCE MISMATCH"}


def _row_text(r: PackedRow, legend: dict[str, str]) -> list[str]:
    name = f"{r.label} (owner)" if r.owner else r.label
    cons = ", ".join(sorted({_p(c.partition, legend) for c in r.consumers})) or "none"
    cad = f", {r.cadence} cadence" if r.cadence else ""
    lines = f" [lines {', '.join(map(str, r.evidence))}]" if r.evidence else ""
    return [f"{_cols(r.columns):<11} {name:<12} consumer {cons}{cad}   {_MARKS.get(r.status, r.status)}"
            if len(name) <= 12 else f"{_cols(r.columns):<11} {name}  consumer {cons}{cad}   {_MARKS.get(r.status, r.status)}",
            f"{'':<12}{r.reason}{lines}"]


def _accumulator_lines(r: AccumulatorRow, legend: dict[str, str]) -> list[str]:
    bid = r.buffer_id if r.buffer_id is not None else "-"
    zero = "self-zeroes" if r.self_zeroing else "accumulates from the start"
    out = ["", f"Operand-D accumulator buffer.id = {bid} ({r.name}, line {r.line})  {r.type}",
           f"  MMA writer: tc_gen5_mma useD={r.use_d} (lines {', '.join(map(str, r.mma_lines))})  -> {zero}"]
    if r.zero_store_lines:
        out.append(f"  Explicit zero-store present? : YES  ttng.tmem_store <0> (lines "
                   f"{', '.join(map(str, r.zero_store_lines))}; {', '.join(_p(p, legend) for p in r.store_partitions)})")
        rel = "SAME" if r.same_partition else "DIFFERENT"
        out.append(f"  MMA partition / store partition : {', '.join(_p(p, legend) for p in r.mma_partitions)} / "
                   f"{', '.join(_p(p, legend) for p in r.store_partitions)}  -> {rel}")
    else:
        out.append("  Explicit zero-store present? : NO")
    loop = f"{r.persistent_loop} (line {r.persistent_loop_line})" if r.persistent_loop else "none"
    out.append(f"  Persistent outer loop : {loop}")
    if r.barriers is not None:
        out.append(f"  Accumulator barriers / tc_gen5_commits : {r.barriers} / {r.commits}")
    out.append(f"  Verdict: {r.verdict}")
    return out
