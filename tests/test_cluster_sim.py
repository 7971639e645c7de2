"""Running a CTA cluster (analyses/cluster/sim.py) on hand-written minimal IR of the shapes the
TLX cluster tutorials use: a 2-CTA rendezvous through a remote arrive, a B tile multicast by
both CTAs, a paired (2-CTA) MMA whose leader commits for both. Each test says what the hardware
does and why the verdict follows."""

from __future__ import annotations

from pathlib import Path

import pytest

from barrier_viz.analyses.sim.schedule import choose_params, run
from barrier_viz.ir.parse import parse_ir

from cli_support import check_text
from corpus_units import CORPUS

BAR = "!ttg.memdesc<1xi64, #shared, #smem, mutable>"
BARS = "!ttg.memdesc<1x1xi64, #shared, #smem, mutable>"
REMOTE = "!ttg.memdesc<1xi64, #shared, #ttng.shared_cluster_memory, mutable>"
TILE = "!ttg.memdesc<64x64xf16, #nvmma, #smem, mutable>"
TILES = "!ttg.memdesc<1x64x64xf16, #nvmma, #smem, mutable>"
DESC = "!tt.tensordesc<tensor<64x64xf16, #nvmma>>"
HEADER = ('#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>\n'
          '#nvmma = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>\n'
          '#smem = #ttg.shared_memory\n')


def module(body: str, ctas: int = 2, extra: str = "") -> str:
    dims = f'"ttg.cluster-dim-x" = {ctas} : i32, "ttg.cluster-dim-y" = 1 : i32, "ttg.cluster-dim-z" = 1 : i32, '
    return HEADER + f'module attributes {{{extra}{dims}"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32}} {{\n' \
        + body + "}\n"


def rendezvous(leader_waits: bool = True, peer_arrives: bool = True) -> str:
    """TLX's cluster sync before a multicast: each CTA arrives on CTA 0's `cta_bar` (count 2,
    one arrival per CTA) through `map_to_remote_buffer`; CTA 0 waits for both, then signals
    `go` locally; every CTA's consumer waits on its own `go`, which CTA 0's producer... only
    arrives in CTA 0. So CTA 1's consumer also needs a remote arrive from CTA 0's producer."""
    remote = (f"      %r = ttng.map_to_remote_buffer %cb, %c0_i32 : {BAR} -> {REMOTE}\n"
              f"      ttng.arrive_barrier %r, 1 : {REMOTE}\n") if peer_arrives else ""
    wait = f"      ttng.wait_barrier %cb, %c0_i32, %leader : {BAR}\n" if leader_waits else ""
    return f'''  tt.func public @k() {{
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %cbs = ttg.local_alloc : () -> {BARS}
    %cb = ttg.memdesc_index %cbs[%c0_i32] : {BARS} -> {BAR}
    ttng.init_barrier %cb, 2 : {BAR}
    %gos = ttg.local_alloc : () -> {BARS}
    %go = ttg.memdesc_index %gos[%c0_i32] : {BARS} -> {BAR}
    ttng.init_barrier %go, 1 : {BAR}
    ttg.warp_specialize(%cb, %go) attributes {{requestedRegisters = array<i32: 24>}}
    default {{
      %rank = nvg.cluster_id
      %leader = arith.cmpi eq, %rank, %c0_i32 : i32
{remote}{wait}      %peer = arith.xori %rank, %c1_i32 : i32
      ttng.arrive_barrier %go, 1 : {BAR}
      ttg.warp_yield
    }}
    partition0(%a: {BAR}, %g: {BAR}) num_warps(1) {{
      %z = arith.constant 0 : i32
      ttng.wait_barrier %g, %z : {BAR}
      ttg.warp_return
    }} : ({BAR}, {BAR}) -> ()
    tt.return
  }}
'''


