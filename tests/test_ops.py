"""`ops`: filters by partition and line range, a compact one-line-per-op form, and the
attributes that decide barrier behaviour printed as MLIR text (never Python values)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cli_support import line_of, run_cli
from corpus_units import CORPUS

FIXTURE = Path(__file__).parent / "fixtures" / "gemm_ws_persistent.ttgir"


def _ops(*args: str) -> list[dict]:
    r = run_cli("ops", str(FIXTURE), "--format", "json", *args)
    assert r.exit_code == 0, r.stderr
    return r.json()["ops"]


def test_partition_filter_keeps_only_that_partitions_ops():
    every = _ops()
    for name in ("partition0", "default"):
        picked = _ops("--partition", name)
        assert picked and all(o["partition"] == name for o in picked)
        assert len(picked) == sum(1 for o in every if o["partition"] == name)
    outside = _ops("--partition", "main")
    assert outside and all(o["partition"] is None for o in outside)


def test_unknown_partition_is_a_one_line_usage_error():
    r = run_cli("ops", str(FIXTURE), "--partition", "nosuch")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1
    assert "no such partition" in r.stderr and "partition0" in r.stderr


def test_line_range_filter():
    first = line_of(FIXTURE, "ttng.init_barrier")
    picked = _ops("--lines", f"{first}-{first + 6}")
    assert picked and all(first <= o["line"] <= first + 6 for o in picked)
    assert [o["line"] for o in _ops("--lines", str(first))] == [first]
    assert all(o["line"] >= first for o in _ops("--lines", f"{first}-"))
    for bad in ("x", "9-3", "0-4", "-"):
        r = run_cli("ops", str(FIXTURE), "--lines", bad)
        assert r.exit_code == 2 and r.stderr.startswith("barrier-viz: error: ") and r.stderr.count("\n") == 1, bad


def test_key_attributes_are_mlir_text_with_counts_and_use_d():
    ops = _ops()
    init = next(o for o in ops if o["name"] == "ttng.init_barrier")
    assert init["key_attributes"]["count"] == "1"
    mma = next(o for o in ops if o["name"] == "ttng.tc_gen5_mma")
    assert mma["key_attributes"]["useD"].startswith("%")
    assert mma["key_attributes"]["async_task_id"] == "array<i32: 1>"
    text = run_cli("ops", str(FIXTURE)).stdout
    assert "async_task_id = array<i32: 1>" in text and "{count = 1}" in text
    assert not re.search(r"=\[\d|\{'", text), "no Python lists or dicts in the text output"


def test_compact_form_is_one_line_per_op():
    ops = _ops("--partition", "partition0")
    r = run_cli("ops", str(FIXTURE), "--partition", "partition0", "--format", "compact")
    lines = r.stdout.splitlines()
    assert len(lines) == len(ops) + 1 and lines[0].endswith(f"{len(ops)} operation(s)")
    for o, line in zip(ops, lines[1:]):
        assert line.startswith(f"L{o['line']} d{o['loop_depth']} partition0 ")
        assert o["name"] in line
    mma = next(line for line in lines if "ttng.tc_gen5_mma" in line)
    assert "is_async" in mma and "useD = %" in mma


SM90 = CORPUS / "real" / "fb-sm90__attn_fwd__kv_dp2_mc_me_hd128.ttgir"


@pytest.mark.skipif(not SM90.is_file(), reason="shared corpus not present")
def test_wgmma_async_and_pendings_are_shown():
    r = run_cli("ops", str(SM90), "--format", "compact")
    dot = next(line for line in r.stdout.splitlines() if "ttng.warp_group_dot " in line)
    wait = next(line for line in r.stdout.splitlines() if "ttng.warp_group_dot_wait " in line)
    assert "isAsync = true" in dot
    assert re.search(r"pendings = \d+ : i32", wait)


def test_the_agent_ops_tool_takes_the_same_filters():
    from barrier_viz.agent.registry import REGISTRY

    doc = REGISTRY.get("ops").call_json({"input": str(FIXTURE), "partition": "partition0", "lines": "1-200"})
    assert doc["ops"] and all(o["partition"] == "partition0" for o in doc["ops"])
    assert doc["ops"] == _ops("--partition", "partition0")
