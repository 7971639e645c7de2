"""Time `check` with and without input points on real kernels; list what the points add.

Run by hand: `.venv/bin/python bench/bench_input_points.py [FILES...] [--repeat N]` (default:
every final `.ttgir` of ../shared/corpus/real and ../shared/corpus/families). Prints, per file,
the median seconds of `check` without input points (`--no-input-points`) and with them, the
ratio, the points simulated and any error finding the points add; then the median of the
per-file ratios and the ratio of the totals. No assertions: speed is measured here, not in tests
(issue 13's target: input points add at most 2x to check on the real outputs).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from barrier_viz.commands.check_cmd import check_document
from barrier_viz.session import select

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"


def _files() -> list[Path]:
    real = sorted(p for p in (CORPUS / "real").glob("*.ttgir"))
    fam = sorted((CORPUS / "families").rglob("*.ttgir"))
    return real + fam


def _time(path: Path, points: bool, repeat: int):
    times, doc = [], None
    for _ in range(repeat):
        sel = select(str(path), require_function=True)
        t = time.perf_counter()
        doc, _ = check_document(sel, input_points=points)
        times.append(time.perf_counter() - t)
    return statistics.median(times), doc


def main(argv: list[str]) -> int:
    repeat = 1
    if "--repeat" in argv:
        i = argv.index("--repeat")
        repeat = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    files = [Path(a) for a in argv] or _files()
    if not files:
        print("no input files (pass paths, or provide ../shared/corpus)")
        return 0
    ratios, tot_without, tot_with, added = [], 0.0, 0.0, 0
    print(f"{'file':70} {'without s':>9} {'with s':>8} {'ratio':>6} {'points':>6}  new errors")
    for path in files:
        try:
            t0, d0 = _time(path, False, repeat)
            t1, d1 = _time(path, True, repeat)
        except Exception as exc:  # noqa: BLE001 - a file we cannot check is listed, not fatal
            print(f"{path.name[:70]:70} error: {type(exc).__name__}: {exc}"[:160])
            continue
        before = {(f.kind, tuple(f.lines)) for f in d0.findings if f.severity.value == "error"}
        new = [f for f in d1.findings if f.severity.value == "error" and (f.kind, tuple(f.lines)) not in before]
        added += len(new)
        n = len((d1.input_points or {}).get("points", []))
        ratios.append(t1 / t0 if t0 else 1.0)
        tot_without += t0
        tot_with += t1
        name = str(path.relative_to(CORPUS)) if CORPUS in path.parents else path.name
        print(f"{name[-70:]:70} {t0:9.2f} {t1:8.2f} {ratios[-1]:6.2f} {n:6d}  "
              + "; ".join(f"{f.kind} {f.lines[:3]}" for f in new))
    if ratios:
        print(f"\n{len(ratios)} files: median ratio {statistics.median(ratios):.2f}, max {max(ratios):.2f}, "
              f"total {tot_without:.1f} s -> {tot_with:.1f} s (x{tot_with / tot_without:.2f}); new errors: {added}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
