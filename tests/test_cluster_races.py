"""The cross-CTA race check (`cluster_races.cluster_races`) on hand-written minimal IR.

Each test states what the hardware does: a phase that completes before the bytes it should
count have landed lets the reader in early (a race), and the run that shows it may then hang
or hit a slot anomaly; the races before that stop are still real. A correct kernel of the same
shape stays clean."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from barrier_viz.analyses.cluster.races import races_stand, cluster_races
from barrier_viz.analyses.sim.machine import Params
from barrier_viz.analyses.sim.schedule import RunResult, run
from barrier_viz.ir.parse import parse_ir

from cli_support import check_text, run_cli

BAR = "!ttg.memdesc<1xi64, #shared, #smem, mutable>"
BARS = "!ttg.memdesc<1x1xi64, #shared, #smem, mutable>"
PART = "!ttg.memdesc<2x1xf32, #shared, #smem, mutable>"
PARTS = "!ttg.memdesc<2x2x1xf32, #shared, #smem, mutable>"
RESP = "!ttg.memdesc<1xui128, #shared, #smem, mutable>"
HEADER = ('#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>\n'
          '#smem = #ttg.shared_memory\n'
          '#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], '
          'order = [0, 1]}>\n')


def module(body: str, ctas: int) -> str:
    dims = (f'"ttg.cluster-dim-x" = {ctas} : i32, "ttg.cluster-dim-y" = 1 : i32, "ttg.cluster-dim-z" = 1 : i32, '
            if ctas > 1 else "")
    return HEADER + f'module attributes {{{dims}"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32}} {{\n' \
        + body + "}\n"


def reduction(expect: int) -> str:
    """A 2-CTA reduction, twice (one slot of `parts` per round): each CTA stores its partial
    (8 bytes) into its peer's slot with `async_remote_shmem_store ... barrier`, which completes
    8 bytes on the peer's `red`; each CTA arms `red` with `expect` bytes, waits, and reads the
    partial its peer stored. The correct expect is the peer's 8 bytes; 0 leaves them out."""
    return f'''  tt.func public @k() {{
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c2_i32 = arith.constant 2 : i32
    %true = arith.constant true
    %reds = ttg.local_alloc : () -> {BARS}
    %red = ttg.memdesc_index %reds[%c0_i32] : {BARS} -> {BAR}
    ttng.init_barrier %red, 1 : {BAR}
    %parts = ttg.local_alloc : () -> {PARTS}
    ttg.warp_specialize(%red, %parts) attributes {{requestedRegisters = array<i32: 24>}}
    default {{
      %rank = nvg.cluster_id
      %peer = arith.xori %rank, %c1_i32 : i32
      %t = arith.constant dense<0.0> : tensor<2x1xf32, #blocked>
      scf.for %i = %c0_i32 to %c2_i32 step %c1_i32 : i32 {{
        %ph = arith.andi %i, %c1_i32 : i32
        %part = ttg.memdesc_index %parts[%i] : {PARTS} -> {PART}
        ttng.barrier_expect %red, {expect}, %true : {BAR}
        ttg.async_remote_shmem_store %t, rank %peer, %part barrier %red : tensor<2x1xf32, #blocked> -> {PART} barrier_ty {BAR}
        ttng.wait_barrier %red, %ph : {BAR}
        %x = ttg.local_load %part : {PART} -> tensor<2x1xf32, #blocked>
      }}
      ttg.warp_yield
    }}
    partition0(%r: {BAR}, %p: {PARTS}) num_warps(1) {{
      ttg.warp_return
    }} : ({BAR}, {PARTS}) -> ()
    tt.return
  }}
'''


