"""Read + parse one IR file in-process with barrier-viz, and with Triton's own C++ parser.

    .venv/bin/python bench/bench_parse.py [FILE] [--runs N] [--triton-python PY]

Prints the median of N runs for our `parse_ir` (split into tree-sitter's parse, with and without
the type-body masking `ir.lexer` does, our atom walk and our structuring, so a regression shows
where it is) and for
`triton._C.libtriton.ir.parse_mlir_module`, timed inside the side interpreter
(BARRIER_VIZ_TRITON_PYTHON, or this one when it imports triton), and their ratio.
Architecture §7 targets <= 15x on the 130 KB FA final TTGIR. No assertion: it reports.
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
from typing import Callable

HERE = Path(__file__).resolve().parent
DEFAULT_FILE = HERE.parent.parent / "shared" / "corpus" / "real" / "fa_fwd_persist_sm100.ttgir"


def median_seconds(fn: Callable[[], object], runs: int, clock: Callable[[], float] = time.perf_counter) -> float:
    fn()  # warm-up: imports, grammar loading, first-touch allocation
    samples = []
    for _ in range(runs):
        t0 = clock()
        fn()
        samples.append(clock() - t0)
    return statistics.median(samples)


def ours(path: Path, runs: int) -> dict[str, float]:
    from barrier_viz.ir.lexer import _parser, lex, mask_type_bodies
    from barrier_viz.ir.parse import parse_ir

    data = path.read_bytes()
    return {
        "read+parse_ir": median_seconds(lambda: parse_ir(path.read_bytes()), runs),
        "read+parse_ir, CPU time": median_seconds(lambda: parse_ir(path.read_bytes()), runs, time.process_time),
        "tree-sitter parse, raw text": median_seconds(lambda: _parser().parse(data), runs),
        "tree-sitter parse, type bodies masked": median_seconds(lambda: _parser().parse(mask_type_bodies(data)), runs),
        "lex (mask + tree-sitter + atom walk)": median_seconds(lambda: lex(data), runs),
    }


def triton_python(explicit: str | None) -> str | None:
    candidate = explicit or os.environ.get("BARRIER_VIZ_TRITON_PYTHON")
    if candidate:
        return candidate
    return sys.executable if importlib.util.find_spec("triton") is not None else None


def cpp(path: Path, runs: int, python: str) -> tuple[float, float]:
    """Median wall and CPU seconds of Triton's parser on `path`."""
    proc = subprocess.run(
        [python, str(HERE / "triton_side.py"), "time", str(path), "--runs", str(runs)],
        capture_output=True, text=True, check=True,
    )
    out = json.loads(proc.stdout)
    return statistics.median(out["seconds"]), statistics.median(out["cpu_seconds"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file", nargs="?", type=Path, default=DEFAULT_FILE)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--triton-python")
    args = ap.parse_args()
    path: Path = args.file
    print(f"{path.name}: {path.stat().st_size / 1024:.0f} KB, median of {args.runs} runs")
    mine = ours(path, args.runs)
    for label, seconds in mine.items():
        print(f"  barrier-viz {label:<40} {seconds * 1000:8.1f} ms")
    walk = mine["lex (mask + tree-sitter + atom walk)"] - mine["tree-sitter parse, type bodies masked"]
    build = mine["read+parse_ir"] - mine["lex (mask + tree-sitter + atom walk)"]
    print(f"    of which: atom walk ~{walk * 1000:.1f} ms, structuring + locations ~{build * 1000:.1f} ms")
    print(f"  load average now: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (timings are noisy when busy)")
    python = triton_python(args.triton_python)
    if python is None:
        print("  triton C++ parser: skipped (set BARRIER_VIZ_TRITON_PYTHON to a python with triton)")
        return
    theirs, theirs_cpu = cpp(path, args.runs, python)
    print(f"  triton parse_mlir_module (C++){'':<23} {theirs * 1000:8.1f} ms")
    print(f"  triton parse_mlir_module (C++), CPU time{'':<13} {theirs_cpu * 1000:8.1f} ms")
    print(f"  ratio barrier-viz / C++: {mine['read+parse_ir'] / theirs:.1f}x wall, "
          f"{mine['read+parse_ir, CPU time'] / theirs_cpu:.1f}x CPU (target <= 15x)")


if __name__ == "__main__":
    main()
