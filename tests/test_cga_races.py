"""Cross-CTA races in Triton's CGA form, and the AutoWS 2-CTA addmm's handshake (issue 12).

A paired (2-CTA) MMA is issued by the even CTA and reads the odd CTA's operand share straight from
its shared memory: only a barrier the issuer waits on, completed by the peer's bytes, orders the
peer's TMA landing before it. In CGA form that barrier is the program's ready barrier, whose
layout says which CTA's copy the peer's bytes reach (facts/cga.py); the interpreter places every
access in the CTA whose memory it touches, so the cross-CTA check (`cluster_races`) runs on CGA IR
as on per-CTA IR.

CLC is the one exception (analyses/cluster/sim.py, "cross-CTA races in CGA form"): the lowering
issues `clc_try_cancel` from CTA 0 for the whole cluster, and a program written for the cluster
releases the response slot on a barrier that keeps one copy per pair; a CTA of another pair then
releases into a copy CTA 0 never waits on, and only the pairs' pace orders its read before the next
response. That is a warning saying so, never a verdict; the same reuse inside CTA 0's own pair is
a race.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from barrier_viz.analyses.cluster.races import cluster_races
from barrier_viz.analyses.sim.deadlock import analyse_deadlocks
from barrier_viz.analyses.launch.input_points import admissible, model_of
from barrier_viz.analyses.sim.schedule import default_trips
from barrier_viz.analyses.verdicts import check
from barrier_viz.analysis import Analysis
from barrier_viz.session import select
from corpus_units import CORPUS

REPO = Path(__file__).resolve().parent.parent
CASES = REPO / "evals" / "cases"
LOADS = Path(__file__).parent / "fixtures" / "cga" / "cga_2cta_loads.ttgir"
GLUON = CORPUS / "families" / "gluon"
ADDMM = "fbtriton-metaws.addmm_2cta_ws_v0.sm100"


def _analysis(path: Path) -> Analysis:
    return Analysis(select(str(path), None, None, require_function=True))


def _races(path: Path) -> list:
    """`cluster_races` at the launch `check` chooses (also where the kernel hangs on another
    schedule: the race check's own run is the favorable one)."""
    a = _analysis(path)
    model = model_of(a)
    dyn = analyse_deadlocks(a.sel.function, a.arrivers, gated=a.arrival_gated,
                            adjust=(lambda p: admissible(model, p)) if model is not None else None)
    found = cluster_races(a.sel.function, dyn.params, default_trips(a.sel.function))
    return [f for f in found if f.kind != "race.remote_after_exit"]  # that rule: tests/test_cluster_exit.py


def _write(tmp_path: Path, text: str, name: str = "k.ttgir") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# -- the paired MMA in CGA form -----------------------------------------------------------------------
def test_cga_gemm_whose_ready_barrier_collects_both_shares_has_no_cross_cta_race():
    """The broadcast ready barrier (`CGALayout = [[0]]`: one mbarrier, in CTA 0) receives both
    CTAs' shares; the MMA issuer in CTA 0 waits on it, so CTA 1's A and B land before the read."""
    assert _races(LOADS) == []


def test_a_paired_mma_before_the_peers_share_lands_is_a_cross_cta_race(tmp_path):
    """With the ready barrier split per CTA (`2xi64`, `CGALayout = [[1]]`) CTA 1's bytes complete
    CTA 1's copy, which CTA 1 waits on but CTA 1 issues no MMA; CTA 0's paired MMA waits on its own
    copy only and reads CTA 1's A and B shares before they land."""
    path = _write(tmp_path, LOADS.read_text().replace("!ttg.memdesc<1xi64, #shared_bar", "!ttg.memdesc<2xi64, #per_cta"))
    races = _races(path)
    assert {(f.kind, f.severity.value, tuple(f.lines)) for f in races} == {
        ("race.unsynchronized_read", "error", (41, 57)), ("race.unsynchronized_read", "error", (42, 57))}
    for f in races:
        assert f.evidence["first"]["partition"] == "cta1.partition0 (async)"
        assert f.evidence["second"]["partition"] == "cta0.partition1 (async)"


# -- CLC's response in CGA form -----------------------------------------------------------------------
def clc_kernel(ctas: int = 2, release: str = "cluster", early_release: bool = False) -> str:
    """A CGA-form CLC scheduler (partition0) and consumer (partition1) with one response slot:
    every CTA's scheduler expects the 16 response bytes on its own copy of %got (the lowering
    issues the request from CTA 0 only), both partitions read the response and release the slot
    on %rel, on which CTA 0 waits before the next request. `release`: %rel keeps one copy for the
    cluster (`cluster`) or one per pair (`pair`, Gluon's `two_ctas` barrier)."""
    bits = ctas.bit_length() - 1
    split = "[" + ", ".join(f"[{1 << b}]" for b in range(bits)) + "]"
    zero = "[" + ", ".join("[0]" for _ in range(bits)) + "]"
    if release == "cluster":
        rel, n_rel = zero, 1
    else:
        rel, n_rel = "[[0]" + "".join(f", [{1 << (b - 1)}]" for b in range(1, bits)) + "]", ctas // 2
    res_t = "!ttg.memdesc<2xi64, #res, #smem, mutable>"
    got_t = f"!ttg.memdesc<{ctas}xi64, #own, #smem, mutable>"
    rel_t = f"!ttg.memdesc<{n_rel}xi64, #rel, #smem, mutable>"
    sw = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0], CGALayout = %s}>"
    args = f"%r: {res_t}, %g: {got_t}, %l: {rel_t}"
    read = f"        %resp = ttng.clc_load_result %r : {res_t} -> i128\n"
    release_op = f"        ttng.arrive_barrier %l, 1, %late : {rel_t}\n"
    early = f"        ttng.arrive_barrier %l, 1, %peer : {rel_t}\n"
    # `early_release`: every CTA but CTA 0 releases the slot before reading it (CTA 0's own
    # consumer keeps the order, so the race is the peers' alone).
    rank = ("        %rank = nvg.cluster_id\n        %peer = arith.cmpi ne, %rank, %c0 : i32\n"
            if early_release else "        %peer = arith.constant false\n")
    consumer = rank + "        %late = arith.xori %peer, %t : i1\n" + early + read + release_op
    return f"""#res = {sw % zero}
#own = {sw % split}
#rel = {sw % rel}
#smem = #ttg.shared_memory
module attributes {{"ttg.num-ctas" = {ctas} : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:100", "ttg.threads-per-warp" = 32 : i32}} {{
  tt.func public @clc_sched() {{
    %res = ttg.local_alloc : () -> {res_t}
    %got = ttg.local_alloc : () -> {got_t}
    %rel = ttg.local_alloc : () -> {rel_t}
    ttng.init_barrier %got, 1 : {got_t}
    ttng.init_barrier %rel, 2 : {rel_t}
    ttng.fence_mbarrier_init_release_cluster
    ttng.cluster_barrier {{relaxed = true}}
    ttg.warp_specialize(%res, %got, %rel)
    default {{
      ttg.warp_yield
    }}
    partition0({args}) num_warps(1) {{
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %t = arith.constant true
      %w:2 = scf.while (%more = %t, %ph = %c0, %i = %c0) : (i1, i32, i32) -> (i32, i32) {{
        scf.condition(%more) %ph, %i : i32, i32
      }} do {{
      ^bb0(%p: i32, %k: i32):
        %reuse = arith.cmpi sge, %k, %c1 : i32
        %prev = arith.xori %p, %c1 : i32
        ttng.wait_barrier %l, %prev, %reuse : {rel_t}
        ttng.barrier_expect %g, 16, %t : {got_t}
        ttng.clc_try_cancel %r, %g {{multicast = true}} : {res_t}, {got_t}
        ttng.wait_barrier %g, %p, %t : {got_t}
        %resp = ttng.clc_load_result %r : {res_t} -> i128
        ttng.arrive_barrier %l, 1 : {rel_t}
        %again = ttng.clc_is_canceled %resp : i128 -> i1
        %np = arith.xori %p, %c1 : i32
        %nk = arith.addi %k, %c1 : i32
        scf.yield %again, %np, %nk : i1, i32, i32
      }}
      ttg.warp_return
    }}
    partition1({args}) num_warps(1) {{
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %t = arith.constant true
      %w = scf.while (%more = %t, %ph = %c0) : (i1, i32) -> i32 {{
        scf.condition(%more) %ph : i32
      }} do {{
      ^bb0(%p: i32):
        ttng.wait_barrier %g, %p, %t : {got_t}
{consumer}        %again = ttng.clc_is_canceled %resp : i128 -> i1
        %np = arith.xori %p, %c1 : i32
        scf.yield %again, %np : i1, i32
      }}
      ttg.warp_return
    }} : ({res_t}, {got_t}, {rel_t}) -> ()
    tt.return
  }}
}}
"""