def multicast(mask_expr: str = "%both", expect: int = 8192) -> str:
    """Each CTA loads one half of a shared tile (4096 bytes) and multicasts it to both CTAs
    (mask 0b11): each CTA's `full` barrier receives its own half and the peer's, so it expects
    8192 bytes. The consumer waits on its own `full`."""
    return f'''  tt.func public @k(%d: {DESC}) {{
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %true = arith.constant true
    %fulls = ttg.local_alloc : () -> {BARS}
    %full = ttg.memdesc_index %fulls[%c0_i32] : {BARS} -> {BAR}
    ttng.init_barrier %full, 1 : {BAR}
    %bufs = ttg.local_alloc : () -> {TILES}
    ttg.warp_specialize(%full, %bufs, %d) attributes {{requestedRegisters = array<i32: 24>}}
    default {{
      %rank = nvg.cluster_id
      %own = arith.shli %c1_i32, %rank : i32
      %peer = arith.xori %rank, %c1_i32 : i32
      %other = arith.shli %c1_i32, %peer : i32
      %both = arith.ori %own, %other : i32
      %buf = ttg.memdesc_index %bufs[%c0_i32] : {TILES} -> {TILE}
      ttng.barrier_expect %full, {expect}, %true : {BAR}
      %half = ttg.memdesc_subslice %buf[0, 0] : {TILE} -> !ttg.memdesc<32x64xf16, #nvmma, #smem, mutable, 64x64>
      ttng.async_tma_copy_global_to_local %d[%c0_i32, %c0_i32] %half, %full, %true, {mask_expr} {{multicast}} : {DESC}, {BAR} -> !ttg.memdesc<32x64xf16, #nvmma, #smem, mutable, 64x64>
      ttg.warp_yield
    }}
    partition0(%f: {BAR}, %b: {TILES}, %dd: {DESC}) num_warps(1) {{
      %z = arith.constant 0 : i32
      ttng.wait_barrier %f, %z : {BAR}
      ttg.warp_return
    }} : ({BAR}, {TILES}, {DESC}) -> ()
    tt.return
  }}
'''


def paired(commit_in_every_cta: bool = False) -> str:
    """A paired (2-CTA) tcgen05 commit: the module is `tlx.enable_paired_cta_mma`, so the commit
    is issued by the even CTA only and arrives on `done` in both CTAs (`cta_group::2` multicast).
    Every CTA's epilogue waits on its own `done` once."""
    return f'''  tt.func public @k() {{
    %c0_i32 = arith.constant 0 : i32
    %true = arith.constant true
    %dones = ttg.local_alloc : () -> {BARS}
    %done = ttg.memdesc_index %dones[%c0_i32] : {BARS} -> {BAR}
    ttng.init_barrier %done, 1 : {BAR}
    ttg.warp_specialize(%done) attributes {{requestedRegisters = array<i32: 24>}}
    default {{
      ttng.tc_gen5_commit %done : {BAR}
      ttg.warp_yield
    }}
    partition0(%dn: {BAR}) num_warps(1) {{
      %z = arith.constant 0 : i32
      ttng.wait_barrier %dn, %z : {BAR}
      ttg.warp_return
    }} : ({BAR}) -> ()
    tt.return
  }}
'''


PAIRED = "tlx.enable_paired_cta_mma = true, "


def _fn(text: str):
    return next(op for op in parse_ir(text).walk() if op.name == "tt.func")




def test_remote_arrivals_of_both_ctas_release_the_leader() -> None:
    """CTA 0 waits on `cta_bar` (count 2) until both CTAs have arrived on it, its own arrive
    through `map_to_remote_buffer %cb, 0` as much as the peer's: run as a cluster it completes."""
    result = run(_fn(module(rendezvous())), policy="favorable")
    assert result.outcome == "completed", result.reason
    names = sorted(t.name for t in result.machine.threads)
    assert names == ["cta0.default", "cta0.main", "cta0.partition0", "cta1.default", "cta1.main", "cta1.partition0"]


