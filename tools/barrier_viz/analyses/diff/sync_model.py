"""The synchronization of one unit, named by what it guards instead of by SSA name or line.

`audit` and `diff` both need to say "the same barrier" about two texts that a recompile renamed
and reordered: the compiler may emit the barrier arrays in another order, with other SSA numbers,
at other lines. What a kernel engineer means by "the same barrier" is what it does: the kind of
barrier and its depth, the data it guards, who arrives and who waits on it. This module reads one
`Analysis` (and the builders the sections already use: graph, phases, buffers, check) into a
plain, JSON-serialisable model in which every barrier, use, edge and buffer carries such a
content key, and every formula is written with its counters described instead of named.

The model is plain dicts and lists so that the audit cache can store it and `diff` can compare
two of them without the IR at hand.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Any

_SSA = re.compile(r"%[\w$.\-#]+")
_LINE = re.compile(r"\bline \d+")
_WAIT_SIDE = "wait"
_ARRIVE_SIDE = "arrive"


def canonical_text(text: str | None) -> str | None:
    """A formula or description with SSA names and line numbers blanked: what survives a
    renaming recompile."""
    if text is None:
        return None
    return _LINE.sub("line _", _SSA.sub("%", text))


def canonical_formula(value: dict[str, Any] | None) -> str | None:
    """A slot or phase formula with each counter replaced by what it counts (its description
    without names or lines), so `acc(%arg21) % 4` and `acc(%arg9) % 4` read the same when both
    counters start at 0 and step by 1 per iteration of their loop."""
    if not value:
        return None
    if value.get("constant") is not None:
        return f"const {value['constant']}"
    formula = value.get("formula")
    if formula is None:
        return None
    counters = sorted(value.get("counters") or [], key=lambda c: -len(c.get("name") or ""))
    for c in counters:
        name = c.get("name")
        if not name:
            continue
        desc = c.get("description") or ""
        if desc.startswith(name + ":"):
            desc = desc[len(name) + 1:]
        formula = formula.replace(name, "{" + f"{c.get('kind')}:{canonical_text(desc.strip())}" + "}")
    return canonical_text(formula)


def role_keys(partitions: list[dict[str, Any]]) -> dict[str, str]:
    """Partition name -> its role, numbered when two partitions share a role
    (`MMA (acc)#0`, `MMA (acc)#1`, in partition order)."""
    counts = Counter(p["role"] for p in partitions)
    seen: Counter[str] = Counter()
    out: dict[str, str] = {}
    for p in partitions:
        role = p["role"]
        out[p["name"]] = role if counts[role] == 1 else f"{role}#{seen[role]}"
        seen[role] += 1
    out.setdefault("main", "main")
    return out


def build_sync_model(analysis, findings: list | None = None) -> dict[str, Any]:
    """The unit's partitions, barriers (with their uses), edges, buffers and findings, each
    with a content key. `findings` are the unit's check findings (computed when None)."""
    from ...commands.buffers_cmd import facts_document
    from ..structure.graph_doc import document_from_graph
    from ...schemas import InputRef
    from ..structure.graph import build_graph

    ref = InputRef(**analysis.sel.input_ref())
    partitions = partition_entries(analysis)
    rk = role_keys(partitions)
    graph = document_from_graph(analysis.sel.input_ref(), build_graph(analysis)).model_dump(mode="json", by_alias=True)
    buffers = facts_document(analysis.buffers, ref, []).model_dump(mode="json", by_alias=True)
    barriers = barrier_entries(analysis, rk)
    identities = assign_identities(barriers)
    for b in barriers:
        b["identity"] = identities[b["id"]]
    by_id = {b["id"]: b for b in barriers}
    edges = [_edge(e, rk, by_id) for e in graph["edges"]]
    lines = ops_by_line(analysis)
    if findings is None:
        from ..verdicts import check

        findings = check(analysis).findings
    return {
        "partitions": partitions,
        "barriers": barriers,
        "edges": edges,
        "buffers": [_buffer(g, rk) for g in buffers["buffers"]],
        "findings": [finding_record(f, analysis, identities, rk, lines) for f in findings],
    }