@pytest.mark.parametrize("ctas", [2, 4])
def test_a_clc_slot_released_to_a_cluster_wide_barrier_is_clean(tmp_path, ctas):
    """Every CTA releases the response slot to the one copy CTA 0 waits on: no race, no error."""
    path = _write(tmp_path, clc_kernel(ctas, "cluster"))
    assert _races(path) == []
    assert [f.kind for f in check(_analysis(path)).findings if f.severity.value == "error"] == []


def test_a_clc_slot_released_before_its_read_races_the_next_response(tmp_path):
    """CTA 1's consumer releases the slot and then reads it: CTA 0, released, asks again and the
    next response lands in CTA 1's slot unordered with that read: a race across CTAs."""
    path = _write(tmp_path, clc_kernel(2, "cluster", early_release=True))
    [f] = _races(path)
    assert (f.kind, f.severity.value) == ("race.missing_acquire", "error") and "Possible" not in f.message
    assert f.evidence["first"]["partition"] == "cta1.partition1"
    assert {f.evidence["first"]["op"], f.evidence["second"]["op"]} == {"ttng.clc_load_result", "ttng.clc_try_cancel"}


def test_a_clc_slot_released_per_pair_is_a_question_of_pace_not_a_verdict(tmp_path):
    """With four CTAs and a per-pair release barrier, CTAs 2-3 release into CTA 2's copy, which
    CTA 0 never waits on: their reads are ordered before the next response by no barrier, only by
    how far the pairs run apart. Warnings that say which copy is missing; no error race."""
    races = _races(_write(tmp_path, clc_kernel(4, "pair")))
    assert races and all(f.severity.value == "warning" for f in races)
    for f in races:
        assert f.message.startswith("Possible, not judged:") and "CTAs [0, 1]" in f.message
        assert f.evidence["first"]["partition"].startswith(("cta2.", "cta3."))