def clc(consumer_parity: int) -> str:
    """One CTA asks cluster launch control for the next tile and reads the answer itself:
    `expect 16` + `async_clc_try_cancel` on `clc_bar`, then `wait_barrier %clc_bar, parity` and
    `clc_query_cancel` of the response. The response lands some time after the request; the
    consumer's first wait polls parity 0 of the fresh barrier (it passes once the answer has
    come). Parity 1 passes at once, before the answer."""
    return f'''  tt.func public @k() {{
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %true = arith.constant true
    %ph = arith.constant {consumer_parity} : i32
    %bars = ttg.local_alloc : () -> {BARS}
    %clc_bar = ttg.memdesc_index %bars[%c0_i32] : {BARS} -> {BAR}
    ttng.init_barrier %clc_bar, 1 : {BAR}
    %resp = ttg.local_alloc : () -> {RESP}
    ttg.warp_specialize(%clc_bar, %resp) attributes {{requestedRegisters = array<i32: 24>}}
    default {{
      ttng.barrier_expect %clc_bar, 16, %true : {BAR}
      ttng.async_clc_try_cancel %clc_bar, %resp : {BAR}, {RESP}
      ttng.wait_barrier %clc_bar, %ph, %true : {BAR}
      %tile:3 = ttng.clc_query_cancel %resp : ({RESP}) -> (i32, i32, i32)
      ttg.warp_yield
    }}
    partition0(%b: {BAR}, %r: {RESP}) num_warps(1) {{
      ttg.warp_return
    }} : ({BAR}, {RESP}) -> ()
    tt.return
  }}
'''




def _errors(doc: dict, prefix: str) -> list[dict]:
    return [f for f in doc["findings"] if f["kind"].startswith(prefix) and f["severity"] == "error"]


def _fn(text: str):
    return next(op for op in parse_ir(text).walk() if op.name == "tt.func")


def test_an_expect_that_leaves_out_the_peers_bytes_lets_the_reader_in_before_the_remote_store(tmp_path: Path) -> None:
    """Armed for 0 bytes, `red` completes at the expect itself: the wait passes and the CTA reads
    `part` while the peer's store into it is still in flight. The late 8 bytes then count
    against the next phase, which never returns to zero: the run hangs. The race came first,
    on a schedule the hardware takes, so it is reported (naming both CTAs), not dropped with
    the run that hung."""
    text = module(reduction(expect=0), ctas=2)
    stuck = run(_fn(text), Params(track_races=True), "favorable")
    assert stuck.outcome == "deadlock"
    doc = check_text(tmp_path, text)
    races = _errors(doc, "race.")
    assert races, doc["findings"]
    lines = text.splitlines()
    store = next(i for i, s in enumerate(lines, 1) if "async_remote_shmem_store" in s)
    load = next(i for i, s in enumerate(lines, 1) if "ttg.local_load %part" in s)
    assert any({store, load} <= set(f["lines"]) for f in races), races
    assert {p for f in races for p in f["partitions"]} >= {"cta0.default", "cta1.default"}


def test_the_expect_that_counts_the_peers_bytes_is_clean(tmp_path: Path) -> None:
    """Armed for the peer's 8 bytes, the phase completes when the store has landed: the read
    is ordered after the peer's write, in both iterations."""
    doc = check_text(tmp_path, module(reduction(expect=8), ctas=2))
    assert not _errors(doc, ""), doc["findings"]


def test_a_clc_consumer_polling_the_wrong_parity_reads_the_response_before_it_lands(tmp_path: Path) -> None:
    """With parity 1 the wait passes on the fresh barrier at once, and `clc_query_cancel` reads
    the response try-cancel has not written yet: a race on the response buffer, in a single
    CTA (no static rule follows that buffer). The run that lands the answer at once hangs
    instead (the wait then needs a second phase): both are reported."""
    doc = check_text(tmp_path, module(clc(consumer_parity=1), ctas=1))
    races = [f for f in _errors(doc, "race.") if "first" in f["evidence"]]  # the run's race pair
    assert races, doc["findings"]
    ops = {f["evidence"]["first"]["op"] for f in races} | {f["evidence"]["second"]["op"] for f in races}
    assert ops == {"ttng.async_clc_try_cancel", "ttng.clc_query_cancel"}


def test_a_clc_consumer_waiting_for_the_answer_is_clean(tmp_path: Path) -> None:
    """Parity 0 blocks until the answer lands (the run holds it back until nothing else can go
    on): the query is ordered after try-cancel's write."""
    doc = check_text(tmp_path, module(clc(consumer_parity=0), ctas=1))
    assert not _errors(doc, ""), doc["findings"]


