"""Cluster shapes of kernels the project had not seen (the fork's TLX unit tests, compiled for
issue 12's "cluster kernels we have not seen" point) that once drew a false verdict, on
hand-written minimal IR. Each test says what the hardware does and why the kernel is correct;
each has a counterpart where the same shape is broken and the verdict must stay."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_support import check_text, run_cli

BAR = "!ttg.memdesc<1xi64, #shared, #smem, mutable>"
BARS2 = "!ttg.memdesc<2xi64, #shared, #smem, mutable>"
REMOTE = "!ttg.memdesc<1xi64, #shared, #ttng.shared_cluster_memory, mutable>"
HEADER = ('#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>\n'
          '#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>\n'
          '#nvmma = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>\n'
          '#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1>\n'
          '#smem = #ttg.shared_memory\n')


def module(body: str, dims: tuple[int, int, int] = (2, 1, 1), extra: str = "") -> str:
    x, y, z = dims
    return (HEADER + f'module attributes {{{extra}"ttg.cluster-dim-x" = {x} : i32, "ttg.cluster-dim-y" = {y} : i32, '
            f'"ttg.cluster-dim-z" = {z} : i32, "ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, '
            f'ttg.target = "cuda:100"}} {{\n' + body + "}\n")


def check(tmp_path: Path, text: str) -> list[dict]:
    return [f for f in check_text(tmp_path, text)["findings"] if f["severity"] == "error"]


def kinds(findings: list[dict]) -> list[str]:
    return sorted(f["kind"] for f in findings)


# --------------------------------------------------------------------------------------------
# A rank-guarded expect, completed by the peer's remote copy after the guard

def remote_copy(copy_elems: int = 1024, wait: bool = True) -> str:
    """test_async_remote_shmem_copy's shape: CTA 1 alone arms its barrier for 4096 bytes (under
    `if rank == 1`); CTA 0, under its own `if rank == 0`, bulk-copies a buffer into CTA 1's
    shared memory, completing the copy's bytes on CTA 1's barrier; CTA 1 waits and reads."""
    buf = f"!ttg.memdesc<{copy_elems}xf32, #shared, #smem, mutable>"
    return module(f'''  tt.func public @k() {{
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %true = arith.constant true
    %buf = ttg.local_alloc : () -> {buf}
    %bars = ttg.local_alloc : () -> {BAR}
    %bar = ttg.memdesc_index %bars[%c0_i32] : {BAR} -> {BAR}
    ttng.init_barrier %bar, 1 : {BAR}
    %rank = nvg.cluster_id
    %is1 = arith.cmpi eq, %rank, %c1_i32 : i32
    scf.if %is1 {{
      ttng.barrier_expect %bar, 4096, %true : {BAR}
    }}
    %is0 = arith.cmpi eq, %rank, %c0_i32 : i32
    scf.if %is0 {{
      ttg.async_remote_shmem_copy %buf, rank %c1_i32, %buf barrier %bar : {buf} -> {buf} barrier_ty {BAR}
    }}
    scf.if %is1 {{
{f"      ttng.wait_barrier %bar, %c0_i32, %true : {BAR}" if wait else ""}
      %v = ttg.local_load %buf : {buf} -> tensor<{copy_elems}xf32, #blocked>
    }}
    tt.return
  }}
''')


def test_a_peers_remote_copy_after_the_rank_guard_completes_the_armed_phase(tmp_path: Path) -> None:
    """The expect's block is the body of `if rank == 1`; the copy that completes its phase is
    issued after that `if`, by CTA 0: 4096 bytes land on CTA 1's barrier, which is the only one
    armed (CTA 0 never runs the expect), so every armed phase completes."""
    assert check(tmp_path, remote_copy()) == []


def test_a_remote_copy_of_half_the_armed_bytes_is_still_a_mismatch(tmp_path: Path) -> None:
    """The same kernel copying 2048 bytes: CTA 1's phase waits for 2048 bytes that never come."""
    errs = check(tmp_path, remote_copy(copy_elems=512))
    assert kinds(errs) == ["expect.bytes_mismatch"]
    assert errs[0]["evidence"]["per_cta"] == [0, 2048]


