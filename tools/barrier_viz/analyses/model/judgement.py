"""Was anything judged? The three answers `check` gives: clean (judged), findings, not judged.

Why: "0 errors" reads as "clean". When the simulation stopped at a limit (a hang it could not
turn into a verdict: trip counts assumed for a runtime bound, an op it does not model, an
`scf.if` side it cannot decide) or ran out of its bound before any schedule concluded, the tool
has concluded nothing about hangs, and saying "0 errors" is the worst answer it can give.

So every such stop becomes a `limit.not_judged` *warning* (outcome "not judged") carrying its
reason and the lines involved (the blocked waits and the loops whose trip count was assumed),
and the check's verdict is one of:

* `findings`: some finding is an error (exit status 1);
* `not judged`: no error, but something the rules or the simulation needed was not judged
  (a `limit.not_judged` warning, or a verdict demoted to `limit.unresolved_value`), or the
  user's launch breaks the inferred launch contract and hangs or races there
  (`evidence.outside_contract`, `verdicts.outside_contract`) (exit 4);
* `clean`: judged, and no error (warnings and infos may remain; exit 0).

A run that hit its bound while another schedule concluded (completed, covered or deadlocked)
still judged the kernel in that schedule: the JSON keeps the bounded run, no warning is added.
"""

from __future__ import annotations

from .findings import Finding, Kind, Severity, finding

CLEAN = "clean"
FINDINGS = "findings"
NOT_JUDGED = "not judged"
VERDICTS = (CLEAN, FINDINGS, NOT_JUDGED)
EXIT_STATUS = {CLEAN: 0, FINDINGS: 1, NOT_JUDGED: 4}  # 2: bad input, 3: internal error (cli.py)
_CONCLUDED = ("completed", "covered", "deadlock")
_NOT_JUDGED_KINDS = (Kind.LIMIT_NOT_JUDGED.value, Kind.LIMIT_UNRESOLVED_VALUE.value)


def unjudged_findings(deadlocks, inputs) -> list[Finding]:
    """One `limit.not_judged` warning per schedule or input point that stopped at a limit, and
    one when no schedule concluded within its bound (see the module docstring)."""
    out: list[Finding] = []
    runs = deadlocks.runs if deadlocks is not None else []
    for r in runs:
        if r.outcome == "limit":
            out.append(_limit_warning(f"the {r.policy} schedule", r.reason, _run_lines(r), r.policy))
    if runs and runs[0].outcome != "not_simulated" and not any(r.outcome in _CONCLUDED for r in runs):
        bounded = [r for r in runs if r.outcome == "bound_reached"]
        if bounded:
            why = bounded[0].reason or "the run reached its step or time bound"
            out.append(finding(
                Kind.LIMIT_NOT_JUDGED, Severity.warning,
                f"not judged: no schedule ran to completion or to a hang within its bound ({why}), so no hang "
                "was ruled out or found.",
                lines=sorted({ln for r in bounded for ln in _run_lines(r)}),
                evidence={"where": "every schedule", "stopped": [{"policy": r.policy, "outcome": r.outcome, "reason": r.reason} for r in runs]},
                suggestion="Raise BARRIER_VIZ_SIM_BUDGET, or fix the launch with --args so loops run fewer iterations."))
    for p in (inputs.points if inputs is not None else []):
        if p.outcome == "limit":
            what = f"the input point {p.assignment()}" + (f" ({p.reasons[0]})" if p.reasons else "")
            out.append(_limit_warning(what, p.limit_reason, p.blocked_lines, "input point"))
    return out


def verdict(findings: list[Finding]) -> tuple[str, list[str]]:
    """The check's verdict and, when not judged, why (one reason per unjudged finding)."""
    if any(f.severity is Severity.error for f in findings):
        return FINDINGS, []
    reasons = [_headline(f) for f in findings if f.kind in _NOT_JUDGED_KINDS or f.evidence.get("outside_contract")]
    return (NOT_JUDGED, reasons) if reasons else (CLEAN, [])


def _headline(f: Finding) -> str:
    """A short reason for the verdict line (the finding holds the whole story)."""
    at = f" (lines {', '.join(map(str, f.lines[:6]))}{', ...' if len(f.lines) > 6 else ''})" if f.lines else ""
    if f.evidence.get("outside_contract"):
        broken = "; ".join(a["statement"] for a in f.evidence["outside_contract"])
        return f"{'hangs' if f.kind.startswith('deadlock.') else 'races'} if the launch contract is broken ({broken}){at}"
    if f.kind == Kind.LIMIT_UNRESOLVED_VALUE.value:
        return f"a {f.evidence.get('would_report', {}).get('kind', 'verdict')} depends on a value the IR does not define soundly{at}"
    what = "reached its bound" if f.evidence.get("where") == "every schedule" else "stopped at a limit"
    return f"{f.evidence.get('where', 'the simulation')} {what}{at}"


def _limit_warning(where: str, reason: str, lines: list[int], source: str) -> Finding:
    return finding(
        Kind.LIMIT_NOT_JUDGED, Severity.warning,
        f"not judged: {where} ended in a hang that is not a verdict: {reason or 'a stated limit of the model'}. "
        "The kernel may hang there; the tool cannot tell.",
        lines=lines, evidence={"source": source, "where": where.split(" (")[0], "reason": reason},
        suggestion="Give the launch (--args, --load) that the GPU runs, or read the lines named here by hand.")


def _run_lines(r) -> list[int]:
    """The waits a stopped run was blocked on, and the loops it ran with an assumed trip count."""
    lines = {b.line for b in r.blocked}
    m = r.machine
    if m is not None:
        lines |= {ln for per in m.assumed.values() for ln in per}
    return sorted(lines)