def test_races_of_a_run_the_model_could_not_follow_are_not_kept() -> None:
    """A run the interpreter could not run faithfully (`not_simulated`) says nothing about the
    order of what came before: its races are dropped; a completed, bounded or hung run's stand."""
    assert not races_stand(RunResult("not_simulated", "favorable", 0, None, reason="x"))
    assert not races_stand(RunResult("limit", "favorable", 0, None))
    for outcome in ("completed", "covered", "bound_reached"):
        assert races_stand(RunResult(outcome, "favorable", 0, None))


def test_a_single_cta_kernel_without_clc_gets_no_run_race_verdicts() -> None:
    """Races inside one CTA stay with the static rules: without a CLC response to follow, a
    single-CTA kernel is not run for races here."""
    text = module(reduction(expect=8), ctas=1)
    assert cluster_races(_fn(text), Params(), 2) == []


CASES = Path(__file__).resolve().parent.parent / "evals" / "cases"


def _case_races(tmp_path: Path, case: str) -> list[dict]:
    """race.* errors of `check` on a committed eval case's input (the fork's own kernel)."""
    src = CASES / case / "input.ttgir.gz"
    if not src.exists():
        pytest.skip(f"{src} absent")
    r = run_cli("check", str(src), "--format", "json")
    assert r.exception is None, r.exception
    return _errors(json.loads(r.stdout), "race.")


def _at(races: list[dict], line: int, partition: str) -> bool:
    return any(line in f["lines"] and partition in f["partitions"] for f in races)


def test_the_leaders_paired_mma_reading_its_own_ctas_unwaited_tiles_is_a_race(tmp_path: Path) -> None:
    """TLX 2-CTA FA backward without the k_fulls / v_fulls waits (7c8fadc78's buggy side): the
    leader's paired MMA (Dot 1 at line 467, Dot 2 at line 477) reads k/v tiles its own CTA's
    loader is still filling. Both sides are in CTA 0, but the MMA is a cluster op ordered only
    through the leader's barriers, which the per-CTA static rules cannot follow; the fixed side
    (with the waits) is clean."""
    races = _case_races(tmp_path, "regression.tlx_fa_bwd_2cta_kv_fulls.7c8fadc78.buggy")
    assert _at(races, 467, "cta0.partition1") and _at(races, 477, "cta0.partition1"), races
    assert not _case_races(tmp_path, "regression.tlx_fa_bwd_2cta_kv_fulls.7c8fadc78.fixed")


def test_the_epilogues_read_after_the_last_tile_is_seen_by_a_run_that_finishes(tmp_path: Path) -> None:
    """8c1efd3d3's buggy side: dsT_tmem_fulls expects one arrival, so the leader's Dot 4 reads
    CTA 1's dsT before CTA 1 stored it, in the loop (line 524) and in the epilogue after the last
    tile (line 548). A run stopped once every loop ran twice never gets to the epilogue; the race
    run goes on to the end."""
    races = _case_races(tmp_path, "regression.tlx_fa_bwd_2cta_dsT.8c1efd3d3.buggy")
    assert _at(races, 524, "cta0.partition1") and _at(races, 548, "cta0.partition1"), races
    assert not _case_races(tmp_path, "regression.tlx_fa_bwd_2cta_dsT.8c1efd3d3.fixed")


def test_a_run_that_hangs_in_the_loop_is_followed_by_a_shorter_launch_for_the_epilogue(tmp_path: Path) -> None:
    """3b595a6bc's buggy side: without the q_fulls waits the producer overruns and the main
    launch hangs inside the loop; the in-loop Dot 4 race (line 524) comes before the hang. The
    epilogue's Dot 4 (line 547) is reached at a launch of one tile, where the loop ends first."""
    races = _case_races(tmp_path, "regression.tlx_fa_bwd_2cta_q_fulls.3b595a6bc.buggy")
    assert _at(races, 524, "cta0.partition1") and _at(races, 547, "cta0.partition1"), races
    assert not _case_races(tmp_path, "regression.tlx_fa_bwd_2cta_q_fulls.3b595a6bc.fixed")
