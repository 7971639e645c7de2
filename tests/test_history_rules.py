"""Rules added for real bugs from facebookexperimental/triton's history, and their recipe.

The IR here is either the hand-written persistent GEMM fixture with one operation moved (the
truth comes from the construction: a consumer that reads its slot after releasing it races the
producer's refill) or the regression cases' own IR, compiled from the fork's sources before and
after each fix (evals/cases/regression.*, built by evals/gen/history/build.py).
"""

from __future__ import annotations

import gzip
import importlib.util
import sys
from pathlib import Path

import pytest
import yaml

from barrier_viz.analyses.rules.descriptor_reuse import tensormap_rewrites
from barrier_viz.analyses.rules.release_order import use_after_release
from barrier_viz.analysis import Analysis
from barrier_viz.ir.parse import parse_ir
from barrier_viz.session import select

REPO = Path(__file__).resolve().parent.parent
CASES = REPO / "evals" / "cases"
FIXTURE = Path(__file__).parent / "fixtures" / "gemm_ws_persistent.ttgir"


def _analysis(path: Path) -> Analysis:
    return Analysis(select(str(path)))


def _case_input(name: str) -> Path:
    folder = CASES / name
    return next(folder.glob("input*"))


def _partition_ops(text: str, name: str, partition: str) -> list:
    out = []
    for op in parse_ir(text).walk():
        if op.name == name and any(a.parent_region is not None and a.parent_region.label == partition
                                   for a in [op, *op.ancestors()]):
            out.append(op)
    return out


def _release_before_read(text: str) -> str:
    """The epilogue (default partition) arrives on its accumulator's empty barrier before, not
    after, loading the accumulator: the arrive line (and the memdesc_index feeding it) moved
    above the tmem_load."""
    lines = text.split("\n")
    (load,) = _partition_ops(text, "ttng.tmem_load", "default")
    (arrive,) = _partition_ops(text, "ttng.arrive_barrier", "default")
    bar = arrive.operands[0]
    index_line = next(i for i, ln in enumerate(lines) if ln.strip().startswith(f"{bar} = ttg.memdesc_index"))
    moved = [lines[index_line], lines[arrive.line - 1]]
    for i in sorted([index_line, arrive.line - 1], reverse=True):
        del lines[i]
    lines[load.line - 1:load.line - 1] = moved
    return "\n".join(lines)


def test_use_after_release_on_a_ring_slot(tmp_path):
    path = tmp_path / "release_before_read.ttgir"
    path.write_text(_release_before_read(FIXTURE.read_text()))
    found = use_after_release(_analysis(path))
    assert [f.kind for f in found] == ["race.use_after_release"]
    (f,) = found
    assert f.partitions == ["default", "partition0"]
    text = path.read_text().split("\n")
    release, access, overwrite = (text[f.evidence[k] - 1] for k in ("release_line", "access_line", "overwrite_line"))
    assert "ttng.arrive_barrier" in release and "ttng.tmem_load" in access and "ttng.tc_gen5_mma" in overwrite
    assert f.evidence["release_line"] < f.evidence["access_line"]


def test_use_after_release_silent_on_the_unmodified_fixture():
    assert use_after_release(_analysis(FIXTURE)) == []


@pytest.mark.parametrize("case, lines", [
    ("regression.tlx_fa_ws_persistent.bccf37d6b", [218]),
    # cid 0 of the pipelined kernel races too: its MMA acquires qk_empties[1] only after
    # rewriting tile 0, while in bccf37d6b's kernel both acquires precede the first QK MMA.
    ("regression.tlx_fa_ws_pipelined_persistent.bee3ddcb2", [228, 259]),
])
def test_use_after_release_on_the_fa_forward_fixes(case, lines):
    buggy = use_after_release(_analysis(_case_input(case + ".buggy")))
    assert sorted(f.evidence["access_line"] for f in buggy) == lines
    assert all(f.partitions[0] == "default" for f in buggy)
    assert use_after_release(_analysis(_case_input(case + ".fixed"))) == []


# -- b6180744c: a staging reader that releases nothing (analyses/rules/silent_readers.py) ------------------
STAGING = Path(__file__).parent / "fixtures" / "gemm_staging_persistent.ttgir"
_STAGED_ARRIVE = "        ttng.arrive_barrier %staged_13, 1 : !ttg.memdesc<1xi64, #shared, #smem, mutable>\n"
_STAGED_WAIT = "        ttng.wait_barrier %staged_40, %free : !ttg.memdesc<1xi64, #shared, #smem, mutable>\n"
_EPILOGUE_TOP = "        %ph = arith.andi %t, %c1_i32_9 : i32\n"