def barrier_entries(analysis, rk: dict[str, str]) -> list[dict[str, Any]]:
    """Every barrier of the unit as the phases section reads it (depth, data, each wait's and
    arrive's formulas), with its init ops, partitions named by role key."""
    from ...commands.phases_cmd import phases_doc_from_report
    from ...schemas import InputRef
    from ..structure.phases import phase_report

    ref = InputRef(**analysis.sel.input_ref())
    phases = phases_doc_from_report(phase_report(analysis), ref, []).model_dump(mode="json", by_alias=True)
    barriers = [_barrier(b, rk) for b in phases["barriers"]]
    inits = {b.id: sorted((u.line, u.count if u.count is not None else -1) for u in b.uses if u.role.value == "init")
             for b in analysis.barriers.barriers}
    for b in barriers:
        b["inits"] = [list(i) for i in inits.get(b["id"], [])]
    return barriers


def partition_entries(analysis) -> list[dict[str, Any]]:
    """Each partition with its role (report section 1) and role key."""
    from ...facts.roles import assign_roles

    roles = assign_roles(analysis.partitions, analysis.sel.ir, analysis.ops)
    out = [{"name": p.name, "role": roles[p.name].label, "warps": p.warps, "lines": [p.start_line, p.end_line]}
           for p in analysis.partitions.partitions]
    rk = role_keys(out)
    for p in out:
        p["key"] = rk[p["name"]]
    return out


def _barrier(b: dict[str, Any], rk: dict[str, str]) -> dict[str, Any]:
    uses = []
    for side, items in ((_WAIT_SIDE, b.get("waits") or []), (_ARRIVE_SIDE, b.get("arrives") or [])):
        for u in items:
            uses.append({
                "side": side,
                "op": u["op"],
                "role": u["role"],
                "line": u["line"],
                "partition": rk.get(u.get("partition") or "main", u.get("partition") or "main"),
                "slot": canonical_formula(u.get("slot")),
                "phase": canonical_formula(u.get("phase")),
                "slot_text": (u.get("slot") or {}).get("formula"),
                "phase_text": (u.get("phase") or {}).get("formula"),
                "arrivals": u.get("arrivals"),
                "tx_bytes": u.get("tx_bytes"),
            })
    uses.sort(key=lambda u: u["line"])
    data = sorted({f"{d.get('space') or '?'}:{d['shape']}" for d in b.get("data") or []})
    return {
        "id": b["id"],
        "name": b["name"],
        "line": b["line"],
        "kind": b["kind"],
        "depth": b.get("depth"),
        "init_counts": list(b.get("init_counts") or []),
        "mechanisms": sorted(b.get("mechanisms") or []),
        "cadence": b.get("cadence"),
        "data": data,
        "arrivers": sorted({u["partition"] for u in uses if u["side"] == _ARRIVE_SIDE}),
        "waiters": sorted({u["partition"] for u in uses if u["side"] == _WAIT_SIDE}),
        "first_use": uses[0]["line"] if uses else b["line"],
        "uses": uses,
    }


# -- barrier identity ----------------------------------------------------------------------------
# Tiers of what must agree for two barriers to be the same one, most to least specific. A
# mutation changes some of these (a dropped arrive removes an arriving partition; a changed
# init count changes the arrival count), so matching falls back tier by tier; what is left after
# the last tier was added or removed.
def tier_keys(b: dict[str, Any]) -> list[tuple]:
    who = tuple(sorted(set(b["arrivers"]) | set(b["waiters"])))
    return [
        (b["kind"], b["depth"], tuple(b["data"]), tuple(b["arrivers"]), tuple(b["waiters"]), tuple(b["mechanisms"]),
         b["cadence"], tuple(b["init_counts"])),
        (b["kind"], b["depth"], tuple(b["data"]), tuple(b["arrivers"]), tuple(b["waiters"])),
        (b["kind"], b["depth"], tuple(b["data"]), who),
        (b["kind"], b["depth"], tuple(b["data"])),
        (b["kind"], b["depth"]),
        (b["kind"],),
    ]


