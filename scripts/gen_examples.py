"""Generate the skill's EXAMPLES.md and its full example reports from real `barrier-viz` runs.

    .venv/bin/python scripts/gen_examples.py            # rewrite EXAMPLES.md and reference/report-*.md
    .venv/bin/python scripts/gen_examples.py --check    # exit 1 if any of them is stale

EXAMPLES.md is what an agent reads first, so it stays short: one worked example per headline
outcome a finding can have (no finding, hang, wrong results, hang or wrong results depending on
timing, harmless), each the `check` output for a shipped input plus the digest block that
explains it, framed by what the input is and how to read the verdict. The five full reports
(`barrier-viz report INPUT`, the shape a written report should have) go to
`skill/reference/report-*.md`, one file each, read only when the shape of a section is needed.

Each input is one the project ships (kernels compiled by the eval generator under
`evals/cases/`, hand-written fixtures under `tests/fixtures/`). Commands run in-process from the
repository root with the input's relative path, so the files do not depend on where the checkout
lives. In a full report, code blocks longer than MAX_BLOCK_LINES are cut with a note naming the
command that prints them in full; the rest is the report byte for byte, with its title dropped
and its section headings moved down one level to nest under the example.

Eval cases are named by a glob (mutated cases carry the mutated line in their name, which the
eval generator may renumber); each glob must match at least one directory, and the first in
sorted order is used. tests/test_examples.py regenerates every file in-process and fails when a
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
SKILL = REPO / "tools" / "barrier_viz" / "skill"
OUT = SKILL / "EXAMPLES.md"
REFERENCE = SKILL / "reference"
MAX_CHARS = 20_000  # EXAMPLES.md budget: it is read before any tool output, so it must stay short (six worked examples: one per outcome, one launch outside its contract)
MAX_BLOCK_LINES = 60
TRIM_SLACK = 15  # a block at most this much longer is kept whole: a cut must save something


@dataclass(frozen=True)
class Example:
    """A full report, written to reference/report-<slug>.md."""

    slug: str
    title: str
    pattern: str  # glob relative to the repository root
    intro: str


@dataclass(frozen=True)
class Worked:
    """A short worked example in EXAMPLES.md: `check` output, one digest block, how to read it."""

    outcome: str  # the headline outcome it illustrates (or "no finding")
    title: str
    pattern: str
    intro: str
    block: str  # the digest block (heading prefix, e.g. "2 graph") that explains the verdict
    reading: str
    rows: tuple[str, ...] = ()  # keep only the block's rows starting with one of these (with their indented lines)
    args: tuple[str, ...] = ()  # extra `check` options (a user's launch: --args ...)


EXAMPLES: tuple[Example, ...] = (
    Example(
        "gemm-persistent-sm100",
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
        "attn-fwd-persistent-sm100",
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
        "gemm-persistent-sm90",
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
        "deadlock-no-producer",
        "Deadlock: the only arrival on a barrier removed",
        "evals/cases/fbtriton-metaws.gemm_persistent_v0.sm100.drop_only_arrival_L*/input.ttgir.gz",
        """\
The Blackwell persistent GEMM's kernel (report-gemm-persistent-sm100.md) with one operation removed by the eval generator's `drop_only_arrival`
mutation: the `ttng.tc_gen5_commit` that was the only arrival on `%acc_14`, the barrier that
tells the epilogue an accumulator is ready. Compare the graph with that report's: the forward edge
`partition0 -> default` on `%acc_14` is gone and the epilogue's waits on it are listed as
unpaired. `check` reports `deadlock.no_producer`, the first of the three deadlock conditions:
the epilogue waits at the line shown for a phase that no operation can complete, and the
favorable schedule blocks there (`report --format compact` and `check` print the witness
schedule).""",
    ),
    Example(
        "coverage-zero-store",
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


CASES = "evals/cases/fbtriton-metaws.gemm_persistent_v0.sm100"

WORKED: tuple[Worked, ...] = (
    Worked(
        "no finding",
        "A correct Blackwell persistent GEMM",
        f"{CASES}.base/input.ttgir.gz",
        """\
The eval generator's `gemm_persistent` kernel, compiled by fbtriton with Meta's AutoWS for
sm100: a TMA producer, an MMA partition and an epilogue in the default region.""",
        "2 graph",
        """\
