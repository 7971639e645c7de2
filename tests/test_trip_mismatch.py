"""The cause a kernel engineer names: a trip-count mismatch, its fix hint, and its hang set.

A split-K GEMM whose last split is empty hangs because the MMA partition's peeled first K step
waits unconditionally while the loader's K loop over the split runs no iteration (the fork's
648dca741). That is `deadlock.trip_count_mismatch` with a hint about loop bounds, never a
"cycle, check the parities". Its hang set is the kernel engineer's arithmetic: with SPLIT_K = 4,
`k_tiles = cdiv(K, 64)` leaves a split empty when `cdiv(k_tiles, 4) * 3 >= k_tiles`, i.e.
k_tiles in {1, 2, 3, 5, 6, 9}; the test recomputes that by hand and compares.

Each deadlock kind's fix hint is pinned (a hint follows the cause): parities for a cycle, the
missing arrive for no producer, counts for a cadence, loop bounds for a trip-count mismatch.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from barrier_viz.analyses.launch.hang_set import _periodic, _spans
from barrier_viz.analyses.rules.registry import kind_docs

from cli_support import run_cli
from test_check import FIXTURE, _check, _line, _ops, _replace_line

CASES = Path(__file__).resolve().parents[1] / "evals" / "cases"
TLX = CASES / "regression.tlx_gemm_ws_splitk.648dca741.buggy"
TLX_FIXED = CASES / "regression.tlx_gemm_ws_splitk.648dca741.fixed"
TLX_K = CASES / "regression.tlx_gemm_ws_splitk_runtime_k.648dca741.buggy"
TLX_K_FIXED = CASES / "regression.tlx_gemm_ws_splitk_runtime_k.648dca741.fixed"
METAWS = CASES / "fbtriton-metaws.gemm_splitk_v0.sm100.unguard_peeled_wait_L176"
PERSISTENT = CASES / "fbtriton-metaws.gemm_persistent_few_v0.sm100.unguard_peeled_wait_L109"


def _doc(case: Path, *extra: str) -> dict:
    r = run_cli("check", str(case / "input.ttgir.gz"), "--format", "json", *extra)
    assert r.exception is None and "Traceback" not in r.stderr
    return json.loads(r.stdout)


def _mismatch(doc: dict) -> dict:
    found = [f for f in doc["findings"] if f["kind"] == "deadlock.trip_count_mismatch"]
    assert len(found) == 1, [f["kind"] for f in doc["findings"]]
    return found[0]


def _empty_split(k: int, split_k: int = 4, block: int = 64) -> bool:
    """The kernel's own split arithmetic: some split of cdiv(K, block) K tiles has none."""
    tiles = -(-k // block)
    per = -(-tiles // split_k)
    return any(min(s * per + per, tiles) - s * per <= 0 for s in range(split_k))


def test_the_648dca741_split_k_hang_is_a_trip_count_mismatch():
    f = _mismatch(_doc(TLX))
    assert f["severity"] == "error" and f["outcome"] == "hang"
    # The starved wait first: the MMA partition's peeled B-full wait, starved by the loader's loop.
    assert f["partitions"][:2] == ["partition0", "partition1"]
    assert 164 in f["lines"] and f["evidence"]["mismatch"]["loop_line"] == 248
    assert "Trip-count mismatch" in f["message"] and "ran no iteration" in f["message"]
    assert "loop bounds" in f["suggestion"] and "the parities are not the cause" in f["suggestion"]
    # Source names, never the model's internal ones.
    assert "tile_id" in f["suggestion"] and "carried" not in f["suggestion"] + f["message"]


def test_the_fixed_sides_have_no_mismatch():
    for case in (TLX_FIXED, TLX_K_FIXED):
        if case.exists():
            assert not [x for x in _doc(case)["findings"] if x["kind"].startswith("deadlock.")]


@pytest.mark.parametrize("case", [TLX_K, METAWS], ids=["tlx-runtime-k", "metaws"])
def test_the_k_hang_set_is_the_empty_split_arithmetic(case):
    if not case.exists():
        pytest.skip("case not built")
    f = _mismatch(_doc(case))
    sets = {s["variable"]: s for s in f["evidence"]["hang_set"]["sets"]}
    k = sets["K"]
    assert k["block"] == {"expr": "cdiv(K, 64)", "hangs": [1, 2, 3, 5, 6, 9]}
    assert k["hangs"] == [[2, 192], [257, 384], [513, 576]]
    lo, hi = k["range"]
    hanging = {v for a, b in k["hangs"] for v in range(a, b + 1)}
    completing = {v for a, b in k["completes"] for v in range(a, b + 1)}
    assert hanging | completing == set(range(lo, hi + 1)) and not hanging & completing
    assert hanging == {v for v in range(lo, hi + 1) if _empty_split(v)}
    assert k["programs"] in ({"pid_y": 4}, {"pid_x": 4})  # the four splits
    assert any("hangs" in c for c in k["checked"]) and any("completes" in c for c in k["checked"])


def test_the_hang_set_is_printed_in_text_and_digest():
    if not TLX_K.exists():
        pytest.skip("case not built")
    text = run_cli("check", str(TLX_K / "input.ttgir.gz")).stdout
    assert "hang set (trip-count model" in text
    assert "hangs when cdiv(K, 64) ∈ {1, 2, 3, 5, 6, 9}: K ∈ 2–192, 257–384, 513–576" in text
    assert "completes for K ∈ 193–256, 385–512, 577–" in text
    digest = run_cli("report", str(TLX_K / "input.ttgir.gz"), "--format", "compact").stdout
    assert "cdiv(K, 64) ∈ {1, 2, 3, 5, 6, 9}" in digest
    report = run_cli("report", str(TLX_K / "input.ttgir.gz")).stdout
    assert "Hang set (trip-count model" in report


def test_a_persistent_kernel_hangs_with_more_programs_than_tiles():
    """The MMA partition's tile loop runs cdiv(tiles - pid, num_programs) times; with one tile
    (M, N <= 128) and two programs the second has none while the epilogue's peeled wait runs."""
    f = _mismatch(_doc(PERSISTENT))
    sets = {s["variable"]: s for s in f["evidence"]["hang_set"]["sets"]}
    assert sets["M"]["hangs"] == [[2, 128]] and sets["M"]["completes"][0][0] == 129
    assert sets["num_programs_x"]["hangs"][0][0] == 2 and sets["num_programs_x"]["completes"] == [[1, 1]]
    assert sets["M"]["programs"] == {"pid_x": "num_programs_x"}


# -- fix hints follow the cause (one per deadlock kind) ---------------------------------------------
@pytest.fixture(scope="module")
def base() -> str:
    return FIXTURE.read_text()


def test_each_deadlock_kind_has_its_own_fix_hint(tmp_path, base):
    hints: dict[str, str] = {}
    # no producer: the only release dropped
    mma = _ops(base, "ttng.tc_gen5_mma", "partition0")[0]
    line = _line(base, mma.line)
    _, doc = _check(tmp_path, _replace_line(base, mma.line, line.replace(f", {mma.operands[-2]}[{mma.operands[-1]}]", "")))
    hints.update({f["kind"]: f["suggestion"] for f in doc["findings"] if f["kind"].startswith("deadlock.")})
    # cycle: the producer's acquire parity flipped
    wait = _ops(base, "ttng.wait_barrier", "partition1")[0]
    line, phase = _line(base, wait.line), wait.operands[1]
    indent = line[: len(line) - len(line.lstrip())]
    _, doc = _check(tmp_path, _replace_line(base, wait.line, [
        f"{indent}%flip_one = arith.constant 1 : i32", f"{indent}%flipped = arith.xori {phase}, %flip_one : i32",
        line.replace(f"{wait.operands[0]}, {phase}", f"{wait.operands[0]}, %flipped")]))
    hints.update({f["kind"]: f["suggestion"] for f in doc["findings"] if f["kind"].startswith("deadlock.")})
    # parity cadence: an arrive duplicated
    arrive = _ops(base, "ttng.arrive_barrier", "default")[0]
    line = _line(base, arrive.line)
    _, doc = _check(tmp_path, _replace_line(base, arrive.line, [line, line]))
    hints.update({f["kind"]: f["suggestion"] for f in doc["findings"] if f["kind"].startswith("deadlock.")})
    hints["deadlock.trip_count_mismatch"] = _mismatch(_doc(TLX))["suggestion"]

    assert "Add the missing arrive" in hints["deadlock.no_producer"]
    assert "parity each of these waits polls" in hints["deadlock.cycle"]
    assert "Remove the duplicated arrive" in hints["deadlock.parity_cadence"]
    assert hints["deadlock.trip_count_mismatch"].startswith("Make the partitions agree on the loop bounds")
    assert "parity each" not in hints["deadlock.trip_count_mismatch"]
    assert len(set(hints.values())) == len(hints), "a hint follows the cause"


def test_the_kind_is_explained():
    doc = kind_docs()["deadlock.trip_count_mismatch"]
    assert "loop bounds" in doc.fix and "hang" in doc.what
    r = run_cli("explain", "deadlock.trip_count_mismatch")
    assert r.exit_code == 0 and "peeled" in r.stdout


# -- the set's arithmetic ---------------------------------------------------------------------------
def test_intervals_merge_consecutive_representatives():
    spans = [(2, 64), (65, 128), (129, 192), (193, 256), (257, 320)]
    assert _spans(spans, [True, True, False, None, True]) == ([(2, 128), (257, 320)], [(129, 192)])


def test_residue_classes_need_the_whole_range_to_repeat():
    assert _periodic([True, False] * 6, 16, 16) == (32, [16])
    assert _periodic([True, False, False] * 4, 1, 1) == (3, [1])
    assert _periodic([True, False, True, True, False, False], 1, 1) is None
    assert _periodic([True] * 8, 1, 1) is None


def test_an_empty_segment_in_an_earlier_outer_iteration_is_not_the_cause(tmp_path):
    """A jagged reduction whose hand-off arrive is skipped on an empty segment: the loader's row
    loop ran empty in segment 0, then the loader blocked on segment 0's hand-off, and the
    reducer starves in segment 1's row loop. The reducer waits on a segment the loader never
    reached, so the empty loop of segment 0 is not why it starves (the skipped hand-off is): the
    input point's hang must not be named a trip-count mismatch."""
    from barrier_viz.commands.check_cmd import check_document
    from barrier_viz.session import select
    from test_trip_free_rules import HANDOFF_ARRIVE, RING

    path = tmp_path / "k.ttgir"
    path.write_text(RING.replace(HANDOFF_ARRIVE, "        %nonempty = arith.cmpi sgt, %len, %c0 : i32\n"
                                 "        ttng.arrive_barrier %res_full, 1, %nonempty"))
    _, result = check_document(select(str(path), require_function=True))
    hung = [p for p in result.inputs.points if p.memory and p.findings]
    assert hung, [(p.memory, p.outcome) for p in result.inputs.points]
    kinds = {f.kind for p in hung for f in p.findings}
    assert kinds and "deadlock.trip_count_mismatch" not in kinds, kinds
