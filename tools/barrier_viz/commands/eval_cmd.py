"""`eval`: score barrier-viz (deterministic `check`, or an agent's outputs) against eval cases.

Prints per-kind recall and precision, the deadlock recall, the false-deadlock count on
known-good inputs, and every miss with the IR lines involved; exit 1 when a threshold of the
config file is missed. The JSON document is `barrier-viz/eval/v1`.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

from ..evals.cases import Case, discover
from ..render.words import plural
from ..evals.runner import live_agent_runner, load_config, run_agent_cases, run_deterministic
from ..evals.scoring import CaseScore, check_thresholds, summarize, unmeasured_thresholds

SCHEMA = "barrier-viz/eval/v1"


def default_config(cases: list[str]) -> Path | None:
    """evals/config.yaml next to the first case folder's `cases/` parent, else ./evals/."""
    for p in map(Path, cases):
        for parent in [p, *p.resolve().parents]:
            if (parent / "config.yaml").is_file() and parent.name == "evals":
                return parent / "config.yaml"
    here = Path("evals/config.yaml")
    return here if here.is_file() else None


def _ir_line(case: Case, line: int) -> str:
    """The text of one IR line of the case input (for printing misses)."""
    try:
        opener = gzip.open if case.input.name.endswith(".gz") else open
        with opener(case.input, "rt", encoding="utf-8", errors="replace") as fh:
            for k, text in enumerate(fh, 1):
                if k == line:
                    text = " ".join(text.split())
                    return text[:160] + ("..." if len(text) > 160 else "")
    except OSError:
        return ""
    return ""


def _case_doc(s: CaseScore) -> dict[str, Any]:
    mut = s.case.source.get("mutation") or {}
    site = mut.get("line")
    return {
        "name": s.case.name,
        "input": str(s.case.input),
        "passed": s.passed,
        "error": s.error,
        "seconds": round(s.seconds, 3),
        "truth": s.case.truth,
        "expected": s.case.findings,
        "absent": s.case.absent,
        "matched": s.matched,
        "missed": s.missed,
        "false_findings": [{"absent": p, "kind": r.kind, "severity": r.severity, "lines": r.lines,
                            "message": r.message} for p, r in s.false],
        "reported": [{"kind": r.kind, "severity": r.severity, "lines": r.lines} for r in s.reported],
        "site": {"line": site, "text": mut.get("original") or _ir_line(s.case, site)} if site else None,
        "notes": s.case.notes,
    }


def eval_document(case_paths: list[str], mode: str = "deterministic", *, config: str | None = None,
                  agent_out: str | None = None, run_agent: bool = False, jobs: int | None = None,
                  model: str | None = None) -> tuple[dict[str, Any], bool]:
    """Run and score the cases; returns the eval/v1 document and whether every threshold held."""
    cases = discover(case_paths)
    if not cases:
        raise ValueError(f"no eval cases under {', '.join(case_paths)}")
    if config and not Path(config).is_file():
        raise ValueError(f"--config {config}: no such file")
    cfg = load_config(Path(config) if config else default_config(case_paths))
    if mode == "deterministic":
        scores = run_deterministic(cases, jobs)
    elif mode == "agent":
        if not agent_out:
            raise ValueError("--mode agent needs --agent-out DIR (the folder with one agent output per case)")
        scores = run_agent_cases(cases, Path(agent_out), live_agent_runner(model) if run_agent else None)
    else:
        raise ValueError(f"unknown mode {mode!r} (deterministic or agent)")
    summary = summarize(scores)
    failures = check_thresholds(summary, cfg["thresholds"])
    if summary["errors"]:
        # a case that could not be scored (a crash, a missing agent output) proves nothing either way
        failures.append(f"{summary['errors']} case(s) crashed or had no output to score")
    # Second key "input" like every other command's document (what was scored), then the mode.
    doc = {"schema": SCHEMA, "input": {"cases": list(case_paths), "config": str(config) if config else None},
           "mode": mode, "summary": summary, "thresholds": cfg["thresholds"],
           "threshold_failures": failures,
           "thresholds_not_measured": unmeasured_thresholds(summary, cfg["thresholds"]),
           "cases": [_case_doc(s) for s in scores]}
    return doc, not failures


