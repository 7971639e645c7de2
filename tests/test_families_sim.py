"""`check` on real TLX / Gluon / AutoWS kernels of the families corpus whose simulated hangs were
the model's fault, and on the two whose hangs are in the IR itself. Skips without the corpus."""

from __future__ import annotations

import json

import pytest

from barrier_viz.commands.check_cmd import check_document
from barrier_viz.session import select

from cli_support import run_cli
from corpus_units import CORPUS

FAMILIES = CORPUS / "families"
pytestmark = pytest.mark.skipif(not FAMILIES.is_dir(), reason="families corpus absent (BARRIER_VIZ_CORPUS)")

MODEL_WAS_WRONG = {
    # TLX warp barriers: `arrive_barrier {perThread}` arrives once per thread (128 per warpgroup).
    "tlx/matmul_kernel_tlx_ws__BM128_BN128_BK64_NS4_NMG2_ES1_NC1_UWB1_w4s1_cga1x1x1.ttgir": "completed",
    # CLC: try_cancel's 16-byte response completes the expected bytes; the loop ends on "-1".
    "tlx/matmul_kernel_tma_ws_blackwell_clc__BSM128_BSN128_BSK128_NSB4_NTB3_UWB1_w4s1.ttgir": "completed",
    "tlx/matmul_kernel_tma_ws_blackwell_clc__BSM128_BSN256_BSK64_NSB3_NTB2_UWB0_w4s1.ttgir": "completed",
    "gluon/_matmul_kernel__BM128_BN128_BK128_st4_cga0_nctas1.ttgir": "completed",
    "gluon/mma_scaled_warp_specialized_kernel__ex04_mxfp8_BM128_BN256_nctas1.ttgir": "completed",
    # A 2-CTA cluster (ttg.cluster-dim-x = 2, num-ctas = 1): B is multicast in halves and the CTAs
    # rendezvous on cta_bar through remote arrives; run as a cluster (analyses/cluster/sim.py).
    "tlx/matmul_kernel_tlx_ws__BM256_BN128_BK64_NS3_NMG2_ES0_NC2_UWB0_w4s1_cga2x1x1.ttgir": "completed",
    # Paired 2-CTA MMA: the even CTA issues the MMA and commit, which arrive in both CTAs.
    "tlx/grouped_matmul_tlx_kernel__BSM128_BSN256_BSK64_NSB3_NTB2_ES2_NC2_w4s1.ttgir": "completed",
    # Triton's cluster-wide (CGA) form (ttg.num-ctas = 2 / 4): barriers and bytes per CTA copy from
    # the layouts (facts/cga.py): broadcast barriers live in the group leader, two-CTA MMAs and
    # commits are the even CTA's, CLC is CTA 0's multicast.
    "gluon/_matmul_kernel__BM128_BN256_BK64_st6_cga1_nctas2.ttgir": "completed",
    "gluon/_matmul_kernel__BM128_BN256_BK64_st4_cga2_nctas4.ttgir": "completed",
    "gluon/mma_scaled_warp_specialized_kernel__ex04_mxfp4_BM256_BN256_nctas2.ttgir": "completed",
    "gluon/mma_scaled_warp_specialized_kernel__ex04_mxfp8_BM256_BN256_nctas2.ttgir": "completed",
}


def _check(rel: str):
    path = FAMILIES / rel
    if not path.exists():
        pytest.skip(f"{rel} absent")
    doc, result = check_document(select(str(path), require_function=True))
    return doc, result


@pytest.mark.parametrize("rel", sorted(MODEL_WAS_WRONG))
def test_no_false_deadlock_on_correct_family_kernels(rel: str) -> None:
    doc, result = _check(rel)
    assert not [f for f in doc.findings if f.kind.startswith("deadlock.")]
    outcomes = {r.outcome for r in result.deadlocks.runs}
    want = MODEL_WAS_WRONG[rel]
    if want == "not_simulated":
        assert outcomes == {"not_simulated"}
    else:
        assert outcomes <= {"completed", "covered"}


@pytest.mark.parametrize("rel", sorted(MODEL_WAS_WRONG))
def test_no_race_from_the_runs_on_correct_family_kernels(rel: str) -> None:
    """Issue 22: every schedule of `check` carries vector clocks, so a race any of them shows is
    an error. These correct kernels (CLC, TLX warp barriers, TLX and CGA clusters, paired MMAs)
    get none: no false race from the model's ordering of arrivals, commits and CLC responses."""
    doc, _ = _check(rel)
    assert doc.simulation["races"]["schedules"], "the runs were tracked"
    assert not [(f.kind, f.lines) for f in doc.findings if f.severity.value == "error"]


