"""`audit --summary FILE`: the audit as Markdown for a CI job summary (GitHub's
`$GITHUB_STEP_SUMMARY`, which the composite action `action.yml` points it at).

A reviewer opening the run sees the verdict line, one table row per kernel (capped, the rest
counted) and the worst findings first: new errors, then baselined errors, then warnings, each
with its file and line so it can be found in the SARIF annotations. Appended, never
overwritten: a job summary collects every step's output.
"""

from __future__ import annotations

from typing import Any

MAX_ROWS = 50
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def worst_findings(doc: dict[str, Any], limit: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(row, finding) pairs, worst first: severity, then new before baselined, then file and line."""
    pairs = [(row, f) for row in doc["rows"] for f in row.get("findings", []) if f["severity"] != "info"]
    pairs.sort(key=lambda rf: (SEVERITY_ORDER[rf[1]["severity"]], not rf[1].get("new", True), rf[0]["path"],
                               min(rf[1]["lines"]) if rf[1]["lines"] else 0, rf[1]["kind"]))
    return pairs[:limit]


def audit_summary(doc: dict[str, Any], *, top: int = 10) -> str:
    s = doc["summary"]
    verdict = f"FAIL: {s['new_errors']} new error finding(s)" if s["new_errors"] else "ok: no new error finding"
    out = [f"## barrier-viz audit: {verdict}", "",
           f"{s['files']} file(s), {s['kernels']} kernel(s) checked; {s['errors']} error(s) ({s['new_errors']} new), "
           f"{s['warnings']} warning(s), {s['infos']} info; {s['baselined']} baselined; {s['units_failed']} unit(s) "
           f"failed to parse; {s['bound_reached']} kernel(s) reached the time budget.", "",
           "| file | unit | kernel | status | errors | warnings | top finding |", "|---|---|---|---|---|---|---|"]
    rows = doc["rows"]
    for r in rows[:MAX_ROWS]:
        errs = sum(1 for f in r.get("findings", []) if f["severity"] == "error")
        warns = sum(1 for f in r.get("findings", []) if f["severity"] == "warning")
        t = r.get("top")
        top_cell = "-" if not t else f"{t['severity'].upper()} `{t['kind']}` L{min(t['lines']) if t['lines'] else '-'}"
        if r["status"] == "error":
            top_cell = _cell(r.get("error"))
        out.append(f"| {_cell(r['path'])} | {_cell(r.get('unit') or '-')} | {_cell('@' + r['function'] if r.get('function') else '-')} "
                   f"| {r['status']} | {errs} | {warns} | {top_cell} |")
    if len(rows) > MAX_ROWS:
        out.append(f"| ... {len(rows) - MAX_ROWS} more row(s) in the SARIF and JSON outputs | | | | | | |")
    worst = worst_findings(doc, top)
    out += ["", f"### Worst findings ({len(worst)} shown)" if worst else "### No error or warning finding", ""]
    for n, (row, f) in enumerate(worst, 1):
        where = f"{row['path']}:{min(f['lines'])}" if f["lines"] else row["path"]
        state = "new" if f.get("new", True) else "baselined"
        kernel = f" @{row['function']}" if row.get("function") else ""
        out.append(f"{n}. **{f['severity'].upper()} `{f['kind']}`** ({state}) `{where}`{kernel}: {_cell(f['message'])}")
    return "\n".join(out) + "\n"
