"""Values loaded from memory as inputs of the simulation (issue 21 point 1): when a hang between
a partition whose loop count was loaded and a peer is a verdict, and the memory launches
(`launch.memory_points`) that vary the loaded values.

The rule (`deadlock._related`): a loaded trip count is an input, the same wherever it is read,
so a hang between partitions whose work the simulated memory decides is the kernel's at that
memory. A peer whose count the memory does not decide (its loops run on integer arguments)
must only match where the loaded values decided how a barrier they share is used; there the
host may relate the two (a total passed as an argument) in a way the IR does not say, and the
hang stays a stated limit.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from barrier_viz.analyses.program.loaded import Memory

from cli_support import check_text
from test_machine import BAR, _check, kernel, one_barrier

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "evals" / "cases"
OUT_DD = ROOT / "evals" / "gen" / "out_dd"


def _case(name: str) -> str:
    return gzip.decompress((CASES / name / "input.ttgir.gz").read_bytes()).decode()


def _hangs(doc: dict) -> list[dict]:
    return [f for f in doc["findings"] if f["severity"] == "error" and f["outcome"].startswith("hang")]


# -- the H200-labelled hangs of the jagged reduction ------------------------------------------------
@pytest.mark.parametrize("case", [
    # The reducer's ready wait polls the flipped parity (H200: hang, a fault under `even`).
    "gpu-h200.dd-jagged_norm.flip_parity_data_L63",
    # The loader's empty wait polls the flipped parity: it waits for a release nobody makes yet.
    "gpu-h200.dd-jagged_norm.flip_parity_release_L124",
    # The writer releases the other hand-off slot (H200: hang under every schedule).
    "gpu-h200.dd-jagged_norm.other_slot_handoff_L155",
    # The reducer hands off on the other slot: each pair of segments still completes both slots,
    # so it hangs only when a program gets an odd number of segments (H200: `odd`, `ragged`).
    "gpu-h200.dd-jagged_norm.other_slot_handoff_L99",
])
def test_jagged_hangs_are_judged_where_the_writer_reads_no_offsets(tmp_path, case):
    """The reducer's per-segment row loop runs `offs[s + 1] - offs[s]` iterations; the loader
    reads the same offsets; the writer reads none (one result per segment, `S` of them). The
    writer shares only the hand-off barriers with the reducer, which the reducer uses once per
    segment whatever the offsets say: nothing is assumed between them, so the hang is a verdict
    (it used to stop at `limit`, `0 errors`)."""
    doc = check_text(tmp_path, _case(case))
    assert _hangs(doc), [(f["kind"], f["severity"]) for f in doc["findings"]]
    assert doc["summary"]["verdict"] == "findings"


def test_the_odd_segment_count_hang_is_named_by_its_launch(tmp_path):
    """other_slot_handoff_L99 completes at the main launch (an even number of segments per
    program); the input point where a program gets one or five segments hangs, and the
    finding says which launch."""
    doc = check_text(tmp_path, _case("gpu-h200.dd-jagged_norm.other_slot_handoff_L99"))
    (f,) = _hangs(doc)
    assert f["message"].startswith("Hangs when the loop at line 55 (default) runs")
    assert all(r["outcome"] != "deadlock" for r in doc["simulation"]["runs"])


# -- which peers must match a loaded count ----------------------------------------------------------
def _cycle_kernel(row_loop: str) -> str:
    """default reads `n` from memory and runs a row loop (`row_loop`, no barrier inside), then
    waits on %bar before it arrives on %bar2; partition0 (no loads) waits on %bar2 before it
    arrives on %bar: a cross-partition cycle at every input."""
    return kernel("%ptr: !tt.ptr<i32>", "%bar, %bar2, %ptr", one_barrier() + one_barrier("bar2"),
                  "      %c0 = arith.constant 0 : i32\n      %c1 = arith.constant 1 : i32\n"
                  "      %n = tt.load %ptr : !tt.ptr<i32>\n" + row_loop +
                  f"      ttng.wait_barrier %bar, %c0 : {BAR}\n      ttng.arrive_barrier %bar2, 1 : {BAR}",
                  f"%b1: {BAR}, %b2: {BAR}, %p1: !tt.ptr<i32>",
                  "      %z = arith.constant 0 : i32\n"
                  f"      ttng.wait_barrier %b2, %z : {BAR}\n      ttng.arrive_barrier %b1, 1 : {BAR}",
                  f"{BAR}, {BAR}, !tt.ptr<i32>")


ROW_LOOP = ("      %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %c0) -> (i32) : i32 {\n"
            "        %a2 = arith.addi %a, %i : i32\n        scf.yield %a2 : i32\n      }\n")


def test_a_loaded_loop_that_touches_no_shared_barrier_does_not_stop_the_verdict(tmp_path: Path) -> None:
    """A reducer loops over its segment's rows (a count read from memory) with no barrier
    inside, then hands off. Its peer never reads the offsets, but how many rows there were
    cannot change how the two use the barriers they share: the cycle is a verdict."""
    code, doc = _check(tmp_path, _cycle_kernel(ROW_LOOP))
    assert [f["kind"] for f in doc["findings"] if f["severity"] == "error"] == ["deadlock.cycle"]
    assert code == 1


def test_a_phase_carried_out_of_a_loaded_loop_is_decided_by_the_load(tmp_path: Path) -> None:
    """The same kernel, but default waits on %bar with a parity it carried out of the row loop
    (one flip per row): which phase it polls depends on the loaded count, and the peer that
    arrives on %bar reads no memory. Whether their counts agree is the host's business (a row
    total passed as an argument): no verdict, a stated limit."""
    flips = ("      %ph = scf.for %i = %c0 to %n step %c1 iter_args(%a = %c0) -> (i32) : i32 {\n"
             "        %a2 = arith.xori %a, %c1 : i32\n        scf.yield %a2 : i32\n      }\n")
    text = _cycle_kernel(flips).replace(f"ttng.wait_barrier %bar, %c0 : {BAR}", f"ttng.wait_barrier %bar, %ph : {BAR}")
    code, doc = _check(tmp_path, text)
    assert not [f for f in doc["findings"] if f["kind"].startswith("deadlock")]
    assert doc["summary"]["verdict"] == "not judged" and code == 4
    assert any("trip count loaded from memory" in f["message"] for f in doc["findings"]
               if f["kind"] == "limit.not_judged")


# -- memory launches --------------------------------------------------------------------------------
def test_unequal_segments_read_as_offsets_and_as_sizes() -> None:
    """The ragged memory launch: segment i spans multiples[i % 5] * unit, read either way, and an
    empty segment keeps the prefix sums monotone."""
    ragged = ((0, (64, (5, 2, 1, 4, 3))),)
    offs = Memory(styles=((0, "offsets"),), ragged=ragged)
    assert [offs.value(0, i, 16) for i in range(7)] == [0, 320, 448, 512, 768, 960, 1280]
    sizes = Memory(styles=((0, "sizes"),), ragged=ragged)
    assert [sizes.value(0, i, 16) for i in range(6)] == [320, 128, 64, 256, 192, 320]
    hole = Memory(styles=((0, "offsets"),), ragged=ragged, empty=((0, 2),))
    assert [hole.value(0, i, 16) for i in range(5)] == [0, 320, 448, 448, 704]


def test_the_jagged_base_completes_with_unequal_segments(tmp_path):
    """The correct jagged reduction (H200: ok under `ragged`) also completes when its segments
    run 5, 2, 1, 4, 3 row blocks: counts that are not multiples of its 3-slot ring."""
    doc = check_text(tmp_path, _case("gpu-h200.dd-jagged_norm.base"))
    ragged = [p for p in doc["input_points"]["points"] if "segments of" in p.get("loaded", "")]
    assert ragged and all(p["outcome"] == "completed" for p in ragged)
    assert doc["summary"]["verdict"] == "clean"


def test_a_hang_that_needs_two_arrays_to_disagree_is_not_judged(tmp_path):
    """TLX's jagged attention reads the query and the key offsets at the same index (its batch
    element). With the key segment empty and the query segment not, the MMA partition's peeled
    first KV step waits for a softmax that never comes; with both empty the program has no
    work and completes. Whether a host passes keys that are empty where queries are not is not
    in the IR: not judged, with the reason, never a deadlock."""
    doc = check_text(tmp_path, (OUT_DD / "tlx" / "_attn_fwd_pipeline__BM128_BN64_KV2.ttgir").read_text())
    assert not [f for f in doc["findings"] if f["kind"].startswith("deadlock")]
    (limit,) = [f for f in doc["findings"] if f["kind"] == "limit.not_judged"]
    assert "seq_offsets[1] = seq_offsets[0]" in limit["message"]
    assert "same segment of seq_offsets_q" in limit["message"] and "with both empty it completes" in limit["message"]
