"""`diff A B`: what changed in the synchronization between two units, matched by what the
barriers guard (see `analyses.diff.sync_diff`). Text, Markdown or JSON; exit 1 when anything changed
(as diff(1) does), 0 for "no synchronization change"."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from ..analyses.diff.sync_diff import NO_CHANGE, diff_models
from ..analyses.diff.sync_model import build_sync_model
from ..analysis import Analysis
from ..schemas import InputRef, _Model
from ..session import Selection


class DiffInputs(_Model):
    a: InputRef
    b: InputRef


class DiffSummary(_Model):
    changes: int
    findings_appeared: int
    findings_disappeared: int
    unchanged: bool


class DiffDoc(_Model):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")
    schema_: str = Field("barrier-viz/diff/v1", alias="schema")
    input: DiffInputs
    summary: DiffSummary
    changes: list[dict[str, Any]] = Field(description="kind, what, op, barrier (identity), lines_a, lines_b, a, b")
    findings_appeared: list[dict[str, Any]]
    findings_disappeared: list[dict[str, Any]]
    warnings: list[str] = []


def sync_model_of(sel: Selection) -> dict[str, Any]:
    """One Analysis for the unit, read into the model both sides of a diff are compared in."""
    return build_sync_model(Analysis(sel))


def diff_document(sel_a: Selection, sel_b: Selection, *, warnings: list[str] | None = None) -> DiffDoc:
    d = diff_models(sync_model_of(sel_a), sync_model_of(sel_b))
    return DiffDoc(
        input=DiffInputs(a=InputRef(**sel_a.input_ref()), b=InputRef(**sel_b.input_ref())),
        summary=DiffSummary(changes=len(d["changes"]), findings_appeared=len(d["findings_appeared"]),
                            findings_disappeared=len(d["findings_disappeared"]), unchanged=d["unchanged"]),
        changes=d["changes"],
        findings_appeared=d["findings_appeared"],
        findings_disappeared=d["findings_disappeared"],
        warnings=warnings or [],
    )


def _ref(r: InputRef) -> str:
    return f"{r.path} [unit {r.unit_index}: {r.unit}]" + (f" @{r.function}" if r.function else "")


def _where(c: dict[str, Any]) -> str:
    a = ",".join(map(str, c["lines_a"])) or "-"
    b = ",".join(map(str, c["lines_b"])) or "-"
    return f"A:{a} B:{b}"


_MARK = {"added": "+", "removed": "-"}


def _mark(kind: str) -> str:
    return _MARK.get(kind.rsplit(".", 1)[-1], "~")


def _finding_line(sign: str, f: dict[str, Any]) -> str:
    lines = ",".join(map(str, f["lines"])) or "-"
    return f"{sign} {f['severity'].upper()} {f['kind']} (line {lines}): {' '.join(f['message'].split())}"


def diff_text(doc: DiffDoc) -> str:
    out = [f"A: {_ref(doc.input.a)}", f"B: {_ref(doc.input.b)}"]
    if doc.summary.unchanged:
        out.append(NO_CHANGE)
        return "\n".join(out) + "\n"
    s = doc.summary
    out.append(f"{s.changes} change(s); findings: {s.findings_appeared} appeared, {s.findings_disappeared} disappeared")
    for c in doc.changes:
        out.append(f"  {_mark(c['kind'])} {c['kind']:<26} {_where(c):<18} {c['what']}")
    if not doc.changes:
        out.append("  (no change in partitions, barriers, their uses, edges or buffers)")
    for f in doc.findings_appeared:
        out.append("  " + _finding_line("+", f))
    for f in doc.findings_disappeared:
        out.append("  " + _finding_line("-", f))
    return "\n".join(out) + "\n"


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def diff_markdown(doc: DiffDoc) -> str:
    out = ["# Synchronization diff", "", f"- A: `{_ref(doc.input.a)}`", f"- B: `{_ref(doc.input.b)}`", ""]
    if doc.summary.unchanged:
        out.append(f"**{NO_CHANGE}**")
        return "\n".join(out) + "\n"
    if doc.changes:
        out += ["## Changes", "", "| | kind | lines A | lines B | op | change |", "|---|---|---|---|---|---|"]
        for c in doc.changes:
            out.append(f"| {_mark(c['kind'])} | `{c['kind']}` | {','.join(map(str, c['lines_a'])) or '-'} | "
                       f"{','.join(map(str, c['lines_b'])) or '-'} | {_cell(c['op'] or '-')} | {_cell(c['what'])} |")
        out.append("")
    else:
        out += ["No change in partitions, barriers, their uses, edges or buffers.", ""]
    for title, items, sign in (("Findings that appear in B", doc.findings_appeared, "+"),
                               ("Findings that disappear from A", doc.findings_disappeared, "-")):
        if items:
            out += [f"## {title}", ""] + [f"- {_cell(_finding_line(sign, f)[2:])}" for f in items] + [""]
    return "\n".join(out)