def test_reading_the_copied_buffer_without_the_wait_is_a_race(tmp_path: Path) -> None:
    """Without its wait CTA 1 arms a phase nobody waits on (no hang), but it reads the buffer
    the peer's copy is still writing: that is a race, and it must still be reported. And as
    nothing in CTA 1 waits for the copy, CTA 1 can exit before it lands (race.remote_after_exit)."""
    errs = check(tmp_path, remote_copy(wait=False))
    assert kinds(errs) == ["race.remote_after_exit", "race.unsynchronized_read"]


# --------------------------------------------------------------------------------------------
# A barrier slot named by the CTA rank, and phases a CTA arms but never waits on

def remote_store_sum(every_cta_waits: bool = False, store_bytes: int = 256, wait_pred: bool = False) -> str:
    """test_async_remote_shmem_store's shape (2 CTAs): every CTA arms `barriers[1]` for 256
    bytes; CTA r > 0 stores its partial sum into CTA 0's slot r, completing the bytes on
    `barriers[cluster_cta_rank()]` of CTA 0; only CTA 0 waits on `barriers[1]`."""
    elems = store_bytes // 4
    buf = f"!ttg.memdesc<{elems}xf32, #shared, #smem, mutable>"
    bufs = f"!ttg.memdesc<2x{elems}xf32, #shared, #smem, mutable>"
    guard = "%true" if every_cta_waits or wait_pred else "%is0"
    pred = "%is0" if wait_pred else "%true"  # TLX `barrier_wait(bar, phase, pred=rank == 0)`
    return module(f'''  tt.func public @k(%x: tensor<{elems}xf32, #blocked>) {{
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %true = arith.constant true
    %bufs = ttg.local_alloc : () -> {bufs}
    %bars = ttg.local_alloc : () -> {BARS2}
    %b0 = ttg.memdesc_index %bars[%c0_i32] : {BARS2} -> {BAR}
    ttng.init_barrier %b0, 1 : {BAR}
    %b1 = ttg.memdesc_index %bars[%c1_i32] : {BARS2} -> {BAR}
    ttng.init_barrier %b1, 1 : {BAR}
    ttng.barrier_expect %b1, 256, %true : {BAR}
    ttng.cluster_arrive
    ttng.cluster_wait
    %rank = nvg.cluster_id
    %not0 = arith.cmpi ne, %rank, %c0_i32 : i32
    scf.if %not0 {{
      %dst = ttg.memdesc_index %bufs[%rank] : {bufs} -> {buf}
      %mine = ttg.memdesc_index %bars[%rank] : {BARS2} -> {BAR}
      ttg.async_remote_shmem_store %x, rank %c0_i32, %dst barrier %mine : tensor<{elems}xf32, #blocked> -> {buf} barrier_ty {BAR}
    }}
    %is0 = arith.cmpi eq, %rank, %c0_i32 : i32
    scf.if {guard} {{
      ttng.wait_barrier %b1, %c0_i32, {pred} : {BAR}
      %s = ttg.memdesc_index %bufs[%c1_i32] : {bufs} -> {buf}
      %v = ttg.local_load %s : {buf} -> tensor<{elems}xf32, #blocked>
    }}
    tt.return
  }}
''')


def test_a_store_on_the_ranks_own_slot_completes_the_leaders_phase_and_unwaited_phases_stall_nothing(
        tmp_path: Path) -> None:
    """`barriers[cluster_cta_rank()]` is slot 1 in CTA 1, so its store's 256 bytes land on CTA
    0's `barriers[1]`: CTA 0's phase completes. CTA 1 arms its own `barriers[1]` too and nothing
    lands there, but mbarrier waits are CTA-local and no thread of CTA 1 waits on it: an armed
    phase nobody waits on stalls nothing (the test passes on the GPU)."""
    assert check(tmp_path, remote_store_sum()) == []


def test_a_wait_predicated_on_the_leader_rank_is_no_wait_in_the_peer(tmp_path: Path) -> None:
    """The same with the wait written as `barrier_wait(bar, 0, pred=rank == 0)`: CTA 1 runs the
    op with a false predicate, which waits on nothing."""
    assert check(tmp_path, remote_store_sum(wait_pred=True)) == []


