"""`report --format html`: the report as one self-contained page for people reviewing by eye.

One file, nothing fetched: the styles and the script are inline, the dependency graph is an
inline SVG (`render.svg_graph`), and a Content-Security-Policy forbids every network load, so
the page opens the same from a CI artifact, a mail attachment or a laptop offline. It holds the
five sections, both coverage tables, the findings with their witnesses, and the IR lines those
cite: every edge of the graph and every line number in a finding links to its lines, shown in
the page with their text. Same input, same bytes out.

Size: the page carries the cited lines only (never the whole IR) and the sections' text; on the
largest file of the shared corpus it stays under `PAGE_LIMIT` bytes (tests/test_html_report.py).
"""

from __future__ import annotations

import json
from html import escape
from typing import TYPE_CHECKING, Any, Protocol

from .svg_graph import edge_lines, render_svg

if TYPE_CHECKING:  # pragma: no cover
    from ..analyses.model.findings import Finding
    from ..session import Selection


class Report(Protocol):
    """What the page reads from a report (`commands.report_cmd.Report` provides it): the
    selection, each section's document and text, check's document and the findings. Declared
    here so that the renderer does not import the command that calls it."""

    sel: Selection
    warnings: list[str]
    docs: dict[str, Any]
    texts: dict[str, str]
    check_doc: Any

    @property
    def findings(self) -> list[Finding]: ...

