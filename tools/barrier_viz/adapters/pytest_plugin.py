"""pytest plugin: every warp-specialized kernel a test run compiles, checked (`pytest --barrier-viz`).

Registered through the `pytest11` entry point and off by default: without `--barrier-viz` it only
adds its options. With it, `pytest_configure` installs a compilation listener
(adapters/listener.py) in `triton.knobs.compilation.listener`, chained to the listener already
there (tritonparse's, say), which keeps each distinct warp-specialized TTGIR the run compiles
(content hash; cache hits included, counted once). Checking is deferred to the end of the session,
so tests pay one file read per compile; there each distinct kernel is checked as `audit` checks a
file: static rules plus the schedules within `--barrier-viz-budget` interpreter steps per kernel
(default 0.5; a kernel past it is reported as `bound_reached`, never as clean), with audit's result
cache (a kernel checked by an earlier run costs nothing), its baseline (`--barrier-viz-baseline`:
only new findings count) and its JUnit / SARIF writers.

Each kernel is saved as `<kernel>.w<warps>s<stages>c<ctas>.ttgir` (one name per config, so a
baseline keeps matching across runs and machines; a second TTGIR with the same name and config
gets `.2`, ...) in `--barrier-viz-dir` (default a fresh temporary folder), which the summary
names: its `file:line` references open there. The session fails (exit 1) when a finding at or
above the level is new: `--barrier-viz` or `--barrier-viz=error` fails on errors (hangs, wrong
results), `--barrier-viz=warning` on warnings too.
"""

from __future__ import annotations

import os
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

_KEY = pytest.StashKey[dict]()
LEVELS = ("error", "warning")


def pytest_addoption(parser) -> None:
    group = parser.getgroup("barrier-viz", "barrier-viz: check every warp-specialized kernel the run compiles")
    group.addoption("--barrier-viz", nargs="?", const="error", default=None, choices=LEVELS, metavar="LEVEL",
                    help="check each warp-specialized kernel Triton compiles during the run (once per content) at "
                         "session end; fail the session on a new finding of LEVEL or worse (error, the default, or warning)")
    group.addoption("--barrier-viz-baseline", default=None, metavar="FILE",
                    help="findings already known (from --barrier-viz-write-baseline): only new ones fail the session")
    group.addoption("--barrier-viz-write-baseline", default=None, metavar="FILE",
                    help="write every finding's fingerprint to FILE")
    group.addoption("--barrier-viz-junit", default=None, metavar="FILE", help="write the results as JUnit XML")
    group.addoption("--barrier-viz-sarif", default=None, metavar="FILE", help="write the results as SARIF 2.1.0")
    group.addoption("--barrier-viz-budget", type=int, default=500_000, metavar="STEPS",
                    help="interpreter steps per kernel for the simulation, the same on every machine "
                         "(default 500000, as `audit`; past it: bound_reached; 0: none)")
    group.addoption("--barrier-viz-dir", default=None, metavar="DIR",
                    help="folder for the checked kernels' TTGIR (default: a new temporary folder)")


def pytest_configure(config) -> None:
    level = config.getoption("--barrier-viz")
    if level is None:
        return
    state: dict = {"level": level, "collector": None, "doc": None, "note": None, "seconds": 0.0}
    config.stash[_KEY] = state
    try:
        from triton import knobs
    except ImportError as exc:
        state["note"] = f"triton is not importable ({exc}): no compilation to check"
        return
    from .listener import install

    state["knobs"] = knobs
    state["collector"] = install(knobs)


