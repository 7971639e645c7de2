"""Where `check` and `report` spend their CPU: a per-phase breakdown on the slowest files of each
corpus folder, with ratios against a previous run.

    .venv/bin/python bench/bench_phases.py [--corpus DIR] [--folders families,real,gpu,lit] [--top 10]
        [--rank-from JSON] [--save OUT.json] [--baseline IN.json] [--files-from IN.json] [--no-report]

Issue 28: profile before changing anything, and keep the profile as a benchmark. Each file is
analysed in this process the way the CLI does it (its default unit; the parse cache cleared
first), once as `check` and once as `report` (which runs `check` inside and adds its sections
and their rendering). The CPU time of this process is split into phases, each counted
*exclusively* (a fact computed lazily inside a rule counts as facts, not as the rule):

* `parse` (reading, splitting and parsing the unit), `facts:<name>` (`Analysis`'s cached facts),
* `rule:<name>` (every static rule in registry order),
* `sim:bounds` (`choose_params`: the favorable runs that choose the launch), `sim:<policy>` (each
  schedule `check` runs), `races:cluster` (the cross-CTA race runs),
* `inputs:points` / `inputs:memory` (the input points' launches),
* `check:other` (joining, classification, the documents), `report:sections+render` (what
  `report` adds).

Which files: `--files-from` a saved run (the same files, for a fair ratio), else the slowest
`--top` of each folder by `--rank-from` (a bench JSON from `--save`, or the `_meta.json` of a
`scripts/record_outputs.py` recording, whose `cpu_per_record` has every file's `check`), else by
timing `check` on every file of the folder first (slow on `real/`). `--save` writes the phases
as JSON; `--baseline` prints each file's and each phase's ratio (new / old). No assertion.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from functools import cached_property
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_check import DEFAULT_CORPUS, _clear_caches  # noqa: E402 - the bench helpers, one copy

IR_SUFFIXES = (".ttgir", ".mlir", ".txt", ".gz")


class Phases:
    """Exclusive CPU seconds per phase: entering a phase pauses the one it runs inside."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.stack: list[str] = []
        self.last = time.process_time()

    def _switch(self) -> None:
        now = time.process_time()
        if self.stack:
            self.seconds[self.stack[-1]] += now - self.last
        self.last = now

    def enter(self, name: str) -> None:
        self._switch()
        self.stack.append(name)

    def leave(self) -> None:
        self._switch()
        self.stack.pop()

    def wrap(self, fn, name):
        """`fn` timed as phase `name` (a string, or a function of fn's arguments)."""
        def timed(*args, **kwargs):
            self.enter(name(*args, **kwargs) if callable(name) else name)
            try:
                return fn(*args, **kwargs)
            finally:
                self.leave()
        timed.__wrapped__ = fn
        return timed


PHASES = Phases()


def _policy(function, params=None, policy="in_order", *args, **kwargs) -> str:
    return "sim:favorable:else" if params is not None and getattr(params, "unknown_if_else", False) else f"sim:{policy}"


def install_hooks() -> None:
    """Wrap the functions that start each phase (the names the callers imported)."""
    import barrier_viz.analyses.cluster.races as cluster_races
    import barrier_viz.analyses.rules.registry as registry
    import barrier_viz.analyses.sim.deadlock as deadlock
    import barrier_viz.analyses.verdicts as verdicts
    import barrier_viz.session as session
    from barrier_viz.analysis import Analysis

    session.load_unit = PHASES.wrap(session.load_unit, "parse")
    session.open_input = PHASES.wrap(session.open_input, "parse")
    deadlock.choose_params = PHASES.wrap(deadlock.choose_params, "sim:bounds")
    deadlock.run = PHASES.wrap(deadlock.run, _policy)
    cluster_races.cluster_races = PHASES.wrap(cluster_races.cluster_races, "races:cluster")
    verdicts.explore_inputs = PHASES.wrap(verdicts.explore_inputs, "inputs:points")
    verdicts.memory_points = PHASES.wrap(verdicts.memory_points, "inputs:memory")

    def run_rules(analysis):
        found = []
        for rule in registry.RULES:
            PHASES.enter(f"rule:{rule.name}")
            try:
                found += rule.run(analysis, found)
            finally:
                PHASES.leave()
        return found

    verdicts.run_rules = run_rules
    for name, prop in list(vars(Analysis).items()):
        if isinstance(prop, cached_property):
            timed = cached_property(PHASES.wrap(prop.func, f"facts:{name}"))
            timed.__set_name__(Analysis, name)
            setattr(Analysis, name, timed)


