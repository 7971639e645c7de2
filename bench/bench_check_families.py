"""`check` on every families file: CPU seconds (one core) and its verdicts, against a baseline.

    .venv/bin/python bench/bench_check_families.py [--corpus DIR] [--save OUT.json] [--baseline IN.json]

Issue 22 makes `check`'s simulation runs carry happens-before (vector clocks) for every kernel,
so every race seen on `check`'s own schedules is a finding. That costs time, and it can add
verdicts. This script measures both on `families/` (unmodified tutorial outputs, 0 errors
expected on every file):

* CPU seconds of `check` per file (parse + static rules + simulation + input points; the parse
  cache is cleared first), median and max over the files (target: <= 3 s median, <= 10 s max);
* per file, the error and warning findings (kind and lines).

`--save` writes both as JSON; `--baseline` compares with a saved run (of the code before a
change): per-file time ratio (median and max) and every verdict that appeared or went away.
No assertion: it reports.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_check import DEFAULT_CORPUS, _clear_caches  # noqa: E402 - the bench helpers, one copy


def check_file(path: Path) -> dict:
    """CPU seconds of `check` on `path` and its error/warning findings."""
    from barrier_viz.commands.check_cmd import check_document
    from barrier_viz.session import select

    _clear_caches()
    t0 = time.process_time()
    doc, _ = check_document(select(str(path), require_function=True))
    seconds = time.process_time() - t0
    verdicts = sorted(f"{f.severity.value} {f.kind} {','.join(map(str, f.lines))}" for f in doc.findings
                      if f.severity.value != "info")
    return {"seconds": round(seconds, 3), "errors": doc.summary.errors, "verdicts": verdicts,
            "bound": (doc.simulation or {}).get("race_bound")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--save", type=Path)
    ap.add_argument("--baseline", type=Path)
    args = ap.parse_args()
    files = sorted((args.corpus / "families").rglob("*.ttgir"))
    if not files:
        print(f"no corpus at {args.corpus}: nothing to measure")
        return
    print(f"check on {len(files)} families files, CPU seconds, load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} CPUs")
    results = {}
    for path in files:
        rel = path.relative_to(args.corpus).as_posix()
        results[rel] = check_file(path)
    secs = [r["seconds"] for r in results.values()]
    slowest = max(results, key=lambda k: results[k]["seconds"])
    print(f"median {statistics.median(secs):.2f} s, max {max(secs):.2f} s ({slowest}), total {sum(secs):.1f} s")
    erring = {k: r for k, r in results.items() if r["errors"]}
    print(f"files with an error: {len(erring)}")
    for k, r in erring.items():
        print(f"  {k}: " + "; ".join(v for v in r["verdicts"] if v.startswith("error")))
    if args.baseline and args.baseline.exists():
        base = json.loads(args.baseline.read_text())
        ratios = [results[k]["seconds"] / max(base[k]["seconds"], 1e-3) for k in results if k in base]
        print(f"\nagainst {args.baseline}: time ratio median {statistics.median(ratios):.2f}x, max {max(ratios):.2f}x")
        for k in results:
            if k not in base:
                continue
            new, gone = set(results[k]["verdicts"]) - set(base[k]["verdicts"]), set(base[k]["verdicts"]) - set(results[k]["verdicts"])
            for v in sorted(new):
                print(f"  + {k}: {v}")
            for v in sorted(gone):
                print(f"  - {k}: {v}")
    if args.save:
        args.save.write_text(json.dumps(results, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
