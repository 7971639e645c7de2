"""Text outputs a reader can act on: no placeholder fields (`None`, `L?`), column views named by
what they hold, every simulation policy accounted for, aliases grouped by partition region."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cli_support import run_cli
from corpus_units import CORPUS
from test_check import FIXTURE, _ops, _replace_line

FIXTURES = Path(__file__).parent / "fixtures"
INPUTS = [FIXTURE, FIXTURES / "gemm_pre_partition.mlir", FIXTURES / "coverage" / "fa_packed_persistent.ttgir",
          FIXTURES / "coverage" / "gemm_while_zero_store.ttgir"]
REAL = [CORPUS / "real" / n for n in ("fa_fwd_persist_sm100.ttgir", "up-sm100__attn_fwd__persist_noncausal_hd64.ttgir")]
PLACEHOLDER = re.compile(r"\bNone\b|\bL\?")


@pytest.mark.parametrize("path", INPUTS + [p for p in REAL if p.is_file()], ids=lambda p: p.name)
def test_no_placeholder_fields_in_any_text_output(path):
    for args in (["report", "--no-simulate"], ["report", "--format", "compact", "--no-simulate"], ["coverage"],
                 ["barriers"], ["phases"], ["ops", "--format", "compact"]):
        r = run_cli(*args[:1], str(path), *args[1:])
        assert r.exit_code in (0, 1), (args, r.stderr)
        bad = [line for line in r.stdout.splitlines() if PLACEHOLDER.search(line)]
        assert not bad, (args, bad[:3])


FA = CORPUS / "real" / "fa_fwd_persist_sm100.ttgir"


@pytest.mark.skipif(not FA.is_file(), reason="shared corpus not present")
def test_packed_column_views_are_named_by_shape_and_type():
    """In this kernel the fp16 view of the QK accumulator is built from values named `%acc_1_*`:
    a row labelled `acc_1` would point the reader at the wrong buffer."""
    doc = run_cli("coverage", str(FA), "--format", "json").json()
    views = [r for t in doc["packed_tmem"] for r in t["rows"] if not r["owner"] and t["owner"].startswith("qk")]
    assert views and all(re.match(r"\d+x\d+x(f16|bf16|f32) view", r["label"]) for r in views)


def test_a_skipped_simulation_policy_says_why(tmp_path):
    base = FIXTURE.read_text()
    mma = _ops(base, "ttng.tc_gen5_mma", "partition0")[0]
    line = base.splitlines()[mma.line - 1]
    path = tmp_path / "k.ttgir"
    path.write_text(_replace_line(base, mma.line, line.replace(f", {mma.operands[-2]}[{mma.operands[-1]}]", "")))
    text = run_cli("check", str(path)).stdout
    sim = next(line for line in text.splitlines() if line.startswith("simulation"))
    assert "favorable: deadlock; not run: in_order, reverse, round_robin (the favorable schedule already deadlocked" in sim
    digest = run_cli("report", str(path), "--format", "compact").stdout
    assert "not run: in_order, reverse, round_robin" in digest


def test_aliases_are_grouped_by_region():
    doc = run_cli("barriers", str(FIXTURE), "--format", "json").json()
    full = doc["barriers"][0]
    captures = [a for a in full["aliases"] if a["via"] == "capture"]
    assert len({a["name"] for a in captures}) == 1 and {a["region"] for a in captures} == {"partition0", "partition1"}
    assert all(a["region"] is None for a in full["aliases"] if a["via"] == "memdesc_index" and a["line"] < captures[0]["line"])
    text = run_cli("barriers", str(FIXTURE)).stdout
    block = text.split('Logical barrier "%full@', 1)[1].split("Used in:", 1)[0]
    assert block.index("aliases outside partitions:") < block.index("aliases in partition0:") < block.index("aliases in partition1:")
    digest = run_cli("report", str(FIXTURE), "--format", "compact").stdout
    assert re.search(r"aliases main: idx \S+ \S+ \| partition0: cap \S+; idx \S+ \| partition1: cap", digest)
