"""Coverage tables: column-packed TMEM overwrites and operand-D accumulator init.

The acceptance inputs are the real FA-forward-persistent snapshots (memory planner: back-edges
to create; code partition: back-edges present, and absent once a test deletes them), the lit
regression input for the packed-reuse backward edges, and hand-written fixtures under
`fixtures/coverage/`. The corpus is read where it lies (`BARRIER_VIZ_CORPUS`); tests that need it
skip when it is absent.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from barrier_viz.analyses.structure.coverage import Coverage, PackedTable, coverage
from barrier_viz.analyses.verdicts import check
from barrier_viz.analysis import Analysis
from barrier_viz.facts.barriers import BarrierKind, Role
from barrier_viz.session import select

from cli_support import run_cli

REPO = Path(__file__).resolve().parents[1]
from corpus_units import CORPUS  # noqa: E402 - the one place the corpus is located
FIX = Path(__file__).parent / "fixtures" / "coverage"
FA_MP = CORPUS / "real" / "fb-sm100__attn_fwd__persist_noncausal_hd128__doMemoryPlanner.mlir"
FA_CP = CORPUS / "real" / "fb-sm100__attn_fwd__persist_noncausal_hd128__doCodePartition.mlir"
FA_FINAL = CORPUS / "real" / "fa_fwd_persist_sm100.ttgir"
LIT_PACKED = CORPUS / "lit" / "Hopper" / "WarpSpecialization" / "ws_code_partition_tmem_packed_reuse_backward.mlir"

needs = lambda p: pytest.mark.skipif(not p.is_file(), reason=f"corpus file {p} not found (set BARRIER_VIZ_CORPUS)")  # noqa: E731


def _loc(label: str) -> str:
    """The loc name in a column-view row label (`128x1xf32 view (loc alpha)`); a row names a
    view by shape and type first, its loc name after."""
    m = re.search(r"\(loc ([^)]+)\)", label)
    return m.group(1) if m else label


def _analysis(path: Path) -> Analysis:
    return Analysis(select(str(path), None, None, require_function=True))


def _cov(path: Path) -> Coverage:
    return coverage(_analysis(path))


def _table(cov: Coverage, buffer_id: int) -> PackedTable:
    found = [t for t in cov.packed if t.buffer_id == buffer_id]
    assert len(found) == 1, [t.buffer_id for t in cov.packed]
    return found[0]


def _by_column(t: PackedTable) -> dict[int, object]:
    return {r.columns[0]: r for r in t.rows if not r.owner}


def _without_lines(path: Path, lines: set[int], tmp_path: Path) -> Path:
    text = path.read_text().split("\n")
    out = tmp_path / path.name
    out.write_text("\n".join(t for i, t in enumerate(text, 1) if i not in lines))
    return out


# -- real FA forward persistent: memory planner and code partition -------------------------------
@needs(FA_MP)
def test_memory_planner_lists_back_edges_for_outer_cadence_siblings():
    t = _table(_cov(FA_MP), 5)
    assert t.stage == "pre-partition"
    assert [(w.op, w.use_d, w.partition) for w in t.writers] == [("ttng.tc_gen5_mma", "false", "task1")]
    rows = _by_column(t)
    assert {c: _loc(rows[c].label) for c in (64, 65, 66)} == {64: "alpha", 65: "l_i", 66: "m_new"}
    assert rows[65].status == rows[66].status == "required"
    assert all(r.cadence == "outer" and r.consumers[0].partition == "task2" for r in (rows[65], rows[66]))
    assert rows[64].status == "ordered_by_channel" and rows[64].cadence == "inner"  # no back-edge for alpha
    assert [_loc(r.label) for r in t.rows if r.status == "required"] == ["l_i", "m_new"]


@needs(FA_CP)
def test_code_partition_snapshot_carries_the_fix():
    t = _table(_cov(FA_CP), 5)
    assert t.stage == "post-partition"
    assert all(r.ok and r.status != "required" for r in t.rows), [(r.label, r.status) for r in t.rows]
    rows = _by_column(t)
    assert rows[65].status == rows[66].status == "ordered" and rows[65].cadence == "outer"


def _fix_acquires(path: Path) -> set[int]:
    """Lines of the task-1 `nvws.producer_acquire`s that guard the columns read in the epilogue:
    found by structure — tokens released right after a `tmem_load` of columns 65/66 of the
    allocation a useD=false MMA overwrites, acquired in that MMA's partition."""
    a = _analysis(path)
    mma = next(op for op in a.ops if op.name == "ttng.tc_gen5_mma" and op.operands[3] == "%false"
               and "#tmem" in op.types[2])
    owner = a.tracer.trace(mma.operands[2], mma).root
    writer = a.partitions.primary(mma).name
    tokens = set()
    for op in a.ops:
        if op.name != "ttng.tmem_load":
            continue
        t = a.tracer.trace(op.operands[0], op)
        if t.root is not owner or t.column_offset not in (65, 66):
            continue
        ops = op.block.operations
        nxt = next(o for o in ops[ops.index(op) + 1:] if o.name == "nvws.consumer_release")
        tokens.update(b.id for b, _ in a.barriers.uses_at(nxt))
    return {u.line for b in a.barriers.barriers if b.id in tokens and b.kind is BarrierKind.NVWS_TOKEN
            for u in b.uses if u.role is Role.ACQUIRE and u.partition == writer}