def render_eval_text(doc: dict[str, Any], echo) -> None:
    s = doc["summary"]
    echo(f"barrier-viz eval ({doc['mode']}): {plural(s['cases'], 'case')}, {s['passed']} passed, {s['errors']} crashed")
    echo(f"deadlock recall: {_measured(s['deadlock_recall'])} over {s['deadlock_cases']} hang cases")
    echo(f"false deadlocks: {s['false_deadlocks']} on {s['known_good_cases']} known-good/benign cases")
    echo(f"race recall: {_measured(s['race_recall'])} over {s['race_expectations']} race expectations")
    echo(f"GPU runs that completed but were called a hang: {s['observed_completions_flagged']}")
    echo("")
    echo(f"{'kind':32} {'recall':>7} {'precision':>9} {'support':>7} {'false+':>6}")
    for kind, r in s["per_kind"].items():
        rec = "-" if r["recall"] is None else f"{r['recall']:.3f}"
        pre = "-" if r["precision"] is None else f"{r['precision']:.3f}"
        echo(f"{kind:32} {rec:>7} {pre:>9} {r['support']:>7} {r['false_positives']:>6}")
    for group, g in (s.get("per_group") or {}).items():
        _render_group(group, g, echo)
    misses = [c for c in doc["cases"] if not c["passed"]]
    if misses:
        echo(f"\nmisses ({len(misses)}):")
    for c in misses:
        echo(f"- {c['name']}  ({c['input']})")
        if c["error"]:
            echo(f"    crashed: {c['error']}")
        for e in c["missed"]:
            keys = ", ".join(f"{k}={v}" for k, v in e.items())
            got = ", ".join(sorted({f"{r['kind']}({r['severity']})" for r in c["reported"]})) or "nothing"
            echo(f"    missed {keys}; reported: {got}")
            if c["site"]:
                echo(f"      site L{c['site']['line']}: {c['site']['text']}")
        for f in c["false_findings"]:
            echo(f"    false {f['kind']} ({f['severity']}, absent {f['absent']}) lines {f['lines'][:8]}: {f['message'][:140]}")
    echo("")
    unmeasured = doc.get("thresholds_not_measured", [])
    if doc["threshold_failures"]:
        echo("thresholds MISSED: " + "; ".join(doc["threshold_failures"]))
    else:
        met = [f"{k}={v}" for k, v in doc["thresholds"].items() if k not in unmeasured]
        echo("thresholds met: " + (", ".join(met) or "none measured"))
    if unmeasured:
        echo("thresholds not measured (no cases of that kind): "
             + ", ".join(f"{k}={doc['thresholds'][k]}" for k in unmeasured))


def _render_group(group: str, g: dict[str, Any], echo) -> None:
    """A group of cases (e.g. `cluster`) scored on its own: its rates, then per operator."""
    echo("")
    echo(f"{group} cases: {g['cases']}, {g['passed']} passed")
    echo(f"  deadlock recall: {_measured(g['deadlock_recall'])} over {g['deadlock_cases']} hang cases "
         f"({g.get('deadlock_found_in_cta', 0)} with the expected deadlock in the expected CTA)")
    echo(f"  race recall: {_measured(g['race_recall'])} over {g['race_expectations']} race expectations")
    echo(f"  false deadlocks: {g['false_deadlocks']} on {g['known_good_cases']} known-good cases")
    for op, r in g.get("operators", {}).items():
        echo(f"  {op:32} {r['passed']:>3}/{r['cases']:<3} passed")


def _measured(value) -> str:
    """A rate, or "not measured" when there was nothing to measure it over."""
    return "not measured" if value is None else str(value)