def test_dropped_remote_arrive_hangs_the_leader_and_the_witness_names_the_cta(tmp_path: Path) -> None:
    """Without the remote arrivals `cta_bar` gets none (count 2): CTA 0's default blocks at its
    wait and its consumer behind it. CTA 1 (whose wait is predicated off) finishes, with the
    same work as CTA 0: that is no launch question, the hang is a verdict and names the CTA."""
    doc = check_text(tmp_path, module(rendezvous(peer_arrives=False)))
    dead = [f for f in doc["findings"] if f["kind"].startswith("deadlock")]
    assert dead, doc["findings"]
    blocked = {b["partition"] for f in dead for b in f["evidence"]["blocked"]}
    assert "cta0.default" in blocked and all(p.startswith("cta") for p in blocked)


def test_multicast_halves_from_both_ctas_complete_each_ctas_full_barrier() -> None:
    """Each CTA's 4096-byte half lands in both CTAs: 8192 bytes per `full`, as expected."""
    assert run(_fn(module(multicast())), policy="favorable").outcome == "completed"


def test_a_mask_that_leaves_out_the_peer_leaves_bytes_missing(tmp_path: Path) -> None:
    """With the mask `1 << rank` each CTA only gets its own half (4096 of 8192 bytes): every
    consumer waits forever on a phase whose transaction count never returns to zero."""
    result = run(_fn(module(multicast("%own"))), policy="favorable")
    assert result.outcome == "deadlock"
    stuck = {b.thread.name for b in result.blocked}
    assert stuck == {"cta0.partition0", "cta1.partition0"}
    assert all(b.wait.slot.tx == 4096 for b in result.blocked)
    doc = check_text(tmp_path, module(multicast("%own")))
    assert any(f["kind"] in ("expect.bytes_mismatch", "deadlock.parity_cadence") for f in doc["findings"])


def test_expect_counting_only_the_own_half_overflows() -> None:
    """An expect of 4096 (the CTA's own half) while 8192 land: the bytes beyond the expect are a
    slot anomaly (the phase completes early, on the hardware a transaction-count underflow)."""
    result = run(_fn(module(multicast(expect=4096))), policy="favorable")
    slots = [s for s in result.machine.slots.values() if s.anomalies]
    assert slots, result.outcome


def test_paired_commit_is_issued_by_the_leader_and_arrives_in_both_ctas() -> None:
    """In a paired module CTA 1 does not commit, yet its epilogue's `done` completes: the
    leader's `cta_group::2` commit multicasts the arrival to both CTAs of the pair."""
    result = run(_fn(module(paired(), extra=PAIRED)), policy="favorable")
    assert result.outcome == "completed", result.reason
    done = [s for s in result.machine.slots.values() if s.completions]
    assert sorted(s.ref.cta for s in done) == [0, 1]
    names = {result.machine.threads[who].name for s in done for _, _, who in s.history}
    assert names == {"cta0.default"}  # both arrivals came from the leader's commit


def test_without_pairing_each_cta_commits_for_itself() -> None:
    """Outside a paired module the same IR is two independent CTAs: each commits on its own."""
    result = run(_fn(module(paired())), policy="favorable")
    assert result.outcome == "completed"
    threads = result.machine.threads
    assert {threads[who].name for s in result.machine.slots.values() for _, _, who in s.history} == {
        "cta0.default", "cta1.default"}


def test_cga_form_and_large_clusters_are_stated_limits() -> None:
    """Triton's cluster-wide form (`ttg.num-ctas` = 2: the types are the cluster's) and a cluster
    of 16 CTAs (past the portable limit of 8) are not run: the outcome says why, no verdict."""
    cga = module(rendezvous()).replace('"ttg.num-ctas" = 1', '"ttg.num-ctas" = 2').replace('"ttg.cluster-dim-x" = 2', '"ttg.cluster-dim-x" = 1')
    result = run(_fn(cga), policy="favorable")
    assert result.outcome == "not_simulated" and "CGA" in result.reason
    result = run(_fn(module(rendezvous(), ctas=16)), policy="favorable")
    assert result.outcome == "not_simulated" and "16 CTAs" in result.reason


def test_a_cluster_of_8_ctas_runs() -> None:
    """8 CTAs, the portable cluster size (a 4x2 TLX 2-CTA GEMM, an 8-CTA layernorm reduction),
    run like any other cluster: every CTA's threads, the rendezvous, a verdict."""
    result = run(_fn(module(rendezvous(), ctas=8)), policy="favorable")
    assert result.outcome == "completed", result.reason
    assert {t.cta for t in result.machine.threads} == set(range(8))


