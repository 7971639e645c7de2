"""The dependency graph as an SVG drawing, laid out in pure Python (no Graphviz needed).

Layout: a simple layered drawing. A partition's layer is its pipeline rank (the document's
`rank`: depth from the sources over forward edges), so data flows from top to bottom; within a
layer partitions are ordered by the mean position of their forward predecessors (one sweep,
ties in partition order), which keeps most forward edges short and uncrossed. Edges are then
drawn by what they are:

- a forward edge down the pipeline: a solid curve from the producer's bottom to the
  consumer's top;
- a forward edge up the pipeline (softmax handing P back to the MMA): a solid curve around the
  right side;
- a backward edge ("slot free again", a persistent loop's return edge): a dashed red curve
  around the left side;
- a self-loop: a loop on the node's right side;
- an edge whose arrivals land in another CTA of a cluster: thicker, purple, labelled `CTA`
  (`CTA?` when the IR does not say which CTAs).

Several edges between the same two partitions fan out so each is its own element. Every edge
is one `<g class="edge ...">` carrying its index (`data-edge`), its IR lines (`data-lines`) and a
`<title>` tooltip, so the page can link it to the IR; its label is a `<text class="elabel">` with
the same `data-edge`, drawn above every edge so a label is never covered by another edge. Output is deterministic: same document,
same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from ..analyses.structure.graph_doc import GraphDoc, GraphEdgeModel

NODE_H = 46
LAYER_GAP = 120
NODE_GAP = 60
CHAR_W = 7.2  # monospace 12px
LABEL_CHAR_W = 6.1  # monospace 10px
MARGIN = 30
SIDE = 110  # room for the curves routed around the left and right sides


@dataclass(frozen=True)
class Box:
    x: float
    y: float
    w: float
    h: float

    @property
    def cx(self) -> float:
        return self.x + self.w / 2

    @property
    def bottom(self) -> float:
        return self.y + self.h

    @property
    def right(self) -> float:
        return self.x + self.w


def layout(doc: "GraphDoc") -> tuple[dict[str, Box], float, float]:
    """Node boxes by partition id, and the drawing's width and height."""
    order = {n.id: i for i, n in enumerate(doc.nodes)}
    layers: dict[int, list[str]] = {}
    for n in doc.nodes:
        layers.setdefault(n.rank, []).append(n.id)
    width_of = {n.id: max(len(n.id), len(n.label)) * CHAR_W + 24 for n in doc.nodes}
    preds: dict[str, list[str]] = {}
    for e in doc.edges:
        if e.direction == "forward" and e.from_ != e.to:
            preds.setdefault(e.to, []).append(e.from_)
    position: dict[str, float] = {}
    rows: list[list[str]] = []
    for rank in sorted(layers):
        ids = layers[rank]
        def key(pid: str) -> tuple[float, int]:
            placed = [position[p] for p in preds.get(pid, []) if p in position]
            return (sum(placed) / len(placed) if placed else float(order[pid]), order[pid])
        ids = sorted(ids, key=key)
        for i, pid in enumerate(ids):
            position[pid] = float(i)
        rows.append(ids)
    # Layers far enough apart that the edges fanned out between two of them keep their labels apart.
    fanned = max((len(v) for v in _pairs(doc).values()), default=1)
    gap = LAYER_GAP + 14 * max(fanned - 2, 0)
    row_widths = [sum(width_of[p] for p in row) + NODE_GAP * (len(row) - 1) for row in rows]
    inner = max(row_widths, default=0.0)
    boxes: dict[str, Box] = {}
    for r, (row, rw) in enumerate(zip(rows, row_widths)):
        x = MARGIN + SIDE + (inner - rw) / 2
        y = MARGIN + r * gap
        for pid in row:
            boxes[pid] = Box(x, y, width_of[pid], NODE_H)
            x += width_of[pid] + NODE_GAP
    width = inner + 2 * (MARGIN + SIDE)
    height = MARGIN * 2 + max(len(rows) - 1, 0) * gap + NODE_H
    return boxes, width, height


