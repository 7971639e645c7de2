"""`check`: findings with their evidence and one verdict: clean (judged), findings, or not judged
(analyses/model/judgement.py; exit 0, 1 and 4)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..analyses.model.findings import Finding
from ..analyses.launch.input_points import Launch, LaunchError
from ..analyses.verdicts import CheckResult, check
from ..errors import InputError
from ..analysis import Analysis
from ..claims import check_claims
from ..render.console import print_lines
from ..schemas import InputRef
from ..session import Selection


class CheckSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    verdict: str = Field(description="clean (judged, no error) | findings (some error) | not judged (no error, "
                                     "and something was not judged: see not_judged)")
    errors: int
    warnings: int
    infos: int
    not_judged: list[str] = Field(default_factory=list, description="why the verdict is `not judged`")


class CheckDoc(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")
    schema_: str = Field("barrier-viz/check/v1", alias="schema")
    input: InputRef
    summary: CheckSummary
    findings: list[Finding]
    simulation: dict[str, Any] | None = None
    input_points: dict[str, Any] | None = None  # boundary launches simulated, and the user's own (--args)
    recorded_launch: dict[str, Any] | None = None  # --launch N of a tritonparse trace: recorded and mapped values
    contract: list[dict[str, Any]] | None = Field(None, description="the launch contract: what the simulated launches "
                                                  "assume, each an `IR fact` (tt.divisibility, llvm.intr.assume) or "
                                                  "`inferred` by the tool, with why (analyses/launch/contract.py)")
    warnings: list[str] = []


def check_document(sel: Selection, *, warnings: list[str] | None = None, simulate: bool = True,
                   launch: Launch | None = None, input_points: bool = True) -> tuple[CheckDoc, CheckResult]:
    analysis = Analysis.of(sel)
    try:
        result = check(analysis, simulate=simulate, launch=launch, input_points=input_points)
    except LaunchError as exc:
        raise InputError(sel.inputs.display, str(exc)) from None
    check_claims(analysis, result)  # every "redundant" claim tried in a copy (claims.py)
    count = lambda s: sum(1 for f in result.findings if f.severity.value == s)  # noqa: E731
    doc = CheckDoc(
        input=InputRef(**sel.input_ref()),
        summary=CheckSummary(verdict=result.verdict[0], errors=count("error"), warnings=count("warning"),
                             infos=count("info"), not_judged=result.verdict[1]),
        findings=result.findings,
        simulation=_named_race_bound(sel.function, result.deadlocks.summary()) if result.deadlocks else None,
        input_points=_inputs_summary(result),
        contract=[a.as_dict() for a in result.contract] if result.contract else None,
        warnings=warnings or [],
    )
    return doc, result


def with_recorded_launch(input_spec: str, number: int, unit: str | None, func: str | None,
                         given: Launch | None) -> tuple[Selection, Launch, dict[str, Any]]:
    """`check --launch N`: the selection of the compilation the trace's launch N ran, the launch
    to simulate (its grid and integer arguments, with --args/--pid/--grid on top), and what
    was recorded, mapped and left out (with why) for the report."""
    from ..session import select_launch

    sel, recorded, mapped = select_launch(input_spec, number, unit, func)
    launch = Launch(args=dict(mapped.args), grid=mapped.grid)
    if given is not None:
        launch.args.update(given.args)
        launch.pids = given.pids
        launch.grid = given.grid or launch.grid
    info = {"index": number, "trace_line": recorded.line, "kernel": recorded.kernel, "hash": recorded.hash,
            "recorded": recorded.summary(), **mapped.as_dict()}
    return sel, launch, info


def verdict_line(s: CheckSummary) -> str:
    """`clean (judged): 0 error(s), ...`, `findings: 2 error(s), ...` or `not judged: <why>; 0
    error(s), ...`: the headline never reads as clean when nothing was judged."""
    counts = f"{s.errors} error(s), {s.warnings} warning(s), {s.infos} info"
    if s.verdict == "not judged":
        why = s.not_judged[0] if s.not_judged else "see the limit.not_judged findings"
        more = f" (+{len(s.not_judged) - 1} more)" if len(s.not_judged) > 1 else ""
        return f"not judged: {why}{more}; {counts}"
    return f"{'clean (judged)' if s.verdict == 'clean' else s.verdict}: {counts}"


def simulation_runs(sim: dict[str, Any], sep: str = ": ") -> str:
    """`favorable: completed, in_order: deadlock; not run: reverse, round_robin (the in_order
    schedule already deadlocked, its witness is enough)`: every policy is accounted for, a
    skipped one with the reason it was skipped."""
    from ..analyses.sim.schedule import POLICIES

    runs = sim.get("runs") or []
    parts = [f"{r['policy']}{sep}{r['outcome']}" + (f" ({r['reason']})" if r.get("reason") else "") for r in runs]
    done = {r["policy"] for r in runs}
    skipped = [p for p in POLICIES if p not in done]
    text = ", ".join(parts)
    if skipped and runs:
        last = runs[-1]
        if last["outcome"] == "deadlock":
            why = f"the {last['policy']} schedule already deadlocked, its witness is enough"
        elif last["outcome"] == "not_simulated":
            why = "the barrier program could not be simulated"
        else:
            why = f"the {last['policy']} schedule ended the simulation"
        text += f"; not run: {', '.join(skipped)} ({why})"
    return text


def explore_note(simulated: bool) -> str:
    """What `check` covers and that `explore` looks further: more schedules, so more race pairs."""
    return ("static rules" + (" + the schedules above, with their happens-before races" if simulated else "")
            + "; `barrier-viz explore` looks further and can add race pairs")


def race_bound_text(bound: dict[str, Any] | None) -> str:
    """The bound within which `check` looked for happens-before races (`DeadlockAnalysis.race_bound`;
    the JSON has the launch's every argument): `explore` runs these schedules at this launch too, then more."""
    if not bound:
        return "not checked (the kernel was not simulated)"
    if not bound["schedules"]:
        return "not checked (no schedule ran to a verdict or a bound)"
    from ..analyses.sim.schedule import POLICIES

    limited = "" if len(bound["schedules"]) + len(bound.get("not_run") or []) >= len(POLICIES) else " (the others ran to a limit)"
    return f"happens-before on {', '.join(bound['schedules'])} only{limited}; beyond: {bound['beyond']}"


def named_bound(function, bound: dict[str, Any]) -> dict[str, Any]:
    """A bound's `arg_values` keyed by the arguments' names (`K`, `N_CTX`), not their positions:
    what a user reads and passes back with --args. Used by `check` and `explore`."""
    values = bound.get("arg_values")
    if not values or function is None or not function.regions or not function.regions[0].blocks:
        return bound
    names = {i: a.name.lstrip("%") for i, a in enumerate(function.regions[0].blocks[0].arguments)}
    return {**bound, "arg_values": {names.get(int(i), f"arg{i}"): v for i, v in values.items()}}


def _named_race_bound(function, summary: dict[str, Any]) -> dict[str, Any]:
    if summary.get("races"):
        summary["races"] = named_bound(function, summary["races"])
    return summary


def launch_options(args: str | None, pid: str | None, grid: str | None, load: str | None = None) -> Launch | None:
    """--args/--pid/--grid(/--load) into a Launch (None when none is given), for `check` and
    `explore` alike; a malformed value raises LaunchError (one line)."""
    from ..analyses.launch.input_points import parse_launch

    return parse_launch(args, pid, grid, load) if (args or pid or grid or load) else None


def contract_lines(contract: list[dict[str, Any]] | None, indent: str) -> list[str]:
    """`launch contract (what the simulated launches assume):` and one line per assumption,
    IR facts and the tool's inferences told apart."""
    if not contract:
        return []
    return [f"{indent}launch contract (what the simulated launches assume):"] + [
        f"{indent}  {a['statement']} ({a['source']}): {a['why']}" for a in contract]


def user_launch_lines(launch: dict[str, Any], indent: str) -> list[str]:
    """The user's launch and its outcome; when it breaks an inferred assumption, a note that it
    was simulated anyway."""
    out = [f"your launch ({launch['input']}): {launch['outcome']}"]
    for a in launch.get("outside_contract") or []:
        out.append(f"{indent}note: outside the launch contract ({a['statement']}, {a['source']}); "
                   "simulated anyway")
    return out


def _inputs_summary(result: CheckResult) -> dict[str, Any] | None:
    if result.inputs is None and result.launch is None:
        return None
    out = result.inputs.summary() if result.inputs is not None else {"targets": 0, "observations": 0, "points": [],
                                                                       "unreachable": []}
    if result.launch is not None:
        out["launch"] = result.launch.as_dict()
    return out


def _short_reason(reason: str) -> str:
    """An input point's reason without its trip-count formula (the JSON keeps it whole)."""
    return reason.split(" (trip count ")[0]


def render_check_text(doc: CheckDoc) -> None:
    out: list[str] = []
    s = doc.summary
    out.append(f"{doc.input.path} [unit {doc.input.unit_index}: {doc.input.unit}]"
              + (f" @{doc.input.function}" if doc.input.function else ""))
    out.append(verdict_line(s))
    for f in doc.findings:
        out.append(f"\n{f.severity.value.upper()} {f.kind} -> {f.outcome}  lines {', '.join(map(str, f.lines))}")
        out.append(f"  {f.message}")
        if f.partitions:
            out.append(f"  partitions: {', '.join(f.partitions)}")
        if f.barrier:
            out.append(f"  barrier: {f.barrier}")
        blocked = f.evidence.get("blocked") or (f.evidence.get("witness") or {}).get("blocked")
        if blocked:
            out.append("  witness:")
            for b in blocked:
                it = ",".join(map(str, b["iteration"])) or "-"
                out.append(f"    {b['partition']} stuck at line {b['line']} (iteration {it}) awaiting parity "
                          f"{b['parity_awaited']}; slot completed {b['completions']} phase(s)")
        out += [f"  {line}" for line in (f.evidence.get("hang_set") or {}).get("lines", [])]
        if f.suggestion:
            out.append(f"  suggestion: {f.suggestion}")
    if doc.simulation:
        out.append(f"\nsimulation (integer arguments = {doc.simulation['int_args']}): {simulation_runs(doc.simulation)}")
        bound = doc.simulation.get("races")
        ran = [r["policy"] for r in doc.simulation.get("runs") or [] if r["policy"] != "favorable:else"]
        if not bound or bound["schedules"] != ran:  # otherwise the note says it: the schedules above
            out.append(f"races: {race_bound_text(bound)}")
    rl = doc.recorded_launch
    if rl:
        out.append(f"recorded launch {rl['index']} of {rl['kernel']} (trace line {rl['trace_line']}): {rl['recorded']}")
        for why in rl["unmapped"]:
            out.append(f"  not simulated: {why}")
    out += contract_lines(doc.contract, "")
    ip = doc.input_points
    if ip:
        if ip.get("launch"):
            out += user_launch_lines(ip["launch"], "  ")

        if ip["points"]:
            loaded = sum(1 for p in ip["points"] if p.get("loaded"))
            out.append(f"input points ({len(ip['points']) - loaded} of {ip['targets']} boundaries' launches"
                       + (f", {loaded} with other loaded values (a segment empty, unequal segments)" if loaded else "")
                       + "):")
        for p in ip["points"]:
            found = f" -> {', '.join(p['findings'])}" if p["findings"] else ""
            out.append(f"  {p['input']}: {p['outcome']}{found}")
            if p["outcome"] == "completed":
                continue  # why each launch was chosen matters where it did not complete (JSON: all)
            for r in p["reasons"][:2]:
                out.append(f"    {_short_reason(r)}")
            if len(p["reasons"]) > 2:
                out.append(f"    (+{len(p['reasons']) - 2} more boundaries at this launch; `--format json` lists them)")
    out.append(f"note: {explore_note(bool(doc.simulation))}")
    print_lines(out)