@needs(FA_CP)
def test_code_partition_without_the_fix_reports_missing_edges(tmp_path):
    lines = _fix_acquires(FA_CP)
    assert len(lines) == 2
    t = _table(_cov(_without_lines(FA_CP, lines, tmp_path)), 5)
    rows = _by_column(t)
    assert rows[65].ok and not rows[66].ok  # l_i ✓ (see below), m_new ✗
    assert rows[64].ok  # alpha: ✓
    assert rows[66].status == "missing"
    # l_i is still read before the epilogue releases the PV accumulator, and the gemm partition
    # acquires that accumulator before the inner loop whose QK MMA overwrites column 65: read →
    # release → acquire → overwrite, a real ordering (through another buffer's channel), so no
    # finding; m_new is read after that release and stays a missing edge (an error).
    assert rows[65].status == "ordered_by_channel" and "comes before the overwrite" in rows[65].reason
    found = check(_analysis(_without_lines(FA_CP, lines, tmp_path)), simulate=False).findings
    packed = {(f.severity.value, _loc(f.evidence["row"]["label"])) for f in found if f.kind == "race.packed_tmem_overwrite"}
    assert packed == {("error", "m_new")}


@needs(LIT_PACKED)
def test_lit_packed_reuse_lists_back_edges_for_both_groups():
    cov = _cov(LIT_PACKED)
    for bid in (8, 9):
        t = _table(cov, bid)
        rows = _by_column(t)
        assert _loc(rows[64].label).startswith("alpha") and rows[64].status == "ordered_by_channel"
        assert _loc(rows[65].label).startswith("m_ij") and _loc(rows[66].label).startswith("l_i0")
        assert rows[65].status == rows[66].status == "required"
        assert all(c.partition == "task0" and c.cadence == "outer" for c in rows[65].consumers + rows[66].consumers)


# -- hand-written FA-like kernel -----------------------------------------------------------------
FA_FIX = FIX / "fa_packed_persistent.ttgir"
BACK_EDGES = ("ttng.wait_barrier %m_empty_g", "ttng.wait_barrier %l_empty_g")


def _variant(tmp_path: Path, move_into_inner_loop: bool) -> Path:
    lines = FA_FIX.read_text().split("\n")
    edges = [x for x in lines if x.strip().startswith(BACK_EDGES)]
    assert len(edges) == 2
    lines = [x for x in lines if x not in edges]
    if move_into_inner_loop:
        at = next(i for i, x in enumerate(lines) if "ttng.wait_barrier %qk_empty_g" in x)
        lines[at:at] = edges
    out = tmp_path / ("fa_inner.ttgir" if move_into_inner_loop else "fa_no_back_edges.ttgir")
    out.write_text("\n".join(lines))
    return out


