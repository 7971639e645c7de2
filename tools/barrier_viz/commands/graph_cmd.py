"""`graph`: report section 2, the barrier dependency graph, as ASCII, DOT, Mermaid or JSON.

The document (`analyses.structure.graph_doc`) is built once from `analyses.structure.graph` and
every rendering reads it, so the four formats cannot disagree. Output is deterministic: nodes in
partition order, edges in pipeline order (see `analyses.structure.graph.build_graph`), no
timestamps or ids from memory addresses.
"""

from __future__ import annotations

from ..analyses.structure.cluster_info import cluster_model
from ..analyses.structure.graph import build_graph
from ..analyses.structure.graph_doc import GraphDoc, document_from_graph
from ..analysis import Analysis
from ..session import Selection


def graph_document(sel: Selection, *, warnings: list[str] | None = None) -> GraphDoc:
    a = Analysis.of(sel)
    return document_from_graph(sel.input_ref(), build_graph(a), warnings=warnings, cluster=cluster_model(a))


def render_graph(doc: GraphDoc, fmt: str) -> str:
    """The document in one of the text formats: ascii, dot, mermaid."""
    if fmt == "dot":
        from ..render.dot import render_dot

        return render_dot(doc)
    if fmt == "mermaid":
        from ..render.mermaid import render_mermaid

        return render_mermaid(doc)
    from ..render.ascii_graph import render_ascii

    return render_ascii(doc)
