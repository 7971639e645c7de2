"""Time `explore` and `check` on real kernels: states explored, schedules, seconds.

Run by hand: `.venv/bin/python bench/bench_explore.py [FILES...]` (default: the FA forward
persistent TTGIR and the Hopper GEMM of ../shared/corpus). Prints medians over repeats; no
assertions (speed is measured here, not in tests). Issue target: FA explored at default bounds
in <= 10 s on this machine.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from barrier_viz.commands.check_cmd import check_document
from barrier_viz.commands.explore_cmd import explore_document
from barrier_viz.session import select

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
DEFAULT = [CORPUS / "real" / "fa_fwd_persist_sm100.ttgir", CORPUS / "gpu" / "gemm_ws_sm90_stages4" / "base.ttgir"]


def main(argv: list[str]) -> int:
    files = [Path(a) for a in argv] or [p for p in DEFAULT if p.exists()]
    if not files:
        print("no input files (pass paths, or provide ../shared/corpus)")
        return 0
    print(f"{'file':45} {'explore s (median)':>18} {'states':>8} {'schedules':>9} {'result':>20} {'check s':>8}")
    for path in files:
        times, docs = [], []
        for _ in range(3):
            sel = select(str(path), require_function=True)
            t = time.perf_counter()
            docs.append(explore_document(sel))
            times.append(time.perf_counter() - t)
        t = time.perf_counter()
        check_document(select(str(path), require_function=True))
        check_s = time.perf_counter() - t
        d = docs[-1]
        print(f"{path.name[:45]:45} {statistics.median(times):18.2f} {d.states:8d} {len(d.schedules):9d} "
              f"{d.result:>20} {check_s:8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