def test_cluster_barrier_inside_a_partition_is_a_stated_limit() -> None:
    text = module(rendezvous()).replace("      %peer = arith.xori", "      ttng.cluster_barrier {relaxed = true}\n      %peer = arith.xori")
    result = run(_fn(text), policy="favorable")
    assert result.outcome == "not_simulated" and "cluster barrier" in result.reason


PERSISTENT = f'''  tt.func public @k(%n: i32) {{
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c2_i32 = arith.constant 2 : i32
    %cbs = ttg.local_alloc : () -> {BARS}
    %cb = ttg.memdesc_index %cbs[%c0_i32] : {BARS} -> {BAR}
    ttng.init_barrier %cb, 2 : {BAR}
    ttg.warp_specialize(%cb, %n) attributes {{requestedRegisters = array<i32: 24>}}
    default {{
      %pid = tt.get_program_id x : i32
      %rank = nvg.cluster_id
      %peer = arith.xori %rank, %c1_i32 : i32
      %r = ttng.map_to_remote_buffer %cb, %peer : {BAR} -> {REMOTE}
      %last = scf.for %t = %pid to %n step %c2_i32 iter_args(%ph = %c0_i32) -> (i32) : i32 {{
        ttng.arrive_barrier %cb, 1 : {BAR}
        ttng.arrive_barrier %r, 1 : {REMOTE}
        ttng.wait_barrier %cb, %ph : {BAR}
        %nph = arith.xori %ph, %c1_i32 : i32
        scf.yield %nph : i32
      }}
      ttg.warp_yield
    }}
    partition0(%a: {BAR}, %m: i32) num_warps(1) {{
      ttg.warp_return
    }} : ({BAR}, i32) -> ()
    tt.return
  }}
'''


def test_a_launch_where_one_cta_runs_out_of_tiles_is_not_judged(tmp_path: Path) -> None:
    """A persistent loop over tiles `pid, pid + 2, ...` below `n`, each tile starting with a
    rendezvous of the two CTAs (each arrives on its own and its peer's count-2 barrier, then
    waits on its own): with n odd, CTA 1 has one tile fewer than CTA 0, and CTA 0's last
    rendezvous waits for a CTA that has left. That hangs on
    the GPU too, but only at a launch whose grid and tile count do not divide, which is the
    host's contract: the run is a `limit`, and the bounds search picks a launch where both CTAs
    have work, on which the kernel completes."""
    fn = _fn(module(PERSISTENT))
    from barrier_viz.analyses.sim.machine import Params

    stuck = run(fn, Params(int_args=3), policy="favorable")
    assert stuck.outcome == "deadlock"
    from barrier_viz.analyses.cluster.sim import unequal_work
    from barrier_viz.analyses.sim.schedule import _blocked

    assert "cta1 finished after fewer loop iterations than cta0 (1 against 2)" in unequal_work(stuck.machine, _blocked(stuck.machine))
    doc = check_text(tmp_path, module(PERSISTENT))
    assert not [f for f in doc["findings"] if f["severity"] == "error"], doc["findings"]
    assert run(fn, choose_params(fn), policy="favorable").outcome in ("completed", "covered")


CLUSTER_FILES = sorted((CORPUS / "families" / "tlx").glob("*cga2x1x1*.ttgir")) + \
    sorted((CORPUS / "families" / "tlx").glob("grouped_matmul*NC2*.ttgir"))


@pytest.mark.skipif(not CLUSTER_FILES, reason="shared corpus not present")
@pytest.mark.parametrize("path", CLUSTER_FILES, ids=lambda p: p.name[:60])
def test_tlx_cluster_tutorials_run_as_clusters_and_complete(path: Path) -> None:
    """The TLX 2-CTA tutorials (multicast GEMM with a `cta_bar` rendezvous, the paired-MMA
    grouped GEMM) are correct: run as 2-CTA clusters, every schedule completes or covers its
    loops, with both CTAs' partitions running."""
    fn = _fn(path.read_text())
    params = choose_params(fn)
    for policy in ("favorable", "in_order", "reverse", "round_robin"):
        result = run(fn, params, policy, stop_trips=3)
        assert result.outcome in ("completed", "covered"), (policy, result.outcome, result.reason)
        assert {t.cta for t in result.machine.threads if t.steps} == {0, 1}


