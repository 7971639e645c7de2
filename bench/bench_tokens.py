"""Token economy of the barrier-visualization skill: what the agent reads against the IR's size.

    .venv/bin/python bench/bench_tokens.py [CORPUS_DIR] [--compare] [--limit PCT]

For each final TTGIR (`*.ttgir`) in CORPUS_DIR (default `../shared/corpus/real/`, next to the
checkout; BARRIER_VIZ_CORPUS overrides), this runs the commands SKILL.md's workflow tells the
agent to read, exactly as the CLI prints them (through Typer's in-process runner), and counts
their characters against the IR file's characters:

- `barrier-viz report FILE --format compact` (always: the digest of every section);
- `barrier-viz inputs FILE` (only when the digest says the file holds more than one unit: the
  workflow picks the unit with it then).

The per-section drill-downs the workflow allows (`phases`, `barriers`, ... on one barrier) are
optional and not counted. `--compare` also measures `report` (Markdown) and `report --format
json`, the outputs the workflow does not ask the agent to read, to show what the digest saves.

The acceptance target is <= 25% of the IR's characters for every file; the script prints one
row per file, the total ratio and the worst file, and exits 1 when a file is over `--limit`.
When the corpus is absent it says so and exits 0.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_CORPUS = Path(os.environ.get("BARRIER_VIZ_CORPUS", HERE.parent.parent / "shared" / "corpus")) / "real"
UNITS_RE = re.compile(r"^barrier-viz digest: .* unit \d+ of (\d+)")


def run_cli(args: list[str]) -> str:
    from typer.testing import CliRunner

    from barrier_viz.cli import app

    result = CliRunner().invoke(app, args)
    if result.exit_code not in (0, 1):  # 1: findings with errors; the output is complete
        raise RuntimeError(f"barrier-viz {' '.join(args)} exited {result.exit_code}: {result.output[-400:]}")
    return result.stdout


def workflow_reads(path: Path) -> dict[str, int]:
    """Characters of each output the workflow reads for this file."""
    digest = run_cli(["report", str(path), "--format", "compact"])
    reads = {"digest": len(digest)}
    m = UNITS_RE.match(digest)
    if m is None or int(m.group(1)) > 1:
        reads["inputs"] = len(run_cli(["inputs", str(path)]))
    return reads


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--compare", action="store_true", help="also measure report (md) and report --format json")
    ap.add_argument("--limit", type=float, default=25.0, help="per-file target, percent of the IR's characters")
    args = ap.parse_args(argv)

    files = sorted(args.corpus.glob("*.ttgir")) if args.corpus.is_dir() else []
    if not files:
        print(f"no final TTGIR under {args.corpus}; nothing to measure")
        return 0

    head = f"{'file':58} {'IR chars':>9} {'read':>7} {'ratio':>6}"
    if args.compare:
        head += f" {'md':>7} {'md%':>5} {'json':>8} {'json%':>6}"
    print(head)
    total_ir = total_read = 0
    worst = (0.0, "")
    over = []
    t0 = time.perf_counter()
    for path in files:
        ir = len(path.read_text(encoding="utf-8", errors="replace"))
        reads = workflow_reads(path)
        read = sum(reads.values())
        ratio = 100.0 * read / ir
        total_ir += ir
        total_read += read
        worst = max(worst, (ratio, path.name))
        if ratio > args.limit:
            over.append(path.name)
        row = f"{path.name[:58]:58} {ir:9d} {read:7d} {ratio:5.1f}%"
        if args.compare:
            md = len(run_cli(["report", str(path)]))
            js = len(run_cli(["report", str(path), "--format", "json"]))
            row += f" {md:7d} {100.0 * md / ir:4.0f}% {js:8d} {100.0 * js / ir:5.0f}%"
        print(row + ("  OVER" if ratio > args.limit else ""), flush=True)
    print()
    print(f"{len(files)} files in {time.perf_counter() - t0:.0f}s; total: {total_read} of {total_ir} IR characters read "
          f"= {100.0 * total_read / total_ir:.1f}%; worst {worst[0]:.1f}% ({worst[1]}); target <= {args.limit:g}% per file: "
          + ("met" if not over else f"missed by {len(over)} file(s): {', '.join(over)}"))
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
