"""`report --format compact`: every report section in one short line per fact.

The full report (`report`, `report --format json`) repeats what a person wants to see laid out:
alias tables, sample schedules, per-copy byte lines. An agent composing the report needs the
facts, not the layout, and pays for every character it reads. The digest keeps, per section,
the rows a report cites (names, roles, lines, formulas, verdicts) and drops what can be
re-derived or looked up on demand with the per-section commands (alias definition lines, sample
tables, counter derivations, schema and input echoes). Each section says which command gives
the full detail.

Everything here is read from the same documents `report` builds; nothing is recomputed, so
the digest cannot disagree with the per-section commands.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Iterable

from pydantic import BaseModel, ConfigDict, Field

from ..schemas import InputRef

if TYPE_CHECKING:  # pragma: no cover
    from .report_cmd import Report


class DigestDoc(BaseModel):
    """The digest as data: one list of lines per section, in report order."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid")
    schema_: str = Field("barrier-viz/digest/v1", alias="schema")
    input: InputRef
    units: int = Field(description="how many units INPUT holds; more than one: run `inputs` to pick")
    summary: dict[str, int | str] = Field(description="verdict (clean | findings | not judged) and the counts")
    sections: dict[str, list[str]]
    warnings: list[str] = []


HEADINGS = {
    "partitions": "1 partitions: name | role | key ops | warps | tasks | lines",
    "graph": "2 graph: F fwd / B bwd from -> to | mechanism | barrier | data | arrive -> wait",
    "phases": "3 phases: barrier | depth | cadence | mechanism; W wait / A arrive lines",
    "buffers": "4 buffers: space id members; W writers | R readers; guard",
    "barriers": "5 aliases: barrier | alloc | slots | mechanism; aliases by region; uses",
    "coverage": "coverage: packed TMEM rows; operand-D accumulator rows",
    "findings": "findings: severity kind -> outcome lines [partitions] barrier: message",
}

# The command that prints each section in full, for drilling into one barrier or buffer.
DETAIL = {
    "graph": "graph",
    "phases": "phases",
    "buffers": "buffers",
    "barriers": "barriers",
    "coverage": "coverage",
    "findings": "check",
}


def digest_document(report: "Report") -> DigestDoc:
    docs = {key: doc.model_dump(mode="json", by_alias=True) for key, doc in report.docs.items()}
    check = report.check_doc.model_dump(mode="json", by_alias=True)
    s = report.check_doc.summary
    sections = {
        "partitions": _partitions(docs["partitions"]),
        "graph": _graph(docs["graph"]),
        "phases": _phases(docs["phases"]),
        "buffers": _buffers(docs["buffers"]),
        "barriers": _barriers(docs["barriers"]),
        "coverage": _coverage(docs["coverage"]),
        "findings": _findings(check),
    }
    return DigestDoc(
        input=InputRef(**report.sel.input_ref()),
        units=len(report.sel.inputs.units),
        summary={"verdict": s.verdict, "errors": s.errors, "warnings": s.warnings, "infos": s.infos},
        sections={key: [_tidy(r) for r in rows] for key, rows in sections.items()},
        warnings=report.warnings,
    )


def digest_text(doc: DigestDoc) -> str:
    ref = doc.input
    where = f"{ref.path} unit {ref.unit_index} of {doc.units}" + (f" @{ref.function}" if ref.function else "")
    s = doc.summary
    verdict = "clean (judged)" if s.get("verdict") == "clean" else s.get("verdict", "?")
    lines = [f"barrier-viz digest: {where} | {verdict}: {s['errors']} error, {s['warnings']} warning, {s['infos']} info"]
    for key, rows in doc.sections.items():
        more = f" (more: {DETAIL[key]})" if key in DETAIL else ""
        lines.append(f"## {HEADINGS[key]}{more}")
        lines.extend(rows or ["(none)"])
    if doc.warnings:
        lines.append("## reader warnings")
        lines.extend(doc.warnings)
    return "\n".join(lines) + "\n"


# -- helpers ------------------------------------------------------------------------------------


