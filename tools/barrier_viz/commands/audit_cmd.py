"""`audit PATH...`: check every unit with warp specialization under some paths, as a CI gate.

Files are discovered and scanned here; each unit not in the cache is checked in a worker
process (`--jobs`), each within a step budget (`audit.worker`); results are cached by content
(`audit.cache`) and compared with a baseline (`audit.baseline`). One row per kernel (a unit's
function with warp specialization), per unit that failed, and per file without any such
unit, so every file named or found is accounted for.

The document (`barrier-viz/audit/v1`) has no timings and no absolute cache paths, so the same
tree gives the same bytes in JSON, SARIF and JUnit; the text table shows seconds for people.
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Callable

from .. import __version__
from ..audit.baseline import mark_new, read_baseline, scoped, write_baseline
from ..audit.cache import ResultCache, cache_key, default_cache_dir
from ..audit.discover import FileEntry, UnitTask, discover_file, expand_paths
from ..analyses.model.judgement import VERDICTS
from ..audit.worker import run_task

SCHEMA = "barrier-viz/audit/v1"
# Interpreter operations per kernel (`analyses.sim.budget`): the same on every machine and load.
DEFAULT_AUDIT_STEPS = 500_000
_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def _pool_task(args: tuple[UnitTask, bool, int | None]) -> dict[str, Any]:
    return run_task(*args)


def _executor(jobs: int) -> ProcessPoolExecutor:
    import multiprocessing as mp

    try:
        ctx = mp.get_context("fork")  # workers inherit the imported package: no start-up import
    except ValueError:  # pragma: no cover - platforms without fork
        ctx = mp.get_context()
    return ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_worker_signals)


def _worker_signals() -> None:
    """Workers leave interrupts to the parent (it stops them, see `_stop`) and die on SIGTERM."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _stop(pool: ProcessPoolExecutor) -> None:
    """Stop every worker now (an interrupt, SIGTERM, an error): `shutdown` alone would wait for
    the kernels they are checking, or leave them running after we exit."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        if p.is_alive():
            p.terminate()
    for p in processes:
        p.join(timeout=5)
        if p.is_alive():
            p.kill()
            p.join(timeout=5)


def run_units(tasks: list[UnitTask], *, jobs: int, simulate: bool, steps: int | None, cache: ResultCache,
              progress: Callable[[int], None] | None = None) -> tuple[list[dict[str, Any]], list[bool]]:
    """Results for `tasks` (in order) and whether each came from the cache."""
    options = {"simulate": simulate, "budget_steps": steps}
    keys = [cache_key(t.text, t.start_line, options) for t in tasks]
    results: list[dict[str, Any] | None] = [cache.get(k) for k in keys]
    cached = [r is not None for r in results]
    todo = [i for i, r in enumerate(results) if r is None]
    if progress:
        progress(len(tasks) - len(todo))
    # Largest units first: a long one started last would keep one worker busy at the end.
    todo.sort(key=lambda i: -len(tasks[i].text))

    def done(i: int, r: dict[str, Any]) -> None:
        results[i] = r
        if r["status"] != "error" or "internal error" not in (r.get("error") or ""):
            cache.put(keys[i], r)
        if progress:
            progress(1)

    if jobs <= 1 or len(todo) <= 1:
        for i in todo:
            done(i, run_task(tasks[i], simulate, steps))
    else:
        pool = _executor(min(jobs, len(todo)))
        try:
            futures = {pool.submit(_pool_task, (tasks[i], simulate, steps)): i for i in todo}
            for fut in as_completed(futures):
                i = futures[fut]
                try:
                    r = fut.result()
                except Exception as exc:  # noqa: BLE001 - a worker that died is one row
                    r = {"status": "error", "error": f"{tasks[i].path}:{tasks[i].start_line}:1: internal error: "
                                                   f"worker failed: {type(exc).__name__}", "kernels": [], "seconds": 0.0}
                done(i, r)
        except BaseException:
            _stop(pool)
            raise
        pool.shutdown(wait=True)
    return [r for r in results if r is not None], cached


def dedupe_snapshots(entries: list[FileEntry]) -> None:
    """A dump log repeats a snapshot whenever a pass changes nothing; such a unit is checked
    once, at its first occurrence in the file, and the repeats point there (`duplicate` rows):
    their findings would be the same, at the same offsets from the unit's start."""
    import hashlib

    for e in entries:
        first: dict[str, UnitTask] = {}
        kept: list[UnitTask] = []
        for t in e.tasks:
            h = hashlib.sha256(t.text).hexdigest()
            if h in first:
                e.duplicates.append((t, first[h]))
            else:
                first[h] = t
                kept.append(t)
        e.tasks = kept


