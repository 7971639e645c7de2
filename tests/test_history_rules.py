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

from barrier_viz.analyses.descriptor_reuse import tensormap_rewrites
from barrier_viz.analyses.release_order import use_after_release
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
        if src["side"] == "buggy":
            assert spec["findings"] and all("line" in e and "partition" in e for e in spec["findings"])
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