EARLY = f'''  tt.func public @k() {{
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %bs = ttg.local_alloc : () -> {BARS}
    %b = ttg.memdesc_index %bs[%c0_i32] : {BARS} -> {BAR}
    ttg.warp_specialize(%b) attributes {{requestedRegisters = array<i32: 24>}}
    default {{
      %rank = nvg.cluster_id
      %peer = arith.xori %rank, %c1_i32 : i32
      %r = ttng.map_to_remote_buffer %b, %peer : {BAR} -> {REMOTE}
      ttng.arrive_barrier %r, 1 : {REMOTE}
      ttg.warp_yield
    }}
    partition0(%bb: {BAR}) num_warps(1) {{
      %z = arith.constant 0 : i32
      ttng.init_barrier %bb, 2 : {BAR}
      ttng.arrive_barrier %bb, 1 : {BAR}
      ttng.wait_barrier %bb, %z : {BAR}
      ttg.warp_return
    }} : ({BAR}) -> ()
    tt.return
  }}
'''


def test_a_remote_arrive_before_the_peer_initialises_the_barrier_is_lost() -> None:
    """The barrier is initialised inside a partition, after the cluster's start-up sync, so a
    peer's remote arrive can come first; the init then discards it (PTX requires the init and a
    cluster barrier before any peer arrives) and the waiter never gets its second arrival. The
    slot records why, naming the peer and both lines."""
    result = run(_fn(module(EARLY)), policy="favorable")
    assert result.outcome == "deadlock"
    reasons = [a for b in result.blocked for a in b.wait.slot.anomalies]
    assert any("arrived on it remotely at line" in a and "before this CTA initialised it" in a for a in reasons), reasons


def remote_store(store: bool = True) -> str:
    """A cluster reduction: each CTA stores its partial (a 2x1 f32 tensor, 8 bytes) into its
    peer's buffer with `async_remote_shmem_store ... barrier`, which completes 8 bytes on the
    peer's barrier; each CTA expects 8 bytes and waits for them."""
    op = (f"      ttg.async_remote_shmem_store %t, rank %peer, %buf barrier %red : tensor<2x1xf32, #blocked> -> "
          f"!ttg.memdesc<2x1xf32, #shared, #smem, mutable> barrier_ty {BAR}\n") if store else ""
    return f'''  tt.func public @k() {{
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %true = arith.constant true
    %reds = ttg.local_alloc : () -> {BARS}
    %red = ttg.memdesc_index %reds[%c0_i32] : {BARS} -> {BAR}
    ttng.init_barrier %red, 1 : {BAR}
    %buf = ttg.local_alloc : () -> !ttg.memdesc<2x1xf32, #shared, #smem, mutable>
    ttg.warp_specialize(%red, %buf) attributes {{requestedRegisters = array<i32: 24>}}
    default {{
      %rank = nvg.cluster_id
      %peer = arith.xori %rank, %c1_i32 : i32
      %t = arith.constant dense<0.0> : tensor<2x1xf32, #blocked>
      ttng.barrier_expect %red, 8, %true : {BAR}
{op}      ttng.wait_barrier %red, %c0_i32 : {BAR}
      ttg.warp_yield
    }}
    partition0(%r: {BAR}, %bf: !ttg.memdesc<2x1xf32, #shared, #smem, mutable>) num_warps(1) {{
      ttg.warp_return
    }} : ({BAR}, !ttg.memdesc<2x1xf32, #shared, #smem, mutable>) -> ()
    tt.return
  }}
'''


BLOCKED = '#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>\n'