def test_explore_gives_the_per_pair_release_no_verdict_either(tmp_path):
    """`explore`'s random and starving schedules take that reuse and what follows from it (CTAs of
    one cluster on different tiles, then a hang): as unjudged as the reuse itself, so no error
    and no deadlock, and the result says why."""
    from barrier_viz.commands.explore_cmd import explore_document

    doc = explore_document(_analysis(_write(tmp_path, clc_kernel(4, "pair"))).sel, timeout=5.0)
    assert doc.result in ("not_judged", "race", "clean_within_bounds", "bound_reached")
    assert not [f for f in doc.findings if f.severity.value == "error"], [f.message for f in doc.findings]
    warned = [f for f in doc.findings if f.severity.value == "warning"]
    assert all("not judged" in f.message for f in warned)
    if doc.result == "not_judged":
        assert "across CTA groups" in doc.reason


def test_in_the_pair_the_same_reuse_stays_a_verdict(tmp_path):
    """Per-pair release and an early release in CTAs 1-3: CTA 1's read (in CTA 0's pair) is a
    race; the other pair's reads stay warnings."""
    races = _races(_write(tmp_path, clc_kernel(4, "pair", early_release=True)))
    by_cta = {f.evidence["first"]["partition"]: f.severity.value for f in races}
    assert by_cta["cta1.partition1"] == "error"
    assert {s for p, s in by_cta.items() if p.startswith(("cta2.", "cta3."))} == {"warning"}


@pytest.mark.parametrize("stem,warned", [
    ("_matmul_kernel__BM128_BN256_BK64_st6_cga1_nctas2", False),
    ("_matmul_kernel__BM128_BN256_BK64_st4_cga2_nctas4", True),
    ("mma_scaled_warp_specialized_kernel__ex04_mxfp4_BM256_BN256_nctas2", False),
    ("mma_scaled_warp_specialized_kernel__ex04_mxfp8_BM256_BN256_nctas2", False),
])
def test_gluon_cga_tutorials_have_no_cross_cta_race_verdict(stem, warned):
    """Gluon 03-matmul-multicta and 04-2cta-block-scale-matmul: the race check runs on them and
    judges no race. In the 4-CTA matmul (two pairs) CTA 0 asks CLC for the cluster after its own
    pair's release only (`clc_consumed_bars` is a `two_ctas` barrier): the other pair's response
    reads are the pace warnings, nothing else."""
    path = GLUON / f"{stem}.ttgir"
    if not path.exists():
        pytest.skip(f"{path} not found (set BARRIER_VIZ_CORPUS)")
    races = _races(path)
    assert all(f.severity.value == "warning" for f in races)
    assert bool(races) == warned
    assert all(f.evidence["second"]["op"] == "ttng.clc_try_cancel" or f.evidence["first"]["op"] == "ttng.clc_try_cancel"
               for f in races)
    assert [f.kind for f in check(_analysis(path)).findings if f.severity.value == "error"] == []


