"""ASCII rendering of the dependency graph, in the layout of the skill's section 2.

A forward block, then a backward block ("next-iteration dependencies"), each a column of
`partition / | annotation / v / partition` arrows. Edges between the same two partitions share one
arrow; every barrier on it gets its annotation: mechanism, barrier, data, direction and its source,
lines. Pure ASCII so it survives any terminal, log or diff.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from ..analyses.structure.graph_doc import GraphDoc, GraphEdgeModel

_PIPE = "      |"


def render_ascii(doc: "GraphDoc") -> str:
    labels = {n.id: n.label for n in doc.nodes}
    out: list[str] = ["Barrier Dependency Graph", "========================", ""]
    where = f"{doc.input.path} [unit {doc.input.unit_index}: {doc.input.unit}]"
    if doc.input.function:
        where += f" @{doc.input.function}"
    fwd = [e for e in doc.edges if e.direction == "forward"]
    bwd = [e for e in doc.edges if e.direction == "backward"]
    selfs = sum(1 for e in doc.edges if e.self_loop)
    out.append(f"{where}: {len(doc.nodes)} node(s), {len(doc.edges)} edge(s): {len(fwd)} forward, "
               f"{len(bwd)} backward ({selfs} self-loop(s)){'; persistent kernel' if doc.persistent else ''}")
    if doc.cluster.ctas > 1 or doc.cluster.form == "cga":
        crossing = sum(1 for e in doc.edges if e.crosses_ctas)
        unknown = sum(1 for e in doc.edges if e.crosses_ctas is None)
        form = {"per-cta": "TLX per-CTA program", "cga": "Triton CGA program"}.get(doc.cluster.form, doc.cluster.form)
        out.append(f"Cluster of {doc.cluster.ctas} CTAs ({form}): every CTA runs these partitions; "
                   f"{crossing} edge(s) cross CTAs" + (f", {unknown} not computable" if unknown else "")
                   + " (marked [cross-CTA], with the CTAs each arrive line reaches)")
    out += ["", "  Forward barriers (producer -> consumer: data ready):", ""]
    out += _block(fwd, labels, backward=False) or ["  (none)", ""]
    title = "  Backward barriers (consumer -> producer: slot free again; next-iteration dependencies"
    title += ", drawn as return edges of the persistent loop):" if doc.persistent else "):"
    out += [title, ""]
    out += _block(bwd, labels, backward=True) or ["  (none)", ""]
    idle = [n for n in doc.nodes if not any(n.id in (e.from_, e.to) for e in doc.edges)]
    if idle:
        out.append("  Partitions without barrier edges: " + ", ".join(f"{n.id} ({n.label})" for n in idle))
        out.append("")
    if doc.unmatched:
        out.append("  Unmatched channel ends:")
        for u in doc.unmatched:
            out.append(f"    {u.partition}: {u.kind} on {u.barrier_name} (line(s) {_list(u.lines)})")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _block(edges: list["GraphEdgeModel"], labels: dict[str, str], *, backward: bool) -> list[str]:
    out: list[str] = []
    groups: list[list[GraphEdgeModel]] = []
    for e in edges:
        if groups and (groups[-1][0].from_, groups[-1][0].to) == (e.from_, e.to):
            groups[-1].append(e)
        else:
            groups.append([e])
    for group in groups:
        first = group[0]
        out.append(f"  {_node(first.from_, labels)}")
        out.append(_PIPE)
        for e in group:
            out += _annotation(e)
        out.append("      v")
        target = _node(first.to, labels)
        if first.self_loop and any(e.crosses_ctas for e in group):
            target += "  [same partition, arrivals from other CTAs of the cluster]"
        elif first.self_loop:
            target += "  [self-loop: same partition]"
        elif backward and first.return_edge:
            target += ", next iteration  [return edge]"
        out.append(f"  {target}")
        out.append("")
    return out


def _annotation(e: "GraphEdgeModel") -> list[str]:
    slots = f", {e.slots} slot{'s' if e.slots != 1 else ''}" if e.slots is not None else ""
    via = f" via {e.agent}" if e.agent else ""
    data = ", ".join(f"{d.name} [{d.shape}{' ' + d.space if d.space else ''}]" for d in e.data) or "(no buffer found)"
    flags = [e.direction]
    if e.return_edge:
        flags.append("return edge")
    if e.self_loop:
        flags.append("self-loop")
    if e.dst_task_mismatch:
        flags.append("dstTask names neither end")
    cross = {True: "  [cross-CTA]", None: "  [cross-CTA?]"}.get(e.crosses_ctas, "")
    return [
        f"{_PIPE} {e.mechanism}{via}  ({e.barrier_name}{slots}){cross}",
        f"{_PIPE}     data: {data}  [{e.data_source}]",
        f"{_PIPE}     {', '.join(flags)} (by {e.source}: {e.source_note})",
        f"{_PIPE}     arrive line(s) {_list(e.lines.arrive)} -> wait line(s) {_list(e.lines.wait)}",
    ] + [f"{_PIPE}     CTAs: line {h.line} {h.op.split('.', 1)[-1]} {h.text}" for h in e.ctas]


def _node(node_id: str, labels: dict[str, str]) -> str:
    label = labels.get(node_id)
    return f"{node_id} ({label})" if label and label != node_id else node_id


def _list(lines: list[int]) -> str:
    return ", ".join(str(n) for n in lines) or "-"
