"""Cluster eval cases (issue 12): the cluster mutation operators, the `cta` expectation key, the
`cluster` case group and how `eval` reports it.

The operators run on the committed cluster bases (IR compiled from the fork's TLX tutorials by
evals/gen/cluster_cases.py), and each test checks the edit itself on the re-parsed IR: what was
removed or rewired, and which verdict the case then expects.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from barrier_viz.cli import app
from barrier_viz.evals.cases import Case, discover, load_case
from barrier_viz.evals.mutate import Source, mutants
from barrier_viz.evals.mutate_cluster import CLUSTER, cluster_size
from barrier_viz.evals.scoring import Reported, names_cta, score_case, summarize

REPO = Path(__file__).resolve().parent.parent
CASES = REPO / "evals" / "cases"
GEMM_2CTA = "fbtriton.tlx_gemm_2cta_v0.sm100"
MULTICAST = "fbtriton.tlx_gemm_multicast_v0.sm90"
CLC_GEMM = "fbtriton.tlx_gemm_clc_v0.sm100"
AUTOWS_2CTA = "fbtriton-metaws.addmm_2cta_ws_v0.sm100"


def _base(name: str) -> str:
    return gzip.decompress((CASES / f"{name}.base" / "input.ttgir.gz").read_bytes()).decode()


def _ops(text: str, name: str):
    return [op for op in Source(text).ops if op.name == name]


def _remote_arrive_lines(src: Source) -> list[int]:
    out = []
    for op in src.ops:
        if op.name == "ttng.arrive_barrier":
            view = src.defining_op(op.positional[0])
            if view is not None and view.name == "ttng.map_to_remote_buffer":
                out.append(op.line)
    return out


@pytest.fixture(scope="module")
def gemm_2cta() -> str:
    return _base(GEMM_2CTA)


@pytest.fixture(scope="module")
def multicast() -> str:
    return _base(MULTICAST)


# -- operators ----------------------------------------------------------------------------------
def test_drop_remote_arrive_removes_one_remote_arrival(gemm_2cta):
    before = Source(gemm_2cta)
    ms = mutants(gemm_2cta, operators=["drop_remote_arrive"])
    assert len(ms) == len(_remote_arrive_lines(before)) == 2
    for m in ms:
        after = Source(m.text)
        assert len(after.ops) == len(before.ops) - 1
        assert len(_remote_arrive_lines(after)) == 1
        # every CTA arrives on CTA 0's copy (remote_cta_rank=0): CTA 0 is the one that hangs
        assert m.findings == [{"kind": "deadlock.*", "cta": 0}]


def test_symmetric_handshake_mutants(multicast):
    """The multicast GEMM arrives locally and on its peer (rank ^ 1): losing the remote arrival
    hangs both CTAs; arriving on itself instead voids the handshake, a race on the peer's slot."""
    by_op = {m.operator: m for m in mutants(multicast, operators=sorted(CLUSTER))}
    assert by_op["drop_remote_arrive"].findings == [{"kind": "deadlock.*", "cta": "any"}]
    assert by_op["remote_arrive_self"].findings == [{"kind": "race.*"}]
    assert by_op["drop_handshake_wait"].findings == [{"kind": "race.*"}]
    assert "handshake_wait_everywhere" not in by_op  # both CTAs already wait: nothing to unpredicate


def test_remote_arrive_self_names_own_rank(gemm_2cta):
    for m in mutants(gemm_2cta, operators=["remote_arrive_self"]):
        src = Source(m.text)
        view = next(op for op in src.ops if op.name == "ttng.map_to_remote_buffer" and op.line == m.line + 1)
        assert src.defining_op(view.positional[1]).name == "nvg.cluster_id"
        assert m.findings == [{"kind": "deadlock.*", "cta": 0}]


def test_handshake_wait_everywhere_unpredicates_the_leader_wait(gemm_2cta):
    ms = mutants(gemm_2cta, operators=["handshake_wait_everywhere"])
    assert ms
    for m in ms:
        src = Source(m.text)
        wait = next(op for op in src.ops if op.name == "ttng.wait_barrier" and op.line == m.line + 1)
        assert src.constant_of(wait.positional[2]) == 1
        assert m.findings == [{"kind": "deadlock.*", "cta": 1}]


