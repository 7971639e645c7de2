"""`report`: the skill's five sections, the coverage tables and the findings, deterministically.

Each section is the same document the per-section command prints (so `report --format json` is
their union and the agent sees identical facts); the Markdown form embeds each command's text
rendering, plus the graph as Mermaid. `--out DIR` also writes the debug_helper files (report.md,
insights.log, status.json) through `agent.outputs`, where that contract lives, and the HTML page
(`render.html_report`) as report.html.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict, Field

from ..analyses.model.findings import Finding
from ..render.console import CAPTURE_WIDTH, capture, columns, wrap_line
from ..schemas import InputRef
from ..session import Selection

HTML_FILE = "report.html"  # written by `--out` beside debug_helper's files

SECTIONS = (
    ("partitions", "1. Partition summary"),
    ("graph", "2. Barrier dependency graph"),
    ("phases", "3. Index and phase analysis"),
    ("buffers", "4. Shared data map"),
    ("barriers", "5. SSA value to barrier map"),
    ("coverage", "Coverage tables"),
)


class ReportDoc(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")
    schema_: str = Field("barrier-viz/report/v1", alias="schema")
    input: InputRef
    summary: dict[str, int | str]  # verdict (clean | findings | not judged) and the counts
    partitions: dict[str, Any]
    graph: dict[str, Any]
    phases: dict[str, Any]
    buffers: dict[str, Any]
    barriers: dict[str, Any]
    coverage: dict[str, Any]
    findings: list[Finding]
    simulation: dict[str, Any] | None = None
    input_points: dict[str, Any] | None = None  # boundary launches simulated (check's input_points)
    warnings: list[str] = []


class Report:
    """Every section's document plus its text rendering."""

    def __init__(self, sel: Selection, warnings: list[str] | None = None, simulate: bool = True):
        from .check_cmd import check_document, render_check_text
        from .barriers_cmd import barriers_document, render_barriers_text
        from .buffers_cmd import buffers_document, buffers_text_lines
        from .coverage_cmd import coverage_document, coverage_lines
        from .graph_cmd import graph_document, render_graph
        from .partitions_cmd import key_ops_cell, partitions_document
        from .phases_cmd import phases_document, phases_text_lines

        self.sel = sel
        self.warnings = warnings or []
        w = self.warnings
        self.docs: dict[str, BaseModel] = {
            "partitions": partitions_document(sel, warnings=w),
            "graph": graph_document(sel, warnings=w),
            "phases": phases_document(sel, warnings=w),
            "buffers": buffers_document(sel, warnings=w),
            "barriers": barriers_document(sel, warnings=w),
            "coverage": coverage_document(sel, warnings=w),
        }
        self.check_doc, self.check_result = check_document(sel, warnings=w, simulate=simulate)
        def captured(render: Callable[[Any], None], doc: Any) -> str:
            with capture() as buf:
                render(doc)
            return buf.getvalue()

        d = self.docs
        self.texts: dict[str, str] = {
            "partitions": _partition_table(d["partitions"], key_ops_cell),
            "graph": render_graph(d["graph"], "ascii"),  # type: ignore[arg-type]
            "phases": "\n".join(phases_text_lines(d["phases"])),  # type: ignore[arg-type]
            "buffers": "\n".join(buffers_text_lines(d["buffers"])),  # type: ignore[arg-type]
            "barriers": captured(render_barriers_text, d["barriers"]),
            "coverage": "\n".join(coverage_lines(d["coverage"])),  # type: ignore[arg-type]
            "findings": captured(render_check_text, self.check_doc),
        }
        # Every embedded section fits the width its text was captured at (COLUMNS, else CAPTURE_WIDTH).
        width = columns() or CAPTURE_WIDTH
        self.texts = {k: v if k == "partitions" else "\n".join(w for line in v.split("\n") for w in wrap_line(line, width))
                      for k, v in self.texts.items()}

    @property
    def findings(self) -> list[Finding]:
        return self.check_doc.findings

    def document(self) -> ReportDoc:
        def payload(doc: BaseModel) -> dict[str, Any]:
            data = doc.model_dump(mode="json", by_alias=True)
            for key in ("schema", "input", "warnings"):
                data.pop(key, None)
            return data

        s = self.check_doc.summary
        return ReportDoc(
            input=InputRef(**self.sel.input_ref()),
            summary={"verdict": s.verdict, "errors": s.errors, "warnings": s.warnings, "infos": s.infos},
            findings=self.findings,
            simulation=self.check_doc.simulation,
            input_points=self.check_doc.input_points,
            warnings=self.warnings,
            **{key: payload(doc) for key, doc in self.docs.items()},
        )

    def markdown(self) -> str:
        ref = self.sel.input_ref()
        title = f"{ref['path']} (unit {ref['unit_index']}: {ref['unit']})" + (
            f", function @{ref['function']}" if ref["function"] else "")
        from .check_cmd import verdict_line

        s = self.check_doc.summary
        lines = [
            "# Barrier visualization report",
            "",
            f"Input: `{title}`",
            "",
            f"Verdict: {verdict_line(s)}. "
            "Every fact below cites its IR line; deadlocks are reported only under the three conditions of the "
            "mbarrier phase model (no producer, parity cadence, cross-partition cycle), each with a witness schedule.",
            "",
        ]
        for key, heading in SECTIONS:
            body = self.texts[key].rstrip("\n")
            if key == "partitions":
                lines += [f"## {heading}", "", body, ""]
            else:
                lines += [f"## {heading}", "", "```text", body, "```", ""]
            if key == "graph" and self.docs["graph"].edges:  # type: ignore[attr-defined]
                # The same graph as a Mermaid flowchart, which GitHub and most Markdown viewers draw.
                lines += ["```mermaid", self.mermaid().rstrip("\n"), "```", ""]
        lines += ["## Findings", ""]
        if not self.findings:
            lines += ["No findings: no deadlock, race or phase problem was found by the static rules or in the "
                      "simulated schedules.", ""]
        for f in self.findings:
            where = ", ".join(str(n) for n in f.lines)
            lines.append(f"- **{f.severity.value.upper()} `{f.kind}` → {f.outcome}** (lines {where}): {f.message}")
            blocked = f.evidence.get("blocked") or (f.evidence.get("witness") or {}).get("blocked") or []
            if blocked:
                lines.append(f"  - Witness ({f.evidence.get('policy') or (f.evidence.get('witness') or {}).get('policy')} schedule):")
            for b in blocked:
                it = ",".join(str(i) for i in b["iteration"]) or "-"
                lines.append(f"    - {b['partition']} blocks at line {b['line']} (iteration {it}) awaiting parity "
                             f"{b['parity_awaited']}; the slot has completed {b['completions']} phase(s)")
            hang_set = (f.evidence.get("hang_set") or {}).get("lines", [])
            if hang_set:
                lines.append(f"  - {hang_set[0][0].upper()}{hang_set[0][1:]}")
                lines += [f"    - {h.strip()}" for h in hang_set[1:]]
            if f.suggestion:
                lines.append(f"  - Suggestion: {f.suggestion}")
        lines.append("")
        sim = self.check_doc.simulation
        if sim:
            from .check_cmd import simulation_runs

            lines += [f"Simulation (integer kernel arguments = {sim['int_args']}): {simulation_runs(sim)}.", ""]
        ip = self.check_doc.input_points or {}
        if ip.get("launch"):
            lines += [f"Your launch ({ip['launch']['input']}): {ip['launch']['outcome']}.", ""]
        if ip.get("points"):
            lines += ["Input points (boundary launches, each run to the end in the favorable schedule):", ""]
            for p in ip["points"]:
                found = f", {', '.join(p['findings'])}" if p["findings"] else ""
                lines.append(f"- {p['input']}: {p['outcome']}{found} ({'; '.join(p['reasons'][:2])})")
            lines.append("")
        from .check_cmd import explore_note

        lines += [f"Scope: {explore_note(bool(sim))}.", ""]
        if self.warnings:
            lines += ["## Reader warnings", ""] + [f"- {w}" for w in self.warnings] + [""]
        return "\n".join(_wrap_prose(lines, columns()))

    def mermaid(self) -> str:
        from .graph_cmd import render_graph

        return render_graph(self.docs["graph"], "mermaid")  # type: ignore[arg-type]

    def html(self) -> str:
        """The self-contained HTML page (`report --format html`, and report.html under `--out`)."""
        from ..render.html_report import render_html

        return render_html(self)

    def insights(self) -> list[str]:
        out = []
        for f in self.findings:
            if f.severity.value == "info":
                continue
            where = ",".join(str(n) for n in f.lines)
            out.append(f"INSIGHT: {f.severity.value} {f.kind} ({f.outcome}) at line(s) {where}: {f.message}".replace("\n", " "))
        return out


