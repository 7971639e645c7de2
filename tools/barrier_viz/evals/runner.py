"""Run cases: deterministic mode calls `check` in-process; agent mode reads what an agent run
wrote for each case (or runs the agent first) and scores its findings the same way."""

from __future__ import annotations

import json
import os
import re
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Callable

import yaml

from ..analyses.model.findings import Kind
from .cases import Case
from .scoring import CaseScore, Reported, score_case

DEFAULT_CONFIG = {
    "thresholds": {"deadlock_recall": 0.95, "false_deadlocks": 0, "race_recall": 0.9},
}


def load_config(path: Path | None) -> dict[str, Any]:
    """`evals/config.yaml` (thresholds); the defaults are issue 6's acceptance numbers."""
    if path is None or not Path(path).is_file():
        return DEFAULT_CONFIG
    # A config that does not say what it means is a usage error (ValueError: exit 2), never a
    # silent fallback to the defaults nor an internal error.
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ValueError(f"{path}: not a readable YAML config: {' '.join(str(exc).split())}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: the config must be a mapping with a 'thresholds' mapping")
    thresholds = data.get("thresholds") or DEFAULT_CONFIG["thresholds"]
    if not isinstance(thresholds, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in thresholds.values()):
        raise ValueError(f"{path}: 'thresholds' must map names to numbers")
    return {"thresholds": dict(thresholds)}


# -- deterministic -------------------------------------------------------------------------------
def check_case(case: Case) -> tuple[list[Reported], str | None, float]:
    """Run `check` on the case input (unit/func as the case selects)."""
    from ..commands.check_cmd import check_document
    from ..session import select

    t0 = time.perf_counter()
    try:
        sel = select(str(case.input), case.unit, case.func, require_function=True)
        _, result = check_document(sel)
    except Exception as exc:  # noqa: BLE001 - a crash on a case is a scored failure, not an abort
        return [], f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}", time.perf_counter() - t0
    reported = [Reported(kind=f.kind, severity=f.severity.value, lines=list(f.lines), partitions=list(f.partitions),
                         barrier=f.barrier, buffer_id=f.buffer_id, message=f.message, threads=witness_threads(f.evidence),
                         suggestion=f.suggestion or "", outcome=f.outcome)
                for f in result.findings]
    return reported, None, time.perf_counter() - t0


def witness_threads(evidence: dict[str, Any]) -> list[str]:
    """The threads a finding's witness shows blocked (as `check` renders them): in a cluster
    they are named `cta<k>.<partition>`."""
    blocked = evidence.get("blocked") or (evidence.get("witness") or {}).get("blocked") or []
    return [str(b["partition"]) for b in blocked if isinstance(b, dict) and b.get("partition")]


def _det(case: Case) -> CaseScore:
    reported, error, secs = check_case(case)
    return score_case(case, reported, error, secs)


def run_deterministic(cases: list[Case], jobs: int | None = None) -> list[CaseScore]:
    """Score every case with `check`; `jobs` > 1 spreads cases over processes."""
    from ..progress import progress

    jobs = jobs or min(4, os.cpu_count() or 1)
    with progress("eval", total=len(cases)) as advance:
        if jobs <= 1 or len(cases) < 8:
            scores = []
            for c in cases:
                scores.append(_det(c))
                advance(what=c.name)
            return scores
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            scores = []
            for s in pool.map(_det, cases, chunksize=4):
                scores.append(s)
                advance(what=s.case.name)
            return scores


# -- agent ---------------------------------------------------------------------------------------
KIND_NAMES = sorted((k.value for k in Kind), key=len, reverse=True)
_KIND_RE = re.compile("|".join(re.escape(k) for k in KIND_NAMES))
_LINES_RE = re.compile(r"\b(?:lines?|L)\s*((?:\d+(?:\s*(?:,|and|-|–)\s*)?)+)", re.I)
_PART_RE = re.compile(r"\b(default|partition\d+)\b")
_THREAD_RE = re.compile(r"\b(cta\d+\.(?:default|partition\d+))\b")
_JSON_BLOCK = re.compile(r"```json\s*\n(.*?)```", re.S)
_INFO_KINDS = {Kind.WAIT_REDUNDANT.value, Kind.BUFFER_SINGLE_COPY.value, Kind.ARRIVE_UNPAIRED.value,
               Kind.BARRIER_UNUSED.value}