def test_attention_swp_blackwell_waits_on_its_own_later_mma() -> None:
    """AutoWS FA forward, Blackwell, persistent, DP_FACTOR=2 with the software-pipelined dot
    attributes (QK stage 0, PV stage 1). P lives in TMEM aliasing the one QK buffer
    (tmem_subslice + memdesc_reinterpret of `qk`), so QK(i+1) may only overwrite it once PV(i)
    has read P: the gemm partition waits on `%p` (WSBarrier direction "backward", the WAR reuse
    barrier dd98ce5c4 made mandatory), which only PV's tc_gen5_mma barrier list arrives on. The
    pipelined order in partition1 is: wait %p parity 1 (line 410, passes), QK(0) (411), wait
    %p parity 0 (432), QK(1) (433), PV(0) (448, the arrival): the wait at 432 needs the PV issued
    after it, on every schedule, at the first tile. Not GPU-confirmed (no sm100 here), but the
    fork says the same: dd98ce5c4 (in v3.7.4) skips this tutorial's fwd ws/ws_persistent tests
    because "the WAR backward edge alone deadlocks the pipelined schedule" (pending TMEM
    cross-stage multi-buffering); the skip is still there at main db4666f22. Compiling the same
    v3.7.4 source with _FWD_DOT_ATTRS_NO_SWP (TRITON_HOPPER_SWP=0) orders PV(0) before the wait
    for QK(1), and check reports it clean."""
    doc, _ = _check("autows/_attn_fwd_persist__hb_blackwell_persist_BM128_BN128_DF2_w4s2_hd128_stage1_swp1.ttgir")
    cycle = [f for f in doc.findings if f.kind == "deadlock.cycle"]
    assert cycle and cycle[0].barrier == "%p[0]" and cycle[0].partitions[0] == "partition1"
    assert cycle[0].evidence["cause"] == "self-wait" and 432 in cycle[0].lines


ADDMM = "autows/addmm_kernel_tma_persistent_ws__BM128_BN128_BK64_ES2_Acm0_Bcm0_DPF1_gsr1_w4s3.ttgir"


def test_addmm_subtiled_epilogue_releases_each_bias_buffer_twice() -> None:
    """AutoWS addmm with EPILOGUE_SUBTILE=2 and generate_subtiled_region. After doCodePartition
    the epilogue's two bias consumer-release tokens are `shared(...)` operands of the
    ttng.subtiled_region (WSCodePartition.cpp, v3.7.4 and main: `subtiled.addSharedArg(token)`
    for an inline ConsumerRelease), so each replicated subtile releases both: the final IR
    arrives on %bias_1_26 and %bias_0_35 after subtile 0 (lines 201, 203) and again after
    subtile 1 (224, 225), with no WSBarrier constraint, unlike every other release. The same
    file's comment on producer tokens names the outcome ("every replicated tile arrive[s] on
    every sibling's barrier (over-commit -> deadlock)"); 754a65ef3 fixed it for the staging
    producer only. So bias_0 is released before subtile 1 reads it (line 213), and each
    count-1 empty barrier completes two phases per tile: the loader's one wait per tile (461,
    468) polls a parity that has come back from the CTA's second tile on."""
    doc, _ = _check(ADDMM)
    cadence = [f for f in doc.findings if f.kind == "deadlock.parity_cadence"]
    assert cadence and cadence[0].evidence.get("cause") == "duplicated arrival"
    assert {201, 224} <= set(cadence[0].lines)
    race = [f for f in doc.findings if f.kind == "race.early_release"]
    assert race and {203, 213} <= set(race[0].lines)


def test_addmm_double_release_needs_a_second_tile_per_cta() -> None:
    """Why the fork's own test passes: test_autows_addmm_tma_persistent runs M=N=1024 (64 tiles
    of 128x128) on 148 SMs, one tile per CTA, so the loader never refills a bias buffer and
    that launch completes; at M=N=2048 (256 tiles) CTA 0 runs tiles 0 and 148 and hangs."""
    path = FAMILIES / ADDMM
    if not path.exists():
        pytest.skip(f"{ADDMM} absent")

    def deadlocks(args: str) -> list[str]:
        r = run_cli("check", str(path), "--format", "json", "--args", args, "--pid", "0", "--grid", "148",
                    "--no-input-points")
        assert r.exception is None, r.exception
        return [f["kind"] for f in json.loads(r.stdout)["findings"] if f["kind"].startswith("deadlock.")]

    assert deadlocks("M=1024,N=1024,K=8192") == []
    assert deadlocks("M=2048,N=2048,K=512") == ["deadlock.parity_cadence"]
