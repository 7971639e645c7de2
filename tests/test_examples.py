"""EXAMPLES.md and the full example reports are what scripts/gen_examples.py writes from real
`barrier-viz` runs, and they ship with the skill.

The staleness test regenerates every file in-process and compares bytes: a change to any
command's output, to an example input, or to the script shows up here until the files are
regenerated (`.venv/bin/python scripts/gen_examples.py`).
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from barrier_viz.analyses.model.outcome import HANG_OR_FAULT, OUTCOMES
from barrier_viz.commands.skill_cmd import skill_files

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "gen_examples.py"


def load_generator():
    spec = importlib.util.spec_from_file_location("gen_examples", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def gen():
    return load_generator()


@pytest.fixture(scope="module")
def files(gen) -> dict[Path, str]:
    return gen.render_all()


@pytest.fixture(scope="module")
def examples(gen, files) -> str:
    return files[gen.OUT]


@pytest.fixture(scope="module")
def reports(gen, files) -> list[str]:
    return [text for path, text in files.items() if path != gen.OUT]


def test_generated_files_are_not_stale(files) -> None:
    for path, text in files.items():
        assert path.read_text(encoding="utf-8") == text, f"{path.name} is stale: run .venv/bin/python scripts/gen_examples.py"


def test_generation_does_not_depend_on_the_working_directory(gen, examples: str, files, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert gen.render_examples() == examples
    for text in files.values():
        assert str(REPO) not in text, "absolute checkout paths leak into the generated files"


def test_examples_md_is_short_with_one_worked_example_per_outcome(gen, examples: str) -> None:
    assert len(examples) <= gen.MAX_CHARS
    blocks = re.split(r"^## \d+\. ", examples, flags=re.M)[1:]
    worked = [b for b in blocks if "$ barrier-viz check " in b]
    assert len(worked) == len(gen.WORKED)
    stated = [re.search(r"^Outcome: \*\*(.+?)\*\*", b, flags=re.M).group(1) for b in worked]
    # One more example may refine an outcome ("hang (outside the launch contract)"): its check
    # output shows the outcome itself; the one-per-outcome count is over the plain ones.
    outcomes = [o.split(" (")[0] if o.endswith(")") and " (" in o else o for o in stated]
    # A stated limit ("not judged") is not a verdict a worked example teaches: SKILL.md puts it
    # under limits. A hang that may fault when its wait passes early is the hang's refinement
    # (SKILL.md and the hazards reference word it); EXAMPLES.md has no room for a sixth example.
    verdicts = [o for o in OUTCOMES if o not in ("not judged", HANG_OR_FAULT)]
    plain = [o for o, st in zip(outcomes, stated) if o == st]
    assert sorted(plain) == sorted(["no finding", *verdicts]), "one example per headline outcome"
    assert set(outcomes) <= set(plain)
    for outcome, block in zip(outcomes, worked):
        check = block.split("```text\n", 1)[1].split("```", 1)[0]
        if outcome == "no finding":
            assert "clean (judged): 0 error(s), 0 warning(s), 0 info" in check
        else:
            assert f" -> {outcome}  lines " in check, f"the {outcome!r} example's check output shows that outcome"
        assert block.count("```text\n") == 2, "the check output and one digest block"


def test_examples_md_links_every_full_report_and_each_ships(gen, examples: str) -> None:
    shipped = dict(skill_files())
    for ex in gen.EXAMPLES:
        name = f"reference/{gen.report_name(ex)}"
        assert f"]({name})" in examples
        assert shipped[name] == (gen.REFERENCE / gen.report_name(ex)).read_bytes()


def test_each_full_report_has_five_sections_and_both_coverage_tables(gen, reports: list[str]) -> None:
    assert len(reports) == len(gen.EXAMPLES) >= 5
    for block in reports:
        for heading in ("### 1. Partition summary", "### 2. Barrier dependency graph", "### 3. Index and phase analysis",
                        "### 4. Shared data map", "### 5. SSA value to barrier map", "### Coverage tables", "### Findings"):
            assert heading in block
        assert "== Column-packed TMEM overwrite coverage" in block and "== Operand-D accumulator init coverage ==" in block
        intro = block.split("\nInput: `", 1)[0].split("\n# Example report: ", 1)[1]
        assert len(intro.split()) > 30, "each report opens with what the input is and what to look for"


def test_the_required_kinds_of_report_are_present(reports: list[str]) -> None:
    title = lambda b: b.split("# Example report: ", 1)[1].split("\n", 1)[0].lower()  # noqa: E731
    sm100_mma = [b for b in reports if "tc_gen5_mma" in b and "persistent" in title(b)]
    assert any("gemm" in title(b) for b in sm100_mma), "a Blackwell persistent GEMM"
    assert any("attention" in title(b) for b in reports), "an attention forward"
    assert any("warp_group_dot" in b for b in reports), "a Hopper GEMM"
    assert any("ERROR `deadlock." in b for b in reports), "a case with a deadlock verdict"
    assert any(re.search(r"Verdict: ✗|  ✗ MISSING", b) for b in reports), "a case with a coverage ✗"


def test_trimmed_blocks_say_so_and_name_the_full_command(gen, reports: list[str]) -> None:
    note = re.compile(r"\.\.\. \[(\d+) more lines trimmed here; `barrier-viz \w+ \S+` prints them\]")
    trimmed = 0
    for fence in re.findall(r"```text\n(.*?)```", "".join(reports), flags=re.S):
        body = fence.rstrip("\n").split("\n")
        if note.fullmatch(body[-1]):
            trimmed += 1
            assert len(body) == gen.MAX_BLOCK_LINES + 1
            assert int(note.fullmatch(body[-1]).group(1)) > gen.TRIM_SLACK
        else:
            assert len(body) <= gen.MAX_BLOCK_LINES + gen.TRIM_SLACK
    assert trimmed, "the attention report is long enough to be cut somewhere"


def test_examples_ship_with_the_skill_and_at_the_repo_root(gen) -> None:
    assert dict(skill_files())["EXAMPLES.md"] == gen.OUT.read_bytes()
    assert (REPO / "EXAMPLES.md").read_bytes() == gen.OUT.read_bytes()


def test_missing_input_is_an_error_naming_the_pattern(gen) -> None:
    with pytest.raises(FileNotFoundError, match="no-such-case"):
        gen.resolve("evals/cases/no-such-case*/input.ttgir.gz")
