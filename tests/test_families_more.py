"""Rules changed for kernels of the issue-11 families beyond the shared corpus
(`evals/gen/families_more.py` compiles them; nothing of them is kept here).

Each test runs `check` on a hand-written minimal reproduction of the shape the compiled tutorial
has (`fixtures/families_more/`), with the kernel engineer's reason in the docstring, and on the
edit of it that is really wrong, which must still be found.
"""

from __future__ import annotations

from pathlib import Path

from barrier_viz.analyses.verdicts import check
from barrier_viz.analysis import Analysis
from barrier_viz.session import select

FIX = Path(__file__).parent / "fixtures" / "families_more"
TURN = FIX / "pingpong_turn_token.ttgir"
PEEL = FIX / "peeled_step_block_multiple.ttgir"


def _findings(path: Path, simulate: bool = True):
    return check(Analysis(select(str(path), None, None, require_function=True)), simulate=simulate).findings


def _errors(path: Path, simulate: bool = True) -> list[str]:
    return sorted(f.kind for f in _findings(path, simulate) if f.severity.value == "error")


def _n_ctx_multiple(path: Path) -> int:
    from barrier_viz.analyses.launch.input_points import model_of

    model = model_of(Analysis(select(str(path), None, None, require_function=True)))
    return next(a.divisibility for a in model.args if a.name == "N_CTX")


def _edit(src: Path, tmp_path: Path, *pairs: tuple[str, str]) -> Path:
    text = src.read_text()
    for old, new in pairs:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    out = tmp_path / src.name
    out.write_text(text)
    return out


# -- a turn token between two consumer warpgroups (TLX hopper-persistent-gemm-ws-pingpong) --------
def test_turn_token_with_constant_opposite_parities_is_the_protocol():
    """TLX's ping-pong GEMM without named barriers (USE_NAMED_BARRIER=False) hands the tensor
    cores between its two consumer warpgroups with one count-1 barrier: consumer 0 waits parity
    1, consumer 1 parity 0, each arrives after its wait. Each arrival flips the parity, so the
    parity says whose turn it is; neither side can arrive twice in a row, so it never laps. The
    constant parities are the protocol, not a lost flip: no `phase.constant_in_loop`."""
    assert _errors(TURN) == []


def test_turn_token_with_equal_parities_is_still_a_constant_phase(tmp_path):
    """Both sides polling parity 1: after the first hand-over both pass whenever an even number
    of turns completed, so the two consumers run together (and then hang)."""
    path = _edit(TURN, tmp_path, ("ttng.wait_barrier %bar, %c0, %true_0", "ttng.wait_barrier %bar, %c1, %true_0"))
    assert "phase.constant_in_loop" in _errors(path, simulate=False)


def test_turn_token_that_one_side_never_hands_back_is_still_a_constant_phase(tmp_path):
    """Consumer 1 waits its turn but never arrives: no hand-over, consumer 0 waits forever for a
    parity that cannot come back; the static rule and the simulation both say so."""
    text = TURN.read_text()
    i = text.index("partition1(")
    body = text[i:]
    body = body.replace("        ttng.arrive_barrier %bar, 1 : !ttg.memdesc<1xi64, #shared1, #smem, mutable>\n", "", 1)
    path = tmp_path / TURN.name
    path.write_text(text[:i] + body)
    errors = _errors(path)
    assert "phase.constant_in_loop" in errors
    assert any(k.startswith("deadlock.") for k in errors)


# -- a trip count N // BLOCK: N is a multiple of the block (TLX blackwell FA backward) -------------
def test_floor_divided_trip_count_takes_whole_blocks():
    """TLX's FA backward (`blackwell_fa_ws_pipelined_persistent.py`, `_attn_bwd_ws`) computes
    `num_steps = N_CTX // BLOCK_M1`; its MMA partition peels the first step before its loop and
    the host asserts `N_CTX % 128 == 0`. A floor-divided size drops a partial block, so the
    kernel is written for N_CTX a multiple of 64 (and at least one block): N_CTX = 16, where
    num_steps = 0 and the peeled wait has no producer, is not a launch of this kernel. No verdict;
    the main simulation and the input points run whole blocks (N_CTX = 64 is the boundary)."""
    assert _n_ctx_multiple(PEEL) == 64
    found = _findings(PEEL)
    assert [f.kind for f in found if f.severity.value == "error"] == []
    assert not any("N_CTX=16" in f.message for f in found)


def test_a_kernel_that_needs_two_blocks_still_hangs_at_one(tmp_path):
    """The block rule keeps the smallest whole launch: a consumer that peels two steps before
    its loop hangs at N_CTX = 64 (one step), and that launch is still simulated and named."""
    second = ("      ttng.arrive_barrier %d, 1 : !ttg.memdesc<1xi64, #shared1, #smem, mutable>\n"
              "      scf.for %j = %c1 to %arg2 step %c1  : i32 {")
    path = _edit(PEEL, tmp_path, (second, second.replace(
        "      scf.for %j = %c1",
        "      ttng.wait_barrier %r, %c1, %true_0 : !ttg.memdesc<1xi64, #shared1, #smem, mutable>\n"
        "      ttng.arrive_barrier %d, 1 : !ttg.memdesc<1xi64, #shared1, #smem, mutable>\n"
        "      scf.for %j = %c1").replace("%c1 to %arg2", "%c2 to %arg2")), ("%c1 = arith.constant 1 : i32\n      %true_0",
                                                                         "%c1 = arith.constant 1 : i32\n      %c2 = arith.constant 2 : i32\n      %true_0"))
    found = [f for f in _findings(path) if f.severity.value == "error"]
    assert any(f.kind.startswith("deadlock.") and "N_CTX=64" in f.message for f in found), [f.message for f in found]