def _lines(nums: Iterable[int | None], empty: str = "") -> str:
    """`L12,14,20-23`: sorted, de-duplicated, runs collapsed; `empty` when there are none (a
    row never prints a placeholder such as `L?`)."""
    vals = sorted({n for n in nums if n is not None})
    if not vals:
        return empty
    runs: list[str] = []
    start = prev = vals[0]
    for n in vals[1:] + [None]:  # type: ignore[list-item]
        if n is not None and n == prev + 1:
            prev = n
            continue
        runs.append(str(start) if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return "L" + ",".join(runs)


def _tidy(row: str) -> str:
    """One space between fields (an empty field leaves none behind), indentation kept."""
    body = row.lstrip(" ")
    return row[: len(row) - len(body)] + re.sub(r" {2,}", " ", body).rstrip()


def _part(p: str | None) -> str:
    return p or "main"


def _data(items: list[dict[str, Any]]) -> str:
    names = list(dict.fromkeys(d.get("name") or "?" for d in items))
    return ",".join(names) if names else "-"


# -- sections -----------------------------------------------------------------------------------


def _partitions(doc: dict[str, Any]) -> list[str]:
    from .partitions_cmd import key_ops_cell

    rows = []
    for p in doc.get("partitions", []):
        cell = key_ops_cell(p.get("key_ops") or {}).replace("|", "/") or "-"
        tasks = ",".join(str(t) for t in p.get("task_ids") or []) or "-"
        span = "-".join(str(n) for n in p["lines"]) if p.get("lines") else "-"
        warps = p["warps"] if p.get("warps") is not None else "?"
        rows.append(f"{p['name']} | {p.get('role') or '?'} | {cell} | {warps} | {tasks} | {span}")
    if not rows:
        rows.append("no warp_specialize regions, async_task_id or ttg.partition in this unit")
    c = doc.get("cluster") or {}
    if (c.get("ctas") or 1) > 1 or c.get("form") == "cga":
        shape = "x".join(str(d) for d in c.get("dims") or []) if c.get("form") != "cga" else f"num-ctas {c.get('num_ctas')}"
        rows.append(f"cluster: {c['ctas']} CTAs {c.get('form')} ({shape}){', paired MMA' if c.get('paired_mma') else ''}"
                    + (f", rank at {_lines(c.get('rank_lines') or [])}" if c.get("rank_lines") else "")
                    + f", {len(c.get('cross_cta_ops') or [])} barrier op(s) reach other CTAs (graph rows: cross-CTA)")
    return rows


def _graph(doc: dict[str, Any]) -> list[str]:
    rows = []
    linked: set[str] = set()
    for e in sorted(doc.get("edges", []), key=lambda e: e.get("direction") != "forward"):
        linked.update((e["from"], e["to"]))
        tag = "F" if e.get("direction") == "forward" else "B"
        flags = [f for f, on in (("self-loop", e.get("self_loop")), ("next-iter", e.get("return_edge")),
                                  ("task-mismatch", e.get("dst_task_mismatch"))) if on]
        if e.get("crosses_ctas") is not False and e.get("ctas"):
            flags.append("cross-CTA" + ("?" if e.get("crosses_ctas") is None else "") + " "
                         + "; ".join(f"{h['line']} {h['text']}" for h in e["ctas"]))
        slots = f" x{e['slots']}" if e.get("slots") and e["slots"] > 1 else ""
        arr, wait = e.get("lines", {}).get("arrive", []), e.get("lines", {}).get("wait", [])
        rows.append(f"{tag} {e['from']} -> {e['to']} | {e.get('mechanism') or '?'} | {e.get('barrier')}{slots} | "
                    f"{_data(e.get('data') or [])} | {_lines(arr, 'none')} -> {_lines(wait, 'none')}"
                    + (f" ({', '.join(flags)})" if flags else ""))
    for u in doc.get("unmatched", []):
        rows.append(f"? unpaired {u.get('kind')} on {u.get('barrier')} in {_part(u.get('partition'))} {_lines(u.get('lines') or [])}")
    idle = [n["id"] for n in doc.get("nodes", []) if n["id"] not in linked and n["id"] != "main"]
    if idle:
        rows.append("no barrier edges: " + ", ".join(idle))
    return rows


def _phases(doc: dict[str, Any]) -> list[str]:
    rows = []
    s = doc.get("summary", {})
    if s:
        rows.append(f"{s.get('barriers', 0)} barriers, {s.get('wait_barrier_ops', 0)} waits, "
                    f"{s.get('unresolved', 0)} with slot or phase unresolved")
    for b in doc.get("barriers", []):
        mech = ",".join(b.get("mechanisms") or []) or "?"
        head = f"{b['id']} | d{b.get('depth') if b.get('depth') is not None else '?'} | {b.get('cadence') or '?'} | {mech}"
        merged = b.get("merged")
        if merged:
            head += f" | merged: {_merged(merged)}"
        if b.get("stagger"):
            head += " | stagger"
        rows.append(head)
        for key, items in _grouped(b.get("waits") or [], wait=True).items():
            rows.append(f"  W {_lines(items)} {key}")
        for key, items in _grouped(b.get("arrives") or [], wait=False).items():
            rows.append(f"  A {_lines(items)} {key}")
        for note in b.get("notes") or []:
            rows.append(f"  note: {note}")
    for g in doc.get("stagger_groups") or []:
        if g.get("staggered"):
            rows.append(f"stagger buffer.id={g.get('buffer_id')}: " + "; ".join(
                f"{x['barrier']} " + ",".join(str(o.get("offset")) for o in x.get("offsets") or []) for x in g.get("barriers", [])))
    return rows


def _merged(m: Any) -> str:
    if isinstance(m, dict):
        bits = [f"{k}={v}" for k, v in m.items() if v not in (None, [], {}) and not isinstance(v, (dict, list))]
        members = m.get("members")
        if isinstance(members, list):
            bits.insert(0, "+".join(str(x.get("name") if isinstance(x, dict) else x) for x in members))
        return " ".join(bits)
    return str(m)


def _formula(x: dict[str, Any] | None) -> str:
    if not x:
        return "?"
    return x.get("formula") or ("?" if x.get("constant") is None else str(x["constant"]))


# Formulas are printed simplified (analyses/symbolic/simplify.printable); only those still longer
# than this (unnormalized unrolled stage advances, 100+ characters) are summarized by their
# samples, and `phases` prints them in full.
LONG_FORMULA = 96


def _samples(u: dict[str, Any]) -> str:
    pts = (u.get("samples") or [])[:6]
    if not pts:
        return ""
    return (f"samples slot {','.join(str(p.get('slot')) for p in pts)} "
            f"parity {','.join(str(p.get('parity')) for p in pts)}")


def _grouped(uses: list[dict[str, Any]], *, wait: bool) -> "OrderedDict[str, list[int]]":
    """Uses with the same partition, formulas and contribution share one line. A formula too
    long to read at a glance is replaced by the wait's first sampled (slot, parity) pairs (the
    `phases` command prints the formula in full)."""
    out: OrderedDict[str, list[int]] = OrderedDict()
    for u in uses:
        parts = [_part(u.get("partition"))]
        slot, phase = _formula(u.get("slot")), _formula(u.get("phase"))
        if wait:
            if max(len(slot), len(phase)) > LONG_FORMULA:
                parts.append(f"{_samples(u) or 'slot, parity'} (long formula: see phases)")
            else:
                parts.append(f"slot {slot} parity {phase}")
            if u.get("side"):
                parts.append(u["side"])
        else:
            parts.append(u.get("op", "?").split(".")[-1])
            parts.append("slot (long formula: see phases)" if len(slot) > LONG_FORMULA else f"slot {slot}")
            if u.get("arrivals"):
                parts.append(f"{u['arrivals']}/{u.get('init_count') or '?'}")
            if u.get("tx_bytes"):
                parts.append(f"tx {u['tx_bytes']}")
            exp = u.get("expect")
            if u.get("role") != "tma_copy" and "copy" not in u.get("op", "") and isinstance(exp, dict) and exp.get("status"):
                parts.append(f"expect {exp.get('declared')}/{exp.get('delivered')} {exp['status']}")
        if _real_predicate(u.get("predicate")):
            parts.append(f"if {u['predicate']}")
        out.setdefault(" ".join(parts), []).append(u.get("line"))
    return out


def _real_predicate(pred: str | None) -> bool:
    """`%true`, `%true_26`: a constant-true predicate says nothing."""
    return bool(pred) and not re.fullmatch(r"%true(_\d+)?", pred or "")


def _buffers(doc: dict[str, Any]) -> list[str]:
    rows = []
    s = doc.get("summary", {})
    if s:
        rows.append(f"{s.get('groups', 0)} groups; expect check {s.get('matched', 0)} matched, {s.get('mismatched', 0)} "
                    f"mismatched, {s.get('unknown', 0)} unknown; {s.get('uncovered_copies', 0)} uncovered copies")
    for g in doc.get("buffers", []):
        members = []
        for m in sorted(g.get("members", []), key=lambda m: (m.get("offset") is not None, m.get("offset") or 0)):
            shape = "x".join(str(d) for d in m.get("shape") or []) + (m.get("dtype") or "")
            at = f"@col{m['offset']}" if m.get("offset") is not None else ""
            members.append(f"{m.get('label') or m['name']}{at} {shape} x{m.get('copies')} L{m.get('line')}")
        bid = g.get("buffer_id")
        flags = [f for f, on in (("packed", g.get("packed")), ("merged", g.get("merged"))) if on]
        head = f"{(g.get('space') or '?').upper()} id={'-' if bid is None else bid} {'; '.join(members)}"
        if flags:
            head += f" ({', '.join(flags)})"
        rows.append(head)
        rows.append(f"  W {_access(g.get('writers') or [])} | R {_access(g.get('readers') or [])}")
        guard = _guard(g)
        if guard:
            rows.append(f"  guard {guard}")
    for e in doc.get("expects") or []:
        if e.get("status") != "matched":
            rows.append(f"expect L{e.get('line')}: declared {e.get('declared')} vs delivered {e.get('delivered')} [{e.get('status')}]")
    for c in doc.get("uncovered_copies") or []:
        rows.append(f"uncovered TMA copy L{c.get('line')} into {c.get('member')} ({c.get('bytes')} bytes)")
    for u in doc.get("unresolved") or []:
        rows.append(f"unresolved L{u.get('line')} {u.get('op')} {u.get('operand')}: {u.get('reason')}")
    return rows


def _access(items: list[dict[str, Any]]) -> str:
    by: OrderedDict[str, list[str]] = OrderedDict()
    for a in items:
        for p in a.get("partitions") or ["main"]:
            by.setdefault(p, []).append(f"{a.get('role')} L{a.get('line')}")
    return "; ".join(f"{p}: {', '.join(dict.fromkeys(v))}" for p, v in by.items()) or "none"


def _guard(g: dict[str, Any]) -> str:
    checks = (g.get("expect") or {}).get("checks") or []
    out = []
    for c in checks:
        bar = c.get("barrier") or {}
        ok = "OK" if c.get("status") == "matched" else c.get("status", "?").upper()
        out.append(f"{bar.get('name')}@{bar.get('line')} expect L{c.get('line')} {c.get('declared')}/{c.get('delivered')} {ok}")
    return "; ".join(dict.fromkeys(out))


_ALIAS_KIND = {"memdesc_index": "idx", "capture": "cap", "block_argument": "arg", "iter_arg": "iter"}


def _barriers(doc: dict[str, Any]) -> list[str]:
    rows = []
    for b in doc.get("barriers", []):
        alloc = b.get("alloc") or {}
        mech = ",".join(b.get("mechanisms") or []) or "?"
        counts = ",".join(str(c) for c in b.get("init_counts") or []) or "?"
        rows.append(f"{b['id']} | {alloc.get('name')} {(alloc.get('op') or '').split('.')[-1]} L{alloc.get('line')} | "
                    f"{b.get('slots')} slot(s) count {counts} | {mech}")
        regions: OrderedDict[str, OrderedDict[str, list[str]]] = OrderedDict()
        for a in b.get("aliases") or []:
            kinds = regions.setdefault(_part(a.get("region")), OrderedDict())
            kinds.setdefault(_ALIAS_KIND.get(a.get("via"), a.get("via") or "?"), []).append(a["name"])
        if regions:
            rows.append("  aliases " + " | ".join(
                f"{r}: " + "; ".join(f"{k} {' '.join(dict.fromkeys(v))}" for k, v in kinds.items())
                for r, kinds in regions.items()))
        # Uses grouped by partition, like the aliases: `main: init L129,131, wait L137 | ...`.
        by_part: OrderedDict[str, OrderedDict[str, list[int]]] = OrderedDict()
        for u in b.get("uses") or []:
            role = u.get("role") or (u.get("op") or "?").split(".")[-1]
            key = role + (f" if {u['predicate']}" if _real_predicate(u.get("predicate")) else "")
            by_part.setdefault(_part(u.get("partition")), OrderedDict()).setdefault(key, []).append(u.get("line"))
        if by_part:
            rows.append("  uses " + " | ".join(
                f"{part}: " + ", ".join(f"{k} {_lines(v)}" for k, v in keys.items()) for part, keys in by_part.items()))
    for u in doc.get("unresolved") or []:
        rows.append(f"unresolved: {u}")
    return rows


def _coverage(doc: dict[str, Any]) -> list[str]:
    rows = []
    s = doc.get("summary", {})
    rows.append(f"stage {doc.get('stage')}; packed tables {s.get('packed_tables', 0)}, rows {s.get('packed_rows', 0)}, "
                f"missing {s.get('packed_missing', 0)}, back-edges required {s.get('required_edges', 0)}; accumulators "
                f"{s.get('accumulators', 0)}, redundant zero stores {s.get('redundant_zero_stores', 0)}")
    packed = doc.get("packed_tmem") or []
    if not packed:
        rows.append("packed TMEM: no allocation has column-packed members")
    for t in packed:
        writers = "; ".join(f"{(w.get('op') or '').split('.')[-1]} L{w.get('line')} {_part(w.get('partition'))} useD={w.get('use_d')} "
                            f"cols {'-'.join(str(c) for c in w.get('columns') or [])}" for w in t.get("writers") or [])
        rows.append(f"packed id={'-' if t.get('buffer_id') is None else t.get('buffer_id')} owner {t.get('owner')} L{t.get('owner_line')} | writer {writers or 'none'}")
        for r in t.get("rows") or []:
            cols = r.get("columns") or []
            span = str(cols[0]) if len(cols) == 2 and cols[0] == cols[1] else "-".join(str(c) for c in cols)
            cons = ",".join(dict.fromkeys(_part(c.get("partition")) for c in r.get("consumers") or [])) or "-"
            mark = "⇠" if r.get("status") == "required" else ("✓" if r.get("ok") else "✗")
            cadence = f" {r['cadence']}" if r.get("cadence") else ""
            rows.append(f"  cols {span} {r.get('label')}{' (owner)' if r.get('owner') else ''} -> {cons}{cadence} "
                        f"{mark} {r.get('status')}: {r.get('reason')} {_lines(r.get('evidence') or [])}".rstrip())
    accs = doc.get("accumulators") or []
    if not accs:
        rows.append("operand-D accumulators: none (no MMA accumulates into TMEM)")
    for a in accs:
        verdict = a.get("verdict") or ""
        mark = verdict[:1] if verdict[:1] in ("✓", "✗", "⚠") else ("✓" if a.get("ok") else "✗")
        store = (f"zero store {_lines(a.get('zero_store_lines') or [])} {','.join(_part(p) for p in a.get('store_partitions') or []) or 'main'}"
                 if a.get("zero_store_lines") else "no zero store")
        loop = f"{a.get('persistent_loop')} L{a.get('persistent_loop_line')}" if a.get("persistent_loop") else "no persistent loop"
        # Barrier and commit counts exist once partitions do (post-partition IR).
        counts = (f"{a.get('barriers')} barriers/{a.get('commits')} commits | " if a.get("barriers") is not None else "")
        rows.append(f"accD id={'-' if a.get('buffer_id') is None else a.get('buffer_id')} {a.get('name')} L{a.get('line')} | "
                    f"MMA {_lines(a.get('mma_lines') or [])} {','.join(_part(p) for p in a.get('mma_partitions') or [])} "
                    f"useD={a.get('use_d')} | {store} | {loop} | {counts}"
                    f"{mark} {a.get('status')}")
    return rows


def _findings(doc: dict[str, Any]) -> list[str]:
    rows = []
    for f in doc.get("findings", []):
        parts = f"[{','.join(f.get('partitions') or [])}]" if f.get("partitions") else ""
        where = f.get("barrier") or (f"buffer.id={f['buffer_id']}" if f.get("buffer_id") is not None else "")
        sev = f.get("severity", "?").upper()
        if sev == "INFO":
            drop = (f.get("evidence") or {}).get("redundant_line")  # a claim the simulator checked (claims.py)
            rows.append(f"INFO {f['kind']} -> {f.get('outcome')} {_lines(f.get('lines') or [])} {parts} {where}".rstrip()
                        + (f" | drop L{drop} (checked in a copy)" if drop else ""))
            continue
        rows.append(f"{sev} {f['kind']} -> {f.get('outcome')} {_lines(f.get('lines') or [])} {parts} {where}: {f.get('message')}")
        evidence = f.get("evidence") if isinstance(f.get("evidence"), dict) else {}
        if evidence.get("blocked"):
            rows.append(f"  witness ({evidence.get('policy')} schedule, {evidence.get('steps')} steps): " + _blocked(evidence["blocked"]))
        rows += [f"  {line}" for line in (evidence.get("hang_set") or {}).get("lines", [])]
        if f.get("suggestion"):
            rows.append(f"  fix: {f['suggestion']}")
    if not doc.get("findings"):
        rows.append("no findings")
    sim = doc.get("simulation")
    if sim:
        from .check_cmd import simulation_runs

        rows.append(f"simulation (int args = {sim.get('int_args')}): " + simulation_runs(sim, sep=" "))
    from .check_cmd import contract_lines, user_launch_lines

    rows += contract_lines(doc.get("contract"), "")
    ip = doc.get("input_points") or {}
    if ip.get("launch"):
        rows += user_launch_lines(ip["launch"], "  ")
    if ip.get("points"):
        rows.append("input points: " + "; ".join(f"{p['input'].replace(', ', ',')} {p['outcome']}" for p in ip["points"]))
    rows.append("scope: static rules" + (" + schedules with happens-before races" if sim else "") + "; `explore` looks further (more schedules)")
    return rows


def _blocked(blocked: list[dict[str, Any]]) -> str:
    """Where each partition of the witness schedule is stuck."""
    out = []
    for b in blocked[:6]:
        it = ",".join(str(i) for i in b.get("iteration") or []) or "-"
        out.append(f"{_part(b.get('partition'))} stuck at L{b.get('line')} (iteration {it}) awaiting parity "
                   f"{b.get('parity_awaited')}, {b.get('completions')} completion(s)")
    if len(blocked) > 6:
        out.append(f"... {len(blocked) - 6} more")
    return "; ".join(out)


def report_tool_document(sel: Any, *, compact: bool = False, simulate: bool = True, warnings: list[str] | None = None) -> BaseModel:
    """The agent's `report` tool: the full report document (what `report --format json`
    prints) or, with `compact`, the digest (what `report --format compact` prints, as data)."""
    from .report_cmd import Report

    report = Report(sel, warnings or [], simulate=simulate)
    return digest_document(report) if compact else report.document()