def test_leader_of_pair_rank_is_cta0():
    """AutoWS names the pair's leader as `cluster_id & -2`: in a cluster of two, always CTA 0."""
    text = _base(AUTOWS_2CTA)
    assert cluster_size(Source(text)) == 2
    ms = mutants(text, operators=["drop_remote_arrive", "handshake_wait_everywhere"])
    assert {m.operator: m.findings[0]["cta"] for m in ms} == {"drop_remote_arrive": 0, "handshake_wait_everywhere": 1}


def test_wrong_multicast_mask_and_expect_own_half(multicast):
    (mask,) = mutants(multicast, operators=["wrong_multicast_mask"])
    src = Source(mask.text)
    (copy,) = [op for op in src.ops if op.name == "ttng.async_tma_copy_global_to_local" and "multicast" in op.attributes]
    assert src.constant_of(copy.positional[4]) == 1
    assert mask.findings == [{"kind": "deadlock.*", "cta": 1}]
    (half,) = mutants(multicast, operators=["expect_own_half"])
    src = Source(half.text)
    expect = next(op for op in src.ops if op.name == "ttng.barrier_expect" and op.line == half.line)
    copy = next(op for op in src.ops if op.name == "ttng.async_tma_copy_global_to_local" and "multicast" in op.attributes)
    own = [u.bytes for b, u in src.analysis.barriers.uses_at(copy) if u.role.value == "tma_arrive"]
    announced = [u.bytes for b, u in src.analysis.barriers.uses_at(expect) if u.role.value == "expect"]
    assert own == announced == [16384]  # was 32768: both CTAs' halves land on each CTA's barrier
    assert half.findings == [{"kind": "expect.bytes_mismatch"}, {"kind": "race.*"}]


def test_clc_operators():
    text = _base(CLC_GEMM)
    ms = mutants(text, operators=["clc_phase_flip", "drop_clc_release"])
    kinds = {(m.operator, m.extra.get("wait_kind")): m.findings for m in ms}
    assert kinds[("clc_phase_flip", "producer")] == [{"kind": "deadlock.*"}]
    assert kinds[("clc_phase_flip", "consumer")] == [{"kind": "race.*"}]
    drops = [m for m in ms if m.operator == "drop_clc_release"]
    assert len(drops) == 3  # one per CLC consumer (clc_create_context(num_consumers=3))
    for m in drops:
        assert len(_ops(m.text, "ttng.arrive_barrier")) == len(_ops(text, "ttng.arrive_barrier")) - 1
        assert m.findings == [{"kind": "deadlock.*"}]


def test_cluster_operators_leave_one_cta_kernels_alone():
    text = _base("triton.gemm_persistent_v0.sm90")
    assert mutants(text, operators=sorted(CLUSTER)) == []


# -- the `cta` key, the group, and eval's report ------------------------------------------------
def test_cta_expectation_needs_the_named_cta():
    stuck = Reported("deadlock.no_producer", "error", [201], ["partition1"], threads=["cta0.partition1", "cta1.partition2"])
    plain = Reported("deadlock.no_producer", "error", [201], ["partition1"])
    assert names_cta(stuck, 0) and names_cta(stuck, "any") and not names_cta(stuck, 2)
    assert not names_cta(plain, "any")
    case = Case(name="c", input=Path("x"), findings=[{"kind": "deadlock.*", "cta": 1}])
    assert score_case(case, [stuck]).passed
    assert not score_case(case, [plain]).passed
    assert not score_case(Case(name="c", input=Path("x"), findings=[{"kind": "deadlock.*", "cta": 3}]), [stuck]).passed


def test_cluster_cases_are_grouped_and_say_how_they_were_made():
    cases = [c for c in discover([CASES]) if c.group == "cluster"]
    # (GPU-observed cluster cases come from gpu_cases.py --cluster, with the H200's label as truth)
    observed = [c for c in cases if c.source.get("recipe") == "evals/gen/gpu_cases.py"]
    assert all(c.truth in ("ok", "hang", "wrong", "fault") for c in observed)
    cases = [c for c in cases if c not in observed]
    bases = [c for c in cases if c.name.endswith(".base")]
    assert len(bases) >= 6 and len(cases) >= 30
    for c in cases:
        assert c.source.get("recipe") == "evals/gen/cluster_cases.py" and c.source.get("commit")
        assert c.findings or c.absent
        hangs = [e for e in c.findings if e["kind"].startswith("deadlock.")]
        if hangs and cluster_size(Source(gzip.decompress(c.input.read_bytes()).decode())) > 1:
            assert all("cta" in e for e in hangs), c.name  # a cluster hang names the CTA that hangs
    manifest = json.loads((REPO / "evals" / "gen" / "out_cluster" / "manifest.json").read_text())
    assert {r["base"] for r in manifest["kernels"] if r["case"]} == {c.name[:-len(".base")] for c in bases}