def pytest_unconfigure(config) -> None:
    state = config.stash.get(_KEY, None)
    if state and state.get("collector") is not None:
        from .listener import uninstall

        uninstall(state["knobs"], state["collector"])


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus) -> None:
    state = session.config.stash.get(_KEY, None)
    if not state or state.get("collector") is None:
        return
    collector = state["collector"]
    if state["knobs"].compilation.listener is not collector:
        state["note"] = (f"the compilation listener was replaced during the run (now "
                         f"{state['knobs'].compilation.listener!r}): compiles after that were not seen")
    if not collector.kernels:
        return
    opts = session.config.getoption
    start = time.monotonic()
    folder = Path(opts("--barrier-viz-dir") or tempfile.mkdtemp(prefix="barrier-viz-"))
    names = save_kernels(collector, folder)
    doc = check_saved(folder, names, budget=opts("--barrier-viz-budget"), baseline=opts("--barrier-viz-baseline"))
    state.update(doc=doc, folder=folder, seconds=time.monotonic() - start)
    from ..commands.audit_cmd import render_output, save_baseline

    if opts("--barrier-viz-write-baseline"):
        with _cwd(folder):
            save_baseline(doc, os.path.abspath(os.path.join(session.config.invocation_params.dir,
                                                            opts("--barrier-viz-write-baseline"))))
    for option, fmt in (("--barrier-viz-junit", "junit"), ("--barrier-viz-sarif", "sarif")):
        target = opts(option)
        if target:
            Path(session.config.invocation_params.dir, target).write_text(render_output(doc, fmt), encoding="utf-8")
    if failing(doc, state["level"]) and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def save_kernels(collector, folder: Path) -> list[str]:
    """Write each kept TTGIR as `<kernel>.w<warps>s<stages>c<ctas>.ttgir` in `folder` (in the
    order first compiled); return the file names."""
    folder.mkdir(parents=True, exist_ok=True)
    names: list[str] = []
    for k in collector.kernels.values():
        c = k.config
        stem = f"{k.name}.w{c.get('num_warps', '?')}s{c.get('num_stages', '?')}c{c.get('num_ctas', '?')}"
        name, n = f"{stem}.ttgir", 1
        while name in names:
            n += 1
            name = f"{stem}.{n}.ttgir"
        (folder / name).write_bytes(k.text)
        names.append(name)
    return names


def check_saved(folder: Path, names: list[str], *, budget: int, baseline: str | None) -> dict:
    """`audit` of the saved kernels, with paths relative to `folder` (what the baseline keys on)."""
    from ..commands.audit_cmd import audit_document

    base = os.path.abspath(baseline) if baseline else None
    with _cwd(folder):
        return audit_document(names, jobs=1, steps=budget or None, baseline=base)


def failing(doc: dict, level: str) -> list[dict]:
    """The new findings at or above `level`."""
    wanted = ("error",) if level == "error" else ("error", "warning")
    return [dict(f, path=r["path"], function=r["function"]) for r in doc["rows"] for f in r["findings"]
            if f["severity"] in wanted and f.get("new", True)]


@contextmanager
def _cwd(folder: Path):
    old = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(old)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    state = config.stash.get(_KEY, None)
    if not state:
        return
    write = terminalreporter.write_line
    terminalreporter.section("barrier-viz")
    if state.get("note"):
        write(f"note: {state['note']}")
    collector = state.get("collector")
    if collector is None:
        return
    if collector.failures:
        write(f"the listener failed on {len(collector.failures)} compile(s): {collector.failures[0]}")
    doc = state.get("doc")
    if doc is None:
        write(f"{collector.compiles} compile(s), none with warp specialization: nothing to check")
        return
    s = doc["summary"]
    seen = sum(k.compiles for k in collector.kernels.values())
    write(f"{collector.compiles} compile(s): {seen} warp-specialized ({len(collector.kernels)} distinct, each checked "
          f"once), {collector.not_ws} without warp specialization; checked at session end in {state['seconds']:.1f}s "
          f"(budget {config.getoption('--barrier-viz-budget'):,} interpreter steps per kernel)")
    write(f"findings: {s['errors']} error(s) ({s['new_errors']} new), {s['warnings']} warning(s), {s['infos']} info; "
          f"{s['baselined']} baselined; {s['bound_reached']} kernel(s) reached the budget (not judged past it); "
          f"{s['units_failed']} unreadable")
    folder = state["folder"]
    worst = sorted(([f, r] for r in doc["rows"] for f in r["findings"]),
                   key=lambda fr: ({"error": 0, "warning": 1}.get(fr[0]["severity"], 2), not fr[0].get("new", True)))
    for f, r in worst[:5]:
        line = min(f["lines"]) if f["lines"] else 1
        mark = "" if f.get("new", True) else " (baselined)"
        write(f"  {folder / r['path']}:{line}: {f['severity']} {f['kind']} "
              f"@{r['function']}{mark}: {' '.join(str(f.get('message', '')).split())[:160]}")
    for r in doc["rows"]:
        if r["status"] in ("bound_reached", "error"):
            write(f"  {folder / r['path']}: {r['status']}: {r.get('note') or r.get('error')}")
    bad = failing(doc, state["level"])
    write(f"result: FAIL ({len(bad)} new finding(s) at level {state['level']})" if bad else "result: ok")
