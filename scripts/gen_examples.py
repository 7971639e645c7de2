"""Generate the skill's EXAMPLES.md from real `barrier-viz report` runs.

    .venv/bin/python scripts/gen_examples.py            # rewrite tools/barrier_viz/skill/EXAMPLES.md
    .venv/bin/python scripts/gen_examples.py --check    # exit 1 if the file is stale

Each example is an input the project ships (kernels compiled by the eval generator under
`evals/cases/`, hand-written fixtures under `tests/fixtures/`), a short intro in our words, and
the deterministic report `barrier-viz report INPUT` prints for it. The command runs in-process
from the repository root with the input's relative path, so the file does not depend on where
the checkout lives. Code blocks longer than MAX_BLOCK_LINES are cut with a note naming the
command that prints them in full; the rest is the report byte for byte, with its title dropped
and its section headings moved down one level to nest under the example.

Eval cases are named by a glob (mutated cases carry the mutated line in their name, which the
eval generator may renumber); each glob must match at least one directory, and the first in
sorted order is used. tests/test_examples.py regenerates the file in-process and fails when the
committed one differs: after changing a command's output, rerun this script.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "tools" / "barrier_viz" / "skill" / "EXAMPLES.md"
MAX_BLOCK_LINES = 60
TRIM_SLACK = 15  # a block at most this much longer is kept whole: a cut must save something


@dataclass(frozen=True)
class Example:
    title: str
    pattern: str  # glob relative to the repository root
    intro: str


EXAMPLES: tuple[Example, ...] = (
    Example(
        "Blackwell persistent GEMM (Meta AutoWS, sm100)",
        "evals/cases/fbtriton-metaws.gemm_persistent_v0.sm100.base/input.ttgir.gz",
        """\
The eval generator's `gemm_persistent` kernel, compiled by fbtriton with Meta's AutoWS
(`TRITON_USE_META_WS=1`) for sm100; the case's `expected.yaml` records the compiler version,
flags and constexprs. Three partitions: a one-warp TMA producer, a one-warp MMA partition and a
four-warp epilogue in the default region. What to look for: the forward TMA edges into the MMA
(expect plus copy, bytes checked in the shared data map), the `tc_gen5_commit` edge that hands
the TMEM accumulator to the epilogue, and the backward edges into the next tile (the MMA's
barrier list releasing SMEM slots, the epilogue's `arrive_barrier` releasing the accumulator).
The coverage table's accumulator row is ✓: the MMA zeroes it itself (`useD` false on the first
iteration) and nothing else stores zeros. No findings, and every simulated schedule runs the
loops through without blocking.""",
    ),
    Example(
        "Attention forward, persistent (Meta AutoWS, sm100)",
        "evals/cases/fbtriton-metaws.attn_fwd_persistent_v0.sm100.base/input.ttgir.gz",
        """\
A persistent flash-attention forward (`attn_fwd_persistent`, D=64, BM=128, BN=64) compiled by
fbtriton with AutoWS for sm100: five partitions (TMA loads of q, k and v; MMA; softmax;
accumulator correction in the default region; epilogue). The long sections are cut; the
coverage tables are the part to study. buffer.id 5 packs `acc` (columns 0-31), `alpha` (column
32) and `l_i` (column 33) into the columns of the S accumulator, and the MMAs that write S with
`useD` false overwrite all 64 columns. Each aliased range therefore needs its reader's release
before the overwrite; every row here is ✓, each with the wait and release lines that order it.
This is the table that shows ✗ for the FA-persistent race when a backward edge is missing. The
three info findings note single-copy buffers shared across partitions (no pipelining, not a
bug).""",
    ),
    Example(
        "Hopper persistent GEMM (Meta AutoWS, sm90)",
        "evals/cases/fbtriton-metaws.gemm_persistent_v0.sm90.base/input.ttgir.gz",
        """\
The same `gemm_persistent` kernel compiled for sm90 (Hopper). There is no TMEM and no tcgen05:
the MMA is a `warp_group_dot` in the default region, which also stores the output; one
partition is empty. The only channels are TMA expect-plus-copy edges from the load partition
and explicit `arrive_barrier` backward edges that free the SMEM slots for the next iteration.
Both coverage tables are still printed, empty, with the line that says why (no column-packed
TMEM, no `tc_gen5_mma` accumulator): an absent table would look the same as a forgotten one.""",
    ),
    Example(
        "Deadlock: the only arrival on a barrier removed",
        "evals/cases/fbtriton-metaws.gemm_persistent_v0.sm100.drop_only_arrival_L*/input.ttgir.gz",
        """\