def test_fixture_with_outer_back_edges_is_all_ok():
    t = _table(_cov(FA_FIX), 8)
    assert all(r.ok for r in t.rows), [(r.label, r.status) for r in t.rows]
    rows = _by_column(t)
    assert [_loc(rows[c].label) for c in (64, 65, 66)] == ["alpha", "m_ij", "l_i0"]
    assert rows[64].cadence == "inner" and rows[65].cadence == rows[66].cadence == "outer"
    assert rows[65].status == rows[66].status == "ordered"


def test_fixture_without_back_edges_misses_m_ij_and_l_i0(tmp_path):
    cov = _cov(_variant(tmp_path, move_into_inner_loop=False))
    rows = _by_column(_table(cov, 8))
    assert rows[64].ok and rows[64].status == "ordered_by_channel"
    assert rows[65].status == rows[66].status == "missing"
    assert not rows[65].ok and not rows[66].ok


def test_fixture_back_edges_at_inner_cadence_are_a_mismatch(tmp_path):
    rows = _by_column(_table(_cov(_variant(tmp_path, move_into_inner_loop=True)), 8))
    assert rows[65].status == rows[66].status == "cadence_mismatch"
    assert rows[64].ok


def _release(tmp_path: Path, m_release: str) -> Path:
    """The fixture as a 2-CTA cluster kernel whose default partition releases m_ij with
    `m_release` (ops that replace its `arrive_barrier %m_empty`)."""
    text = FA_FIX.read_text()
    text = text.replace('module attributes {"ttg.num-ctas" = 1 : i32,', 'module attributes {"ttg.num-ctas" = 1 : i32, '
                        '"ttg.cluster-dim-x" = 2 : i32, "ttg.cluster-dim-y" = 1 : i32, "ttg.cluster-dim-z" = 1 : i32,')
    old = ("        ttng.arrive_barrier %m_empty, 1 {async_task_id = array<i32: 0>} : "
           "!ttg.memdesc<1xi64, #shared, #smem, mutable>\n")
    assert old in text
    out = tmp_path / "fa_packed_cluster.ttgir"
    out.write_text(text.replace(old, m_release))
    return out


def test_release_through_a_remote_view_orders_the_read(tmp_path):
    """In a 2-CTA kernel the reader may release the columns on the leader CTA's copy of the
    barrier (`arrive_barrier (map_to_remote_buffer %m_empty, %c0)`), the copy the leader's MMA
    partition waits on before it overwrites TMEM (TLX's 2-CTA FA backward releases dQ/dP that
    way). The table follows that release as `check`'s cluster simulation does: ordered by the
    row's own channel."""
    remote = ("        %m_leader = ttng.map_to_remote_buffer %m_empty, %c0 {async_task_id = array<i32: 0>} : "
              "!ttg.memdesc<1xi64, #shared, #smem, mutable> -> !ttg.memdesc<1xi64, #shared, #ttng.shared_cluster_memory, mutable>\n"
              "        ttng.arrive_barrier %m_leader, 1 {async_task_id = array<i32: 0>} : "
              "!ttg.memdesc<1xi64, #shared, #ttng.shared_cluster_memory, mutable>\n")
    rows = _by_column(_table(_cov(_release(tmp_path, remote)), 8))
    assert rows[65].status == "ordered" and rows[65].ok
    assert "waits on %m_empty@" in rows[65].reason  # its own release, through the remote view
    # without it, only the later l_i0 release (same iteration) orders m_ij: not its own channel
    dropped = _by_column(_table(_cov(_release(tmp_path, "")), 8))
    assert "%m_empty@" not in dropped[65].reason