def _top(findings: list[dict[str, Any]]) -> dict[str, Any] | None:
    if not findings:
        return None
    return min(findings, key=lambda f: (_SEVERITY_ORDER[f["severity"]], not f.get("new", True), min(f["lines"] or [0])))


def _rows(entries: list[FileEntry], results: dict[int, dict[str, Any]], cached: dict[int, bool],
          known) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    files_order = {e.path: i for i, e in enumerate(entries)}
    k = 0
    for e in entries:
        base = {"path": e.path, "units": e.units}
        if e.error is not None:
            rows.append(dict(base, unit=None, unit_index=None, start_line=1, function=None, status="error", error=e.error,
                             note=None, partitions=0, barriers=0, findings=[]))
            continue
        if not e.tasks and not e.duplicates:
            rows.append(dict(base, unit=None, unit_index=None, start_line=1, function=None, status="no_ws", error=None,
                             note="no unit with warp specialization", partitions=0, barriers=0, findings=[]))
            continue
        for t in e.tasks:
            r = results[k]
            unit = dict(base, unit=t.label, unit_index=t.index, start_line=t.start_line)
            secs = r.get("seconds", 0.0)
            if r["status"] == "error" or not r["kernels"]:
                rows.append(dict(unit, function=None, status="error", error=r.get("error") or "no function to check",
                                 note=None, partitions=0, barriers=0, findings=[], _seconds=secs, _cached=cached[k]))
            for kern in r["kernels"]:
                findings = [dict(f) for f in kern["findings"]]
                if known is not None:
                    mark_new(findings, e.path, kern["function"], known)
                rows.append(dict(unit, function=kern["function"], status=kern["status"], verdict=kern.get("verdict"),
                                 error=None, note=kern.get("note"),
                                 partitions=kern["partitions"], barriers=kern["barriers"], findings=findings,
                                 _seconds=secs / max(len(r["kernels"]), 1), _cached=cached[k]))
            k += 1
        for dup, orig in e.duplicates:
            rows.append(dict(base, unit=dup.label, unit_index=dup.index, start_line=dup.start_line, function=None,
                             status="duplicate", error=None, partitions=0, barriers=0, findings=[],
                             note=f"same text as unit {orig.index} ({orig.label}, line {orig.start_line}): checked there",
                             same_as=orig.index))
    rows.sort(key=lambda r: (files_order[r["path"]], r["unit_index"] if r["unit_index"] is not None else -1))
    return rows


def audit_document(paths: list[str], *, jobs: int | None = None, simulate: bool = True, steps: int | None = DEFAULT_AUDIT_STEPS,
                   cache_dir: str | None = None, use_cache: bool = True, baseline: str | None = None,
                   progress_factory=None, read_stdin=None) -> dict[str, Any]:
    """The audit of `paths` as a plain document (see the module docstring). `progress_factory`
    (total) -> advance(n) shows progress; None shows nothing."""
    start = time.monotonic()
    files = expand_paths(paths, read_stdin)
    known = read_baseline(baseline) if baseline else None
    entries = [discover_file(f) for f in files]
    dedupe_snapshots(entries)
    tasks = [t for e in entries for t in e.tasks]
    n_units = len(tasks) + sum(len(e.duplicates) for e in entries)
    root = None
    if use_cache:
        root = Path(cache_dir) if cache_dir else default_cache_dir()
    cache = ResultCache(root)
    advance = progress_factory(len(tasks)) if progress_factory else None
    results, cached = run_units(tasks, jobs=jobs or os.cpu_count() or 1, simulate=simulate, steps=steps,
                                cache=cache, progress=advance)
    rows = _rows(entries, dict(enumerate(results)), dict(enumerate(cached)), known)
    for r in rows:
        r["top"] = _top(r["findings"])
    findings = [f for r in rows for f in r["findings"]]
    sev = Counter(f["severity"] for f in findings)
    new_errors = sum(1 for f in findings if f["severity"] == "error" and f.get("new", True))
    summary = {
        "files": len(files),
        "files_unreadable": sum(1 for e in entries if e.error is not None),
        "files_without_ws": sum(1 for e in entries if e.error is None and not e.tasks),
        "units": n_units,
        "kernels": sum(1 for r in rows if r["status"] in ("ok", "bound_reached")),
        "units_failed": sum(1 for r in rows if r["status"] == "error" and r["unit"] is not None),
        "bound_reached": sum(1 for r in rows if r["status"] == "bound_reached"),
        # check's three answers per kernel (analyses/model/judgement.py): never read not judged as clean
        "verdicts": {v: sum(1 for r in rows if r.get("verdict") == v) for v in VERDICTS},
        "duplicates": sum(1 for r in rows if r["status"] == "duplicate"),
        "errors": sev["error"], "warnings": sev["warning"], "infos": sev["info"],
        "new_errors": new_errors,
        "baselined": sum(1 for f in findings if f.get("new") is False),
    }
    doc = {
        "schema": SCHEMA,
        "input": {"paths": list(paths), "files": files},
        "version": __version__,
        "options": {"simulate": simulate, "budget_steps": steps, "baseline": baseline},
        "summary": summary,
        "rows": rows,
    }
    doc["_stats"] = {"seconds": round(time.monotonic() - start, 2), "cache_hits": cache.hits,
                     "cache_misses": cache.misses, "cache_dir": str(root) if root else None}
    return doc