No finding, and every simulated schedule ran the loops through (`completed`, `covered`): say
"No barrier issues found" and list what was checked. The graph shows why: every forward edge
("data ready": TMA expect plus copy, the MMA's commit) has its backward edge ("slot free
again", `next-iter`), so no ring can be refilled before its reader released it.""",
    ),
    Worked(
        "hang",
        "Hang: the only arrival on a barrier removed",
        f"{CASES}.drop_only_arrival_L*/input.ttgir.gz",
        """\
The same kernel with the `tc_gen5_commit` that was the only arrival on the accumulator-ready
barrier removed (the eval generator's `drop_only_arrival` mutation).""",
        "2 graph",
        """\
`deadlock.no_producer -> hang`: the first condition of the phase model, with the witness
schedule (where each partition is stuck, which parity it awaits, how many phases the slot has
completed). In the graph the epilogue's waits on that barrier are listed as unpaired: the edge
that fed them is gone. The fix names the missing arrival.""",
    ),
    Worked(
        "wrong results",
        "Wrong results: a redundant zero store of the accumulator",
        f"{CASES}.zero_store_L*/input.ttgir.gz",
        """\
The same kernel with an explicit zero `tmem_store` of the TMEM accumulator added in the
epilogue, inside the persistent loop, although the MMA initializes the accumulator itself
(`useD` false on its first iteration).""",
        "coverage",
        """\
`race.redundant_zero_store -> wrong results`: every barrier is balanced and every schedule
completes, which is why arrive/wait counting passes this kernel. The operand-D coverage row is
✗: nothing orders the store before the next tile's first MMA, so the store can wipe a tile's
partial sums. Report the row, its lines and the fix (drop the store).""",
    ),
    Worked(
        "hang or wrong results, depending on timing",
        "Timing-dependent: a dropped data wait",
        f"{CASES}.drop_wait_data_L220/input.ttgir.gz",
        """\
The same kernel with the MMA partition's first wait on a TMA `full` barrier removed (the
`drop_wait_data` mutation).""",
        "3 phases",
        rows=("%acc_3@", "%a_10@"),
        reading="""\
`race.unsynchronized_read -> hang or wrong results, depending on timing`: the MMA can read a
slot before its TMA data lands (wrong results) and, released too early, lets the producer run a
phase ahead; only the round-robin schedule then blocks (the witness), the others complete. In
the phases block the barrier has one consumer wait fewer than its twin. Report it as a race
with a possible hang, not as a deadlock: no schedule-independent condition holds.""",
    ),
    Worked(
        "harmless",
        "Harmless: a duplicated wait",
        f"{CASES}.dup_wait_L*/input.ttgir.gz",
        """\
The same kernel with the producer's empty-slot wait duplicated (the `dup_wait` mutation).""",
        "3 phases",
        rows=("%acc@",),
        reading="""\
`wait.redundant -> harmless` (info): the second wait polls the parity the first one already
saw complete, so it passes at once; the phases block shows both waits on one line range with
the same formula. Mention it as over-synchronization; it is no reason to call a hang.""",
    ),
    Worked(
        "hang (outside the launch contract)",
        "A launch outside the contract",
        "tests/fixtures/launch/floor_blocks_peeled.ttgir",
        """\
A hand-written two-partition ring whose loops run `N // 64` times (`tt.divisibility = 16` on
`N`); the consumer peels its first wait. Asked about `N=32`, `check` simulates that launch.""",
        "findings",
        rows=("simulation", "input points"),
        args=("--args", "N=32"),
        reading="""\
The contract lists what the simulated launches assume, each an `IR fact` (`tt.divisibility`,
`llvm.intr.assume`) or `inferred` by the tool, with why; inside it (the digest) every schedule
and input point completes. `N=32` breaks only an inference (a
partial block is dropped), so it is simulated and its hang is `Hangs if the launch contract is
broken`, verdict `not judged`: report a precondition the host must assert (`N % 64 == 0`), not a
bug of the kernel. A value breaking an IR fact (`N=8`) is refused: another compilation.""",
    ),
)


def resolve(pattern: str) -> str:
    """The example's input as a repository-relative posix path."""
    matches = sorted(REPO.glob(pattern))
    if not matches:
        raise FileNotFoundError(f"no input matches {pattern!r} under {REPO}; update EXAMPLES in {Path(__file__).name}")
    return matches[0].relative_to(REPO).as_posix()


def run_cli(args: list[str]) -> str:
    """`barrier-viz ARGS` as the CLI prints it, run from the repository root."""
    from typer.testing import CliRunner

    from barrier_viz.cli import app

    with contextlib.chdir(REPO):
        result = CliRunner().invoke(app, args, env={"COLUMNS": "100"})
    if result.exit_code not in (0, 1, 4):  # 4: not judged (a launch outside the contract)
        raise RuntimeError(f"barrier-viz {' '.join(args)} exited {result.exit_code}:\n{result.output[-2000:]}")
    return result.stdout


def run_report(rel: str) -> str:
    return run_cli(["report", rel])