def edge_classes(e: "GraphEdgeModel") -> list[str]:
    classes = ["edge", e.direction]
    if e.self_loop:
        classes.append("self-loop")
    if e.return_edge:
        classes.append("return")
    if e.crosses_ctas is True:
        classes.append("cross-cta")
    elif e.crosses_ctas is None:
        classes.append("cross-cta-unknown")
    return classes


def edge_lines(e: "GraphEdgeModel") -> list[int]:
    """Every IR line the edge rests on: its arrivals, its waits, and its cross-CTA hops."""
    return sorted(set(e.lines.arrive) | set(e.lines.wait) | {h.line for h in e.ctas})


def edge_title(e: "GraphEdgeModel") -> str:
    data = ", ".join(f"{d.name} [{d.shape}]" for d in e.data) or "(no buffer found)"
    flags = [e.direction] + (["return edge"] if e.return_edge else []) + (["self-loop"] if e.self_loop else [])
    out = [f"{e.from_} -> {e.to}: {e.mechanism} on {e.barrier_name}", f"data: {data}", ", ".join(flags),
           f"arrive {_nums(e.lines.arrive)} -> wait {_nums(e.lines.wait)}"]
    out += [f"CTAs: line {h.line} {h.text}" for h in e.ctas]
    return "\n".join(out)


def edge_label(e: "GraphEdgeModel") -> str:
    data = ", ".join(d.name for d in e.data) or "?"
    cross = {True: " ⇄CTA", None: " CTA?"}.get(e.crosses_ctas, "")
    return _short(f"{e.mechanism.split(' ')[0]}: {data}", 28) + cross


