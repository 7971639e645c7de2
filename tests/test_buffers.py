"""Buffers: buffer.id groups, slot bytes and copies, writers/readers by partition, merged
barriers and the expect check, and the `buffers` command.

Hand-written IR covers each rule; the corpus tests (skipped when the corpus is absent) check
issue 3's acceptance criteria on the seed lit files and on every final `.ttgir` of real/.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from barrier_viz.cli import app
from barrier_viz.facts.buffers import BufferFacts, buffer_facts, element_bits, parse_memdesc
from barrier_viz.ir.parse import parse_ir
from barrier_viz.session import select

from corpus_units import CORPUS  # noqa: E402 - the one place the corpus is located
WS_LIT = CORPUS / "lit" / "Hopper" / "WarpSpecialization"

_HEAD = """\
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#shared1 = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#smem = #ttg.shared_memory
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1>
#tmem1 = #ttng.tensor_memory_encoding<blockM = 128, blockN = 1, colStride = 1>
#blocked = #ttg.blocked<{sizePerThread = [1, 128], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>
"""

# Final IR: A and B share buffer.id 0 and one barrier (one expect for both copies); the barrier
# array reaches the load partition as a capture and is loop-carried there; the B copy is split
# into two sub-views; the accumulator is read by the default partition.
FINAL = _HEAD + """\
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func public @gemm(%a_desc: !tt.tensordesc<tensor<128x64xf16, #shared>>, %b_desc: !tt.tensordesc<tensor<64x64xf16, #shared>>, %n: i32) {
    %a = ttg.local_alloc {buffer.copy = 2 : i32, buffer.id = 0 : i32} : () -> !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable> loc("a_smem")
    %b = ttg.local_alloc {buffer.copy = 2 : i32, buffer.id = 0 : i32} : () -> !ttg.memdesc<2x64x128xf16, #shared, #smem, mutable> loc("b_smem")
    %bar = ttg.local_alloc : () -> !ttg.memdesc<2x1xi64, #shared1, #smem, mutable> loc("bar")
    %acc = ttng.tmem_alloc {buffer.copy = 1 : i32, buffer.id = 1 : i32} : () -> !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable> loc("acc")
    ttg.warp_specialize(%a, %b, %bar, %acc, %a_desc, %b_desc, %n)
    default {
      %r = ttng.tmem_load %acc : !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable> -> tensor<128x128xf32, #blocked>
      ttg.warp_yield
    }
    partition0(%pa: !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable>, %pb: !ttg.memdesc<2x64x128xf16, #shared, #smem, mutable>, %pbar: !ttg.memdesc<2x1xi64, #shared1, #smem, mutable>, %pacc: !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>, %pad: !tt.tensordesc<tensor<128x64xf16, #shared>>, %pbd: !tt.tensordesc<tensor<64x64xf16, #shared>>, %pn: i32) num_warps(4) {
      %false = arith.constant false
      %true = arith.constant true
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %use = scf.for %i = %c0 to %pn step %c1 iter_args(%u = %false) -> (i1) : i32 {
        %sa = ttg.memdesc_index %pa[%c0] : !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
        %sb = ttg.memdesc_index %pb[%c0] : !ttg.memdesc<2x64x128xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x128xf16, #shared, #smem, mutable>
        ttng.tc_gen5_mma %sa, %sb, %pacc, %u, %true : !ttg.memdesc<128x64xf16, #shared, #smem, mutable>, !ttg.memdesc<64x128xf16, #shared, #smem, mutable>, !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>
        scf.yield %true : i1
      }
      ttg.warp_return
    }
    partition1(%qa: !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable>, %qb: !ttg.memdesc<2x64x128xf16, #shared, #smem, mutable>, %qbar: !ttg.memdesc<2x1xi64, #shared1, #smem, mutable>, %qacc: !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>, %qad: !tt.tensordesc<tensor<128x64xf16, #shared>>, %qbd: !tt.tensordesc<tensor<64x64xf16, #shared>>, %qn: i32) num_warps(1) {
      %true = arith.constant true
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %last = scf.for %i = %c0 to %qn step %c1 iter_args(%cur = %qbar) -> (!ttg.memdesc<2x1xi64, #shared1, #smem, mutable>) : i32 {
        %slot = ttg.memdesc_index %cur[%i] : !ttg.memdesc<2x1xi64, #shared1, #smem, mutable> -> !ttg.memdesc<1xi64, #shared1, #smem, mutable>
        %da = ttg.memdesc_index %qa[%i] : !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
        %db = ttg.memdesc_index %qb[%i] : !ttg.memdesc<2x64x128xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x128xf16, #shared, #smem, mutable>
        %db0 = ttg.memdesc_subslice %db [0, 0] : !ttg.memdesc<64x128xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable, 64x128>
        %db1 = ttg.memdesc_subslice %db [0, 64] : !ttg.memdesc<64x128xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable, 64x128>
        ttng.barrier_expect %slot, EXPECT_BYTES {async_task_id = array<i32: 2>}, %true : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
        ttng.async_tma_copy_global_to_local %qad[%c0, %c0] %da, %slot, %true : !tt.tensordesc<tensor<128x64xf16, #shared>>, !ttg.memdesc<1xi64, #shared1, #smem, mutable> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
        ttng.async_tma_copy_global_to_local %qbd[%c0, %c0] %db0, %slot, %true : !tt.tensordesc<tensor<64x64xf16, #shared>>, !ttg.memdesc<1xi64, #shared1, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable, 64x128>
        ttng.async_tma_copy_global_to_local %qbd[%c0, %c0] %db1, %slot, %true : !tt.tensordesc<tensor<64x64xf16, #shared>>, !ttg.memdesc<1xi64, #shared1, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable, 64x128>
        scf.yield %cur : !ttg.memdesc<2x1xi64, #shared1, #smem, mutable>
      }
      ttg.warp_return
    } : (!ttg.memdesc<2x128x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x64x128xf16, #shared, #smem, mutable>, !ttg.memdesc<2x1xi64, #shared1, #smem, mutable>, !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>, !tt.tensordesc<tensor<128x64xf16, #shared>>, !tt.tensordesc<tensor<64x64xf16, #shared>>, i32) -> ()
    tt.return
  }
}
"""

# Column-packed TMEM: the owner (no buffer.offset) is written by a useD=false MMA; P sits at
# offset 0, two scalars at 64/65. Pre-partition IR (task ids).
PACKED = _HEAD + """\
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func public @packed(%q: !ttg.memdesc<128x128xbf16, #shared, #smem, mutable>) {
    %qk, %qk_tok = ttng.tmem_alloc {buffer.copy = 1 : i32, buffer.id = 8 : i32} : () -> (!ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>, !ttg.async.token)
    %p = ttng.tmem_alloc {buffer.copy = 1 : i32, buffer.id = 8 : i32, buffer.offset = 0 : i32} : () -> !ttg.memdesc<128x128xbf16, #tmem, #ttng.tensor_memory, mutable>
    %alpha, %alpha_tok = ttng.tmem_alloc {buffer.copy = 1 : i32, buffer.id = 8 : i32, buffer.offset = 64 : i32} : () -> (!ttg.memdesc<128x1xf32, #tmem1, #ttng.tensor_memory, mutable>, !ttg.async.token)
    %m_1, %m_tok = ttng.tmem_alloc {allocation.shareGroup = 2 : i32, buffer.copy = 1 : i32, buffer.id = 8 : i32, buffer.offset = 65 : i32} : () -> (!ttg.memdesc<128x1xf32, #tmem1, #ttng.tensor_memory, mutable>, !ttg.async.token) loc("m_ij_1")
    %k = ttg.local_alloc {buffer.copy = 1 : i32, buffer.id = 3 : i32} : () -> !ttg.memdesc<128x128xbf16, #shared, #smem, mutable>
    %false = arith.constant {async_task_id = array<i32: 1>} false
    %true = arith.constant {async_task_id = array<i32: 1>} true
    %t = ttng.tc_gen5_mma %q, %k, %qk[%qk_tok], %false, %true {async_task_id = array<i32: 1>} : !ttg.memdesc<128x128xbf16, #shared, #smem, mutable>, !ttg.memdesc<128x128xbf16, #shared, #smem, mutable>, !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>
    %m, %m_t = ttng.tmem_load %m_1[%m_tok] {async_task_id = array<i32: 0>} : !ttg.memdesc<128x1xf32, #tmem1, #ttng.tensor_memory, mutable> -> tensor<128x1xf32, #blocked>
    tt.return
  }
}
"""

# Pre-partition Hopper IR: loads feed local_allocs; B is read by two consumer tasks; one dot
# takes A from registers (not a buffer).
PRE = _HEAD + """\
#mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 128, 16]}>
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func public @two(%da: !tt.tensordesc<tensor<64x64xf16, #shared>>, %db: !tt.tensordesc<tensor<64x128xf16, #shared>>, %acc0: tensor<64x128xf32, #mma>, %ra: tensor<64x64xf16, #mma>) {
    %c0 = arith.constant {async_task_id = array<i32: 0, 1, 2>} 0 : i32
    %la = tt.descriptor_load %da[%c0, %c0] {async_task_id = array<i32: 0>} : !tt.tensordesc<tensor<64x64xf16, #shared>> -> tensor<64x64xf16, #blocked>
    %sa = ttg.local_alloc %la {async_task_id = array<i32: 1>} : (tensor<64x64xf16, #blocked>) -> !ttg.memdesc<64x64xf16, #shared, #smem> loc("a")
    %lb = tt.descriptor_load %db[%c0, %c0] {async_task_id = array<i32: 0>} : !tt.tensordesc<tensor<64x128xf16, #shared>> -> tensor<64x128xf16, #blocked>
    %sb = ttg.local_alloc %lb {async_task_id = array<i32: 1, 2>} : (tensor<64x128xf16, #blocked>) -> !ttg.memdesc<64x128xf16, #shared, #smem> loc("b")
    %d1 = ttng.warp_group_dot %sa, %sb, %acc0 {async_task_id = array<i32: 1>} : !ttg.memdesc<64x64xf16, #shared, #smem> * !ttg.memdesc<64x128xf16, #shared, #smem> -> tensor<64x128xf32, #mma>
    %d2 = ttng.warp_group_dot %ra, %sb, %acc0 {async_task_id = array<i32: 2>} : tensor<64x64xf16, #mma> * !ttg.memdesc<64x128xf16, #shared, #smem> -> tensor<64x128xf32, #mma>
    tt.return
  }
}
"""


def facts_of(text: str) -> BufferFacts:
    ir = parse_ir(text)
    fn = ir.functions()[0]
    return buffer_facts(ir, list(fn.walk()))


def group(facts: BufferFacts, key: str):
    found = [g for g in facts.groups if g.key == key]
    assert len(found) == 1, [g.key for g in facts.groups]
    return found[0]


def parts(accesses, role: str) -> set[str]:
    return {p for a in accesses if a.role == role for p in a.partitions}


# -- types --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("dtype", "bits"),
    [("f16", 16), ("bf16", 16), ("f32", 32), ("f8E4M3FN", 8), ("f8E5M2", 8), ("f4E2M1FN", 4), ("i64", 64), ("i8", 8), ("i1", 1)],
)
def test_element_bits(dtype: str, bits: int) -> None:
    assert element_bits(dtype) == bits


def test_parse_memdesc_spaces_and_alias() -> None:
    smem = parse_memdesc("!ttg.memdesc<3x128x64xf16, #shared1, #smem, mutable>", {"#smem": "#ttg.shared_memory"})
    assert smem is not None and smem.space == "smem" and smem.shape == (3, 128, 64) and smem.bytes == 3 * 16384
    tmem = parse_memdesc("!ttg.memdesc<128x64xf32, #tmem1, #ttng.tensor_memory, mutable, 128x128>")
    assert tmem is not None and tmem.space == "tmem" and tmem.shape == (128, 64) and tmem.bytes == 32768
    aliased = parse_memdesc("!ttg.memdesc<1x64xf8E4M3FN, #enc, #mine>", {"#mine": "#ttg.shared_memory"})
    assert aliased is not None and aliased.space == "smem" and aliased.bytes == 64
    assert parse_memdesc("tensor<128x128xf32, #blocked>") is None


# -- members, groups ------------------------------------------------------------------------------
def test_final_groups_members_slots_and_copies() -> None:
    facts = facts_of(FINAL.replace("EXPECT_BYTES", "32768"))
    assert [g.key for g in facts.groups] == ["buffer.id=0", "buffer.id=1"]  # barrier array skipped
    ab = group(facts, "buffer.id=0")
    assert [(m.label, m.space, m.slot_shape, m.slot_bytes, m.copies, m.copies_from) for m in ab.members] == [
        ("a_smem", "smem", (128, 64), 16384, 2, "leading dimension"),
        ("b_smem", "smem", (64, 128), 16384, 2, "leading dimension"),
    ]
    assert ab.shares_id and not ab.packed and ab.slot_bytes == 32768
    acc = group(facts, "buffer.id=1")
    assert acc.members[0].space == "tmem" and acc.members[0].slot_bytes == 65536 and acc.members[0].copies == 1


def test_final_writers_and_readers_by_partition() -> None:
    facts = facts_of(FINAL.replace("EXPECT_BYTES", "32768"))
    ab = group(facts, "buffer.id=0")
    assert parts(ab.writers, "TMA load") == {"partition1"}
    assert parts(ab.readers, "MMA A") == {"partition0"} and parts(ab.readers, "MMA B") == {"partition0"}
    acc = group(facts, "buffer.id=1")
    assert parts(acc.writers, "MMA D") == {"partition0"}
    # useD is an iter_arg (false, then true): the MMA also reads D.
    assert parts(acc.readers, "MMA D (useD dynamic)") == {"partition0"}
    assert parts(acc.readers, "tmem_load") == {"default"}
    assert facts.unresolved == ()


def test_merged_barrier_and_matched_expect_with_split_copy() -> None:
    facts = facts_of(FINAL.replace("EXPECT_BYTES", "32768"))
    (merged,) = facts.merged_barriers
    assert merged.name == "%bar" and set(merged.members) == {"%a", "%b"}
    (check,) = facts.expects
    assert [c.bytes for c in check.copies] == [16384, 8192, 8192]  # B arrives as two sub-views
    assert (check.declared, check.delivered, check.status) == (32768, 32768, "matched")
    assert check.barrier is not None and check.barrier.slot == ("%i",)
    assert facts.uncovered_copies == ()


def test_expect_mismatch_is_reported() -> None:
    facts = facts_of(FINAL.replace("EXPECT_BYTES", "16384"))
    (check,) = facts.expects
    assert (check.declared, check.delivered, check.status) == (16384, 32768, "mismatched")


def test_expect_stops_at_wait_on_the_same_barrier() -> None:
    text = _HEAD + """\
module {
  tt.func @f(%d: !tt.tensordesc<tensor<128x64xf16, #shared>>, %ph: i32) {
    %true = arith.constant true
    %c0 = arith.constant 0 : i32
    %bar = ttg.local_alloc : () -> !ttg.memdesc<1xi64, #shared1, #smem, mutable>
    %buf = ttg.local_alloc : () -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
    ttng.barrier_expect %bar, 16384, %true : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
    ttng.async_tma_copy_global_to_local %d[%c0, %c0] %buf, %bar, %true : !tt.tensordesc<tensor<128x64xf16, #shared>>, !ttg.memdesc<1xi64, #shared1, #smem, mutable> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
    ttng.wait_barrier %bar, %ph : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
    ttng.async_tma_copy_global_to_local %d[%c0, %c0] %buf, %bar, %true : !tt.tensordesc<tensor<128x64xf16, #shared>>, !ttg.memdesc<1xi64, #shared1, #smem, mutable> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
    tt.return
  }
}
"""
    facts = facts_of(text)
    (check,) = facts.expects
    assert check.status == "matched" and len(check.copies) == 1
    assert [c.line for c in facts.uncovered_copies] == [check.line + 3]


# -- packed TMEM, pre-partition forms ----------------------------------------------------------
def test_packed_owner_and_siblings() -> None:
    facts = facts_of(PACKED)
    g = group(facts, "buffer.id=8")
    assert g.packed
    owner = [m for m in g.members if m.owner]
    assert [m.name for m in owner] == ["%qk"]
    assert sorted((m.offset, m.label) for m in g.members if not m.owner) == [(0, "p"), (64, "alpha"), (65, "m_ij_1")]
    assert g.slot_bytes == 65536  # packed siblings add no storage
    m_ij = next(m for m in g.members if m.label == "m_ij_1")
    assert m_ij.share_group == 2 and m_ij.slot_bytes == 512
    # useD = %false: the QK MMA overwrites, it does not read D.
    assert parts(g.writers, "MMA D") == {"task1"}
    assert not any(a.role.startswith("MMA D") for a in g.readers)
    assert parts(g.readers, "tmem_load") == {"task0"}
    # A is a function argument: listed, not dropped.
    assert [(u.op, u.operand) for u in facts.unresolved] == [("ttng.tc_gen5_mma", "%q")]


def test_load_feeding_local_alloc_and_two_consumers() -> None:
    facts = facts_of(PRE)
    a, b = group(facts, "%sa"), group(facts, "%sb")
    assert [w.role for w in a.writers] == ["alloc init (descriptor_load)"]
    assert parts(a.writers, "alloc init (descriptor_load)") == {"task0"}  # the load's task, not the alloc's
    assert parts(b.readers, "MMA B") == {"task1", "task2"}
    assert parts(a.readers, "MMA A") == {"task1"}  # the second dot's A is in registers
    assert facts.unresolved == ()
    assert (a.members[0].copies, a.members[0].copies_from, a.members[0].slot_bytes) == (1, "default", 8192)


def test_aref_buffers_resolve_to_their_allocation() -> None:
    text = _HEAD + """\
module {
  tt.func @f(%d: !tt.tensordesc<tensor<128x64xf16, #shared>>) {
    %c0 = arith.constant 0 : i32
    %a = ttg.local_alloc : () -> !ttg.memdesc<1x128x64xf16, #shared, #smem, mutable>
    %ar = nvws.aref.create %a : <[!ttg.memdesc<1x128x64xf16, #shared, #smem, mutable>]>
    %buf, %tok = nvws.aref.put.enter %ar {ttg.partition = array<i32: 2>} : <[!ttg.memdesc<1x128x64xf16, #shared, #smem, mutable>]> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable, 1x128x64>, !ttg.async.token
    nvws.descriptor_load %d[%c0, %c0] 16384 %buf {ttg.partition = array<i32: 2>} : !tt.tensordesc<tensor<128x64xf16, #shared>>, i32, i32, !ttg.memdesc<128x64xf16, #shared, #smem, mutable, 1x128x64>
    tt.return
  }
}
"""
    facts = facts_of(text)
    g = group(facts, "%a")
    assert parts(g.writers, "TMA load (aref)") == {"task2"}
    assert (g.members[0].slot_shape, g.members[0].copies) == ((128, 64), 1)
    assert facts.unresolved == ()


# -- command ------------------------------------------------------------------------------------
def _cli(tmp_path: Path, text: str, *args: str):
    path = tmp_path / "k.ttgir"
    path.write_text(text)
    return CliRunner().invoke(app, ["buffers", str(path), *args])


def test_cli_json(tmp_path: Path) -> None:
    result = _cli(tmp_path, FINAL.replace("EXPECT_BYTES", "32768"), "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["schema"] == "barrier-viz/buffers/v1" and doc["input"]["function"] == "gemm"
    first = doc["buffers"][0]
    assert first["buffer_id"] == 0 and first["merged"] and first["merged_by"] == ["buffer.id", "barrier"]
    assert [(m["name"], m["bytes"], m["copies"], m["owner"]) for m in first["members"]] == [
        ("%a", 16384, 2, True), ("%b", 16384, 2, True)]
    assert first["expect"]["status"] == "matched" and first["expect"]["checks"][0]["declared"] == 32768
    assert {w["partitions"][0] for w in first["writers"]} == {"partition1"}
    assert doc["summary"]["mismatched"] == 0 and doc["summary"]["matched"] == 1


def test_cli_text_section4(tmp_path: Path) -> None:
    result = _cli(tmp_path, FINAL.replace("EXPECT_BYTES", "16384"))
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith("Shared Data Map\n===============")
    assert 'Buffer Group: "a_smem" (SMEM)' in out
    assert "buffer.id: 0 (merged with b_smem)" in out
    assert "Writer:    partition1 (TMA load" in out
    assert "expect 16384!=32768 MISMATCH" in out
    assert "Expect mismatches:" in out


def test_cli_text_packed(tmp_path: Path) -> None:
    out = _cli(tmp_path, PACKED).stdout
    assert "buffer.id: 8 (owner; packed: p@0, alpha@64, m_ij_1@65)" in out
    assert "buffer.id: 8 (packed at column 64 of qk)" in out
    assert "Unresolved memory operands:" in out


# -- corpus acceptance (issue 3) ---------------------------------------------------------------
needs_corpus = pytest.mark.skipif(not (CORPUS / "lit").is_dir() or not (CORPUS / "real").is_dir(),
                                  reason="corpus not present (set BARRIER_VIZ_CORPUS)")


def corpus_facts(path: Path, func: str | None = None, unit: str | None = None) -> BufferFacts:
    sel = select(str(path), unit, func, require_function=True)
    return buffer_facts(sel.ir, list(sel.operations()))


@needs_corpus
def test_corpus_merged_barrier_seed() -> None:
    facts = corpus_facts(WS_LIT / "ws_code_partition_merged_barrier.mlir", "matmul_kernel_tma_persistent")
    g0 = next(g for g in facts.groups if g.buffer_id == 0)
    assert g0.shares_id and {m.space for m in g0.members} == {"smem"}
    assert sorted(m.slot_bytes for m in g0.members) == [16384, 32768] and g0.slot_bytes == 49152
    assert {m.copies for m in g0.members} == {3}
    g1 = next(g for g in facts.groups if g.buffer_id == 1)
    (acc,) = g1.members
    assert (acc.space, acc.slot_shape, acc.dtype) == ("tmem", (128, 256), "f32")


@needs_corpus
def test_corpus_two_consumers_share_b() -> None:
    path = WS_LIT / "ws_code_partition.mlir"
    facts = corpus_facts(path, "matmul_kernel_two_consumers", unit="matmul_kernel_two_consumers")
    shared = [g for g in facts.groups if len({p for a in g.readers if a.role == "MMA B" for p in a.partitions}) == 2]
    assert len(shared) == 1
    assert shared[0].members[0].slot_shape == (64, 128)


@needs_corpus
def test_corpus_packed_reuse_backward() -> None:
    facts = corpus_facts(WS_LIT / "ws_code_partition_tmem_packed_reuse_backward.mlir")
    for bid in (8, 9):
        g = next(g for g in facts.groups if g.buffer_id == bid)
        (owner,) = [m for m in g.members if m.owner]
        assert owner.label.startswith("qk") and owner.slot_shape == (128, 128) and owner.dtype == "f32"
        siblings = {m.offset: m.label for m in g.members if not m.owner}
        for offset, name in ((64, "alpha"), (65, "m_ij"), (66, "l_i0")):
            assert siblings[offset].startswith(name), siblings


@needs_corpus
def test_corpus_real_expects_all_match() -> None:
    finals = sorted((CORPUS / "real").glob("*.ttgir"))
    assert finals
    checked = 0
    for path in finals:
        facts = corpus_facts(path)
        bad = [(e.line, e.declared, e.delivered) for e in facts.expects if e.status != "matched"]
        assert not bad, (path.name, bad)
        assert not facts.uncovered_copies, (path.name, [c.line for c in facts.uncovered_copies])
        assert not facts.unresolved, (path.name, facts.unresolved[:3])
        checked += len(facts.expects)
    assert checked > 0


TWO_CTA_LOADS = """\
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#shared1 = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-warps" = 4 : i32, "ttg.num-ctas" = 1 : i32, "ttg.cluster-dim-x" = 2 : i32, "ttg.cluster-dim-y" = 1 : i32, "ttg.cluster-dim-z" = 1 : i32, "ttng.two-ctas" = true} {
  tt.func public @two_cta(%desc: !tt.tensordesc<tensor<128x64xf16, #shared>>, %ptr: !tt.ptr<f32>) {
    %c0 = arith.constant 0 : i32
    %cm2 = arith.constant -2 : i32
    %c512 = arith.constant 512 : i32
    %true = arith.constant true
    %bar = ttg.local_alloc : () -> !ttg.memdesc<1xi64, #shared1, #smem, mutable>
    %bulk_bar = ttg.local_alloc : () -> !ttg.memdesc<1xi64, #shared1, #smem, mutable>
    %tile = ttg.local_alloc : () -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
    %row = ttg.local_alloc : () -> !ttg.memdesc<128xf32, #shared1, #smem, mutable>
    ttng.init_barrier %bar, 1 : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
    ttng.init_barrier %bulk_bar, 1 : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
    %rank = nvg.cluster_id
    %is_leader = arith.cmpi eq, %rank, %c0 : i32
    %leader = arith.andi %rank, %cm2 : i32
    scf.if %is_leader {
      ttng.barrier_expect %bar, 32768, %true : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
    }
    %to_leader = ttng.map_to_remote_buffer %bar, %leader : !ttg.memdesc<1xi64, #shared1, #smem, mutable> -> !ttg.memdesc<1xi64, #shared1, #ttng.shared_cluster_memory, mutable>
    ttng.async_tma_copy_global_to_local %desc[%c0, %c0] %tile, %to_leader, %true {two_cta = true} : !tt.tensordesc<tensor<128x64xf16, #shared>>, !ttg.memdesc<1xi64, #shared1, #ttng.shared_cluster_memory, mutable> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
    ttng.wait_barrier %bar, %c0, %is_leader : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
    ttng.barrier_expect %bulk_bar, 512, %true : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
    %t = ttg.async_copy_global_to_local %ptr, %row bulk_size %c512 : i32 barrier %bulk_bar : !ttg.memdesc<1xi64, #shared1, #smem, mutable> {useBulk = true} : !tt.ptr<f32> -> <128xf32, #shared1, #smem, mutable>
    ttng.wait_barrier %bulk_bar, %c0, %true : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
    tt.return
  }
}
"""


def test_two_cta_loads_complete_on_the_leaders_barrier_and_bulk_copies_count() -> None:
    """TLX 2-CTA FA backward: the leader CTA arms its barrier for both CTAs' tiles (2 x 16384
    bytes) and each CTA's TMA load signals the leader's copy through `map_to_remote_buffer %bar,
    rank & ~1`. The tracer follows the remote view, so the copy is covered, its barrier operand
    resolved (to the leader's copy), and the leader receives 32768 bytes: matched. A bulk copy
    (`cp.async.bulk`, `bulk_size 512 ... barrier`) completes its 512 bytes like a TMA load."""
    facts = facts_of(TWO_CTA_LOADS)
    assert not facts.uncovered_copies and not facts.unresolved
    checks = {e.declared: e for e in facts.expects}
    two_cta = checks[32768]
    assert (two_cta.status, two_cta.per_cta, two_cta.idle) == ("matched", (32768, 0), (1,))
    assert two_cta.copies[0].barrier.cta == "%leader"
    assert (checks[512].status, checks[512].per_cta) == ("matched", (512, 512))
