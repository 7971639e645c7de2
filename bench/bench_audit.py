"""Time `audit` over the whole corpus: a cold run (empty cache) and a cached rerun.

Run by hand: `.venv/bin/python bench/bench_audit.py [--repeats N] [--jobs J] [--budget S] [PATHS...]`
(default: all of ../shared/corpus). Each repeat runs the CLI as a subprocess, as CI would,
with a fresh cache folder for the cold run and the same folder for the rerun. Prints medians,
the rerun/cold ratio and the row counts; no assertions (speed is measured here, not in tests).
Issue targets (issue 16): cold <= 60 s and cached rerun <= 5 s on the 2-core dev machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("BARRIER_VIZ_CORPUS", ROOT.parent / "shared" / "corpus"))


def _run(paths: list[str], cache: str, jobs: int | None, budget: float | None) -> tuple[float, dict]:
    cmd = [sys.executable, "-m", "barrier_viz", "audit", *paths, "--format", "json", "--cache-dir", cache]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    if budget is not None:
        cmd += ["--budget", str(budget)]
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.perf_counter() - t
    if proc.returncode not in (0, 1):
        raise SystemExit(f"audit failed (exit {proc.returncode}): {proc.stderr.strip()}")
    return elapsed, json.loads(proc.stdout)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--budget", type=float, default=None)
    args = ap.parse_args(argv)
    paths = args.paths or ([str(CORPUS)] if CORPUS.is_dir() else [])
    if not paths:
        print("no input (pass paths, or provide ../shared/corpus)")
        return 0
    cold, warm = [], []
    doc: dict = {}
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="bv-audit-cache-") as cache:
            t, doc = _run(paths, cache, args.jobs, args.budget)
            cold.append(t)
            t2, doc2 = _run(paths, cache, args.jobs, args.budget)
            warm.append(t2)
            if doc2 != doc:
                print("warning: the cached rerun's document differs from the cold run's")
    s = doc["summary"]
    print(f"paths: {' '.join(paths)}  (cpus: {os.cpu_count()}, jobs: {args.jobs or 'default'}, "
          f"budget: {doc['options']['budget_seconds']} s)")
    print(f"files {s['files']}, units {s['units']} ({s['duplicates']} repeated snapshots), kernels {s['kernels']}, "
          f"failed units {s['units_failed']}, bound_reached {s['bound_reached']}, "
          f"findings {s['errors']} errors / {s['warnings']} warnings / {s['infos']} info")
    mc, mw = statistics.median(cold), statistics.median(warm)
    print(f"cold run     median {mc:7.2f} s   runs: {', '.join(f'{x:.2f}' for x in cold)}")
    print(f"cached rerun median {mw:7.2f} s   runs: {', '.join(f'{x:.2f}' for x in warm)}")
    print(f"rerun / cold ratio  {mw / mc:7.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