def test_group_summary_and_eval_text(tmp_path):
    hang = Case(name="h", input=Path("x"), findings=[{"kind": "deadlock.*", "cta": 0}], group="cluster",
                source={"mutation": {"operator": "drop_remote_arrive"}})
    good = Case(name="g", input=Path("x"), absent=["deadlock.*"], group="cluster")
    other = Case(name="o", input=Path("x"), absent=["deadlock.*"])
    found = Reported("deadlock.cycle", "error", threads=["cta0.partition1"])
    scores = [score_case(hang, [found]), score_case(good, [found]), score_case(other, [])]
    g = summarize(scores)["per_group"]["cluster"]
    assert (g["cases"], g["passed"], g["deadlock_cases"], g["deadlock_found_in_cta"], g["false_deadlocks"]) == (2, 1, 1, 1, 1)
    assert g["operators"] == {"base": {"passed": 0, "cases": 1}, "drop_remote_arrive": {"passed": 1, "cases": 1}}
    # the command prints the group on its own, from real cases
    picked = [str(CASES / f"{MULTICAST}.base"), str(CASES / f"{CLC_GEMM}.base")]
    res = CliRunner().invoke(app, ["eval", *picked, "--config", str(REPO / "evals" / "config.yaml")])
    assert res.exit_code in (0, 1), res.output
    assert "cluster cases: 2," in res.output and "  base " in res.output
    doc = CliRunner().invoke(app, ["eval", *picked, "--format", "json"])
    assert json.loads(doc.output)["summary"]["per_group"]["cluster"]["cases"] == 2


def test_remote_store_operators_on_a_four_cta_reduction():
    """The multi-CTA layernorm (4 CTAs) sends each partial to the three peers by remote stores
    that complete bytes on the peer's barrier, armed for three peers' bytes."""
    text = _base("fbtriton.tlx_layernorm_multicta_ws_v1.sm100")
    assert cluster_size(Source(text)) == 4
    ms = mutants(text, operators=["drop_remote_store", "expect_missing_peer", "drop_remote_data_wait"])
    stores = len(_ops(text, "ttg.async_remote_shmem_store"))
    drops = [m for m in ms if m.operator == "drop_remote_store"]
    assert sorted(m.findings[0]["cta"] for m in drops) == [0, 0, 1, 1, 2, 2, 3, 3]  # two reductions x four ranks
    for m in drops:
        assert len(_ops(m.text, "ttg.async_remote_shmem_store")) == stores - 1
    for m in (m for m in ms if m.operator == "expect_missing_peer"):
        assert m.edit == "expect 48 -> 32"  # three peers x 16 bytes (a 4x1 f32 partial) -> two
        assert m.findings == [{"kind": "expect.bytes_mismatch"}, {"kind": "race.*"}]
    assert [m.findings for m in ms if m.operator == "drop_remote_data_wait"] == [[{"kind": "race.*"}]] * 2


def test_agent_output_names_the_cta():
    """An agent's INSIGHT line or JSON finding that names `cta<k>.<partition>` scores a `cta` key."""
    from barrier_viz.evals.runner import _from_json, parse_insight

    (r,) = parse_insight("INSIGHT: deadlock.cycle: cta1.partition0 stuck at line 202 on %cta_bars (lines 201, 202)")
    assert r.threads == ["cta1.partition0"] and names_cta(r, 1) and not names_cta(r, 0)
    (j,) = _from_json({"findings": [{"kind": "deadlock.no_producer", "threads": ["cta0.default"]}]})
    case = Case(name="c", input=Path("x"), findings=[{"kind": "deadlock.*", "cta": 0}])
    assert score_case(case, [j]).passed and not score_case(case, [r]).passed