def test_a_cta_that_waits_on_a_phase_nothing_completes_still_hangs(tmp_path: Path) -> None:
    """When CTA 1 waits on its `barriers[1]` as well, no byte ever lands there: it hangs."""
    errs = check(tmp_path, remote_store_sum(every_cta_waits=True))
    assert "expect.bytes_mismatch" in kinds(errs)
    mismatch = next(f for f in errs if f["kind"] == "expect.bytes_mismatch")
    assert mismatch["evidence"]["per_cta"] == [256, 0]


def test_a_store_of_fewer_bytes_than_the_leader_armed_is_a_mismatch(tmp_path: Path) -> None:
    errs = check(tmp_path, remote_store_sum(store_bytes=128))
    assert kinds(errs) == ["expect.bytes_mismatch"]
    assert errs[0]["evidence"]["per_cta"][0] == 128


# --------------------------------------------------------------------------------------------
# A single TMA fill outside any loop

def one_tile(in_loop: bool = False) -> str:
    """test_async_dot_blackwell_2cta_tma_ws's shape: the producer partition loads the A tile
    once (no loop) and signals `full`; the MMA partition waits on `full`, runs the MMA, which
    arrives on `done` for the epilogue. With `in_loop`, the producer refills the tile every
    iteration of a K loop and never waits for the MMA to release it."""
    tile = "!ttg.memdesc<128x128xf16, #nvmma, #smem, mutable>"
    desc = "!tt.tensordesc<tensor<128x128xf16, #nvmma>>"
    acc = "!ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>"
    load = (f"      ttng.barrier_expect %f, 32768, %t : {BAR}\n"
            f"      ttng.async_tma_copy_global_to_local %dd[%z, %z] %a, %f, %t : {desc}, {BAR} -> {tile}\n")
    if in_loop:
        load = (f"      %n = arith.constant 4 : i32\n      %one = arith.constant 1 : i32\n"
                f"      scf.for %i = %z to %n step %one : i32 {{\n" + load.replace("      ", "        ") + "      }\n")
        mma = (f"      %n = arith.constant 4 : i32\n      %one = arith.constant 1 : i32\n"
               f"      scf.for %i = %z to %n step %one : i32 {{\n"
               f"        %p = arith.andi %i, %one : i32\n"
               f"        ttng.wait_barrier %f, %p, %t : {BAR}\n"
               f"        ttng.tc_gen5_mma %a, %a, %acc, %false, %t, %d[%t] {{is_async}} : {tile}, {tile}, {acc}, {BAR}\n"
               f"      }}\n")
    else:
        mma = (f"      ttng.wait_barrier %f, %z, %t : {BAR}\n"
               f"      ttng.tc_gen5_mma %a, %a, %acc, %false, %t, %d[%t] {{is_async}} : {tile}, {tile}, {acc}, {BAR}\n")
    return module(f'''  tt.func public @k(%desc: {desc}) {{
    %c0_i32 = arith.constant 0 : i32
    %true = arith.constant true
    %a = ttg.local_alloc : () -> {tile}
    %acc = ttng.tmem_alloc : () -> {acc}
    %fulls = ttg.local_alloc : () -> {BAR}
    %full = ttg.memdesc_index %fulls[%c0_i32] : {BAR} -> {BAR}
    ttng.init_barrier %full, 1 : {BAR}
    %dones = ttg.local_alloc : () -> {BAR}
    %done = ttg.memdesc_index %dones[%c0_i32] : {BAR} -> {BAR}
    ttng.init_barrier %done, 1 : {BAR}
    ttg.warp_specialize(%a, %acc, %full, %done, %desc) attributes {{requestedRegisters = array<i32: 24, 24>}}
    default {{
      ttng.wait_barrier %done, %c0_i32, %true : {BAR}
      ttg.warp_yield
    }}
    partition0(%a: {tile}, %acc: {acc}, %f: {BAR}, %d: {BAR}, %dd: {desc}) num_warps(1) {{
      %z = arith.constant 0 : i32
      %t = arith.constant true
      %false = arith.constant false
{mma}      ttg.warp_return
    }}
    partition1(%a: {tile}, %acc: {acc}, %f: {BAR}, %d: {BAR}, %dd: {desc}) num_warps(1) {{
      %z = arith.constant 0 : i32
      %t = arith.constant true
{load}      ttg.warp_return
    }} : ({tile}, {acc}, {BAR}, {BAR}, {desc}) -> ()
    tt.return
  }}
''', dims=(1, 1, 1))