def test_remote_stores_complete_the_peers_barrier() -> None:
    """Each CTA's 8 bytes land on its peer's `red`: both complete. Without the store, each CTA's
    expect waits for bytes no one sends."""
    assert run(_fn(BLOCKED + module(remote_store())), policy="favorable").outcome == "completed"
    stuck = run(_fn(BLOCKED + module(remote_store(store=False))), policy="favorable")
    assert stuck.outcome == "deadlock" and {b.thread.name for b in stuck.blocked} == {"cta0.default", "cta1.default"}


RING = f'''  tt.func public @k(%d: {DESC}) {{
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c2_i32 = arith.constant 2 : i32
    %true = arith.constant true
    %fulls = ttg.local_alloc : () -> {BARS}
    %full = ttg.memdesc_index %fulls[%c0_i32] : {BARS} -> {BAR}
    ttng.init_barrier %full, 1 : {BAR}
    %empties = ttg.local_alloc : () -> {BARS}
    %empty = ttg.memdesc_index %empties[%c0_i32] : {BARS} -> {BAR}
    ttng.init_barrier %empty, 1 : {BAR}
    %bufs = ttg.local_alloc : () -> {TILES}
    ttg.warp_specialize(%full, %bufs, %d, %empty) attributes {{requestedRegisters = array<i32: 24>}}
    default {{
      %rank = nvg.cluster_id
      %own = arith.shli %c1_i32, %rank : i32
      %peer = arith.xori %rank, %c1_i32 : i32
      %other = arith.shli %c1_i32, %peer : i32
      %both = arith.ori %own, %other : i32
      %buf = ttg.memdesc_index %bufs[%c0_i32] : {TILES} -> {TILE}
      %half = ttg.memdesc_subslice %buf[0, 0] : {TILE} -> !ttg.memdesc<32x64xf16, #nvmma, #smem, mutable, 64x64>
      scf.for %i = %c0_i32 to %c2_i32 step %c1_i32 : i32 {{
        %p = arith.andi %i, %c1_i32 : i32
        %q = arith.xori %p, %c1_i32 : i32
        ttng.wait_barrier %empty, %q : {BAR}
        ttng.barrier_expect %full, 8192, %true : {BAR}
        ttng.async_tma_copy_global_to_local %d[%c0_i32, %c0_i32] %half, %full, %true, %both {{multicast}} : {DESC}, {BAR} -> !ttg.memdesc<32x64xf16, #nvmma, #smem, mutable, 64x64>
      }}
      ttg.warp_yield
    }}
    partition0(%f: {BAR}, %b: {TILES}, %dd: {DESC}, %e: {BAR}) num_warps(1) {{
      %z = arith.constant 0 : i32
      %one = arith.constant 1 : i32
      %two = arith.constant 2 : i32
      %v = ttg.memdesc_index %b[%z] : {TILES} -> {TILE}
      scf.for %i = %z to %two step %one : i32 {{
        %ph = arith.andi %i, %one : i32
        ttng.wait_barrier %f, %ph : {BAR}
        %x = ttg.local_load %v : {TILE} -> tensor<64x64xf16, #blocked>
        ttng.arrive_barrier %e, 1 : {BAR}
      }}
      ttg.warp_return
    }} : ({BAR}, {TILES}, {DESC}, {BAR}) -> ()
    tt.return
  }}
'''


def test_a_multicast_refill_without_a_handshake_races_the_peers_read(tmp_path: Path) -> None:
    """Each producer waits for its own CTA's consumer to release the tile (a local empty
    barrier) and then multicasts the refill into both CTAs, with no handshake between the CTAs:
    the peer's multicast of iteration 1 writes into this CTA's tile while this CTA's consumer
    may still read iteration 0. Only a run of the cluster sees that write (the
    static rules reason per CTA): `check` reports a race naming both CTAs' partitions."""
    doc = check_text(tmp_path, BLOCKED + module(RING))
    races = [f for f in doc["findings"] if f["kind"].startswith("race.")]
    assert races, doc["findings"]
    parts = {p for f in races for p in f["partitions"]}
    assert {"cta0.default", "cta1.default"} & parts and any(p.startswith("cta") and "partition0" in p for p in parts)


