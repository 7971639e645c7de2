"""Check one unit in a worker process, within a time budget, and never raise.

The result is a plain dict (it crosses a process boundary and goes into the cache): per kernel
(each function with warp specialization) its partition and barrier counts, its findings with
fingerprints, and a status: `ok`; `bound_reached` when the budget ran out (the deadlock run is
given up and the static rules' findings are kept; if even those did not finish, none are
reported, and the status says so rather than the unit passing silently); `error` when the unit
does not parse (the one-line `FILE:LINE:COL: message` the other commands print) or the tool
failed on it (`internal error: ...`, never a traceback).

The budget is a CPU-time timer (SIGPROF) in the worker: the analysis is pure Python, so the
signal lands between bytecodes, and the facts already computed stay cached on the Analysis
for the static fallback.
"""

from __future__ import annotations

import signal
import time
from contextlib import contextmanager
from typing import Any, Iterator

from ..errors import InputError
from .discover import UnitTask


class BudgetExceeded(Exception):
    """The unit's time budget ran out."""


@contextmanager
def budget(seconds: float | None) -> Iterator[None]:
    """Raise BudgetExceeded in this (main) thread after `seconds` of this process's CPU time.

    CPU time, not wall time: on a loaded CI runner (or beside other jobs) the same kernel
    reaches the same budget, so which rows say `bound_reached` does not depend on the load."""
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


def check_kernel(sel, simulate: bool, seconds: float | None) -> dict[str, Any]:
    """Findings of one function, within `seconds`; see the module docstring for the fallback."""
    from ..analyses.sync_model import assign_identities, barrier_entries, finding_record, ops_by_line, partition_entries, role_keys
    from ..analyses.budget import Budget
    from ..analyses.verdicts import check
    from ..analysis import Analysis

    a = Analysis(sel)
    start = time.process_time()
    status, note = "ok", None
    findings = None
    verdict = None
    try:
        # The one simulation budget (`analyses.budget`) bounds the deadlock runs from inside the
        # interpreter; the timer is only a backstop for the rest of the analysis.
        with budget(4 * seconds + 2.0 if seconds else None):
            result = check(a, simulate=simulate, budget=Budget(seconds) if seconds else None)
        findings = result.findings
        verdict = result.verdict[0]
        runs = result.deadlocks.runs if result.deadlocks is not None else []
        if any(r.outcome == "bound_reached" for r in runs):
            status = "bound_reached"
            note = f"time budget of {seconds:g}s reached while simulating: no verdict from the schedules it cut"
    except BudgetExceeded:
        status = "bound_reached"
        note = f"time budget of {seconds:g}s reached" + (" while simulating; static rules only" if simulate else "")
    if findings is None:
        # The static rules are the cheap, indispensable part: they get a wider bound of their own.
        left = max((seconds or 0) - (time.process_time() - start), 0) + max(4 * (seconds or 0), 2.0)
        try:
            with budget(left):
                findings = check(a, simulate=False).findings
        except BudgetExceeded:
            findings = []
            note = f"time budget of {seconds:g}s reached before the static rules finished: no findings reported"
    recovered = len({(w.line, w.column) for w in sel.ir.warnings})
    if recovered:
        note = (note + "; " if note else "") + f"{recovered} syntax error(s) recovered by the parser (`barrier-viz check --strict` names them)"
    if verdict is None:  # the budget cut the check: only the static rules' findings are known
        from ..analyses.judgement import FINDINGS, NOT_JUDGED

        verdict = FINDINGS if any(f.severity.value == "error" for f in findings) else NOT_JUDGED
    record: dict[str, Any] = {"function": sel.function_name, "status": status, "verdict": verdict, "note": note,
                              "partitions": len(a.partitions.partitions), "barriers": len(a.barriers.barriers)}
    try:
        # Naming the barriers is not the slow part (the deadlock run is): a wider bound, so the
        # fingerprints of a big kernel stay stable whatever the budget.
        with budget(max(4 * (seconds or 0), 2.0) if seconds else None):
            rk = role_keys(partition_entries(a))
            identities = assign_identities(barrier_entries(a, rk))
            lines = ops_by_line(a)
            record["findings"] = [finding_record(f, a, identities, rk, lines) for f in findings]
    except BudgetExceeded:
        record["findings"] = [_plain_record(f) for f in findings]
        record["status"] = "bound_reached"
        record["note"] = (note + "; " if note else "") + "barrier identities not computed within the budget"
    return record


def _plain_record(f) -> dict[str, Any]:
    return {"kind": f.kind, "severity": f.severity.value, "message": f.message, "lines": list(f.lines),
            "partitions": list(f.partitions), "op": None, "barrier": None, "fingerprint": f"{f.kind}|-|-",
            "suggestion": f.suggestion}


def run_task(task: UnitTask, simulate: bool = True, seconds: float | None = None) -> dict[str, Any]:
    """Check every kernel of one unit. Never raises (a worker must not die on one bad unit)."""
    start = time.monotonic()
    out: dict[str, Any] = {"status": "ok", "error": None, "kernels": []}
    try:
        from ..session import Selection

        inputs, unit, ir = _selection(task)
        for fn in _kernels(ir):
            out["kernels"].append(check_kernel(Selection(inputs, unit, ir, fn), simulate, seconds))
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