PAGE_LIMIT = 512_000  # bytes: the page of the largest file of the shared corpus stays under it (tests/test_html_report.py)
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1b1b1b;background:#fafafa}
header{background:#20232a;color:#fff;padding:12px 24px}header h1{font-size:20px;margin:0 0 4px}
header code{color:#ffd479}main{display:grid;grid-template-columns:minmax(0,1fr) 420px;gap:16px;padding:16px 24px}
section{background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px 16px;margin-bottom:16px}
h2{font-size:17px;border-bottom:1px solid #eee;padding-bottom:4px}
pre{font:12px/1.35 ui-monospace,monospace;overflow-x:auto;white-space:pre;background:#f6f8fa;padding:8px;border-radius:4px}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
.verdict-error{color:#b00020;font-weight:600}.verdict-clean{color:#1a7f37;font-weight:600}
div.graphbox{overflow:auto;max-height:80vh;border:1px solid #eee}svg.graph{background:#fff}
svg .node rect{fill:#eef4ff;stroke:#3b5b9a}svg .node text{font:12px ui-monospace,monospace;text-anchor:middle}
svg .node .nlabel{fill:#555;font-size:11px}
svg .edge .line{fill:none;stroke:#222;stroke-width:1.6}svg .edge .hit{fill:none;stroke:transparent;stroke-width:12;cursor:pointer}
svg .edge.backward .line{stroke:#b22222;stroke-dasharray:6 4}svg .edge.cross-cta .line{stroke:#7b2fbe;stroke-width:3.2}
svg .edge.cross-cta-unknown .line{stroke:#7b2fbe;stroke-dasharray:2 3}
svg .elabel{font:10px ui-monospace,monospace;fill:#333;paint-order:stroke;stroke:#fff;stroke-width:3px;cursor:pointer}
svg .elabel.backward{fill:#b22222}svg .elabel.cross-cta{fill:#7b2fbe}svg .elabel.selected{fill:#e08600;font-weight:700}
svg .edge.selected .line{stroke:#e08600;stroke-width:4}svg .edge:focus{outline:none}
.legend span{display:inline-block;margin-right:14px;font-size:12px}
.finding{border-left:4px solid #999;padding:4px 10px;margin:8px 0;background:#fcfcfc}
.finding.error{border-color:#b00020}.finding.warning{border-color:#d08700}.finding.info{border-color:#3b5b9a}
.finding .kind{font-family:ui-monospace,monospace;font-weight:600}.bad{color:#b00020;font-weight:600}
aside{position:sticky;top:8px;align-self:start;max-height:96vh;overflow:auto}
#edge-detail{min-height:60px}#edge-detail .none{color:#777}
.ir{font:12px/1.4 ui-monospace,monospace;width:100%}.ir td{border:none;padding:0 6px;white-space:pre-wrap;word-break:break-all}
.ir td.n{color:#888;text-align:right;user-select:none;width:1%;white-space:nowrap}.ir tr.gap td{color:#bbb}
.ir tr.hl td{background:#fff2c6}.ir tr:target td{background:#ffd479}a.ln{font-family:ui-monospace,monospace}
"""

SCRIPT = """
(function(){
  var data = JSON.parse(document.getElementById('bv-data').textContent);
  var detail = document.getElementById('edge-detail');
  function lineRow(n){
    var text = data.lines[String(n)];
    var tr = document.createElement('tr');
    var a = document.createElement('a'); a.href = '#L' + n; a.className = 'ln'; a.textContent = n;
    var td1 = document.createElement('td'); td1.className = 'n'; td1.appendChild(a);
    var td2 = document.createElement('td'); td2.textContent = text === undefined ? '' : text;
    tr.appendChild(td1); tr.appendChild(td2); return tr;
  }
  function show(i){
    var e = data.edges[i];
    document.querySelectorAll('svg .selected').forEach(function(g){ g.classList.remove('selected'); });
    document.querySelectorAll('#ir tr.hl').forEach(function(r){ r.classList.remove('hl'); });
    var g = document.getElementById('edge-' + i); if (g) g.classList.add('selected');
    document.querySelectorAll('text.elabel[data-edge="' + i + '"]').forEach(function(t){ t.classList.add('selected'); });
    detail.innerHTML = '';
    var h = document.createElement('div'); h.className = 'edge-title'; h.textContent = e.title; detail.appendChild(h);
    var table = document.createElement('table'); table.className = 'ir edge-lines';
    e.lines.forEach(function(n){
      table.appendChild(lineRow(n));
      var row = document.getElementById('L' + n); if (row) row.classList.add('hl');
    });
    detail.appendChild(table);
    var first = document.getElementById('L' + e.lines[0]);
    if (first && first.scrollIntoView) first.scrollIntoView({block: 'nearest'});
  }
  document.querySelectorAll('g.edge, text.elabel').forEach(function(g){
    var i = Number(g.getAttribute('data-edge'));
    g.addEventListener('click', function(){ show(i); });
    g.addEventListener('keydown', function(ev){ if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); show(i); } });
  });
})();
"""


def render_html(report: "Report") -> str:
    """The whole page."""
    ref = report.sel.input_ref()
    graph = report.docs["graph"]
    s = report.check_doc.summary
    cited = _cited_lines(report)
    source = _source_lines(report, cited)
    data = {
        "edges": [{"title": _edge_title_line(e), "lines": edge_lines(e)} for e in graph.edges],  # type: ignore[attr-defined]
        "lines": {str(n): source[n] for n in sorted(source)},
    }
    title = f"{ref['path']} (unit {ref['unit_index']}: {ref['unit']})" + (f", function @{ref['function']}" if ref["function"] else "")
    verdict_class = "verdict-error" if s.errors else "verdict-clean"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Barrier report: {escape(title)}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<header><h1>Barrier visualization report</h1><div>Input: <code>{escape(title)}</code></div>"
        f'<div class="{verdict_class}">{s.errors} error(s), {s.warnings} warning(s), {s.infos} info</div></header>',
        "<main><div>",
        _section("partitions", "1. Partition summary", _partitions_html(report)),
        _section("graph", "2. Barrier dependency graph", _graph_html(report)),
        _section("phases", "3. Index and phase analysis", _pre(report.texts["phases"])),
        _section("buffers", "4. Shared data map", _pre(report.texts["buffers"])),
        _section("barriers", "5. SSA value to barrier map", _pre(report.texts["barriers"])),
        _section("coverage", "Coverage tables", _pre(report.texts["coverage"], mark_bad=True)),
        _section("findings", "Findings", _findings_html(report)),
    ]
    if report.warnings:
        parts.append(_section("warnings", "Reader warnings", "<ul>" + "".join(f"<li>{escape(w)}</li>" for w in report.warnings) + "</ul>"))
    parts += [
        "</div><aside>",
        '<section id="edge-panel"><h2>Selected edge</h2><div id="edge-detail">'
        '<p class="none">Click an edge of the graph to see the IR lines it rests on.</p></div></section>',
        f'<section id="ir-panel"><h2>Cited IR lines</h2>{_ir_table(source, report)}</section>',
        "</aside></main>",
        f'<script type="application/json" id="bv-data">{_json_for_script(data)}</script>',
        f"<script>{SCRIPT}</script>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _section(key: str, heading: str, body: str) -> str:
    return f'<section id="sec-{key}"><h2>{escape(heading)}</h2>{body}</section>'


def _pre(text: str, *, mark_bad: bool = False) -> str:
    lines = []
    for line in text.rstrip("\n").split("\n"):
        html = escape(line)
        if mark_bad and "✗" in line:
            html = f'<span class="bad">{html}</span>'
        lines.append(html)
    return "<pre>" + "\n".join(lines) + "</pre>"


def _partitions_html(report: "Report") -> str:
    from ..analyses.structure.cluster_info import cluster_lines
    from ..commands.partitions_cmd import key_ops_cell

    doc = report.docs["partitions"]
    rows = ["<table><tr><th>Partition</th><th>Role</th><th>Key ops</th><th>Warps</th><th>Lines</th></tr>"]
    for p in doc.partitions:  # type: ignore[attr-defined]
        lines = f"{p.lines[0]}-{p.lines[1]}" if p.lines else ""
        rows.append(f"<tr><td>{escape(p.name)}</td><td>{escape(p.role)}</td><td>{escape(key_ops_cell(p.key_ops))}</td>"
                    f"<td>{p.warps if p.warps is not None else '?'}</td><td>{lines}</td></tr>")
    if not doc.partitions:  # type: ignore[attr-defined]
        rows.append('<tr><td colspan="5">no warp_specialize regions, async_task_id or ttg.partition</td></tr>')
    rows.append("</table>")
    extra = cluster_lines(doc.cluster)  # type: ignore[attr-defined]
    if extra:
        rows.append("<ul>" + "".join(f"<li>{escape(x.strip())}</li>" for x in extra) + "</ul>")
    return "".join(rows)


def _graph_html(report: "Report") -> str:
    doc = report.docs["graph"]
    fwd = sum(1 for e in doc.edges if e.direction == "forward")  # type: ignore[attr-defined]
    cross = sum(1 for e in doc.edges if e.crosses_ctas is not False)  # type: ignore[attr-defined]
    summary = (f"<p>{len(doc.nodes)} partition(s), {len(doc.edges)} edge(s): {fwd} forward, "  # type: ignore[attr-defined]
               f"{len(doc.edges) - fwd} backward; {cross} cross-CTA. Click an edge to see its IR lines.</p>")  # type: ignore[attr-defined]
    legend = ('<div class="legend"><span>── forward (data ready)</span><span style="color:#b22222">- - backward '
              '(slot free again)</span><span style="color:#7b2fbe">━━ cross-CTA (⇄CTA; CTA? not computable)</span></div>')
    ascii_view = f"<details><summary>Text view (the same graph as `barrier-viz graph`)</summary>{_pre(report.texts['graph'])}</details>"
    return summary + legend + '<div class="graphbox">' + render_svg(doc) + '</div>' + ascii_view  # type: ignore[arg-type]


def _findings_html(report: "Report") -> str:
    findings = report.findings
    if not findings:
        out = ["<p>No findings: no deadlock, race or phase problem was found by the static rules or in the simulated schedules.</p>"]
    else:
        out = []
    for f in findings:
        lines = " ".join(_line_link(n) for n in f.lines)
        body = [f'<div class="finding {f.severity.value}"><div><span class="kind">{f.severity.value.upper()} {escape(f.kind)}</span>'
                f" → <b>{escape(f.outcome)}</b> (lines {lines})</div><div>{escape(f.message)}</div>"]
        if f.partitions:
            body.append(f"<div>Partitions: {escape(', '.join(f.partitions))}</div>")
        witness = f.evidence.get("witness") or {}
        blocked = f.evidence.get("blocked") or witness.get("blocked") or []
        if blocked:
            policy = f.evidence.get("policy") or witness.get("policy")
            body.append(f"<div>Witness ({escape(str(policy))} schedule):<ul>")
            for b in blocked:
                it = ",".join(str(i) for i in b["iteration"]) or "-"
                body.append(f"<li>{escape(str(b['partition']))} blocks at line {_line_link(b['line'])} (iteration {escape(it)}) "
                            f"awaiting parity {b['parity_awaited']}; the slot has completed {b['completions']} phase(s)</li>")
            body.append("</ul></div>")
        if f.suggestion:
            body.append(f"<div>Suggestion: {escape(f.suggestion)}</div>")
        body.append("</div>")
        out.append("".join(body))
    sim = report.check_doc.simulation
    if sim:
        from ..commands.check_cmd import simulation_runs

        out.append(f"<p>Simulation (integer kernel arguments = {escape(str(sim['int_args']))}): {escape(simulation_runs(sim))}.</p>")
    ip = report.check_doc.input_points or {}
    if ip.get("points"):
        out.append("<p>Input points (boundary launches, each run to the end in the favorable schedule):</p><ul>")
        for p in ip["points"]:
            found = f", {', '.join(p['findings'])}" if p["findings"] else ""
            out.append(f"<li>{escape(p['input'])}: {escape(p['outcome'] + found)}</li>")
        out.append("</ul>")
    from ..commands.check_cmd import explore_note

    out.append(f"<p>Scope: {escape(explore_note(bool(sim)))}.</p>")
    return "".join(out)


def _line_link(n: int) -> str:
    return f'<a class="ln" href="#L{n}">{n}</a>'


def _cited_lines(report: "Report") -> set[int]:
    """The IR lines the page refers to: the graph's edges and unpaired ends, and the findings' lines and witnesses."""
    graph = report.docs["graph"]
    lines: set[int] = set()
    for e in graph.edges:  # type: ignore[attr-defined]
        lines.update(edge_lines(e))
    for u in graph.unmatched:  # type: ignore[attr-defined]
        lines.update(u.lines)
    for f in report.findings:
        lines.update(f.lines)
        witness = f.evidence.get("witness") or {}
        for b in f.evidence.get("blocked") or witness.get("blocked") or []:
            if isinstance(b.get("line"), int):
                lines.add(b["line"])
    return {n for n in lines if isinstance(n, int) and n > 0}


def _source_lines(report: "Report", cited: set[int]) -> dict[int, str]:
    """The text of each cited line (file numbering), read from the unit."""
    unit = report.sel.unit
    text = unit.text().decode("utf-8", errors="replace").split("\n")
    out = {}
    for n in cited:
        i = n - unit.start_line
        if 0 <= i < len(text):
            out[n] = text[i].rstrip("\r")
    return out


def _ir_table(source: dict[int, str], report: "Report") -> str:
    if not source:
        return "<p>No IR line is cited.</p>"
    rows = ['<table class="ir" id="ir">']
    previous = None
    for n in sorted(source):
        if previous is not None and n > previous + 1:
            rows.append('<tr class="gap"><td class="n">⋮</td><td></td></tr>')
        rows.append(f'<tr id="L{n}"><td class="n">{n}</td><td>{escape(source[n])}</td></tr>')
        previous = n
    rows.append("</table>")
    path = escape(report.sel.input_ref()["path"])
    return f"<p>From <code>{path}</code>, line numbers as in the file.</p>" + "".join(rows)


def _edge_title_line(e: Any) -> str:
    data = ", ".join(d.name for d in e.data) or "?"
    text = f"{e.from_} -> {e.to} ({e.direction}): {e.mechanism} on {e.barrier_name}, data {data}"
    if e.crosses_ctas is not False:
        text += "; cross-CTA: " + "; ".join(f"line {h.line} {h.text}" for h in e.ctas)
    return text


def _json_for_script(data: dict[str, Any]) -> str:
    """JSON safe inside a <script> element (no `</script>` or `<!--` can close it early)."""
    return json.dumps(data, ensure_ascii=False, sort_keys=True).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
