"""Speed of `check`, `report --format json` and `explore --format json` in two trees, in one run.

    python bench/bench_trees.py OLD_TREE NEW_TREE [--corpus DIR] [--sample N] [--slowest K]
                                [--meta RECORDS/_meta.json] [--rounds R] [--python PY]

Issues 27 and 28 ask that a change leave the commands no slower (27: a move of code) or make
them faster (28), measured before/after in one run. Timing two trees on different hours of a
shared machine measures the load as much as the code; so this script runs both trees on the same
files, interleaved (A B, then B A on the next round, so a drift of the load falls on both
equally), each command as the CLI subprocess a user runs (interpreter start and imports
included: a refactor that imports more at start-up shows here), with the environment and
command lines of `scripts/record_outputs.py` (explore without a wall-clock cut).

Measured: the CPU seconds of each child (user + system, from `os.wait4`'s rusage: the same
number as a RUSAGE_CHILDREN delta around it), so other load on the machine does not count;
runs are sequential. Per command it prints the median per-file CPU of each tree (each file's
median over the rounds), the ratio new/old of those medians, the median of the per-file ratios
and the worst file ratio. No assertion: it reports.

The sample: N files evenly spread over the sorted corpus, plus the K slowest: from a recording's
`_meta.json` (`--meta`, its CPU seconds per record) when given, else the K largest files.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from record_outputs import COMMANDS, DEFAULT_CORPUS, corpus_files, default_python, run_cli  # noqa: E402 - one copy


def sample(corpus: Path, n: int, k: int, meta: Path | None) -> list[str]:
    files = corpus_files(corpus)
    spread = files[:: max(1, len(files) // max(n, 1))][:n]
    if meta is not None:
        cpu = json.loads(meta.read_text()).get("cpu_per_record", {})
        per_file: dict[str, float] = {}
        for name, secs in cpu.items():
            f, _, what = name.rpartition("/")
            if what in COMMANDS and f in files:
                per_file[f] = per_file.get(f, 0.0) + secs
        slowest = sorted(per_file, key=lambda f: -per_file[f])[:k]
    else:
        slowest = sorted(files, key=lambda f: -(corpus / f).stat().st_size)[:k]
    return sorted(set(spread) | set(slowest))


def argv_of(command: str, path: str, explore_timeout: float) -> list[str]:
    extra = ["--timeout", f"{explore_timeout:g}"] if command == "explore" else []
    return [*COMMANDS[command], *extra, path]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old", type=Path, help="the tree before the change")
    ap.add_argument("new", type=Path, help="the tree after it")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--sample", type=int, default=12, help="files spread over the corpus (default 12)")
    ap.add_argument("--slowest", type=int, default=4, help="slowest files added to the sample (default 4)")
    ap.add_argument("--meta", type=Path, help="a record_outputs.py _meta.json: picks the slowest files by its CPU")
    ap.add_argument("--rounds", type=int, default=2, help="runs of each tree per file and command (default 2)")
    ap.add_argument("--commands", default=",".join(COMMANDS), help="comma-separated subset of " + ",".join(COMMANDS))
    ap.add_argument("--python", help="interpreter for both trees (default: as record_outputs.py picks)")
    ap.add_argument("--explore-timeout", type=float, default=3600.0)
    args = ap.parse_args()
    trees = [args.old.resolve(), args.new.resolve()]
    corpus = args.corpus.resolve()
    if not corpus.is_dir():
        print(f"no corpus at {corpus}: nothing to measure")
        return
    commands = [c for c in args.commands.split(",") if c]
    files = sample(corpus, args.sample, args.slowest, args.meta)
    pythons = [args.python or default_python(t) for t in trees]
    print(f"{len(files)} files x {len(commands)} commands x {args.rounds} rounds x 2 trees, CPU seconds per run, "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs\n  old {trees[0]}\n  new {trees[1]}")
    cpu: dict[tuple[str, str, int], list[float]] = {}
    exits: dict[tuple[str, str, int], set[int]] = {}
    for f in files:
        for command in commands:
            for r in range(args.rounds):
                for t in ((0, 1) if r % 2 == 0 else (1, 0)):
                    code, _, _, secs = run_cli(pythons[t], trees[t], argv_of(command, f, args.explore_timeout),
                                               corpus, 7200)
                    cpu.setdefault((command, f, t), []).append(secs)
                    exits.setdefault((command, f, t), set()).add(code)
    print(f"\n{'command':8} {'old median':>10} {'new median':>10} {'new/old':>8} {'file ratio median':>17} "
          f"{'worst':>6}  worst file")
    for command in commands:
        per = {t: [statistics.median(cpu[(command, f, t)]) for f in files] for t in (0, 1)}
        ratios = [n / max(o, 1e-3) for o, n in zip(per[0], per[1])]
        worst = max(range(len(files)), key=lambda i: ratios[i])
        old, new = statistics.median(per[0]), statistics.median(per[1])
        print(f"{command:8} {old:9.2f}s {new:9.2f}s {new / max(old, 1e-3):7.2f}x {statistics.median(ratios):16.2f}x "
              f"{ratios[worst]:5.2f}x  {files[worst]}")
    changed = sorted(f"{c} {f}: exit {sorted(exits[(c, f, 0)])} -> {sorted(exits[(c, f, 1)])}"
                     for c in commands for f in files if exits[(c, f, 0)] != exits[(c, f, 1)])
    if changed:
        print("\nexit codes that differ between the trees (compare the outputs with scripts/record_outputs.py):")
        print("\n".join(f"  {line}" for line in changed))


if __name__ == "__main__":
    main()
