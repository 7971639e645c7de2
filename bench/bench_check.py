"""CPU time of `check` (parse + static rules + simulation) per file, against Triton's C++ parse.

    .venv/bin/python bench/bench_check.py [--corpus DIR] [--runs N] [--top K] [--triton-python PY]

Reports, on one core (CPU time of this process, so other load on the machine does not count):

* the slowest K files of `families/` (issue 11: <= 5 s each), each as a ratio to Triton's own
  `parse_mlir_module` of the same file, timed in a side interpreter that has triton
  (BARRIER_VIZ_TRITON_PYTHON, or this one when it imports triton; without one it says so and
  prints seconds only);
* `check` on the lit causal-attention file and the two real files that used to take 100-218 s
  and 7-13 s (issue 14: <= 3 s each).

Each file is checked in a fresh interpreter state (the parse cache is cleared) and the median of
N runs is kept. No assertion: it reports.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_CORPUS = Path(os.environ.get("BARRIER_VIZ_CORPUS", HERE.parent.parent / "shared" / "corpus"))
SLOW_BEFORE = (
    "lit/Hopper/WarpSpecialization/partition-scheduling-meta-causal-attention.mlir",
    "real/fb-sm100__gemm_persistent__flatten.ttgir",
    "real/up-sm100__gemm_while__outer_while_inner_ws.ttgir",
)


def check_cpu_seconds(path: Path, runs: int) -> tuple[float, str]:
    """Median CPU seconds of `check` on `path` (every unit of a lit file), and the outcome."""
    from barrier_viz.commands.check_cmd import check_document
    from barrier_viz.inputs import open_input
    from barrier_viz.session import select

    samples, outcome = [], ""
    for _ in range(runs):
        _clear_caches()
        t0 = time.process_time()
        units = len(open_input(str(path)).units)
        errors, bounded = 0, 0
        for u in range(units):
            try:
                sel = select(str(path), unit=str(u) if units > 1 else None, require_function=True)
            except Exception:  # noqa: BLE001 - invalid units (lit invalid.mlir) are an error for the CLI, not here
                continue
            if sel.function is None:
                continue
            doc, res = check_document(sel)
            errors += doc.summary.errors
            bounded += bool(res.deadlocks and res.deadlocks.bound_reached)
        samples.append(time.process_time() - t0)
        outcome = f"{units} unit(s), {errors} error(s)" + (f", {bounded} bound_reached" if bounded else "")
    return statistics.median(samples), outcome


def _clear_caches() -> None:
    """Parse every run (the CLI parses once per process): the parse is part of `check`'s cost."""
    import barrier_viz.inputs as inputs

    inputs._CACHE.clear()


def triton_python(explicit: str | None) -> str | None:
    candidate = explicit or os.environ.get("BARRIER_VIZ_TRITON_PYTHON")
    if candidate:
        return candidate
    return sys.executable if importlib.util.find_spec("triton") is not None else None


def cpp_cpu_seconds(path: Path, runs: int, python: str) -> float | None:
    proc = subprocess.run([python, str(HERE / "triton_side.py"), "time", str(path), "--runs", str(runs)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return None
    return statistics.median(json.loads(proc.stdout)["cpu_seconds"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("--triton-python")
    args = ap.parse_args()
    families = sorted((args.corpus / "families").rglob("*.ttgir"))
    if not families:
        print(f"no corpus at {args.corpus}: nothing to measure")
        return
    print(f"check, CPU seconds (median of {args.runs}), load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    timed = []
    for path in families:
        seconds, outcome = check_cpu_seconds(path, args.runs)
        timed.append((seconds, path, outcome))
    timed.sort(key=lambda t: -t[0])
    python = triton_python(args.triton_python)
    if python is None:
        print("triton C++ parser: no side interpreter with triton (set BARRIER_VIZ_TRITON_PYTHON); seconds only")
    print(f"\nslowest {args.top} of {len(timed)} families files (issue 11: <= 5 s):")
    for seconds, path, outcome in timed[:args.top]:
        ratio = ""
        if python is not None:
            theirs = cpp_cpu_seconds(path, max(3, args.runs), python)
            ratio = f"  {seconds / theirs:7.0f}x Triton parse ({theirs * 1000:.1f} ms)" if theirs else "  (Triton refused it)"
        print(f"  {seconds:6.2f} s  {path.relative_to(args.corpus)}{ratio}  [{outcome}]")
    print(f"  all {len(timed)} files: {sum(t[0] for t in timed):.1f} s in total, max {timed[0][0]:.2f} s")
    print("\nfiles that used to be slow (issue 14: <= 3 s):")
    for rel in SLOW_BEFORE:
        path = args.corpus / rel
        if not path.exists():
            print(f"  {rel}: absent")
            continue
        seconds, outcome = check_cpu_seconds(path, args.runs)
        print(f"  {seconds:6.2f} s  {rel}  [{outcome}]")


if __name__ == "__main__":
    main()