def test_a_tile_loaded_once_outside_any_loop_has_no_refill_to_race(tmp_path: Path) -> None:
    """One TMA copy fills the tile, once: nothing writes it again while the MMA reads it, so
    there is no refill that would need to wait for the MMA's release."""
    assert not [f for f in check(tmp_path, one_tile()) if f["kind"] == "race.missing_acquire"]


def test_refilling_the_tile_every_iteration_without_its_release_still_races(tmp_path: Path) -> None:
    errs = check(tmp_path, one_tile(in_loop=True))
    assert "race.missing_acquire" in kinds(errs)


# --------------------------------------------------------------------------------------------
# Entry-block barrier inits: hoisted before the cluster's start-up sync by the lowering

def late_init(init_in_branch: bool = False) -> str:
    """test_async_dot_scaled_2cta's shape: CTA 0's `cta_bar` (count 2) is initialised first;
    both CTAs arrive on it remotely and CTA 0 waits; only then, in the source, is the MMA
    barrier `mbar` initialised (entry block), which each CTA waits on after arriving on it
    locally. With `init_in_branch` the `cta_bar` init sits inside an `scf.if`, which the
    lowering neither hoists nor syncs after."""
    init = f"    ttng.init_barrier %cb, 2 : {BAR}\n"
    if init_in_branch:
        init = f"    scf.if %true {{\n  {init}    }}\n"
    return module(f'''  tt.func public @k() {{
    %c0_i32 = arith.constant 0 : i32
    %true = arith.constant true
    %rank = nvg.cluster_id
    %leader = arith.cmpi eq, %rank, %c0_i32 : i32
    %cbs = ttg.local_alloc : () -> {BAR}
    %cb = ttg.memdesc_index %cbs[%c0_i32] : {BAR} -> {BAR}
{init}    %r = ttng.map_to_remote_buffer %cb, %c0_i32 : {BAR} -> {REMOTE}
    ttng.arrive_barrier %r, 1 : {REMOTE}
    ttng.wait_barrier %cb, %c0_i32, %leader : {BAR}
    %mbs = ttg.local_alloc : () -> {BAR}
    %mb = ttg.memdesc_index %mbs[%c0_i32] : {BAR} -> {BAR}
    ttng.init_barrier %mb, 1 : {BAR}
    ttng.arrive_barrier %mb, 1 : {BAR}
    ttng.wait_barrier %mb, %c0_i32, %true : {BAR}
    tt.return
  }}
''')


def test_entry_block_inits_after_a_remote_arrive_are_hoisted_before_the_start_up_sync(tmp_path: Path) -> None:
    """TritonGPUToLLVM's ensureEarlyEntryBarInit moves every entry-block init_barrier to the
    start of the block, and maybeInsertClusterSync fences and cluster-syncs after the last one:
    CTA 1's remote arrive on CTA 0's `cta_bar` runs after CTA 0 initialised it, although a
    later init (`mbar`) is written after the arrive."""
    assert check(tmp_path, late_init()) == []


def test_an_init_the_lowering_does_not_hoist_still_loses_an_early_remote_arrive(tmp_path: Path) -> None:
    """An init outside the entry block is not hoisted nor synced after: CTA 1 can arrive on
    CTA 0's barrier before CTA 0 initialises it, and the init discards that arrival."""
    errs = check(tmp_path, late_init(init_in_branch=True))
    assert any(f["kind"].startswith("deadlock.") for f in errs), errs


@pytest.mark.parametrize("base", ["fbtriton.tlx_ut_remote_copy_v0.sm100", "fbtriton.tlx_ut_remote_store_sum_v0.sm100",
                                  "fbtriton.tlx_ut_dot_2cta_ws_v0.sm100", "fbtriton.tlx_ut_dot_scaled_2cta_v0.sm100"])
def test_the_unit_test_kernels_compiled_by_the_project_are_clean(base: str) -> None:
    """The four kernels themselves (IR the project compiled, evals/cases/<base>.base)."""
    case = Path(__file__).resolve().parents[1] / "evals" / "cases" / f"{base}.base" / "input.ttgir.gz"
    r = run_cli("check", str(case), "--format", "json")
    assert r.exit_code == 0, [f["kind"] for f in r.json()["findings"] if f["severity"] == "error"]