def test_ceil_divided_trip_count_keeps_ragged_launches(tmp_path):
    """`(N + 63) // 64` is a ceil-division: the kernel handles a partial block, so N_CTX = 16 is
    a launch it takes (one step) and stays among the simulated ones; this one completes there."""
    path = _edit(PEEL, tmp_path, ("%num_steps = arith.divsi %N_CTX, %c64_i32 : i32",
                                  "%c63_i32 = arith.constant 63 : i32\n    %up = arith.addi %N_CTX, %c63_i32 : i32\n"
                                  "    %num_steps = arith.divsi %up, %c64_i32 : i32"))
    assert _n_ctx_multiple(path) == 16  # tt.divisibility only
    assert _errors(path) == []


# -- Gluon tutorial 08 (matmul_warp_specialized_kernel): the epilogue releases the *next* slot -----
NEXT = FIX / "acc_release_next_slot.ttgir"


def test_releasing_the_next_accumulator_slot_hangs_only_if_the_mma_warp_stalls_for_its_own_mma():
    """Tutorial 08's epilogue advances its counter before `mbarrier.arrive(acc_empty_bars.index(
    acc_state.index))`, so tile t releases slot (t+1) % 2, not the slot it read. Memory is still
    ordered (the MMA partition's acquire of a slot waits for a later tile's release). The only
    hang needs the epilogue's release of slot 1 (tile 0) to land before the MMA warp's very next
    instruction after committing tile 0, its pre-inverted acquire of slot 1: the epilogue must
    first see the commit, i.e. the tile's MMAs must finish while the issuing warp has not moved
    on. A tcgen05 completion lands after the issuer's next wait polls (machine.arrive_async):
    that schedule is not one the hardware takes, and the kernel is not reported (issue 11 named
    this file as a false deadlock)."""
    assert [f for f in _findings(NEXT) if f.severity.value == "error"] == []


def test_releasing_the_next_slot_after_a_software_signal_is_a_timing_dependent_hang(tmp_path):
    """The same protocol with the MMA warp's end-of-tile signal as a plain `arrive_barrier`: the
    epilogue can answer it within a few hundred cycles, which a descheduled MMA warp may not
    have reached its next wait by. That hang the hardware can take, so it is still reported."""
    path = _edit(NEXT, tmp_path, ("ttng.tc_gen5_commit %ready, %true_0 :", "ttng.arrive_barrier %ready, 1, %true_0 :"))
    found = [f for f in _findings(path) if f.severity.value == "error"]
    assert [f.kind for f in found] == ["deadlock.parity_cadence"] and "overrun" in found[0].message


def test_releasing_the_slot_just_read_is_clean(tmp_path):
    path = _edit(NEXT, tmp_path, ("%release = arith.remsi %next, %c2 : i32", "%release = arith.remsi %t, %c2 : i32"))
    assert _errors(path) == []


# -- AutoWS FA backward (tlx/tutorials/fused_attention_ws_device_tma.py): a peeled last step ------
PEELED_LAST = FIX / "peeled_last_step_reacquires.ttgir"


def test_peeled_last_step_reacquires_the_slot_before_reading():
    """AutoWS's `_attn_bwd_persist` (configs_bwd_persist[0]) software-pipelines the Di (delta)
    channel: the loop waits, reads and releases the slot each step, and the peeled last step after
    the loop waits on the full barrier again before its own read. The release in the loop ended
    the previous use; the peeled read is protected by its own wait, not released early."""
    assert _errors(PEELED_LAST) == []


def test_peeled_read_without_its_own_wait_is_still_an_early_release(tmp_path):
    """Without the peeled step's wait, its read follows the loop's release with nothing in
    between: the producer may already be refilling the slot."""
    path = _edit(PEELED_LAST, tmp_path, (
        "      ttng.wait_barrier %f, %lphase, %true : !ttg.memdesc<1xi64, #shared1, #smem, mutable>\n", ""))
    assert "race.early_release" in _errors(path, simulate=False)


# -- explore states the limits check states ----------------------------------------------------------
BULK = FIX / "bulk_copy_barrier.ttgir"


def test_bulk_copy_completes_its_bytes_and_an_unmodelled_op_is_not_a_verdict_in_explore(tmp_path):
    """TLX's FA backward loads m and delta with a bulk copy (`ttg.async_copy_global_to_local ...
    bulk_size ... barrier %b {useBulk = true}`, cp.async.bulk completing bytes on the barrier):
    the interpreter completes its bytes like a TMA load, so check and explore are clean. An op it
    does not model on that barrier (here the same copy under an unknown name) leaves the wait
    stuck: `check` says so as a limit, and `explore` must not turn that stuck state into a
    deadlock verdict: `not_judged`, with the reason, and exit 0."""
    from cli_support import run_cli
    import json as _json

    assert _errors(BULK) == []
    r = run_cli("explore", str(BULK), "--timeout", "5", "--format", "json")
    assert _json.loads(r.stdout)["result"] == "clean_within_bounds" and r.exit_code == 0
    unknown = _edit(BULK, tmp_path, ("ttg.async_copy_global_to_local %arg0", "ttg.async_copy_global_to_local_v9 %arg0"))
    assert _errors(unknown) == []
    r = run_cli("explore", str(unknown), "--timeout", "5", "--format", "json")
    doc = _json.loads(r.stdout)
    assert doc["result"] == "not_judged" and "does not model" in doc["reason"], doc["result"]
    assert not [f for f in doc["findings"] if f["severity"] == "error"] and r.exit_code == 0