def _staging(tmp_path: Path, name: str, *pairs: tuple[str, str]) -> Path:
    text = STAGING.read_text()
    for old, new in pairs:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path = tmp_path / f"{name}.ttgir"
    path.write_text(text)
    return path


def _verdicts(path: Path, simulate: bool = True) -> list:
    from barrier_viz.analyses.verdicts import check

    found = check(Analysis(select(str(path), require_function=True)), simulate=simulate).findings
    return [f for f in found if f.severity.value in ("error", "warning")]


def _explore(path: Path):
    from barrier_viz.analyses.sim.explore import explore

    return explore(select(str(path), require_function=True).function)


def _line_of(path: Path, text: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().split("\n"), 1) if text in ln)


def test_staging_reader_released_after_its_store_drains_is_clean():
    """The persistent GEMM's epilogue stages C in a `memdesc_reinterpret` view of the A ring,
    TMA-stores it, waits for the store's token and then arrives on `staged`; the loader waits on
    `staged` at the top of each tile before refilling the ring. Ordered: nothing to report."""
    assert _verdicts(STAGING) == []


def test_staging_reader_that_releases_nothing_is_a_missing_acquire(tmp_path):
    """Without that barrier (b6180744c's bug) the epilogue arrives on nothing after its TMA store
    reads the staging view, and the loader's next-tile refill of the A ring waits only on the
    MMA's release of the slot, which says nothing about the store: the refill can overwrite the
    staged C while the TMA engine still reads it."""
    path = _staging(tmp_path, "no_staged", (_STAGED_ARRIVE, ""), (_STAGED_WAIT, ""))
    copy = _line_of(path, "ttng.async_tma_copy_global_to_local %a_desc_21")
    store = _line_of(path, "ttng.async_tma_copy_local_to_global")
    staged = _line_of(path, "ttg.local_store %c, %stage_0")
    found = _verdicts(path)
    (f,) = [v for v in found if "schedule" not in v.evidence]  # the static rule's finding
    # Issue 22: `check`'s own runs carry vector clocks, so the races they show are its findings
    # too: the staging local_store racing the next tile's fill and MMA read (explore's, below).
    runs = [v for v in found if "schedule" in v.evidence]
    assert all(staged in v.lines or store in v.lines for v in runs), [(v.kind, v.lines) for v in runs]
    assert (f.kind, f.lines, f.partitions) == ("race.missing_acquire", [store, copy], ["partition1", "default"])
    assert f.evidence["readers"] == [store] and f.evidence["wait_lines"] == []
    assert "arrive(s) on no barrier after those reads" in f.message
    # The vector clocks of `explore` see the same unordered pair (the refill against the TMA
    # store's read), and the staging local_store racing the next tile's fill and MMA read.
    races = {(r.first_line, r.second_line) for r in _explore(path).races}
    assert (copy, store) in races and all(staged in pair or store in pair for pair in races)


def test_staging_released_at_the_next_tile_top_orders_the_refill(tmp_path):
    """A rotated release: the epilogue arrives on `staged` at the top of its next tile ("done
    with the previous one"), before its read in program order, and the loader waits on it (the
    parity of that same tile) at the tile level before refilling. The arrival follows the
    previous tile's store drain, so the refill is ordered: clean, and `explore`'s vector clocks
    agree."""
    path = _staging(tmp_path, "rotated", (_STAGED_ARRIVE, ""), (_EPILOGUE_TOP, _EPILOGUE_TOP + _STAGED_ARRIVE),
                    (_STAGED_WAIT, _STAGED_WAIT.replace("%free", "%ph")))
    assert _verdicts(path) == []
    result = _explore(path)
    assert result.deadlock is None and result.races == []


def test_staging_rotated_release_the_loader_never_waits_for_is_still_a_race(tmp_path):
    """The epilogue's rotated arrival on `staged` is no release when the loader does not wait on
    it: the refill stays unordered after the store's read."""
    path = _staging(tmp_path, "rotated_unwaited", (_STAGED_ARRIVE, ""),
                    (_EPILOGUE_TOP, _EPILOGUE_TOP + _STAGED_ARRIVE), (_STAGED_WAIT, ""))
    assert [f.kind for f in _verdicts(path, simulate=False)] == ["race.missing_acquire"]