def digest_block(rel: str, prefix: str, rows: tuple[str, ...] = ()) -> str:
    """One `##` block of `report --format compact` (heading included); with `rows`, only the
    rows that start with one of them and the indented lines under those."""
    out: list[str] = []
    for line in run_cli(["report", rel, "--format", "compact"]).splitlines():
        if line.startswith("## "):
            if out:
                break
            if line[3:].startswith(prefix):
                out.append(line)
        elif out:
            out.append(line)
    if not out:
        raise ValueError(f"the digest of {rel} has no block starting {prefix!r}")
    if rows:
        kept, keep = out[:1], False
        for line in out[1:]:
            if not line.startswith(" "):
                keep = line.startswith(rows)
            if keep:
                kept.append(line)
        if len(kept) == 1:
            raise ValueError(f"no row of the {prefix!r} block of {rel} starts with {rows}")
        kept.append("... (rows of other barriers left out)")
        out = kept
    return "\n".join(out)


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
                out.append(f"... [{len(body) - MAX_BLOCK_LINES} more lines trimmed here; "
                           f"`barrier-viz {command} {rel}` prints them]")
            else:
                out.extend(body)
            out.append(lines[end])
            i = end + 1
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


REPORT_HEADER = """\
<!-- Generated by scripts/gen_examples.py from `barrier-viz report` runs; do not edit by hand.
     Regenerate with: .venv/bin/python scripts/gen_examples.py -->

"""

HEADER = """\
<!-- Generated by scripts/gen_examples.py from `barrier-viz` runs; do not edit by hand.
     Regenerate with: .venv/bin/python scripts/gen_examples.py -->

# Worked examples

One short example per headline outcome a finding can have. Each is the `check` output for an
input the project ships, the digest block (`report --format compact`) that shows the cause, and
how to turn the verdict into the report's findings. Every finding's kind is followed by its
outcome (`-> hang`, `-> wrong results`, ...): lead with it.

"""


def anchor(heading: str) -> str:
    """The fragment GitHub (and most Markdown viewers) give a heading: lowercase, punctuation
    dropped, spaces to hyphens."""
    text = "".join(ch for ch in heading.strip().lower() if ch.isalnum() or ch in " -_")
    return text.replace(" ", "-")


def headings(text: str, level: str) -> list[str]:
    """The headings of one level (`## `, `### `) outside code blocks, in order."""
    out, code = [], False
    for line in text.split("\n"):
        if line.startswith("```"):
            code = not code
        elif not code and line.startswith(level + " "):
            out.append(line[len(level) + 1:].strip())
    return out


def with_contents(text: str, level: str) -> str:
    """`text` with a table of contents of its `level` headings right under its title: reference
    files over 100 lines open with one, so an agent can jump to the part it needs."""
    lines = text.split("\n")
    title = next(i for i, line in enumerate(lines) if line.startswith("# "))
    toc = ["", "Contents:", ""] + [f"- [{h}](#{anchor(h)})" for h in headings(text, level)]
    return "\n".join(lines[:title + 1] + toc + lines[title + 1:])


def report_name(ex: Example) -> str:
    return f"report-{ex.slug}.md"


def render_report(ex: Example) -> str:
    """reference/report-<slug>.md: the full deterministic report of one input."""
    rel = resolve(ex.pattern)
    body = shape(run_report(rel), rel)
    text = with_contents(f"{REPORT_HEADER}# Example report: {ex.title}\n\n{ex.intro.strip()}\n\n{body}\n", "###")
    return re.sub(r"\n{3,}", "\n\n", text).rstrip("\n") + "\n"


def render_examples() -> str:
    parts = [HEADER]
    for n, w in enumerate(WORKED, 1):
        rel = resolve(w.pattern)
        check = run_cli(["check", rel, *w.args]).rstrip("\n")
        given = "".join(f" {a}" for a in w.args)
        parts.append(f"## {n}. {w.title}\n\nOutcome: **{w.outcome}**. {w.intro.strip()}\n\n"
                     f"```text\n$ barrier-viz check {rel}{given}\n{check}\n```\n\n"
                     f"```text\n{digest_block(rel, w.block, w.rows)}\n```\n\n{w.reading.strip()}\n\n")
    parts.append("## Full reports\n\n`barrier-viz report` of five shipped inputs, the shape a written report should "
                 "have (read one only when you need that shape):\n\n")
    for ex in EXAMPLES:
        parts.append(f"- [{ex.title}](reference/{report_name(ex)})\n")
    return re.sub(r"\n{3,}", "\n\n", "".join(parts)).rstrip("\n") + "\n"


def render_all() -> dict[Path, str]:
    """Every generated file and its content."""
    files = {OUT: render_examples()}
    for ex in EXAMPLES:
        files[REFERENCE / report_name(ex)] = render_report(ex)
    return files


def render() -> str:
    return render_examples()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if a generated file differs from what would be written")
    args = ap.parse_args(argv)
    files = render_all()
    if args.check:
        stale = [p for p, text in files.items() if not p.exists() or p.read_text(encoding="utf-8") != text]
        for p in stale:
            print(f"{p.relative_to(REPO)} is stale; run: .venv/bin/python scripts/gen_examples.py")
        if not stale:
            print(f"{len(files)} generated files are up to date")
        return 1 if stale else 0
    for p, text in files.items():
        p.write_text(text, encoding="utf-8")
        print(f"wrote {p.relative_to(REPO)} ({len(text)} characters)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
