"""Mermaid flowchart rendering of the dependency graph (paste into Markdown).

Node ids are `n0`, `n1`, ... in partition order (Mermaid ids cannot hold `/` or `.`), labels carry
the partition name and role. Forward edges are solid arrows, backward edges dotted (`-.->`), the
return edges of a persistent loop; a forward edge whose arrivals cross CTAs of a cluster is thick
(`==>`) and its label says which CTAs each arrive line reaches. Label text is entity-escaped (`#quot;`, `#lt;`, ...) because
Mermaid has no backslash escapes inside quoted labels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from ..analyses.structure.graph_doc import GraphDoc

_ENTITIES = {'"': "#quot;", "<": "#lt;", ">": "#gt;", "|": "#124;", "#": "#35;"}


def escape(text: str) -> str:
    """Mermaid-safe label text; newlines become `<br/>`."""
    out = "".join(_ENTITIES.get(ch, ch) for ch in text)
    return out.replace("\n", "<br/>")


def render_mermaid(doc: "GraphDoc") -> str:
    ids = {n.id: f"n{i}" for i, n in enumerate(doc.nodes)}
    out = ["flowchart TD"]
    for n in doc.nodes:
        out.append(f'  {ids[n.id]}["{escape(n.id + chr(10) + n.label)}"]')
    for e in doc.edges:
        data = ", ".join(d.name for d in e.data) or "?"
        label = f"{e.mechanism}: {data} ({e.direction}{', return' if e.return_edge else ''})"
        if e.crosses_ctas is not False:
            label += "; cross-CTA: " + "; ".join(f"{h.line} {h.text}" for h in e.ctas)
        arrow = "-.->" if e.direction == "backward" else ("==>" if e.crosses_ctas else "-->")
        out.append(f'  {ids[e.from_]} {arrow}|"{escape(label)}"| {ids[e.to]}')
    return "\n".join(out) + "\n"
