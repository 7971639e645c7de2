"""`check` on real TLX / Gluon / AutoWS kernels of the families corpus whose simulated hangs were
the model's fault, and on the two whose hangs are in the IR itself. Skips without the corpus."""

from __future__ import annotations

import pytest

from barrier_viz.commands.check_cmd import check_document
from barrier_viz.session import select

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
    # rendezvous on cta_bar through remote arrives; run as a cluster (analyses/cluster_sim.py).
    "tlx/matmul_kernel_tlx_ws__BM256_BN128_BK64_NS3_NMG2_ES0_NC2_UWB0_w4s1_cga2x1x1.ttgir": "completed",
    # Paired 2-CTA MMA: the even CTA issues the MMA and commit, which arrive in both CTAs.
    "tlx/grouped_matmul_tlx_kernel__BSM128_BSN256_BSK64_NSB3_NTB2_ES2_NC2_w4s1.ttgir": "completed",
    # Triton's cluster-wide (CGA) form (ttg.num-ctas = 2): types are the cluster's; not run.
    "gluon/_matmul_kernel__BM128_BN256_BK64_st6_cga1_nctas2.ttgir": "not_simulated",
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


def test_attention_swp_blackwell_waits_on_its_own_later_mma() -> None:
    """AutoWS FA forward, Blackwell, persistent, DP_FACTOR=2 with the software-pipelined dot
    attributes (QK stage 0, PV stage 1): P lives in TMEM aliasing QK, so before the second QK
    MMA of a tile the gemm partition waits for the PV MMA that reads P to complete (`%p`).
    That PV MMA is issued after this wait in the same partition, and nothing else arrives on
    `%p`: the first tile hangs on any schedule. Kept as a verdict (not GPU-confirmed: no sm100
    machine here)."""
    doc, _ = _check("autows/_attn_fwd_persist__hb_blackwell_persist_BM128_BN128_DF2_w4s2_hd128_stage1_swp1.ttgir")
    cycle = [f for f in doc.findings if f.kind == "deadlock.cycle"]
    assert cycle and cycle[0].barrier == "%p[0]" and cycle[0].partitions[0] == "partition1"
    assert cycle[0].evidence["cause"] == "self-wait"


def test_addmm_subtiled_epilogue_releases_each_bias_buffer_twice() -> None:
    """AutoWS addmm with EPILOGUE_SUBTILE=2 and generate_subtiled_region: after each subtile the
    epilogue arrives on *both* bias-empty barriers (count 1), so each completes two phases per
    tile; the loader's one wait per tile polls a parity that has come back, and from the second
    tile of a CTA on it blocks while the epilogue waits for the bias it would load. The
    tutorial's test shape (M=N=1024 on 148 SMs: one tile per CTA) never reaches a second tile."""
    doc, _ = _check("autows/addmm_kernel_tma_persistent_ws__BM128_BN128_BK64_ES2_Acm0_Bcm0_DPF1_gsr1_w4s3.ttgir")
    cadence = [f for f in doc.findings if f.kind == "deadlock.parity_cadence"]
    assert cadence and cadence[0].evidence.get("cause") == "duplicated arrival"