def public(doc: dict[str, Any]) -> dict[str, Any]:
    """The document without the per-run timings and cache stats (underscore keys)."""
    out = {k: v for k, v in doc.items() if not k.startswith("_")}
    out["rows"] = [{k: v for k, v in r.items() if not k.startswith("_")} for r in doc["rows"]]
    return out


def baseline_entries(doc: dict[str, Any]) -> list[str]:
    return [scoped(r["path"], r["function"], f["fingerprint"]) for r in doc["rows"] for f in r["findings"]]


def save_baseline(doc: dict[str, Any], target: str) -> int:
    return write_baseline(target, baseline_entries(doc))


def exit_code(doc: dict[str, Any]) -> int:
    return 1 if doc["summary"]["new_errors"] else 0


def render_output(doc: dict[str, Any], fmt: str) -> str | None:
    """The document in a machine format (None for text, which prints a table)."""
    import json

    if fmt == "json":
        return json.dumps(public(doc), indent=1) + "\n"
    if fmt == "sarif":
        from ..render.sarif import sarif_document

        return json.dumps(sarif_document(public(doc)), indent=1) + "\n"
    if fmt == "junit":
        from ..render.junit import junit_xml

        return junit_xml(public(doc))
    return None


# -- text -------------------------------------------------------------------------------------
def _top_cell(f: dict[str, Any] | None) -> str:
    if f is None:
        return "-"
    mark = "" if f.get("new", True) else " (baselined)"
    line = min(f["lines"]) if f["lines"] else "-"
    return f"{f['severity'].upper()} {f['kind']} L{line}{mark}"


def render_audit_text(doc: dict[str, Any], write: Callable[[str], None]) -> None:
    from rich.table import Table

    from ..render.console import console

    table = Table(show_edge=False, pad_edge=False, box=None, header_style=None)
    for col, kw in (("file", {}), ("unit", {}), ("kernel", {}), ("parts", {"justify": "right"}),
                    ("barriers", {"justify": "right"}), ("err", {"justify": "right"}), ("warn", {"justify": "right"}),
                    ("status", {}), ("top finding", {}), ("s", {"justify": "right"})):
        table.add_column(col, **kw)
    for r in doc["rows"]:
        errs = sum(1 for f in r["findings"] if f["severity"] == "error")
        warns = sum(1 for f in r["findings"] if f["severity"] == "warning")
        status = r["status"]
        top = _top_cell(r.get("top"))
        if status == "error":
            top = " ".join(str(r.get("error")).split())
        secs = "-" if "_seconds" not in r else ("cached" if r.get("_cached") else f"{r['_seconds']:.2f}")
        table.add_row(r["path"], r.get("unit") or "-", ("@" + r["function"]) if r.get("function") else "-",
                      str(r["partitions"]), str(r["barriers"]), str(errs), str(warns), status, top, secs)
    console().print(table)
    s = doc["summary"]
    st = doc.get("_stats", {})
    write("")
    write(f"{s['files']} file(s): {s['units']} unit(s) with warp specialization, {s['kernels']} kernel(s) checked, "
          f"{s['units_failed']} unit(s) failed, {s['files_unreadable']} file(s) unreadable, "
          f"{s['files_without_ws']} file(s) without warp specialization, "
          f"{s['duplicates']} repeated snapshot(s) checked once")
    write(f"findings: {s['errors']} error(s) ({s['new_errors']} new), {s['warnings']} warning(s), {s['infos']} info; "
          f"{s['baselined']} baselined; {s['bound_reached']} kernel(s) reached the simulation budget")
    v = s.get("verdicts") or {}
    write(f"verdicts: {v.get('clean', 0)} clean (judged), {v.get('findings', 0)} with findings, "
          f"{v.get('not judged', 0)} not judged")
    if st:
        write(f"{st['seconds']:.1f}s, {st['cache_hits']} cached, {st['cache_misses']} checked")
    write("result: " + ("FAIL (new error findings)" if s["new_errors"] else "ok"))


def progress_bar():
    """A rich progress bar on stderr when it is a terminal, else None (nothing when piped)."""
    if not sys.stderr.isatty():
        return None, None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("auditing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=Console(stderr=True), transient=True)

    def factory(total: int):
        bar.start()
        task = bar.add_task("audit", total=total)
        return lambda n: bar.advance(task, n)

    return bar, factory
