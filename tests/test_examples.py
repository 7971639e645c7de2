"""EXAMPLES.md is what scripts/gen_examples.py writes from real `report` runs, and it ships.

The staleness test regenerates the file in-process and compares bytes: a change to any
command's output, to an example input, or to the script shows up here until the file is
regenerated (`.venv/bin/python scripts/gen_examples.py`).
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

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
def generated(gen) -> str:
    return gen.render()


def test_examples_md_is_not_stale(gen, generated: str) -> None:
    committed = gen.OUT.read_text(encoding="utf-8")
    assert committed == generated, "EXAMPLES.md is stale: run .venv/bin/python scripts/gen_examples.py"


def test_generation_does_not_depend_on_the_working_directory(gen, generated: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert gen.render() == generated
    assert str(REPO) not in generated, "absolute checkout paths leak into EXAMPLES.md"


def test_each_example_is_a_five_section_report_with_both_coverage_tables(gen, generated: str) -> None:
    blocks = re.split(r"^## Example \d+: ", generated, flags=re.M)[1:]
    assert len(blocks) == len(gen.EXAMPLES) >= 5
    for block in blocks:
        for heading in ("### 1. Partition summary", "### 2. Barrier dependency graph", "### 3. Index and phase analysis",
                        "### 4. Shared data map", "### 5. SSA value to barrier map", "### Coverage tables", "### Findings"):
            assert heading in block
        assert "== Column-packed TMEM overwrite coverage" in block and "== Operand-D accumulator init coverage ==" in block
        intro = block.split("\nInput: `", 1)[0]
        assert len(intro.split()) > 30, "each example opens with what the input is and what to look for"


def test_the_required_kinds_of_example_are_present(generated: str) -> None:
    blocks = re.split(r"^## Example \d+: ", generated, flags=re.M)[1:]
    sm100_mma = [b for b in blocks if "tc_gen5_mma" in b and "persistent" in b.split("\n", 1)[0].lower()]
    assert any("gemm" in b.split("\n", 1)[0].lower() for b in sm100_mma), "a Blackwell persistent GEMM"
    assert any("attention" in b.split("\n", 1)[0].lower() for b in blocks), "an attention forward"
    assert any("warp_group_dot" in b for b in blocks), "a Hopper GEMM"
    assert any("ERROR `deadlock." in b for b in blocks), "a case with a deadlock verdict"
    assert any(re.search(r"Verdict: ✗|  ✗ MISSING", b) for b in blocks), "a case with a coverage ✗"


def test_trimmed_blocks_say_so_and_name_the_full_command(gen, generated: str) -> None:
    note = re.compile(r"\.\.\. \[(\d+) more lines trimmed in EXAMPLES\.md; `barrier-viz \w+ \S+` prints them\]")
    trimmed = 0
    for fence in re.findall(r"```text\n(.*?)```", generated, flags=re.S):
        body = fence.rstrip("\n").split("\n")
        if note.fullmatch(body[-1]):
            trimmed += 1
            assert len(body) == gen.MAX_BLOCK_LINES + 1
            assert int(note.fullmatch(body[-1]).group(1)) > gen.TRIM_SLACK
        else:
            assert len(body) <= gen.MAX_BLOCK_LINES + gen.TRIM_SLACK
    assert trimmed, "the attention example is long enough to be cut somewhere"


def test_examples_ship_with_the_skill_and_at_the_repo_root(gen) -> None:
    assert dict(skill_files())["EXAMPLES.md"] == gen.OUT.read_bytes()
    assert (REPO / "EXAMPLES.md").read_bytes() == gen.OUT.read_bytes()


def test_missing_input_is_an_error_naming_the_pattern(gen) -> None:
    with pytest.raises(FileNotFoundError, match="no-such-case"):
        gen.resolve("evals/cases/no-such-case*/input.ttgir.gz")