def test_fa_backward_staging_race_found_at_both_loads():
    """b6180744c's buggy IR (the cross-tile reuse barrier removed): the v load (645) races the dv
    stores (919/925), and the do load in the inner loop (683) races the dk stores (941/948). For
    the do load the computation task arrives on nothing after the stores; its arrivals on `m`'s
    ring (once per inner iteration, and in the peeled first one) are waited for by the Load task
    inside its inner loop, not at the tile level, so they do not order the first refill of a
    tile. The Load task's tile-level waits (635, 641: k and v) are on the MMA task's releases."""
    case = "regression.autows_fa_bwd_persist.b6180744c"
    buggy = [f for f in _verdicts(_case_input(case + ".buggy"), simulate=False) if f.kind == "race.missing_acquire"]
    assert [(f.lines, f.partitions) for f in buggy] == [
        ([645, 919, 925], ["partition1", "partition2"]), ([683, 941, 948], ["partition1", "partition2"])]
    assert buggy[1].evidence["wait_lines"] == [635, 641]
    assert _verdicts(_case_input(case + ".fixed")) == []


def test_fa_backward_staging_race_seen_by_the_vector_clocks():
    """The same verdict from running the barrier program with happens-before tracking, at a
    launch where the inner loop runs (N_CTX = 256: two steps; every integer argument 256, and as
    many programs as make two tiles per CTA): on the buggy side the do refill (683) is unordered
    with the dk staging's local_store (939) and TMA store (941), and the v refill (645) with the
    dv staging (917, 919); on the fixed side nothing is unordered."""
    from barrier_viz.analyses.sim.machine import Params
    from barrier_viz.analyses.sim.schedule import run

    case = "regression.autows_fa_bwd_persist.b6180744c"
    params = Params(int_args=256, num_programs=65536, track_races=True)

    def races(side: str) -> set:
        r = run(select(str(_case_input(f"{case}.{side}")), require_function=True).function, params, "favorable")
        assert r.outcome == "completed"
        return {tuple(sorted((x.first.op.line, x.second.op.line))) for x in r.machine.hb.races}

    assert {(683, 939), (683, 941), (645, 917), (645, 919)} <= races("buggy")
    assert races("fixed") == set()


def test_tensormap_rewrite_on_the_grouped_gemm_fix():
    case = "regression.tlx_grouped_gemm.cd2de6835"
    buggy = tensormap_rewrites(_analysis(_case_input(case + ".buggy")))
    assert len(buggy) == 2 and {f.partitions[0] for f in buggy} == {"partition1"}
    assert tensormap_rewrites(_analysis(_case_input(case + ".fixed"))) == []


def test_hardware_commit_on_a_warp_barrier_is_a_hang():
    """8be187601: tmem_full allocated as a warp barrier (init count 32, one arrival per thread)
    but signalled by tcgen05_commit, which arrives once: the epilogue's first wait never passes.
    The fixed source allocates it with alloc_barriers (count 1)."""
    from barrier_viz.analyses.verdicts import check

    case = "regression.tlx_gemm_ws_warp_barrier.8be187601"
    hangs = [f for f in check(Analysis(select(str(_case_input(case + ".buggy")), require_function=True))).findings
             if f.severity.value == "error" and f.kind.startswith("deadlock.")]
    assert hangs and {76, 215} <= set(hangs[0].lines) and hangs[0].partitions == ["default"]
    assert "31 of 32" in hangs[0].message
    fixed = gzip.decompress(_case_input(case + ".fixed").read_bytes()).decode()
    assert "ttng.init_barrier %tmem_full_bars_9, 1 " in fixed


def test_cluster_shape_counts_as_ctas():
    """TLX 2-CTA kernels keep "ttg.num-ctas" = 1 and launch with a 2x1x1 cluster."""
    analysis = _analysis(_case_input("regression.tlx_fa_2cta_persistent.54f380ebb.fixed"))
    assert analysis.num_ctas == 2


def test_regression_cases_record_where_they_come_from():
    folders = sorted(p for p in CASES.glob("regression.*") if (p / "expected.yaml").is_file())
    assert len(folders) >= 16
    sides: dict[str, set[str]] = {}
    for folder in folders:
        spec = yaml.safe_load((folder / "expected.yaml").read_text())
        src = spec["source"]
        assert spec["truth"] == "regression"
        assert src["compiler"] == "fbtriton" and src["version"].startswith("3.7.")
        assert len(src["fix"]) == 40 and len(src["commit"]) == 40
        sides.setdefault(folder.name.rsplit(".", 1)[0], set()).add(src["side"])
        if src["side"] == "buggy" and not spec["findings"]:
            # a fix whose bug the released lowering already prevents: the notes say which commit,
            # and the buggy side must then not get the kind the bug would be
            assert spec["absent"] and "at fbtriton 3.7" in src["bug"], folder.name
        elif src["side"] == "buggy":
            assert all("line" in e and "partition" in e for e in spec["findings"])
        else:
            assert not spec["findings"] and {"deadlock.*", "race.*"} <= set(spec["absent"])
    assert all(s == {"buggy", "fixed"} for s in sides.values())