def test_fixture_findings_follow_the_table(tmp_path):
    ok = check(_analysis(FA_FIX), simulate=False).findings
    assert not [f for f in ok if f.kind == "race.packed_tmem_overwrite"]
    bad = check(_analysis(_variant(tmp_path, False)), simulate=False).findings
    errs = [f for f in bad if f.kind == "race.packed_tmem_overwrite"]
    assert sorted(_loc(f.evidence["row"]["label"]) for f in errs) == ["l_i0", "m_ij"]
    assert all(f.severity.value == "error" for f in errs)


# -- operand-D accumulators ----------------------------------------------------------------------
def test_redundant_zero_store_in_persistent_while_is_an_error():
    cov = _cov(FIX / "gemm_while_zero_store.ttgir")
    (row,) = cov.accumulators
    assert row.self_zeroing and row.use_d == "false-first"
    assert row.zero_store_lines and row.same_partition is False
    assert row.persistent_loop == "scf.while"
    assert (row.barriers, row.commits) == (4, 2)
    assert row.status == "redundant_unordered" and not row.ok
    found = check(_analysis(FIX / "gemm_while_zero_store.ttgir"), simulate=False).findings
    assert [(f.kind, f.severity.value) for f in found if f.kind == "race.redundant_zero_store"] == [
        ("race.redundant_zero_store", "error")]


def test_self_zeroing_accumulator_is_clean():
    (row,) = _cov(FIX / "gemm_while_self_zero.ttgir").accumulators
    assert row.self_zeroing and not row.zero_store_lines
    assert (row.barriers, row.commits) == (2, 1)
    assert row.status == "clean" and row.ok
    found = check(_analysis(FIX / "gemm_while_self_zero.ttgir"), simulate=False).findings
    assert not [f for f in found if f.kind == "race.redundant_zero_store"]


def test_ordered_redundant_zero_store_is_a_warning(tmp_path):
    """Waiting for the store's ready barrier before the K loop orders it: still a channel that
    should not exist, so a warning with the edges as evidence."""
    lines = (FIX / "gemm_while_zero_store.ttgir").read_text().split("\n")
    wait = next(x for x in lines if "ttng.wait_barrier %zero_ready_g" in x)
    lines.remove(wait)
    at = next(i for i, x in enumerate(lines) if "ttng.wait_barrier %acc_empty_g" in x)
    lines.insert(at + 1, wait)
    path = tmp_path / "ordered.ttgir"
    path.write_text("\n".join(lines))
    (row,) = _cov(path).accumulators
    assert row.status == "redundant_ordered"
    found = [f for f in check(_analysis(path), simulate=False).findings if f.kind == "race.redundant_zero_store"]
    assert [f.severity.value for f in found] == ["warning"]


@needs(FA_FINAL)
def test_fa_final_zero_stores_are_redundant_but_ordered():
    rows = {r.status for r in _cov(FA_FINAL).accumulators if r.zero_store_lines}
    assert rows == {"redundant_ordered"}


# -- command -------------------------------------------------------------------------------------
def test_coverage_command_prints_both_tables_even_when_clean():
    run = run_cli("coverage", str(FIX / "gemm_while_self_zero.ttgir"))
    assert run.exit_code == 0, run.stderr
    assert "Column-packed TMEM overwrite coverage" in run.stdout
    assert "(no TMEM allocation has column-packed members or column views)" in run.stdout
    assert "Operand-D accumulator init coverage" in run.stdout
    assert "Explicit zero-store present? : NO" in run.stdout
    run = run_cli("coverage", str(FA_FIX))
    assert "✓" in run.stdout and "✗" not in run.stdout and "l_i0" in run.stdout


def test_coverage_json_schema():
    run = run_cli("coverage", str(FIX / "gemm_while_zero_store.ttgir"), "--format", "json")
    assert run.exit_code == 0, run.stderr
    doc = json.loads(run.stdout)
    assert doc["schema"] == "barrier-viz/coverage/v1"
    assert set(doc) >= {"input", "packed_tmem", "accumulators", "summary", "stage"}
    assert doc["accumulators"][0]["status"] == "redundant_unordered"
    assert doc["summary"]["redundant_zero_stores"] == 1
