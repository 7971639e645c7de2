"""Partitions (all sources), roles from key ops, qualifiers, and the `partitions` command.

Hand-written IR covers each partition source and role rule; the corpus tests (skipped when
../shared/corpus is absent) check the acceptance criteria on real compiler output.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from barrier_viz.cli import app
from barrier_viz.commands.partitions_cmd import key_ops_cell, partitions_document
from barrier_viz.facts.partitions import PartitionMap, module_warps
from barrier_viz.session import select

from corpus_units import CORPUS  # noqa: E402 - the one place the corpus is located

FINAL = """\
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#shared1 = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#smem = #ttg.shared_memory
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1>
#blocked = #ttg.blocked<{sizePerThread = [1, 128], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func public @gemm(%a_desc: !tt.tensordesc<tensor<128x64xf16, #shared>> loc("a_desc"), %b_desc: !tt.tensordesc<tensor<64x128xf16, #shared>> loc("b_desc"), %c_desc: !tt.tensordesc<tensor<128x128xf16, #shared>> loc("c_desc")) {
    %a = ttg.local_alloc : () -> !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable> loc("a_smem")
    %b = ttg.local_alloc : () -> !ttg.memdesc<2x64x128xf16, #shared, #smem, mutable> loc("b_smem")
    %bar = ttg.local_alloc : () -> !ttg.memdesc<2x1xi64, #shared1, #smem, mutable> loc("bar")
    %acc = ttng.tmem_alloc : () -> !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable> loc("acc")
    ttg.warp_specialize(%a, %b, %bar, %acc, %a_desc, %b_desc) attributes {requestedRegisters = array<i32: 48, 24, 24>, ttg.partition.types = ["epilogue", "gemm", "load", "computation"]}
    default {
      %r = ttng.tmem_load %acc : !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable> -> tensor<128x128xf32, #blocked>
      %c0 = arith.constant 0 : i32
      %h = arith.truncf %r : tensor<128x128xf32, #blocked> to tensor<128x128xf16, #blocked>
      tt.descriptor_store %c_desc[%c0, %c0], %h : !tt.tensordesc<tensor<128x128xf16, #shared>>, tensor<128x128xf16, #blocked>
      ttg.warp_yield
    }
    partition0(%pa: !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable>, %pb: !ttg.memdesc<2x64x128xf16, #shared, #smem, mutable>, %pbar: !ttg.memdesc<2x1xi64, #shared1, #smem, mutable>, %pacc: !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>, %pad: !tt.tensordesc<tensor<128x64xf16, #shared>>, %pbd: !tt.tensordesc<tensor<64x128xf16, #shared>>) num_warps(1) {
      %c0 = arith.constant 0 : i32
      %true = arith.constant true
      %false = arith.constant false
      %sa = ttg.memdesc_index %pa[%c0] : !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
      %sb = ttg.memdesc_index %pb[%c0] : !ttg.memdesc<2x64x128xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x128xf16, #shared, #smem, mutable>
      ttng.tc_gen5_mma %sa, %sb, %pacc, %false, %true : !ttg.memdesc<128x64xf16, #shared, #smem, mutable>, !ttg.memdesc<64x128xf16, #shared, #smem, mutable>, !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>
      ttg.warp_return
    }
    partition1(%pa: !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable>, %pb: !ttg.memdesc<2x64x128xf16, #shared, #smem, mutable>, %pbar: !ttg.memdesc<2x1xi64, #shared1, #smem, mutable>, %pacc: !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>, %pad: !tt.tensordesc<tensor<128x64xf16, #shared>>, %pbd: !tt.tensordesc<tensor<64x128xf16, #shared>>) num_warps(1) {
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %c4 = arith.constant 4 : i32
      %true = arith.constant true
      %out = scf.for %i = %c0 to %c4 step %c1 iter_args(%buf = %pa) -> (!ttg.memdesc<2x128x64xf16, #shared, #smem, mutable>) : i32 {
        %sa = ttg.memdesc_index %buf[%c0] : !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
        %sb = ttg.memdesc_index %pb[%c0] : !ttg.memdesc<2x64x128xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x128xf16, #shared, #smem, mutable>
        %sbar = ttg.memdesc_index %pbar[%c0] : !ttg.memdesc<2x1xi64, #shared1, #smem, mutable> -> !ttg.memdesc<1xi64, #shared1, #smem, mutable>
        ttng.barrier_expect %sbar, 32768, %true : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
        ttng.async_tma_copy_global_to_local %pad[%c0, %c0] %sa, %sbar, %true : !tt.tensordesc<tensor<128x64xf16, #shared>>, !ttg.memdesc<1xi64, #shared1, #smem, mutable> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
        ttng.async_tma_copy_global_to_local %pbd[%c0, %c0] %sb, %sbar, %true : !tt.tensordesc<tensor<64x128xf16, #shared>>, !ttg.memdesc<1xi64, #shared1, #smem, mutable> -> !ttg.memdesc<64x128xf16, #shared, #smem, mutable>
        scf.yield %buf : !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable>
      }
      ttg.warp_return
    }
    partition2(%pa: !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable>, %pb: !ttg.memdesc<2x64x128xf16, #shared, #smem, mutable>, %pbar: !ttg.memdesc<2x1xi64, #shared1, #smem, mutable>, %pacc: !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>, %pad: !tt.tensordesc<tensor<128x64xf16, #shared>>, %pbd: !tt.tensordesc<tensor<64x128xf16, #shared>>) num_warps(2) {
      ttg.warp_return
    } : (!ttg.memdesc<2x128x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x64x128xf16, #shared, #smem, mutable>, !ttg.memdesc<2x1xi64, #shared1, #smem, mutable>, !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>, !tt.tensordesc<tensor<128x64xf16, #shared>>, !tt.tensordesc<tensor<64x128xf16, #shared>>) -> ()
    tt.return
  }
}
"""

ATTN = """\
#blocked = #ttg.blocked<{sizePerThread = [1, 128], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1>
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func @attn() {
    %qk0 = ttng.tmem_alloc : () -> !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable> loc("qk_0")
    %qk1 = ttng.tmem_alloc : () -> !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable> loc("qk_1")
    %acc = ttng.tmem_alloc : () -> !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable> loc("acc")
    ttg.warp_specialize(%qk1, %acc)
    default {
      %s = ttng.tmem_load %qk0 : !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable> -> tensor<128x128xf32, #blocked>
      %m = "tt.reduce"(%s) <{axis = 1 : i32}> ({
      ^bb0(%x: f32, %y: f32):
        %mx = arith.maxnumf %x, %y : f32
        tt.reduce.return %mx : f32
      }) : (tensor<128x128xf32, #blocked>) -> tensor<128xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
      %e = math.exp2 %s : tensor<128x128xf32, #blocked>
      ttg.warp_yield
    }
    partition0(%q: !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>, %pacc: !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>) num_warps(4) {
      %true = arith.constant true
      %s = ttng.tmem_load %q : !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable> -> tensor<128x128xf32, #blocked>
      %m = "tt.reduce"(%s) <{axis = 1 : i32}> ({
      ^bb0(%x: f32, %y: f32):
        %mx = arith.maxnumf %x, %y : f32
        tt.reduce.return %mx : f32
      }) : (tensor<128x128xf32, #blocked>) -> tensor<128xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
      %p = arith.truncf %s : tensor<128x128xf32, #blocked> to tensor<128x128xf16, #blocked>
      %pv = ttg.memdesc_reinterpret %q : !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable> -> !ttg.memdesc<128x128xf16, #tmem, #ttng.tensor_memory, mutable>
      ttng.tmem_store %p, %pv, %true : tensor<128x128xf16, #blocked> -> !ttg.memdesc<128x128xf16, #tmem, #ttng.tensor_memory, mutable>
      ttg.warp_return
    }
    partition1(%q: !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>, %pacc: !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>) num_warps(4) {
      %true = arith.constant true
      %o = ttng.tmem_load %pacc : !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable> -> tensor<128x128xf32, #blocked>
      %o2 = arith.mulf %o, %o : tensor<128x128xf32, #blocked>
      ttng.tmem_store %o2, %pacc, %true : tensor<128x128xf32, #blocked> -> !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>
      ttg.warp_return
    } : (!ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>, !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>) -> ()
    tt.return
  }
}
"""

PRE_PARTITION = """\
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1>
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func public @pre(%arg0: !tt.tensordesc<128x64xf16, #shared>, %arg1: !tt.tensordesc<64x128xf16, #shared>, %arg2: !tt.tensordesc<128x128xf16, #shared>, %n: i32) {
    %0 = ttg.local_alloc {buffer.copy = 2 : i32, buffer.id = 0 : i32} : () -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
    %1 = ttg.local_alloc {buffer.copy = 2 : i32, buffer.id = 0 : i32} : () -> !ttg.memdesc<64x128xf16, #shared, #smem, mutable>
    %acc, %tok = ttng.tmem_alloc : () -> (!ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>, !ttg.async.token)
    %c0 = arith.constant {async_task_id = array<i32: 0, 1, 2>} 0 : i32
    %c1 = arith.constant {async_task_id = array<i32: 0, 1, 2>} 1 : i32
    %true = arith.constant {async_task_id = array<i32: 0>} true
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%t = %tok) -> (!ttg.async.token) : i32 {
      %a = tt.descriptor_load %arg0[%i, %c0] {async_task_id = array<i32: 1>} : !tt.tensordesc<128x64xf16, #shared> -> tensor<128x64xf16, #blocked>
      ttg.local_store %a, %0 {async_task_id = array<i32: 1>} : tensor<128x64xf16, #blocked> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
      %b = tt.descriptor_load %arg1[%c0, %i] {async_task_id = array<i32: 1>} : !tt.tensordesc<64x128xf16, #shared> -> tensor<64x128xf16, #blocked>
      ttg.local_store %b, %1 {async_task_id = array<i32: 1>} : tensor<64x128xf16, #blocked> -> !ttg.memdesc<64x128xf16, #shared, #smem, mutable>
      %t2 = ttng.tc_gen5_mma %0, %1, %acc[%t], %true, %true {async_task_id = array<i32: 0>} : !ttg.memdesc<128x64xf16, #shared, #smem, mutable>, !ttg.memdesc<64x128xf16, #shared, #smem, mutable>, !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>
      scf.yield {async_task_id = array<i32: 0, 1>} %t2 : !ttg.async.token
    } {async_task_id = array<i32: 0, 1, 2>, ttg.partition.types = ["gemm", "load", "epilogue"]}
    %res, %tok2 = ttng.tmem_load %acc[%r] {async_task_id = array<i32: 2>} : !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable> -> tensor<128x128xf32, #blocked>
    %h = arith.truncf %res {async_task_id = array<i32: 2>} : tensor<128x128xf32, #blocked> to tensor<128x128xf16, #blocked>
    tt.descriptor_store %arg2[%c0, %c0], %h {async_task_id = array<i32: 2>} : !tt.tensordesc<128x128xf16, #shared>, tensor<128x128xf16, #blocked>
    tt.return
  }
}
"""

WARP_GROUP = """\
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 32, transposed = false, elementBitWidth = 8}>
#shared2 = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 256, colStride = 2>
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func @wg(%a: !ttg.memdesc<128x128xf8E5M2, #shared, #ttg.shared_memory>, %b: !ttg.memdesc<128x256xf8E5M2, #shared, #ttg.shared_memory>, %c: !ttg.memdesc<128x256xf16, #tmem, #ttng.tensor_memory, mutable>, %d: !tt.tensordesc<tensor<128x128xf8E5M2, #shared>>, %bar: !ttg.memdesc<1xi64, #shared2, #ttg.shared_memory, mutable>, %p: i1) {
    nvws.warp_group
    partition0  num_warps(8) {
      ttng.tc_gen5_mma %a, %b, %c, %p, %p : !ttg.memdesc<128x128xf8E5M2, #shared, #ttg.shared_memory>, !ttg.memdesc<128x256xf8E5M2, #shared, #ttg.shared_memory>, !ttg.memdesc<128x256xf16, #tmem, #ttng.tensor_memory, mutable>
      nvws.warp_group.return
    }
    partition1  num_warps(2) {
      %c0 = arith.constant 0 : i32
      ttng.async_tma_copy_global_to_local %d[%c0, %c0] %a, %bar, %p : !tt.tensordesc<tensor<128x128xf8E5M2, #shared>>, !ttg.memdesc<1xi64, #shared2, #ttg.shared_memory, mutable> -> !ttg.memdesc<128x128xf8E5M2, #shared, #ttg.shared_memory>
      nvws.warp_group.return
    }
    tt.return
  }
}
"""

TWO_AND_NESTED = """\
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1>
#blocked = #ttg.blocked<{sizePerThread = [1, 128], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func @two(%acc: !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>) {
    ttg.warp_specialize()
    default {
      %x = ttng.tmem_load %acc : !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable> -> tensor<128x128xf32, #blocked>
      ttg.warp_yield
    }
    partition0() num_warps(1) {
      ttg.warp_return
    } : () -> ()
    ttg.warp_specialize()
    default {
      ttg.warp_specialize()
      default {
        %y = ttng.tmem_load %acc : !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable> -> tensor<128x128xf32, #blocked>
        ttg.warp_yield
      }
      partition0() num_warps(2) {
        ttg.warp_return
      } : () -> ()
      ttg.warp_yield
    }
    partition0() num_warps(1) {
      ttg.warp_return
    } : () -> ()
    tt.return
  }
}
"""


TWO_MMAS = """\
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1>
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func @two_mmas(%x: !ttg.memdesc<128x128xf16, #shared, #smem>, %ptrs: tensor<128x128x!tt.ptr<f16>, #blocked> loc("x_ptrs")) {
    %acc0 = ttng.tmem_alloc : () -> !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable> loc("acc_0")
    %acc1 = ttng.tmem_alloc : () -> !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable> loc("acc_1")
    ttg.warp_specialize(%x, %acc0, %acc1, %ptrs)
    default {
      %v = tt.load %ptrs : tensor<128x128x!tt.ptr<f16>, #blocked>
      ttg.warp_yield
    }
    partition0(%a: !ttg.memdesc<128x128xf16, #shared, #smem>, %d0: !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>, %d1: !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>, %p: tensor<128x128x!tt.ptr<f16>, #blocked>) num_warps(1) {
      %true = arith.constant true
      ttng.tc_gen5_mma %a, %a, %d0, %true, %true : !ttg.memdesc<128x128xf16, #shared, #smem>, !ttg.memdesc<128x128xf16, #shared, #smem>, !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>
      ttg.warp_return
    }
    partition1(%a: !ttg.memdesc<128x128xf16, #shared, #smem>, %d0: !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>, %d1: !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>, %p: tensor<128x128x!tt.ptr<f16>, #blocked>) num_warps(1) {
      %true = arith.constant true
      ttng.tc_gen5_mma %a, %a, %d1, %true, %true : !ttg.memdesc<128x128xf16, #shared, #smem>, !ttg.memdesc<128x128xf16, #shared, #smem>, !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>
      ttg.warp_return
    } : (!ttg.memdesc<128x128xf16, #shared, #smem>, !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>, !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>, tensor<128x128x!tt.ptr<f16>, #blocked>) -> ()
    tt.return
  }
}
"""


def _write(tmp_path: Path, text: str, name: str = "k.mlir") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _doc(tmp_path: Path, text: str, func: str | None = None):
    return partitions_document(select(_write(tmp_path, text), None, func, require_function=True))


def _map(tmp_path: Path, text: str) -> tuple[PartitionMap, list]:
    sel = select(_write(tmp_path, text), None, None, require_function=True)
    ops = list(sel.operations())
    return PartitionMap(ops, module_warps(ops)), ops


def _strip_locs(text: str, pattern: str = r' loc\("[^"]*"\)') -> str:
    return re.sub(pattern, "", text)


# -- partitions ---------------------------------------------------------------------------------
def test_final_ir_regions_warps_types_registers(tmp_path):
    doc = _doc(tmp_path, FINAL)
    assert doc.derived_from == "warp_specialize"
    parts = doc.partitions
    assert [p.name for p in parts] == ["default", "partition0", "partition1", "partition2"]
    assert [p.warps for p in parts] == [4, 1, 1, 2]  # default = the module's num-warps
    assert [p.task_ids for p in parts] == [[0], [1], [2], [3]]
    assert [p.type for p in parts] == ["epilogue", "gemm", "load", "computation"]
    assert [p.requested_registers for p in parts] == [None, 48, 24, 24]
    assert parts[0].lines == [13, 19] and parts[3].lines == [45, 47]


def test_pre_partition_task_ids_replicate(tmp_path):
    pm, ops = _map(tmp_path, PRE_PARTITION)
    assert pm.derived_from == "async_task_id"
    assert [p.name for p in pm.partitions] == ["task0", "task1", "task2"]
    assert all(p.warps is None and p.region is None for p in pm.partitions)
    assert [p.type for p in pm.partitions] == ["gemm", "load", "epilogue"]
    loop = next(op for op in ops if op.name == "scf.for")
    assert [p.name for p in pm.of(loop)] == ["task0", "task1", "task2"]
    yield_op = next(op for op in ops if op.name == "scf.yield")
    assert [p.name for p in pm.of(yield_op)] == ["task0", "task1"]
    alloc = next(op for op in ops if op.name == "ttg.local_alloc")
    assert pm.of(alloc) == [] and pm.primary(alloc) is None  # function scope: before the fork


def test_upstream_ttg_partition_attribute(tmp_path):
    pm, _ = _map(tmp_path, PRE_PARTITION.replace("async_task_id", "ttg.partition"))
    assert pm.derived_from == "ttg.partition"
    assert [p.task_ids for p in pm.partitions] == [[0], [1], [2]]


def test_nvws_warp_group_keeps_written_names(tmp_path):
    doc = _doc(tmp_path, WARP_GROUP)
    assert doc.derived_from == "nvws.warp_group"
    assert [(p.name, p.task_ids) for p in doc.partitions] == [("partition0", [0]), ("partition1", [1])]
    assert [p.role for p in doc.partitions] == ["MMA", "TMA loads (A)"]


def test_nvws_warp_group_warps(tmp_path):
    doc = _doc(tmp_path, WARP_GROUP)
    assert [p.warps for p in doc.partitions] == [8, 2]


def test_multiple_and_nested_warp_specialize(tmp_path):
    pm, ops = _map(tmp_path, TWO_AND_NESTED)
    names = [p.name for p in pm.partitions]
    assert names == [
        "ws0.default", "ws0.partition0", "ws1.default", "ws1.partition0",
        "ws1.default/default", "ws1.default/partition0",
    ]
    inner = pm.by_name("ws1.default/partition0")
    assert inner.warps == 2 and inner.parent is pm.by_name("ws1.default")
    assert pm.by_name("ws1.default/default").warps == 4  # inherits the enclosing default's warps
    nested_load = [op for op in ops if op.name == "ttng.tmem_load"][1]
    assert [p.name for p in pm.of(nested_load)] == ["ws1.default/default", "ws1.default"]
    assert pm.primary(nested_load).name == "ws1.default/default"
    doc = _doc(tmp_path, TWO_AND_NESTED)
    roles = {p.name: p.role for p in doc.partitions}
    # the outer default only runs the nested op; its own body has no key ops
    assert roles["ws1.default"] == "other" and roles["ws1.default/default"] == "Epilogue"
    # ws0 and ws1 never run concurrently: their epilogues are not "shared", so not qualified
    assert roles["ws0.default"] == "Epilogue"
    assert roles["ws0.partition0"] == "idle (empty)"


# -- roles -------------------------------------------------------------------------------------
def test_roles_and_key_ops_final(tmp_path):
    parts = _doc(tmp_path, FINAL).partitions
    assert [p.role for p in parts] == ["Epilogue", "MMA", "TMA loads (a, b)", "idle (empty)"]
    assert parts[0].key_ops == {"ttng.tmem_load": 1, "tt.descriptor_store": 1}
    assert parts[1].key_ops == {"ttng.tc_gen5_mma": 1}
    assert parts[2].key_ops == {"ttng.async_tma_copy_global_to_local": 2}
    assert parts[3].empty and parts[3].key_ops == {}
    assert key_ops_cell(parts[2].key_ops) == "async_tma_copy_global_to_local x2"


def test_tma_qualifier_fallbacks(tmp_path):
    # Without descriptor names: the buffers, traced through iter_args and captures to the allocs.
    no_desc = _strip_locs(FINAL, r' loc\("[abc]_desc"\)')
    assert _doc(tmp_path, no_desc).partitions[2].role == "TMA loads (a_smem, b_smem)"
    # Without any names: the MMA operand each buffer feeds.
    bare = _strip_locs(FINAL)
    assert _doc(tmp_path, bare).partitions[2].role == "TMA loads (A, B)"
    # Without names or MMA: the shapes; the MMA partition keeps constants only -> "other".
    no_mma = "\n".join(line for line in bare.splitlines() if "tc_gen5_mma" not in line)
    parts = _doc(tmp_path, no_mma).partitions
    assert parts[2].role == "TMA loads (128x64xf16, 64x128xf16)"
    assert parts[1].role == "other"


def test_softmax_shared_role_is_qualified_and_correction_needs_rescale(tmp_path):
    parts = _doc(tmp_path, ATTN).partitions
    assert [p.role for p in parts] == ["Softmax (qk_0)", "Softmax (qk_1)", "Acc correction"]
    # partition0 stores P (f16) into QK's columns: not a re-scaled accumulator
    assert "ttng.tmem_store" not in parts[1].key_ops
    assert parts[2].key_ops == {"ttng.tmem_load": 1, "ttng.tmem_store": 1}
    assert parts[0].key_ops == {"ttng.tmem_load": 1, "tt.reduce": 1, "arith.maxnumf": 1, "math.exp2": 1}


def test_shared_mma_qualified_by_accumulator_and_global_load_fallback(tmp_path):
    parts = _doc(tmp_path, TWO_MMAS).partitions
    assert [p.role for p in parts] == ["Global loads", "MMA (acc_0)", "MMA (acc_1)"]
    assert parts[0].key_ops == {"tt.load": 1}
    assert parts[0].roles[0].touches == ["x_ptrs"]


def test_pre_partition_roles(tmp_path):
    parts = _doc(tmp_path, PRE_PARTITION).partitions
    assert [p.role for p in parts] == ["MMA", "TMA loads (A, B)", "Epilogue"]
    assert parts[1].key_ops == {"tt.descriptor_load": 2}
    assert parts[2].key_ops == {"ttng.tmem_load": 1, "tt.descriptor_store": 1}


# -- command -------------------------------------------------------------------------------------
def test_cli_json(tmp_path):
    path = _write(tmp_path, FINAL)
    result = CliRunner().invoke(app, ["partitions", path, "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert list(doc)[:3] == ["schema", "input", "derived_from"]
    assert doc["schema"] == "barrier-viz/partitions/v1"
    assert doc["input"]["function"] == "gemm"
    first = doc["partitions"][1]
    assert {"name", "warps", "role", "key_ops", "task_ids", "type", "lines"} <= set(first)
    assert first["role"] == "MMA" and first["lines"] == [20, 28]


def test_cli_text_table(tmp_path):
    path = _write(tmp_path, FINAL)
    result = CliRunner().invoke(app, ["partitions", path])
    assert result.exit_code == 0, result.output
    out = result.stdout
    for header in ("Partition", "Role", "Key Ops", "Warps"):
        assert header in out
    row = next(line for line in out.splitlines() if "partition1" in line)
    assert "TMA loads (a, b)" in row and "async_tma_copy_global_to_local x2" in row


def test_cli_bad_function_exits_2(tmp_path):
    path = _write(tmp_path, FINAL)
    result = CliRunner().invoke(app, ["partitions", path, "--func", "nope"])
    assert result.exit_code == 2


# -- corpus acceptance -----------------------------------------------------------------------------
needs_corpus = pytest.mark.skipif(not (CORPUS / "real").is_dir(), reason="corpus not available")


@needs_corpus
def test_corpus_merged_barrier_lit():
    path = CORPUS / "lit" / "Hopper" / "WarpSpecialization" / "ws_code_partition_merged_barrier.mlir"
    doc = partitions_document(select(str(path), None, "matmul_kernel_tma_persistent", require_function=True))
    assert doc.derived_from == "async_task_id"
    assert [p.role for p in doc.partitions] == ["MMA", "TMA loads (A, B)", "Epilogue"]


def _ws_regions(ops) -> int:
    return sum(len(op.regions) for op in ops if op.name == "ttg.warp_specialize")


@needs_corpus
def test_corpus_final_ttgir_partitions_and_roles():
    files = sorted((CORPUS / "real").glob("*.ttgir"))
    assert files
    checked = mma_parts = load_parts = has_load = 0
    for path in files:
        sel = select(str(path), None, None, require_function=True)
        ops = list(sel.operations())
        doc = partitions_document(sel)
        assert len(doc.partitions) == _ws_regions(ops), path.name
        if not doc.partitions:
            continue
        checked += 1
        # Which partitions hold MMAs / TMA loads is read from the raw regions here, independently
        # of the role code; the manifest's partition_types are not used.
        regions = [r for op in ops if op.name == "ttg.warp_specialize" for r in op.regions]
        assert len(regions) == len(doc.partitions)
        for region, part in zip(regions, doc.partitions):
            names = {op.name for top in region.operations() for op in top.walk()}
            if names & MMA_NAMES:
                assert part.role.startswith("MMA"), (path.name, part.name, part.role)
                mma_parts += 1
            elif names & TMA_LOAD_NAMES:
                assert part.role.startswith("TMA loads"), (path.name, part.name, part.role)
                load_parts += 1
        has_load += any("TMA loads" in p.role for p in doc.partitions)
    assert checked >= 100 and has_load == checked
    assert mma_parts >= checked - 5 and load_parts >= checked


MMA_NAMES = {"tt.dot", "ttng.warp_group_dot", "ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled"}
TMA_LOAD_NAMES = {"ttng.async_tma_copy_global_to_local"}


HELPERS = """\
#shared1 = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
#blocked = #ttg.blocked<{sizePerThread = [1, 64], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.cluster-dim-x" = 2 : i32, "ttg.cluster-dim-y" = 1 : i32, "ttg.cluster-dim-z" = 1 : i32} {
  tt.func public @helpers(%dq_desc: !tt.tensordesc<tensor<128x64xf32, #shared>> loc("desc_dq")) {
    %bar = ttg.local_alloc : () -> !ttg.memdesc<1xi64, #shared1, #smem, mutable> loc("bar")
    %resp = ttg.local_alloc : () -> !ttg.memdesc<2xi64, #shared1, #smem, mutable> loc("resp")
    %stage = ttg.local_alloc : () -> !ttg.memdesc<128x64xf32, #shared, #smem, mutable> loc("stage")
    ttg.warp_specialize(%bar, %resp, %stage, %dq_desc)
    default {
      %c0 = arith.constant 0 : i32
      %v = ttg.local_load %stage : !ttg.memdesc<128x64xf32, #shared, #smem, mutable> -> tensor<128x64xf32, #blocked>
      tt.descriptor_reduce add, %dq_desc[%c0, %c0], %v : !tt.tensordesc<tensor<128x64xf32, #shared>>, tensor<128x64xf32, #blocked>
      ttg.warp_yield
    }
    partition0(%pbar: !ttg.memdesc<1xi64, #shared1, #smem, mutable>, %presp: !ttg.memdesc<2xi64, #shared1, #smem, mutable>, %pstage: !ttg.memdesc<128x64xf32, #shared, #smem, mutable>, %pdesc: !tt.tensordesc<tensor<128x64xf32, #shared>>) num_warps(1) {
      %c0 = arith.constant 0 : i32
      %true = arith.constant true
      ttng.barrier_expect %pbar, 16, %true : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
      ttng.clc_try_cancel %presp, %pbar {multicast = true} : !ttg.memdesc<2xi64, #shared1, #smem, mutable>, !ttg.memdesc<1xi64, #shared1, #smem, mutable>
      ttng.wait_barrier %pbar, %c0, %true : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
      ttg.warp_return
    }
    partition1(%pbar: !ttg.memdesc<1xi64, #shared1, #smem, mutable>, %presp: !ttg.memdesc<2xi64, #shared1, #smem, mutable>, %pstage: !ttg.memdesc<128x64xf32, #shared, #smem, mutable>, %pdesc: !tt.tensordesc<tensor<128x64xf32, #shared>>) num_warps(1) {
      %c0 = arith.constant 0 : i32
      %true = arith.constant true
      ttng.wait_barrier %pbar, %c0, %true : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
      %r = ttng.map_to_remote_buffer %pbar, %c0 : !ttg.memdesc<1xi64, #shared1, #smem, mutable> -> !ttg.memdesc<1xi64, #shared1, #ttng.shared_cluster_memory, mutable>
      ttng.arrive_barrier %r, 1 : !ttg.memdesc<1xi64, #shared1, #ttng.shared_cluster_memory, mutable>
      ttg.warp_return
    }
    partition2(%pbar: !ttg.memdesc<1xi64, #shared1, #smem, mutable>, %presp: !ttg.memdesc<2xi64, #shared1, #smem, mutable>, %pstage: !ttg.memdesc<128x64xf32, #shared, #smem, mutable>, %pdesc: !tt.tensordesc<tensor<128x64xf32, #shared>>) num_warps(4) {
      %cst = arith.constant dense<0.0> : tensor<128x64xf32, #blocked>
      ttg.local_store %cst, %pstage : tensor<128x64xf32, #blocked> -> !ttg.memdesc<128x64xf32, #shared, #smem, mutable>
      ttg.warp_return
    }
    tt.return
  }
}
"""


def test_hand_written_helper_partitions_are_named_by_what_they_do(tmp_path):
    """Hand-written (TLX/Gluon) kernels have helper partitions no compiler pass names: a CLC
    scheduler (it asks for the next tile: try_cancel), a dQ epilogue that adds its tile into
    global memory (descriptor_reduce), a relay that waits on its CTA's barrier and arrives on the
    leader CTA's copy, a partition that only stages a tile into shared memory. Each has barrier or
    memory ops, so none is "other"."""
    roles = {p.name: p.role for p in _doc(tmp_path, HELPERS).partitions}
    assert roles == {"default": "Reduce store (dq)", "partition0": "CLC scheduler",
                     "partition1": "Cross-CTA sync relay", "partition2": "Shared-memory staging"}
