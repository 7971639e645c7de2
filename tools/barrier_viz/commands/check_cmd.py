"""`check`: findings with their evidence; exit 1 when any is an error."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..analyses.findings import Finding
from ..analyses.input_points import Launch, LaunchError
from ..analyses.verdicts import CheckResult, check
from ..errors import InputError
from ..analysis import Analysis
from ..render.console import console
from ..schemas import InputRef
from ..session import Selection


class CheckSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    errors: int
    warnings: int
    infos: int


class CheckDoc(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")
    schema_: str = Field("barrier-viz/check/v1", alias="schema")
    input: InputRef
    summary: CheckSummary
    findings: list[Finding]
    simulation: dict[str, Any] | None = None
    input_points: dict[str, Any] | None = None  # boundary launches simulated, and the user's own (--args)
    warnings: list[str] = []


def check_document(sel: Selection, *, warnings: list[str] | None = None, simulate: bool = True,
                   launch: Launch | None = None, input_points: bool = True) -> tuple[CheckDoc, CheckResult]:
    try:
        result = check(Analysis(sel), simulate=simulate, launch=launch, input_points=input_points)
    except LaunchError as exc:
        raise InputError(sel.inputs.display, str(exc)) from None
    count = lambda s: sum(1 for f in result.findings if f.severity.value == s)  # noqa: E731
    doc = CheckDoc(
        input=InputRef(**sel.input_ref()),
        summary=CheckSummary(errors=count("error"), warnings=count("warning"), infos=count("info")),
        findings=result.findings,
        simulation=result.deadlocks.summary() if result.deadlocks else None,
        input_points=_inputs_summary(result),
        warnings=warnings or [],
    )
    return doc, result


def _inputs_summary(result: CheckResult) -> dict[str, Any] | None:
    if result.inputs is None and result.launch is None:
        return None
    out = result.inputs.summary() if result.inputs is not None else {"targets": 0, "observations": 0, "points": [],
                                                                       "unreachable": []}
    if result.launch is not None:
        out["launch"] = result.launch.as_dict()
    return out


def render_check_text(doc: CheckDoc) -> None:
    out = console()
    s = doc.summary
    out.print(f"{doc.input.path} [unit {doc.input.unit_index}: {doc.input.unit}]"
              + (f" @{doc.input.function}" if doc.input.function else ""))
    out.print(f"{s.errors} error(s), {s.warnings} warning(s), {s.infos} info")
    for f in doc.findings:
        out.print(f"\n{f.severity.value.upper()} {f.kind}  lines {', '.join(map(str, f.lines))}")
        out.print(f"  {f.message}")
        if f.partitions:
            out.print(f"  partitions: {', '.join(f.partitions)}")
        if f.barrier:
            out.print(f"  barrier: {f.barrier}")
        blocked = f.evidence.get("blocked") or (f.evidence.get("witness") or {}).get("blocked")
        if blocked:
            out.print("  witness:")
            for b in blocked:
                it = ",".join(map(str, b["iteration"])) or "-"
                out.print(f"    {b['partition']} stuck at line {b['line']} (iteration {it}) awaiting parity "
                          f"{b['parity_awaited']}; slot completed {b['completions']} phase(s)")
        if f.suggestion:
            out.print(f"  suggestion: {f.suggestion}")
    if doc.simulation:
        runs = ", ".join(f"{r['policy']}: {r['outcome']}" for r in doc.simulation["runs"])
        out.print(f"\nsimulation (integer arguments = {doc.simulation['int_args']}): {runs}")
    ip = doc.input_points
    if ip:
        if ip.get("launch"):
            out.print(f"your launch ({ip['launch']['input']}): {ip['launch']['outcome']}")
        if ip["points"]:
            out.print(f"input points ({len(ip['points'])} of {ip['targets']} boundaries' launches):")
        for p in ip["points"]:
            found = f" -> {', '.join(p['findings'])}" if p["findings"] else ""
            out.print(f"  {p['input']}: {p['outcome']}{found}")
            for r in p["reasons"]:
                out.print(f"    {r}")