def render_svg(doc: "GraphDoc") -> str:
    boxes, width, height = layout(doc)
    labels = {n.id: n.label for n in doc.nodes}
    fan = _fan_index(doc)
    routes = [_route(e, boxes, *fan[i]) for i, e in enumerate(doc.edges)]
    for e, (_, (lx, ly)) in zip(doc.edges, routes):  # widen the canvas to every label's end
        width = max(width, lx + len(edge_label(e)) * LABEL_CHAR_W + MARGIN)
        height = max(height, ly + MARGIN)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="graph" viewBox="0 0 {_f(width)} {_f(height)}" '
           f'width="{_f(width)}" height="{_f(height)}" role="img" aria-label="barrier dependency graph">',
           "<defs>"]
    for name, color in (("fwd", "#222"), ("bwd", "#b22222"), ("cta", "#7b2fbe")):
        out.append(f'<marker id="arrow-{name}" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="11" markerHeight="11" '
                   f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{color}"/></marker>')
    out.append("</defs>")
    out.append('<g class="edges">')
    for i, e in enumerate(doc.edges):
        path, (lx, ly) = routes[i]
        marker = "cta" if e.crosses_ctas else ("bwd" if e.direction == "backward" else "fwd")
        lines = " ".join(str(x) for x in edge_lines(e))
        out.append(f'<g class="{" ".join(edge_classes(e))}" id="edge-{i}" data-edge="{i}" data-lines="{lines}" '
                   f'tabindex="0"><title>{escape(edge_title(e))}</title>'
                   f'<path class="hit" d="{path}"/><path class="line" d="{path}" marker-end="url(#arrow-{marker})"/></g>')
    out.append("</g>")
    # Labels after every edge, so no edge's wide hit area covers another edge's label.
    out.append('<g class="labels">')
    for i, e in enumerate(doc.edges):
        _, (lx, ly) = routes[i]
        out.append(f'<text class="elabel {" ".join(edge_classes(e)[1:])}" data-edge="{i}" x="{_f(lx)}" y="{_f(ly)}">'
                   f'{escape(edge_label(e))}</text>')
    out.append("</g>")
    out.append('<g class="nodes">')
    for n in doc.nodes:
        b = boxes[n.id]
        out.append(f'<g class="node" data-node="{escape(n.id, quote=True)}"><title>{escape(n.id)}: {escape(labels[n.id])}</title>'
                   f'<rect x="{_f(b.x)}" y="{_f(b.y)}" width="{_f(b.w)}" height="{_f(b.h)}" rx="8"/>'
                   f'<text class="nid" x="{_f(b.cx)}" y="{_f(b.y + 18)}">{escape(n.id)}</text>'
                   f'<text class="nlabel" x="{_f(b.cx)}" y="{_f(b.y + 35)}">{escape(_short(n.label, 40))}</text></g>')
    out.append("</g></svg>")
    return "\n".join(out)


def _pairs(doc: "GraphDoc") -> dict[tuple, list[int]]:
    """Edge indices grouped by (from, to, direction): the edges drawn side by side."""
    groups: dict[tuple, list[int]] = {}
    for i, e in enumerate(doc.edges):
        groups.setdefault((e.from_, e.to, e.direction), []).append(i)
    return groups


def _fan_index(doc: "GraphDoc") -> list[tuple[int, int]]:
    """Per edge: its position among the edges drawn between the same two partitions the same way."""
    fan = [(0, 1)] * len(doc.edges)
    for members in _pairs(doc).values():
        for k, i in enumerate(members):
            fan[i] = (k, len(members))
    return fan


def _route(e: "GraphEdgeModel", boxes: dict[str, Box], k: int, n: int) -> tuple[str, tuple[float, float]]:
    """The edge's SVG path and where its label goes."""
    s, t = boxes[e.from_], boxes[e.to]
    spread = (k - (n - 1) / 2) * 16
    if e.self_loop:
        reach = 40 + 22 * k
        y0, y1 = s.y + 10, s.bottom - 10
        d = f"M{_f(s.right)},{_f(y0)} C{_f(s.right + reach)},{_f(y0 - 14)} {_f(s.right + reach)},{_f(y1 + 14)} {_f(s.right)},{_f(y1)}"
        return d, (s.right + reach * 0.75 + 4, (y0 + y1) / 2 + 4)
    down = t.y > s.y
    if e.direction == "forward" and down:
        x0, y0, x1, y1 = s.cx + spread, s.bottom, t.cx + spread, t.y
        my = (y0 + y1) / 2
        d = f"M{_f(x0)},{_f(y0)} C{_f(x0)},{_f(my)} {_f(x1)},{_f(my)} {_f(x1)},{_f(y1)}"
        return d, ((x0 + x1) / 2 + 6, my + 4 + 12 * k)
    # Around a side: backward edges on the left, forward edges going up (or across) on the right.
    left = e.direction == "backward"
    reach = 36 + 20 * k
    if left:
        x0, x1 = s.x, t.x
        cx = min(x0, x1) - reach
    else:
        x0, x1 = s.right, t.right
        cx = max(x0, x1) + reach
    y0, y1 = s.y + s.h / 2 + spread / 2, t.y + t.h / 2 + spread / 2
    if abs(y0 - y1) < 1:  # same layer: bow above (backward) or below (forward)
        y0, y1 = (s.y, t.y) if left else (s.bottom, t.bottom)
        x0, x1 = s.cx + spread, t.cx + spread
        bow = -(30 + 14 * k) if left else (30 + 14 * k)
        d = f"M{_f(x0)},{_f(y0)} C{_f(x0)},{_f(y0 + bow)} {_f(x1)},{_f(y1 + bow)} {_f(x1)},{_f(y1)}"
        return d, ((x0 + x1) / 2, y0 + bow * 0.8)
    d = f"M{_f(x0)},{_f(y0)} C{_f(cx)},{_f(y0)} {_f(cx)},{_f(y1)} {_f(x1)},{_f(y1)}"
    lx = cx - (4 if left else -4)
    return d, (lx, (y0 + y1) / 2 + (12 * k if left else -12 * k))


def _f(v: float) -> str:
    """Coordinates with one decimal at most, so the output is short and stable."""
    text = f"{v:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _nums(lines: list[int]) -> str:
    return ",".join(str(n) for n in lines) or "-"
