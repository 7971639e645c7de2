"""`explore`: bounded exploration of interleavings, with deadlock witnesses and races."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..analyses.deadlock import _classify
from ..analyses.explore import ExploreResult, explore, race_findings
from ..analyses.findings import Finding
from ..analysis import Analysis
from ..render.console import print_lines
from ..schemas import InputRef
from ..session import Selection


class ExploreDoc(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")
    schema_: str = Field("barrier-viz/explore/v1", alias="schema")
    input: InputRef
    result: str
    findings: list[Finding]
    states: int
    seconds: float
    bounds: dict[str, Any]
    schedules: list[dict[str, Any]]
    reason: str = ""
    warnings: list[str] = []


def explore_document(sel: Selection, *, trips: int | None = None, max_states: int = 200_000, timeout: float = 10.0,
                     warnings: list[str] | None = None) -> ExploreDoc:
    if sel.function is None:
        res = ExploreResult("not_simulated", None, trips or 0, reason="no function in scope")  # type: ignore[arg-type]
        return ExploreDoc(input=InputRef(**sel.input_ref()), result=res.result, findings=[], states=0, seconds=0.0,
                          bounds={}, schedules=[], reason=res.reason, warnings=warnings or [])
    res = explore(sel.function, trips=trips, max_states=max_states, timeout=timeout)
    findings: list[Finding] = []
    result = res.result
    if res.deadlock is not None:
        analysis = Analysis(sel)
        favorable = next((r for r in res.runs if r.policy == "favorable"), None)
        friendly_ok = favorable is not None and not favorable.deadlocked
        # Same verdict rules as `check`: a hang only a runaway producer (or consumer) can cause
        # is reported as the race that allows it.
        findings += _classify(res.deadlock, analysis.arrivers, adversarial_only=friendly_ok, gated=analysis.arrival_gated)
        if not any(f.kind.startswith("deadlock.") for f in findings):
            result = "race"
    findings += race_findings(res.races)
    return ExploreDoc(
        input=InputRef(**sel.input_ref()),
        result=result,
        findings=findings,
        states=res.states,
        seconds=round(res.seconds, 3),
        bounds=res.bounds(),
        schedules=[{"policy": r.policy, "outcome": r.outcome, "steps": r.steps} for r in res.runs],
        reason=res.reason,
        warnings=warnings or [],
    )


def render_explore_text(doc: ExploreDoc) -> None:
    out: list[str] = []
    out.append(f"{doc.input.path} [unit {doc.input.unit_index}: {doc.input.unit}]"
              + (f" @{doc.input.function}" if doc.input.function else ""))
    b = doc.bounds
    out.append(f"result: {doc.result}" + (f" ({doc.reason})" if doc.reason else ""))
    out.append(f"{len(doc.schedules)} schedule(s), {doc.states} distinct state(s), {doc.seconds:.2f} s; bounds: "
              + ", ".join(f"{k}={v}" for k, v in b.items()))
    for f in doc.findings:
        out.append(f"\n{f.severity.value.upper()} {f.kind} -> {f.outcome}  lines {', '.join(map(str, f.lines))}")
        out.append(f"  {f.message}")
        for blk in f.evidence.get("blocked", []):
            it = ",".join(map(str, blk["iteration"])) or "-"
            out.append(f"    {blk['partition']} stuck at line {blk['line']} (iteration {it}) awaiting parity "
                      f"{blk['parity_awaited']}; slot completed {blk['completions']} phase(s)")
            for last in blk.get("last_ops", [])[-3:]:
                out.append(f"      after line {last['line']} {last['op']} (iteration {','.join(map(str, last['iteration'])) or '-'})")
    print_lines(out)