Example 1's kernel with one operation removed by the eval generator's `drop_only_arrival`
mutation: the `ttng.tc_gen5_commit` that was the only arrival on `%acc_14`, the barrier that
tells the epilogue an accumulator is ready. Compare the graph with example 1: the forward edge
`partition0 -> default` on `%acc_14` is gone and the epilogue's waits on it are listed as
unpaired. `check` reports `deadlock.no_producer`, the first of the three deadlock conditions:
the epilogue waits at the line shown for a phase that no operation can complete, and the
favorable schedule blocks there (`report --format compact` and `check` print the witness
schedule).""",
    ),
    Example(
        "Coverage ✗: redundant zero store in a persistent while loop",
        "tests/fixtures/coverage/gemm_while_zero_store.ttgir",
        """\
A hand-written TTGIR fixture from the coverage tests that reproduces the static persistent
while-loop GEMM bug. The MMA initializes its TMEM accumulator itself (`useD` false on the first
iteration), yet the default partition still zeroes the accumulator with an explicit
`tmem_store` inside the persistent `scf.while`. The operand-D row is ✗: a redundant
cross-partition channel (its own `%zero_ready` / `%zero_empty` pair, hence 4 accumulator
barriers and 2 commits instead of 2 and 1) whose barriers are each balanced, so arrive/wait
counting alone would pass it. `check` reports the race and also a parity-cadence deadlock on
`%zero_empty`, which the reverse schedule reaches: the extra channel can hang as well as race.""",
    ),
)


def resolve(pattern: str) -> str:
    """The example's input as a repository-relative posix path."""
    matches = sorted(REPO.glob(pattern))
    if not matches:
        raise FileNotFoundError(f"no input matches {pattern!r} under {REPO}; update EXAMPLES in {Path(__file__).name}")
    return matches[0].relative_to(REPO).as_posix()


def run_report(rel: str) -> str:
    """`barrier-viz report REL` as the CLI prints it, run from the repository root."""
    from typer.testing import CliRunner

    from barrier_viz.cli import app

    with contextlib.chdir(REPO):
        result = CliRunner().invoke(app, ["report", rel])
    if result.exit_code not in (0, 1):
        raise RuntimeError(f"barrier-viz report {rel} exited {result.exit_code}:\n{result.output[-2000:]}")
    return result.stdout


SECTION_COMMAND = {
    "2. Barrier dependency graph": "graph",
    "3. Index and phase analysis": "phases",
    "4. Shared data map": "buffers",
    "5. SSA value to barrier map": "barriers",
    "Coverage tables": "coverage",
}


def shape(report: str, rel: str) -> str:
    """Nest the report under an example heading and cut over-long blocks, saying where."""
    out: list[str] = []
    lines = report.rstrip("\n").split("\n")
    section = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("# "):
            i += 1
            if i < len(lines) and not lines[i].strip():
                i += 1
            continue
        if line.startswith("## "):
            section = line[3:].strip()
            out.append("###" + line[2:])
            i += 1
            continue
        if line.startswith("```"):
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            body = lines[i + 1:end]
            out.append(line)
            if len(body) > MAX_BLOCK_LINES + TRIM_SLACK:
                out.extend(body[:MAX_BLOCK_LINES])
                command = SECTION_COMMAND.get(section, "report")
                out.append(f"... [{len(body) - MAX_BLOCK_LINES} more lines trimmed in EXAMPLES.md; "
                           f"`barrier-viz {command} {rel}` prints them]")
            else:
                out.extend(body)
            out.append(lines[end])
            i = end + 1
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


HEADER = """\
<!-- Generated by scripts/gen_examples.py from `barrier-viz report` runs; do not edit by hand.
     Regenerate with: .venv/bin/python scripts/gen_examples.py -->

# Worked examples

Each example below is the deterministic report `barrier-viz report INPUT` prints for an input
the project ships, preceded by what the input is and what to look for. They show the shape a
report should have and which facts fill each section. A report you write from
`report --format compact` carries the same facts in your own tables and diagrams, plus your
phase-model reasoning and a limits paragraph. Very long blocks are cut where marked; the command
in the note prints them in full.

"""


def render() -> str:
    parts = [HEADER, "Contents:\n"]
    resolved = [(ex, resolve(ex.pattern)) for ex in EXAMPLES]
    for n, (ex, _) in enumerate(resolved, 1):
        parts.append(f"{n}. [{ex.title}](#example-{n})\n")
    parts.append("\n")
    for n, (ex, rel) in enumerate(resolved, 1):
        body = shape(run_report(rel), rel)
        parts.append(f'<a id="example-{n}"></a>\n\n## Example {n}: {ex.title}\n\n{ex.intro.strip()}\n\n{body}\n\n')
    return re.sub(r"\n{3,}", "\n\n", "".join(parts)).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if EXAMPLES.md differs from what would be written")
    args = ap.parse_args(argv)
    text = render()
    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            print(f"{OUT.relative_to(REPO)} is stale; run: .venv/bin/python scripts/gen_examples.py")
            return 1
        print(f"{OUT.relative_to(REPO)} is up to date")
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(REPO)} ({len(text)} characters, {len(EXAMPLES)} examples)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