_WARNING_KINDS = {Kind.TOKEN_NOT_LOOP_CARRIED.value, Kind.CHANNEL_SAME_PARTITION.value}


def parse_insight(line: str) -> list[Reported]:
    """An `INSIGHT: ...` line -> the findings it states: every kind named in it, with the IR
    lines and partitions it names. A line naming no kind states no finding (it may be the
    'no barrier issues found' line or prose)."""
    body = line.split("INSIGHT:", 1)[-1]
    kinds = list(dict.fromkeys(_KIND_RE.findall(body)))
    lines: list[int] = []
    for m in _LINES_RE.finditer(body):
        lines.extend(int(x) for x in re.findall(r"\d+", m.group(1)))
    parts = list(dict.fromkeys(_PART_RE.findall(body)))
    threads = list(dict.fromkeys(_THREAD_RE.findall(body)))
    low = body.lower()
    out = []
    for k in kinds:
        sev = "info" if k in _INFO_KINDS else "warning" if k in _WARNING_KINDS else "error"
        if re.search(r"\bwarning\b", low) and sev == "error" and k.startswith("phase."):
            sev = "warning"
        out.append(Reported(kind=k, severity=sev, lines=lines, partitions=parts, message=body.strip(), threads=threads))
    return out


def _from_json(obj: Any) -> list[Reported] | None:
    items = obj.get("findings") if isinstance(obj, dict) else obj
    if not isinstance(items, list):
        return None
    out = []
    for f in items:
        if isinstance(f, dict) and isinstance(f.get("kind"), str):
            out.append(Reported(kind=f["kind"], severity=str(f.get("severity", "error")),
                                lines=[int(x) for x in f.get("lines", []) if str(x).isdigit()],
                                partitions=[str(p) for p in f.get("partitions", [])],
                                barrier=f.get("barrier"), buffer_id=f.get("buffer_id"),
                                message=str(f.get("message", "")),
                                threads=[str(t) for t in f.get("threads", [])]))
    return out


def parse_agent_output(folder: Path) -> list[Reported]:
    """What an agent run in `folder` reported. A JSON findings block (`findings.json`, or a
    ```json block holding {"findings": [...]} in report.md) is preferred because it is exact;
    otherwise the INSIGHT lines of insights.log are parsed. Raises FileNotFoundError when the
    folder holds neither."""
    folder = Path(folder)
    fj = folder / "findings.json"
    if fj.is_file():
        got = _from_json(json.loads(fj.read_text()))
        if got is not None:
            return got
    report = folder / "report.md"
    if report.is_file():
        for block in _JSON_BLOCK.findall(report.read_text()):
            try:
                got = _from_json(json.loads(block))
            except json.JSONDecodeError:
                continue
            if got is not None:
                return got
    logs = folder / "insights.log"
    if logs.is_file():
        return [r for line in logs.read_text().splitlines() if "INSIGHT:" in line for r in parse_insight(line)]
    raise FileNotFoundError(f"{folder}: no findings.json, report.md JSON block or insights.log")


AgentRunner = Callable[[Case, Path], None]


def run_agent_cases(cases: list[Case], agent_out: Path, runner: AgentRunner | None = None) -> list[CaseScore]:
    """Score agent outputs in `agent_out/<case name>/`. With `runner`, first produce each
    missing output by calling `runner(case, folder)` (e.g. the live agent loop)."""
    scores = []
    for case in cases:
        folder = Path(agent_out) / case.name
        t0 = time.perf_counter()
        error = None
        reported: list[Reported] = []
        try:
            if runner is not None and not folder.exists():
                runner(case, folder)
            reported = parse_agent_output(folder)
        except Exception as exc:  # noqa: BLE001 - a missing or broken output is a scored failure
            error = f"{type(exc).__name__}: {exc}"
        scores.append(score_case(case, reported, error, time.perf_counter() - t0))
    return scores


def live_agent_runner(model: str | None = None, max_turns: int = 24) -> AgentRunner:
    """Run `barrier-viz agent` on a case into its folder (needs ANTHROPIC_API_KEY)."""

    def run(case: Case, folder: Path) -> None:
        from ..commands.agent_cmd import run_agent_command

        run_agent_command(str(case.input), unit=case.unit, func=case.func, model=model, max_turns=max_turns,
                          out=str(folder))

    return run
