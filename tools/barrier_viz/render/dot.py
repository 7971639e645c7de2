"""Graphviz DOT rendering of the dependency graph (feed it to `dot -Tsvg`).

Forward edges are solid and shape the ranks; an edge whose arrivals cross CTAs of a cluster is drawn
twice as thick, its label listing the CTAs each arrive line reaches; backward edges are dashed, red and `constraint=false`
so they are drawn as return edges against the pipeline instead of pulling producers below their
consumers. A forward edge that points up the pipeline (to a node whose rank is not below its
source's, e.g. softmax handing P back to the MMA) is drawn solid but does not constrain ranks
either, so the picture reads load -> MMA -> softmax from top to bottom. Every identifier and label is a quoted, escaped DOT string, so partition names such as
`default/partition0` and labels with quotes stay valid.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from ..analyses.structure.graph_doc import GraphDoc, GraphEdgeModel


def quote(text: str) -> str:
    """A DOT double-quoted string; `\\n` inside `text` becomes a line break in the label."""
    body = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{body}"'


def render_dot(doc: "GraphDoc") -> str:
    out = [
        "digraph barrier_dependencies {",
        "  rankdir=TB;",
        '  graph [fontname="monospace", fontsize=10, label=' + quote(_title(doc)) + ", labelloc=t];",
        '  node [shape=box, style=rounded, fontname="monospace", fontsize=10];',
        '  edge [fontname="monospace", fontsize=8];',
    ]
    for n in doc.nodes:
        out.append(f"  {quote(n.id)} [label={quote(n.id + chr(10) + n.label)}];")
    rank = {n.id: n.rank for n in doc.nodes}
    for e in doc.edges:
        upstream = rank.get(e.to, 0) <= rank.get(e.from_, 0)
        out.append(f"  {quote(e.from_)} -> {quote(e.to)} [{_attrs(e, upstream)}];")
    out.append("}")
    return "\n".join(out) + "\n"


def _title(doc: "GraphDoc") -> str:
    fn = f" @{doc.input.function}" if doc.input.function else ""
    return f"{doc.input.unit}{fn}: barrier dependency graph"


def _attrs(e: "GraphEdgeModel", upstream: bool) -> str:
    data = ", ".join(f"{d.name} [{d.shape}]" for d in e.data) or "(no buffer found)"
    flags = e.direction + (", return edge" if e.return_edge else "") + (", self-loop" if e.self_loop else "")
    label = f"{e.mechanism}\n{e.barrier_name}\n{data}\n{flags} ({e.source})\narrive {_list(e.lines.arrive)} -> wait {_list(e.lines.wait)}"
    label += "".join(f"\nCTAs: line {h.line} {h.text}" for h in e.ctas)
    attrs = [f"label={quote(label)}"]
    if e.crosses_ctas is not False:
        attrs.append("penwidth=2")
    if e.direction == "backward":
        attrs += ["style=dashed", "color=firebrick", "fontcolor=firebrick", "constraint=false"]
    else:
        attrs += ["color=black"] + (["constraint=false"] if upstream else [])
    return ", ".join(attrs)


def _list(lines: list[int]) -> str:
    return ",".join(str(n) for n in lines) or "-"