def _recipe():
    path = REPO / "evals" / "gen" / "history" / "compile_src.py"
    spec = importlib.util.spec_from_file_location("bv_history_compile_src", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_recipe_edits():
    recipe = _recipe()
    src = "def f():\n    a = 1\n    arrive(b)\n    c = load(m)\n    return c\n"
    moved = recipe.apply_edits(src, [{"move": "arrive(b)", "after": "c = load(m)"}])
    assert moved.split("\n")[2:4] == ["    c = load(m)", "    arrive(b)"]
    assert "pass" in recipe.apply_edits(src, [{"replace": "arrive(b)", "with": "pass"}]).split("\n")[2]
    inserted = recipe.apply_edits(src, [{"insert_after": "a = 1", "text": "wait(e)"}])
    assert inserted.split("\n")[2] == "    wait(e)"
    with pytest.raises(SystemExit):
        recipe.apply_edits(src + "    arrive(b)\n", [{"delete": "arrive(b)"}])


def test_recipe_lifts_a_kernel_nested_in_a_test_function():
    """The CLC fixes' kernels are defined inside their unit tests: the recipe lifts the kernel
    (decorator and body, dedented) into a module holding only the test file's imports."""
    recipe = _recipe()
    src = ("import triton\nimport triton.language as tl\nTABLE = [x * 2 for x in range(3)]\n\n\n"
           "def test_k(device):\n\n    @triton.jit\n    def kern(x_ptr, N: tl.constexpr):\n"
           "        tl.store(x_ptr, N)\n\n    kern[(1, )](None, N=4)\n")
    lifted = recipe.lift_nested(src, "test_k", "kern")
    assert lifted.split("\n")[:2] == ["import triton", "import triton.language as tl"]
    assert "TABLE" not in lifted and "def test_k" not in lifted
    assert "@triton.jit\ndef kern(x_ptr, N: tl.constexpr):\n    tl.store(x_ptr, N)\n" in lifted
    with pytest.raises(SystemExit):
        recipe.lift_nested(src, "test_k", "other")


@pytest.mark.parametrize("case, line, op", [
    # the wait on the remote view of CTA 0's bar_empty (51dd02098 taken back out)
    ("regression.tlx_clc_multi_cta_remote_wait.51dd02098.buggy", 41, "ttng.wait_barrier %tile_id_4,"),
    # the consumer's arrive on CTA 0's bar_empty no longer skipped on tile -1 (798274bbb)
    ("regression.tlx_clc_multi_cta_exit.798274bbb.buggy", 70, "ttng.arrive_barrier %tile_id_4, 1, %true "),
])
def test_clc_cases_hold_the_operation_their_notes_name(case, line, op):
    text = gzip.decompress((CASES / case / "input.ttgir.gz").read_bytes()).decode()
    assert text.split("\n")[line - 1].strip().startswith(op)
    assert '"ttg.cluster-dim-x" = 2' in text and "ttng.async_clc_try_cancel" in text


# -- issue 21, point 5: transitive ordering of an early release --------------------------------------
FORWARDED = Path(__file__).parent / "fixtures" / "release_forwarded_by_third_partition.ttgir"
_FORWARD = ("        ttng.wait_barrier %d1, %p : !ttg.memdesc<1xi64, #shared, #smem, mutable>\n"
            "        ttng.arrive_barrier %g1, 1 : !ttg.memdesc<1xi64, #shared, #smem, mutable>\n")


def test_early_release_whose_refill_a_third_partition_gates_is_ordered():
    """The consumer releases its K slot (line `arrive %kempty`) before its second read of K, but
    the producer also waits, before the refill, on `go`, which partition1 arrives on only after
    waiting for the consumer's `done`, arrived after that read: the refill is ordered after the
    read through done -> go (the happens-before chain the coverage tables use). The simulation
    completes every schedule; no race."""
    assert use_after_release(_analysis(FORWARDED)) == []


def test_early_release_with_a_chain_that_forwards_too_early_is_a_race(tmp_path):
    """partition1 forwards `go` before it waits for `done`: the chain no longer orders the
    refill after the read, and the early release is reported."""
    text = FORWARDED.read_text()
    assert text.count(_FORWARD) == 1
    lines = _FORWARD.splitlines(keepends=True)
    path = tmp_path / "forwarded_early.ttgir"
    path.write_text(text.replace(_FORWARD, lines[1] + lines[0]))
    found = use_after_release(_analysis(path))
    assert [f.kind for f in found] == ["race.use_after_release"]
    assert found[0].partitions == ["default", "partition0"]