@pytest.mark.parametrize("stem", ["mma_scaled_warp_specialized_kernel__ex04_mxfp4_BM256_BN256_nctas2",
                                  "mma_scaled_warp_specialized_kernel__ex04_mxfp8_BM256_BN256_nctas2"])
def test_explore_finds_no_race_in_the_gluon_2cta_block_scale_matmul(stem):
    """04-2cta-block-scale-matmul copies its scales to TMEM with `tmem_copy`, which the lowering
    issues from the leader CTA for the pair (as the paired MMA): CTA 1's MMA partition copies
    nothing, so its scale slots are read only after CTA 0's wait on the leader's barrier. Read as
    CTA 1's own copy, `explore` used to report a race with CTA 1's TMA refill."""
    from barrier_viz.commands.explore_cmd import explore_document

    path = GLUON / f"{stem}.ttgir"
    if not path.exists():
        pytest.skip(f"{path} not found (set BARRIER_VIZ_CORPUS)")
    doc = explore_document(_analysis(path).sel, timeout=4.0)
    assert not [f for f in doc.findings if f.severity.value == "error"], [f.message for f in doc.findings][:3]


# -- the AutoWS 2-CTA addmm (per-CTA form) ----------------------------------------------------------
@pytest.mark.parametrize("mutant,mma", [("drop_handshake_wait_L175", 175), ("drop_handshake_wait_L203", 203)])
def test_dropping_the_insert2ctasync_wait_lets_the_paired_mma_read_cta1s_tiles_early(mutant, mma):
    """Without the leader's wait on the barrier Insert2CTASync adds before the 2-CTA MMA nothing
    orders CTA 1's TMA loads of its A/B tiles before CTA 0's paired MMA reads them: the cross-CTA
    check reports both reads (the kernel may also hang on another schedule; the race check's own
    run completes)."""
    races = _races(CASES / f"{ADDMM}.{mutant}" / "input.ttgir.gz")
    reads = [f for f in races if f.kind == "race.unsynchronized_read"]
    assert {f.evidence["second"]["line"] for f in reads} == {mma}
    assert {f.evidence["first"]["op"] for f in reads} == {"ttng.async_tma_copy_global_to_local"}
    assert {f.evidence["first"]["partition"] for f in reads} == {"cta1.partition1 (async)"}
    assert {f.evidence["storage"].split("@")[0] for f in reads} == {"%a_30", "%b_31"}


def test_the_addmm_handshake_orders_cta1s_tiles_before_the_paired_mma():
    """The unmodified kernel: CTA 1 arrives on CTA 0's handshake barrier only after its own loads
    landed, and CTA 0 waits on it before the MMA: no cross-CTA race."""
    assert _races(CASES / f"{ADDMM}.base" / "input.ttgir.gz") == []


def test_the_addmm_peeled_mma_barrier_is_initialised_after_the_cluster_sync():
    """The peeled first K step's 2-CTA MMA gets its cross-CTA barrier from Insert2CTASync's path for
    an MMA outside any loop, which allocates and initialises it inside the MMA partition (v3.7.4);
    the lowering cluster-syncs only the entry block's inits. So CTA 1's remote arrive can land
    before CTA 0's init, which discards it, and CTA 0 waits forever: a hang of CTA 0 that the fork
    itself fixed later (3525db7ca moves that barrier to kernel-entry scope, "a partition-local init
    can race a peer CTA's first remote arrival"). The case keeps the deadlock and says so."""
    case = CASES / f"{ADDMM}.base"
    hangs = [f for f in check(_analysis(case / "input.ttgir.gz")).findings
             if f.severity.value == "error" and f.kind.startswith("deadlock.")]
    assert hangs, "the latent init-vs-remote-arrive hang is not reported"
    [f] = hangs
    assert "cta0.partition0 blocks at line 175" in f.message
    assert "arrived on it remotely at line 172 before this CTA initialised it at line 168" in f.message
    spec = yaml.safe_load((case / "expected.yaml").read_text())
    assert spec["findings"] == [{"kind": "deadlock.*", "cta": 0}]
    for evidence in ("Insert2CTASync.cpp:300", "TritonGPUToLLVM.cpp:440-485", "3525db7ca"):
        assert evidence in spec["notes"]