FA_BWD_2CTA = Path(__file__).resolve().parent.parent / "evals" / "gen" / "out_cluster" / "fbtriton.tlx_fa_bwd_2cta_v0.sm100.ttgir"


@pytest.mark.skipif(not FA_BWD_2CTA.exists(), reason="compiled cluster kernels absent")
def test_a_hang_only_below_one_tile_of_work_is_a_warning_and_the_main_launch_has_work(tmp_path: Path) -> None:
    """TLX's 2-CTA FA backward (compiled here from the tutorial at v3.7.4) peels its first
    iteration: with N_CTX < 128 the producers' loops (num_steps = N_CTX // 128) run nothing and
    the MMA task's peeled wait hangs. The host never launches that (its grid is cdiv(N_CTX, 128)
    programs and it asserts N_CTX % 128 == 0), and the trip count depends on the sizes alone: no
    program has a tile of work. So the main launch is one with work (it completes), and the
    empty-launch hang is a named warning, not a verdict."""
    doc = check_text(tmp_path, FA_BWD_2CTA.read_text())
    assert not [f for f in doc["findings"] if f["severity"] == "error"], [f["message"][:200] for f in doc["findings"]]
    # Every loop floor-divides N_CTX by 128, so launches take N_CTX in whole blocks (no empty one);
    # a hang at an empty-size launch would be a named warning (`no_work`), never an error.
    empty = [f for f in doc["findings"] if f["kind"].startswith("deadlock.")]
    assert all(f["severity"] == "warning" and f["evidence"]["input"]["no_work"] for f in empty)
    assert doc["simulation"]["runs"][0]["outcome"] in ("completed", "covered")


def tmem_copy_kernel() -> str:
    """A paired (2-CTA) module whose MMA partition copies its scales from shared to tensor memory
    (`tmem_copy`, tcgen05.cp) and commits."""
    scales = "!ttg.memdesc<1x256xi8, #shared, #smem, mutable>"
    tscales = "!ttg.memdesc<128x4xi8, #tmem_scales, #ttng.tensor_memory, mutable>"
    return ('#tmem_scales = #ttng.tensor_memory_scales_encoding<>\n' + module(f'''  tt.func public @k() {{
    %c0_i32 = arith.constant 0 : i32
    %src = ttg.local_alloc : () -> {scales}
    %dst = ttng.tmem_alloc : () -> {tscales}
    %dones = ttg.local_alloc : () -> {BARS}
    %done = ttg.memdesc_index %dones[%c0_i32] : {BARS} -> {BAR}
    ttng.init_barrier %done, 1 : {BAR}
    ttng.tmem_copy %src, %dst : {scales}, {tscales}
    ttng.tc_gen5_commit %done : {BAR}
    ttng.wait_barrier %done, %c0_i32 : {BAR}
    tt.return
  }}
''', extra="tlx.enable_paired_cta_mma = true, "))


def test_a_paired_tmem_copy_is_the_leaders_for_both_ctas() -> None:
    """The lowering predicates tcgen05.cp on the leader CTA in a 2-CTA module
    (TensorMemoryCopyOpConversion): CTA 0's tensor-core agent copies both CTAs' scales, CTA 1
    issues nothing, and the commit after it covers the copy (a tcgen05 agent)."""
    from dataclasses import replace

    from barrier_viz.analyses.sim.machine import Params

    fn = _fn(tmem_copy_kernel())
    params = choose_params(fn, Params())
    result = run(fn, replace(params, track_races=True), policy="favorable")
    assert result.outcome == "completed", result.reason
    m = result.machine
    copies = [a for log in m.hb.log.values() for a in log if a.op.name == "ttng.tmem_copy"]
    assert copies and all(a.thread < 0 for a in copies)  # asynchronous: a tcgen05 agent
    assert {m.threads[m.agent_owner[a.thread]].cta for a in copies} == {0}
    homes = {a.region.storage[-1] if str(a.region.storage[-1]).startswith("cta") else "cta0" for a in copies}
    assert homes == {"cta0", "cta1"}