def _wrap_prose(lines: list[str], width: int | None) -> list[str]:
    """With COLUMNS set, prose lines (outside code blocks and tables) wrapped to it; Markdown
    renders the wrapped paragraph or list item the same."""
    if width is None:
        return lines
    out, code = [], False
    for line in lines:
        if line.startswith("```"):
            code = not code
        out += [line] if code or line.startswith(("|", "```", "#")) else wrap_line(line, width)
    return out


def _partition_table(doc: Any, key_ops_cell: Callable[[dict[str, int]], str]) -> str:
    """Section 1 as the skill's Markdown table."""
    rows = ["| Partition | Role | Key Ops | Warps | Lines |", "|---|---|---|---|---|"]
    for p in doc.partitions:
        cell = key_ops_cell(p.key_ops).replace("|", "/")
        lines = f"{p.lines[0]}-{p.lines[1]}" if p.lines else ""
        rows.append(f"| {p.name} | {p.role} | {cell} | {p.warps if p.warps is not None else '?'} | {lines} |")
    if not doc.partitions:
        rows.append("| (none) | no warp_specialize regions, async_task_id or ttg.partition | | | |")
    from ..analyses.structure.cluster_info import cluster_lines

    extra = cluster_lines(doc.cluster)
    if extra:  # a Markdown list after the table: the cluster and the ops that reach other CTAs
        rows += ["", f"- {extra[0]}"] + [" " * (len(x) - len(x.lstrip())) + f"- {x.strip()}" for x in extra[1:]]
    return "\n".join(rows)


def write_debug_helper_files(report: Report, out_dir: Path):
    """report.md, insights.log and status.json for debug_helper, with no model involved."""
    from ..agent.outputs import Mode, Outputs, RunStatus, write_outputs

    s = report.check_doc.summary
    errors = s.errors
    reason = (f"deterministic analysis: {errors} error finding(s)" if errors
              else f"deterministic analysis: not judged ({s.not_judged[0]})" if s.verdict == "not judged"
              else "deterministic analysis: no error findings")
    outputs = Outputs(status=RunStatus.success, reason=reason, report=report.markdown(),
                      insights=report.insights(), suggested_next_modes=[Mode.agent] if errors else [])
    status = write_outputs(out_dir, outputs)
    # The page for people next to debug_helper's files (not part of its contract, so not in status.json).
    (out_dir / HTML_FILE).write_text(report.html(), encoding="utf-8")
    return status
