"""Check one unit in a worker process, within a step budget, and never raise.

The result is a plain dict (it crosses a process boundary and goes into the cache): per kernel
(each function with warp specialization) its partition and barrier counts, its findings with
fingerprints, and a status: `ok`; `bound_reached` when the budget ran out (the deadlock run is
given up and the static rules' findings are kept; if even those did not finish, none are
reported, and the status says so rather than the unit passing silently); `error` when the unit
does not parse (the one-line `FILE:LINE:COL: message` the other commands print) or the tool
failed on it (`internal error: ...`, never a traceback).

The budget counts interpreter operations (`analyses.sim.budget`), so which rows say
`bound_reached` is the same on every machine and under any load: the same tree gives the same
bytes. A CPU-time timer (SIGPROF) stays as a backstop for the parts that are not simulation
(`BACKSTOP_SECONDS`, far above what any real kernel needs); a row it cuts says so, because
only that cut depends on the machine.
"""

from __future__ import annotations

import signal
import time
from contextlib import contextmanager
from typing import Any, Iterator

from ..errors import InputError
from .discover import UnitTask

# CPU seconds a kernel's static rules, or its barrier naming, may take before the backstop
# stops them (the simulation is bounded by steps, not by this).
BACKSTOP_SECONDS = 120.0


class BudgetExceeded(Exception):
    """The unit's CPU backstop ran out."""


@contextmanager
def budget(seconds: float | None) -> Iterator[None]:
    """Raise BudgetExceeded in this (main) thread after `seconds` of this process's CPU time."""
    if not seconds or seconds <= 0 or not hasattr(signal, "setitimer"):
        yield
        return

    def fire(signum, frame):  # noqa: ARG001
        raise BudgetExceeded()

    old = signal.signal(signal.SIGPROF, fire)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)


def _selection(task: UnitTask):
    from ..inputs import InputSet, Source, Unit, load_unit

    unit = Unit(task.index, task.kind, task.label, Source(task.path), task.start_line, task.end_line,
                len(task.text), list(task.functions), list(task.flags))
    unit._text = task.text
    inputs = InputSet(task.path, "file", [unit], len(task.text))
    return inputs, unit, load_unit(unit)


def _kernels(ir) -> list:
    """The functions to check: those with warp specialization, else the default one."""
    from ..session import default_function

    functions = ir.functions()
    ws = [fn for fn in functions if any(op.name == "ttg.warp_specialize" or "async_task_id" in op.attributes
                                        or "ttg.partition" in op.attributes for op in fn.walk())]
    if ws:
        return ws
    return [default_function(functions)] if functions else [None]


def check_kernel(sel, simulate: bool, steps: int | None) -> dict[str, Any]:
    """Findings of one function, within `steps`; see the module docstring for the fallback."""
    from ..analyses.diff.sync_model import assign_identities, barrier_entries, finding_record, ops_by_line, partition_entries, role_keys
    from ..analyses.sim.budget import Budget
    from ..analyses.verdicts import check
    from ..analysis import Analysis
    from ..claims import check_claims

    a = Analysis(sel)
    status, note = "ok", None
    findings = None
    verdict = None
    backstop = f"CPU backstop of {BACKSTOP_SECONDS:g}s (not a step budget: this cut depends on the machine)"
    try:
        # The one simulation budget (`analyses.sim.budget`) bounds the deadlock runs from inside the
        # interpreter; the timer is only a backstop for the rest of the analysis.
        with budget(BACKSTOP_SECONDS):
            result = check(a, simulate=simulate, budget=Budget(steps) if steps else None)
            check_claims(a, result)  # "redundant" claims tried in a copy, as `check` prints them (claims.py)
        findings = result.findings
        verdict = result.verdict[0]
        runs = result.deadlocks.runs if result.deadlocks is not None else []
        if any(r.outcome == "bound_reached" for r in runs):
            status = "bound_reached"
            note = (f"simulation budget of {steps:,} steps reached: no verdict from the schedules it cut "
                    "(raise it with --budget)" if steps else "simulation bound reached: no verdict from the schedules it cut")
    except BudgetExceeded:
        status = "bound_reached"
        note = f"{backstop} reached" + (" while simulating; static rules only" if simulate else "")
    if findings is None:
        # The static rules are the cheap, indispensable part: they get a bound of their own.
        try:
            with budget(BACKSTOP_SECONDS):
                findings = check(a, simulate=False).findings
        except BudgetExceeded:
            findings = []
            note = f"{backstop} reached before the static rules finished: no findings reported"
    recovered = len({(w.line, w.column) for w in sel.ir.warnings})
    if recovered:
        note = (note + "; " if note else "") + f"{recovered} syntax error(s) recovered by the parser (`barrier-viz check --strict` names them)"
    if verdict is None:  # the budget cut the check: only the static rules' findings are known
        from ..analyses.model.judgement import FINDINGS, NOT_JUDGED

        verdict = FINDINGS if any(f.severity.value == "error" for f in findings) else NOT_JUDGED
    record: dict[str, Any] = {"function": sel.function_name, "status": status, "verdict": verdict, "note": note,
                              "partitions": len(a.partitions.partitions), "barriers": len(a.barriers.barriers)}
    try:
        # Naming the barriers is not the slow part (the deadlock run is).
        with budget(BACKSTOP_SECONDS):
            rk = role_keys(partition_entries(a))
            identities = assign_identities(barrier_entries(a, rk))
            lines = ops_by_line(a)
            record["findings"] = [finding_record(f, a, identities, rk, lines) for f in findings]
    except BudgetExceeded:
        record["findings"] = [_plain_record(f) for f in findings]
        record["status"] = "bound_reached"
        record["note"] = (note + "; " if note else "") + f"barrier identities not computed within the {backstop}"
    return record


def _plain_record(f) -> dict[str, Any]:
    return {"kind": f.kind, "severity": f.severity.value, "message": f.message, "lines": list(f.lines),
            "partitions": list(f.partitions), "op": None, "barrier": None, "fingerprint": f"{f.kind}|-|-",
            "suggestion": f.suggestion}


def run_task(task: UnitTask, simulate: bool = True, steps: int | None = None) -> dict[str, Any]:
    """Check every kernel of one unit. Never raises (a worker must not die on one bad unit)."""
    start = time.monotonic()
    out: dict[str, Any] = {"status": "ok", "error": None, "kernels": []}
    try:
        from ..session import Selection

        inputs, unit, ir = _selection(task)
        for fn in _kernels(ir):
            out["kernels"].append(check_kernel(Selection(inputs, unit, ir, fn), simulate, steps))
        if any(k["status"] == "bound_reached" for k in out["kernels"]):
            out["status"] = "bound_reached"
    except InputError as exc:
        out.update(status="error", error=str(exc))
    except RecursionError:
        out.update(status="error", error=f"{task.path}:{task.start_line}:1: internal error: RecursionError (IR nested too deeply)")
    except Exception as exc:  # noqa: BLE001 - one unit's failure is a row, not a crash
        detail = " ".join(str(exc).split())[:200]
        out.update(status="error", error=f"{task.path}:{task.start_line}:1: internal error: {type(exc).__name__}: {detail}")
    out["seconds"] = round(time.monotonic() - start, 3)
    return out