def measure(path: Path, report: bool) -> dict:
    """Phases of `check` (and of `report`) on `path`'s default unit."""
    from barrier_viz.commands.check_cmd import check_document
    from barrier_viz.session import select

    out: dict = {}
    commands = ["check", "report"] if report else ["check"]
    for command in commands:
        _clear_caches()
        PHASES.seconds.clear()
        PHASES.stack[:] = [f"{command}:other"]
        PHASES.last = t0 = time.process_time()
        sel = select(str(path), require_function=True)
        if command == "check":
            check_document(sel)
        else:
            from barrier_viz.commands.report_cmd import Report

            PHASES.enter("report:sections+render")
            rep = Report(sel)
            rep.document().model_dump_json()
            rep.markdown()
            PHASES.leave()
        PHASES.leave()
        total = time.process_time() - t0
        out[command] = {"total": round(total, 3),
                        "phases": {k: round(v, 3) for k, v in sorted(PHASES.seconds.items(), key=lambda kv: -kv[1])}}
    return out


def folder_files(corpus: Path, folder: str) -> list[Path]:
    return sorted(p for p in (corpus / folder).rglob("*") if p.is_file() and p.name.endswith(IR_SUFFIXES))


def rank(corpus: Path, folders: list[str], top: int, rank_from: Path | None) -> dict[str, list[str]]:
    """The slowest `top` files of each folder (relative paths), by a saved run or by timing."""
    known: dict[str, float] = {}
    if rank_from is not None:
        data = json.loads(rank_from.read_text())
        if "cpu_per_record" in data:  # a record_outputs.py recording
            known = {k[:-len("/check")]: v for k, v in data["cpu_per_record"].items() if k.endswith("/check")}
        else:
            known = {rel: r["check"]["total"] for rel, r in data["files"].items()}
    chosen: dict[str, list[str]] = {}
    for folder in folders:
        rels = [str(p.relative_to(corpus)) for p in folder_files(corpus, folder)]
        if not known:
            from bench_check import check_cpu_seconds

            for rel in rels:
                known[rel] = check_cpu_seconds(corpus / rel, 1)[0]
        rels = [r for r in rels if r in known]
        chosen[folder] = sorted(rels, key=lambda r: -known[r])[:top]
    return chosen


def _ratio(new: float, old: float | None) -> str:
    return f"{new / old:5.2f}x" if old else "     -"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--folders", default="families,real,gpu,lit")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--rank-from", type=Path)
    ap.add_argument("--files-from", type=Path)
    ap.add_argument("--save", type=Path)
    ap.add_argument("--baseline", type=Path)
    ap.add_argument("--no-report", dest="report", action="store_false")
    ap.add_argument("--phases", type=int, default=6, help="phases printed per file (the largest)")
    args = ap.parse_args()
    if not args.corpus.is_dir():
        print(f"no corpus at {args.corpus}: nothing to measure")
        return
    folders = args.folders.split(",")
    base = json.loads(args.baseline.read_text()) if args.baseline else None
    if args.files_from:
        chosen = json.loads(args.files_from.read_text())["chosen"]
    else:
        chosen = rank(args.corpus, folders, args.top, args.rank_from)
    install_hooks()
    print(f"per-phase CPU seconds (exclusive), load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    results: dict[str, dict] = {}
    totals: dict[str, dict[str, float]] = {}
    for folder, rels in chosen.items():
        print(f"\n{folder}: slowest {len(rels)}")
        for rel in rels:
            try:
                got = measure(args.corpus / rel, args.report)
            except Exception as exc:  # noqa: BLE001 - a file the CLI refuses (exit 2) is reported, not fatal
                print(f"  {rel}: {type(exc).__name__}: {exc}")
                continue
            results[rel] = got
            old = (base or {}).get("files", {}).get(rel)
            for command, r in got.items():
                was = old[command] if old and command in old else None
                for phase, s in r["phases"].items():
                    totals.setdefault(command, defaultdict(float))[phase] += s
                top = ", ".join(f"{p} {s:.2f}" + (f" ({_ratio(s, was['phases'].get(p))})" if was else "")
                                for p, s in list(r["phases"].items())[:args.phases])
                print(f"  {r['total']:6.2f} s {_ratio(r['total'], was['total'] if was else None)} {command:6} {rel}\n"
                      f"           {top}")
    for command, phases in totals.items():
        old_totals: dict[str, float] = defaultdict(float)
        if base:
            for rel in results:
                for p, s in base["files"].get(rel, {}).get(command, {}).get("phases", {}).items():
                    old_totals[p] += s
        print(f"\n{command}: every phase over the {len(results)} files (CPU s, ratio new/old)")
        for p, s in sorted(phases.items(), key=lambda kv: -kv[1]):
            print(f"  {s:8.2f} {_ratio(s, old_totals.get(p))}  {p}")
        runs = [r[command]["total"] for r in results.values()]
        was = [base["files"][rel][command]["total"] for rel in results if base and rel in base["files"]]
        line = f"  total {sum(runs):.2f} s, median {statistics.median(runs):.2f}, max {max(runs):.2f}"
        if was and len(was) == len(runs):
            line += f" (before: total {sum(was):.2f}, median {statistics.median(was):.2f}, max {max(was):.2f})"
        print(line)
    if args.save:
        args.save.write_text(json.dumps({"chosen": chosen, "files": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
