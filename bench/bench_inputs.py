"""Wall time and peak RSS of `barrier-viz inputs` on a large MLIR_ENABLE_DUMP log.

    .venv/bin/python bench/bench_inputs.py [FILE] [--runs N]

Runs the real console entry point in a fresh process each time (start-up included, as agents
see it) and reports the median wall time and the largest peak RSS, from `/usr/bin/time -v`
when present, else from `resource.getrusage(RUSAGE_CHILDREN)`. Issue 2 targets <= 1.5 s and
< 150 MB on the 40 MB FA dump. No assertion: it reports.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_FILE = HERE.parent.parent / "shared" / "corpus" / "real" / "fb_fa_fwd_persist_dump_sm100.txt.gz"
_MAXRSS = re.compile(r"Maximum resident set size \(kbytes\): (\d+)")
_CPU = re.compile(r"(?:User|System) time \(seconds\): ([\d.]+)")


def command(path: Path) -> list[str]:
    script = Path(sys.executable).with_name("barrier-viz")
    if script.exists():
        return [str(script), "inputs", str(path), "--format", "json"]
    return [sys.executable, "-m", "barrier_viz", "inputs", str(path), "--format", "json"]


def run_once(cmd: list[str]) -> tuple[float, float, int, float]:
    """(wall seconds, peak RSS in MB, number of units listed, CPU seconds or -1) of one run.

    CPU time (user + system) is reported next to wall time because on a busy machine the wall
    time mostly measures the other processes."""
    timer = shutil.which("time") or ("/usr/bin/time" if os.path.exists("/usr/bin/time") else None)
    full = [timer, "-v", *cmd] if timer else cmd
    t0 = time.perf_counter()
    proc = subprocess.run(full, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"inputs failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    m = _MAXRSS.search(proc.stderr) if timer else None
    if m:
        rss_mb = int(m.group(1)) / 1024
    else:  # ru_maxrss of children is the largest child so far, in KB on Linux
        rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    units = proc.stdout.count('"index"')
    cpu = sum(float(x) for x in _CPU.findall(proc.stderr)) if timer else -1.0
    return wall, rss_mb, units, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file", nargs="?", type=Path, default=DEFAULT_FILE)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    path: Path = args.file
    cmd = command(path)
    results = [run_once(cmd) for _ in range(args.runs)]
    walls = [r[0] for r in results]
    peak = max(r[1] for r in results)
    size = path.stat().st_size
    print(f"{path.name}: {size / 1e6:.1f} MB on disk, {results[0][2]} units listed, {args.runs} runs")
    print(f"  wall: median {statistics.median(walls):.2f} s (min {min(walls):.2f}, max {max(walls):.2f}); target <= 1.5 s")
    cpus = [r[3] for r in results if r[3] >= 0]
    if cpus:
        print(f"  cpu (user+sys): median {statistics.median(cpus):.2f} s; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"  peak RSS: {peak:.0f} MB; target < 150 MB")


if __name__ == "__main__":
    main()
