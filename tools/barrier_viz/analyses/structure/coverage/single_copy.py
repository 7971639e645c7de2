"""`buffer.single_copy` (info): a buffer reused in a loop, written by one partition and read by
another, with one slot, so producer and consumer cannot overlap on it.
"""

from __future__ import annotations

from ...model.findings import Finding, Kind, Severity, finding
from .common import _depth


def single_copy_findings(analysis) -> list[Finding]:
    """`buffer.single_copy` (info): a buffer reused in a loop, written by one partition and
    read by another, with one slot — producer and consumer cannot overlap on it."""
    out = []
    for g in analysis.buffers.groups:
        if any(m.copies != 1 for m in g.members) or any(m.offset is not None for m in g.members):
            continue
        wparts = {p for a in g.writers for p in a.partitions}
        rparts = {p for a in g.readers for p in a.partitions}
        cross = sorted(rparts - wparts)
        if not wparts or not cross:
            continue
        sites = {(a.line, a.op) for a in (*g.writers, *g.readers)}
        if not any(_depth(o) > 0 for o in analysis.ops if (o.line, o.name) in sites):
            continue  # written and read once: nothing to pipeline
        label = g.members[0].label
        out.append(finding(
            Kind.BUFFER_SINGLE_COPY, Severity.info,
            f"{label} ({g.key}) has a single copy but crosses partitions ({', '.join(sorted(wparts))} → "
            f"{', '.join(cross)}): the producer waits for every release before refilling it (no pipelining).",
            lines=[m.line for m in g.members], partitions=sorted(wparts) + cross, buffer_id=g.buffer_id,
            evidence={"copies": 1, "writers": sorted(wparts), "readers": cross}))
    return out