def describe_barrier(b: dict[str, Any]) -> str:
    """What the barrier guards, in words: `mbarrier x4 guarding smem:128x64xf16, TMA loads ->
    MMA (acc)`."""
    depth = f" x{b['depth']}" if b.get("depth") else ""
    data = f" guarding {', '.join(b['data'])}" if b["data"] else ""
    flow = f", {'+'.join(b['arrivers']) or 'nobody'} -> {'+'.join(b['waiters']) or 'nobody'}"
    return f"{b['kind']}{depth}{data}{flow}"


def assign_identities(barriers: list[dict[str, Any]]) -> dict[str, str]:
    """Barrier id -> a stable identity: its description, numbered by first use when two
    barriers of the unit read the same."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for b in barriers:
        groups[describe_barrier(b)].append(b)
    out: dict[str, str] = {}
    for desc, members in groups.items():
        members.sort(key=lambda b: (b["first_use"], b["line"]))
        for k, b in enumerate(members):
            out[b["id"]] = desc if len(members) == 1 else f"{desc} #{k}"
    return out


def _edge(e: dict[str, Any], rk: dict[str, str], by_id: dict[str, dict[str, Any]]) -> dict[str, Any]:
    b = by_id.get(e["barrier"])
    return {
        "from": rk.get(e["from"], e["from"]),
        "to": rk.get(e["to"], e["to"]),
        "barrier": e["barrier"],
        "channel": e.get("channel"),
        "direction": e["direction"],
        "mechanism": e["mechanism"],
        "data": sorted({f"{d.get('space') or '?'}:{d['shape']}" for d in e.get("data") or []}),
        "lines": sorted(set(e["lines"]["arrive"]) | set(e["lines"]["wait"])),
        "barrier_identity": b["identity"] if b else e["barrier"],
    }


def _buffer(g: dict[str, Any], rk: dict[str, str]) -> dict[str, Any]:
    members = g.get("members") or []
    first = members[0] if members else {}
    shape = "x".join(map(str, first.get("shape") or [])) + (first.get("dtype") or "")
    return {
        "key": g["key"],
        "space": g.get("space"),
        "shape": shape,
        "slot_bytes": g.get("slot_bytes"),
        "depth": first.get("copies"),
        "members": len(members),
        "packed": bool(g.get("packed")),
        "merged": bool(g.get("merged")),
        "shared_id": g.get("buffer_id") is not None and len(members) > 1,
        "line": first.get("line") or 0,
        "accesses": sorted({f"{a['role']}@{'+'.join(rk.get(p, p) for p in a.get('partitions') or [])}"
                            for a in (g.get("writers") or []) + (g.get("readers") or [])}),
    }


# -- findings ------------------------------------------------------------------------------------
def ops_by_line(analysis) -> dict[int, list]:
    out: dict[int, list] = defaultdict(list)
    for op in analysis.ops:
        out[op.line].append(op)
    return out


def finding_record(f, analysis, identities: dict[str, str], rk: dict[str, str],
                   by_line: dict[int, list] | None = None) -> dict[str, Any]:
    """A finding with the op it is about and a fingerprint that survives renaming and line
    shifts: kind + the identity of the barrier it concerns + that op's name."""
    op_name, barrier = _subject(f, analysis, by_line if by_line is not None else ops_by_line(analysis))
    ident = identities.get(barrier.id) if barrier is not None else None
    fingerprint = "|".join([f.kind, ident or "-", op_name or "-"])
    return {
        "kind": f.kind,
        "severity": f.severity.value,
        "message": f.message,
        "lines": list(f.lines),
        "partitions": [rk.get(p, p) for p in f.partitions],
        "op": op_name,
        "barrier": ident,
        "fingerprint": fingerprint,
        "suggestion": f.suggestion,
    }


def _subject(f, analysis, by_line: dict[int, list]):
    """The first op on the finding's lines (IR order) and the barrier it acts on, if any."""
    first_op = None
    for line in f.lines:
        for op in by_line.get(line, []):
            if first_op is None:
                first_op = op
            uses = analysis.barriers.uses_at(op)
            if uses:
                return op.name, uses[0][0]
    return (first_op.name if first_op is not None else None), None
