"""Barrier facts and the `barriers` command (issue 3, items 3-4; report section 5).

Small hand-written IR covers every mechanism of the skill's table and every SSA hop kind the
tracer follows; the corpus test (skipped when ../shared/corpus is absent) checks that every
barrier use of every final `.ttgir` resolves to its allocation. Lines are looked up from the
text, never hard-coded.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from barrier_viz.cli import app
from barrier_viz.facts.barriers import (
    Barrier,
    BarrierFacts,
    BarrierKind,
    Mechanism,
    Role,
    barrier_operands,
    collect_barriers,
    memdesc_bytes,
    parse_memdesc,
)
from barrier_viz.facts.partitions import PartitionMap, module_warps
from barrier_viz.facts.trace import Tracer
from barrier_viz.inputs import load_unit, open_input
from barrier_viz.ir.parse import parse_ir

from corpus_units import CORPUS  # noqa: E402 - the one place the corpus is located

BAR3 = "!ttg.memdesc<3x1xi64, #shared, #smem, mutable>"
BAR1 = "!ttg.memdesc<1xi64, #shared, #smem, mutable>"
BAR4 = "!ttg.memdesc<4x1xi64, #shared, #smem, mutable>"
BAR2 = "!ttg.memdesc<2x1xi64, #shared, #smem, mutable>"
A3 = "!ttg.memdesc<3x128x64xf16, #nvmma, #smem, mutable>"
A1 = "!ttg.memdesc<128x64xf16, #nvmma, #smem, mutable>"
B1 = "!ttg.memdesc<64x128xf16, #nvmma, #smem, mutable>"
TMEM = "!ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>"
SCALE = "!ttg.memdesc<128x8xi8, #tmem_scales, #ttng.tensor_memory>"
DESC = "!tt.tensordesc<tensor<128x64xf16, #nvmma>>"

HEADER = """\
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#nvmma = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1>
#tmem_scales = #ttng.tensor_memory_scales_encoding<>
"""


def _ir(body: str) -> str:
    return HEADER + 'module attributes {"ttg.num-warps" = 4 : i32} {\n' + body + "}\n"


def _typed(text: str) -> str:
    for key, value in (("BAR3", BAR3), ("BAR1", BAR1), ("BAR4", BAR4), ("BAR2", BAR2), ("A3", A3), ("A1", A1),
                       ("B1", B1), ("TMEM", TMEM), ("SCALE", SCALE), ("DESC", DESC)):
        text = text.replace(key, value)
    return text


# A warp-specialized pipeline: TMA loads fill `full`, the MMA releases `empty` through its
# barrier list and commits `done`, which the default partition waits for.
WS = _ir(_typed("""\
  tt.func public @ws(%desc: DESC) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %full = ttg.local_alloc {ttg.ws_generated_barrier} : () -> BAR3 loc("full")
    %full_0 = ttg.memdesc_index %full[%c0] : BAR3 -> BAR1
    ttng.init_barrier %full_0, 1 : BAR1
    %empty = ttg.local_alloc : () -> BAR3
    %empty_1 = ttg.memdesc_index %empty[%c1] : BAR3 -> BAR1
    ttng.init_barrier %empty_1, 1 : BAR1
    %done = ttg.local_alloc : () -> BAR1
    ttng.init_barrier %done, 1 : BAR1
    %a = ttg.local_alloc : () -> A3
    %acc = ttng.tmem_alloc : () -> TMEM
    ttg.warp_specialize(%full, %empty, %done, %a, %acc, %desc)
    default {
      %c0_d = arith.constant 0 : i32
      ttng.wait_barrier %done, %c0_d : BAR1
      ttg.warp_yield
    }
    partition0(%f: BAR3, %e: BAR3, %d: BAR1, %pa: A3, %pacc: TMEM, %pd: DESC) num_warps(1) {
      %c0_m = arith.constant 0 : i32
      %c1_m = arith.constant 1 : i32
      %c3_m = arith.constant 3 : i32
      %true = arith.constant true
      %false = arith.constant false
      scf.for %i = %c0_m to %c3_m step %c1_m : i32 {
        %fs = ttg.memdesc_index %f[%i] : BAR3 -> BAR1
        ttng.wait_barrier %fs, %c0_m, %true {constraints = {WSBarrier = {dstTask = 2 : i32, direction = "forward"}}} : BAR1
        %as = ttg.memdesc_index %pa[%i] : A3 -> A1
        %bs = ttg.memdesc_trans %as {order = array<i32: 1, 0>} : A1 -> B1
        %es = ttg.memdesc_index %e[%i] : BAR3 -> BAR1
        ttng.tc_gen5_mma %as, %bs, %pacc, %false, %true, %es[%true] {is_async} : A1, B1, TMEM, BAR1
        scf.yield
      }
      ttng.tc_gen5_commit %d : BAR1
      ttg.warp_return
    }
    partition1(%f: BAR3, %e: BAR3, %d: BAR1, %pa: A3, %pacc: TMEM, %pd: DESC) num_warps(1) {
      %c0_l = arith.constant 0 : i32
      %c1_l = arith.constant 1 : i32
      %c3_l = arith.constant 3 : i32
      %true_l = arith.constant true
      scf.for %j = %c0_l to %c3_l step %c1_l : i32 {
        %es = ttg.memdesc_index %e[%j] : BAR3 -> BAR1
        ttng.wait_barrier %es, %c1_l, %true_l : BAR1
        %fs = ttg.memdesc_index %f[%j] : BAR3 -> BAR1
        ttng.barrier_expect %fs, 16384 {async_task_id = array<i32: 2>}, %true_l : BAR1
        %as = ttg.memdesc_index %pa[%j] : A3 -> A1
        ttng.async_tma_copy_global_to_local %pd[%c0_l, %c0_l] %as, %fs, %true_l : DESC, BAR1 -> A1
        scf.yield
      }
      ttg.warp_return
    }
    tt.return
  }
"""))


def line_of(text: str, needle: str) -> int:
    for n, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return n
    raise AssertionError(f"{needle!r} not found")


def facts_of(text: str, func: str | None = None) -> BarrierFacts:
    ir = parse_ir(text)
    fn = ir.function(func) if func else ir.functions()[0]
    ops = list(fn.walk())
    return collect_barriers(ops, Tracer(ir), PartitionMap(ops, module_warps(ops)))


def barrier(facts: BarrierFacts, name: str) -> Barrier:
    found = [b for b in facts.barriers if b.name == name]
    assert len(found) == 1, [b.id for b in facts.barriers]
    return found[0]


def roles(b: Barrier) -> list[tuple[str, str | None]]:
    return [(u.role.value, u.partition) for u in b.uses]


def vias(b: Barrier) -> set[str]:
    return {a.via for a in b.aliases}


# -- mechanisms -----------------------------------------------------------------------------------
def test_tma_mechanism_expect_and_copy_on_one_allocation():
    facts = facts_of(WS)
    full = barrier(facts, "%full")
    assert full.kind is BarrierKind.MBARRIER and full.slots == 3 and full.init_counts == (1,)
    assert full.mechanisms == (Mechanism.MBARRIER_TMA,)
    assert full.loc_name == "full" and full.line == line_of(WS, "%full = ttg.local_alloc")
    assert roles(full) == [("init", None), ("wait", "partition0"), ("expect", "partition1"), ("tma_arrive", "partition1")]
    expect = next(u for u in full.uses if u.role is Role.EXPECT)
    copy = next(u for u in full.uses if u.role is Role.TMA_ARRIVE)
    assert expect.bytes == 16384 and expect.predicate == "%true_l" and expect.loop_depth == 1
    assert copy.bytes == 128 * 64 * 2 and copy.operand == "%fs" and copy.predicate == "%true_l"
    assert [s.value for s in copy.slots] == ["%j"] and copy.slots[0].constant is None
    init = full.uses[0]
    assert init.count == 1 and [(s.value, s.constant) for s in init.slots] == [("%c0", 0)]


def test_mma_barrier_list_and_commit_and_wait_metadata():
    facts = facts_of(WS)
    empty = barrier(facts, "%empty")
    assert empty.mechanisms == (Mechanism.MMA_BARRIER,)
    mma = next(u for u in empty.uses if u.role is Role.MMA_ARRIVE)
    assert mma.partition == "partition0" and mma.predicate == "%true" and mma.op_predicate == "%true"
    wait = next(u for u in empty.uses if u.role is Role.WAIT)
    assert wait.phase == "%c1_l" and wait.predicate == "%true_l" and wait.partition == "partition1"
    done = barrier(facts, "%done")
    assert done.slots == 1 and done.mechanisms == (Mechanism.TCGEN05_COMMIT,)
    assert roles(done) == [("init", None), ("wait", "default"), ("commit", "partition0")]
    full_wait = next(u for u in barrier(facts, "%full").uses if u.role is Role.WAIT)
    assert full_wait.constraints == {"WSBarrier": {"dstTask": 2, "direction": "forward"}}
    assert not facts.unresolved


def test_mma_token_and_scale_operands_are_not_barriers():
    text = _ir(_typed("""\
  tt.func @mma(%sa: A1, %sb: B1, %acc: TMEM, %ls: SCALE, %rs: SCALE, %tok: !ttg.async.token, %useD: i1, %p: i1, %q: i1) {
    %b0 = ttg.local_alloc : () -> BAR1
    %b1 = ttg.local_alloc : () -> BAR1
    %t1 = ttng.tc_gen5_mma %sa, %sb, %acc[%tok], %useD, %p, %b0[%q], %b1[%p] {is_async} : A1, B1, TMEM, BAR1, BAR1
    %t2 = ttng.tc_gen5_mma_scaled %sa, %sb, %acc[%t1], %ls, %rs, %useD, %p lhs = e4m3 rhs = e4m3, %b1[%q] {is_async} : A1, B1, TMEM, SCALE, SCALE, BAR1
    %t3 = ttng.tc_gen5_mma %sa, %sb, %acc[], %useD, %p : A1, B1, TMEM
    tt.return
  }
"""))
    facts = facts_of(text)
    assert not facts.unresolved
    assert [b.name for b in facts.barriers] == ["%b0", "%b1"]
    b0, b1 = barrier(facts, "%b0"), barrier(facts, "%b1")
    assert [(u.op.name, u.predicate, u.op_predicate) for u in b0.uses] == [("ttng.tc_gen5_mma", "%q", "%p")]
    assert [(u.op.name, u.predicate) for u in b1.uses] == [("ttng.tc_gen5_mma", "%p"), ("ttng.tc_gen5_mma_scaled", "%q")]
    unbarriered = parse_ir(text).function("mma")
    assert unbarriered is not None
    last_mma = [op for op in unbarriered.walk() if op.name == "ttng.tc_gen5_mma"][-1]
    assert barrier_operands(last_mma) == []


def test_explicit_arrive_async_copy_arrive_and_tma_store_wait():
    text = _ir(_typed("""\
  tt.func @arrives(%tok: !ttg.async.token, %p: i1, %desc: DESC, %x: i32, %mc: i32) {
    %b = ttg.local_alloc : () -> BAR1
    %dst = ttg.local_alloc : () -> A1
    ttng.async_tma_copy_global_to_local %desc[%x, %x] %dst, %b, %p, %mc : DESC, BAR1 -> A1
    ttng.arrive_barrier %b, 2, %p : BAR1
    ttng.async_copy_mbarrier_arrive %b { noIncrement } : BAR1
    ttng.async_copy_mbarrier_arrive %b : BAR1
    ttng.async_tma_store_token_wait %tok, %b[%p] : !ttg.async.token, BAR1
    tt.return
  }
"""))
    facts = facts_of(text)
    assert not facts.unresolved and [b.name for b in facts.barriers] == ["%b"]
    b = facts.barriers[0]
    assert [(u.role.value, u.mechanism.value, u.count, u.predicate) for u in b.uses] == [
        ("tma_arrive", "mbarrier_tma", None, "%p"),
        ("arrive", "mbarrier_explicit", 2, "%p"),
        ("arrive", "async_copy_mbarrier_arrive", 1, None),
        ("arrive", "async_copy_mbarrier_arrive", 0, None),
        ("arrive", "tma_store_wait_arrive", 1, "%p"),
    ]
    assert b.mechanisms == (Mechanism.MBARRIER_TMA, Mechanism.MBARRIER_EXPLICIT, Mechanism.ASYNC_COPY_ARRIVE,
                            Mechanism.TMA_STORE_WAIT_ARRIVE)
    assert b.uses[0].bytes == 16384


def test_wait_deps_are_neither_phase_nor_predicate():
    text = _ir(_typed("""\
  tt.func @deps(%p: i1, %ph: i32) {
    %b = ttg.local_alloc : () -> BAR1
    %x = ttg.local_alloc : () -> A1
    %y = ttg.local_alloc : () -> A1
    ttng.wait_barrier %b, %ph, %p deps %x, %y : BAR1, A1, A1
    ttng.wait_barrier %b, %ph deps %x : BAR1, A1
    tt.return
  }
"""))
    facts = facts_of(text)
    assert not facts.unresolved
    (b,) = facts.barriers
    assert [(u.phase, u.predicate) for u in b.uses] == [("%ph", "%p"), ("%ph", None)]


def test_tma_store_wait_barrier_list_then_nvws_token_entries():
    text = _ir(_typed("""\
  tt.func @store_wait(%tok: !ttg.async.token, %p: i1) {
    %c1 = arith.constant 1 : i32
    %b = ttg.local_alloc : () -> BAR1
    %t = nvws.create_token {loadType = 2 : i32, numBuffers = 2 : i32} : tensor<2x!nvws.token>
    ttng.async_tma_store_token_wait %tok, %b[%p] nvws_token %t[%c1] : !ttg.async.token, BAR1
    tt.return
  }
"""))
    facts = facts_of(text)
    assert not facts.unresolved
    b, t = barrier(facts, "%b"), barrier(facts, "%t")
    assert [(u.role.value, u.mechanism.value, u.predicate) for u in b.uses] == [("arrive", "tma_store_wait_arrive", "%p")]
    assert [(u.role.value, u.mechanism.value) for u in t.uses] == [("release", "nvws_token")]
    assert [(s.value, s.constant) for s in t.uses[0].slots] == [("%c1", 1)] and t.slots == 2


def test_named_barrier_identified_by_constant_id_across_partitions():
    text = _ir("""\
  tt.func @named() {
    %c0 = arith.constant 0 : i32
    ttg.warp_specialize()
    default {
      %c9_i32 = arith.constant 9 : i32
      %c256_i32 = arith.constant 256 : i32
      ttng.arrive_barrier_named %c9_i32, %c256_i32 : i32, i32
      ttg.warp_yield
    }
    partition0() num_warps(4) {
      %c9_i32_0 = arith.constant 9 : i32
      %c256_i32_0 = arith.constant 256 : i32
      %c3_i32 = arith.constant 3 : i32
      ttng.wait_barrier_named %c9_i32_0, %c256_i32_0 : i32, i32
      ttng.wait_barrier_named %c3_i32, %c256_i32_0 : i32, i32
      ttg.warp_return
    }
    tt.return
  }
""")
    facts = facts_of(text)
    assert [b.id for b in facts.barriers] == ["named_bar_9", "named_bar_3"]
    nine = facts.barriers[0]
    assert nine.kind is BarrierKind.NAMED and nine.slots is None and nine.mechanisms == (Mechanism.NAMED_BARRIER,)
    assert [(u.role.value, u.partition, u.count) for u in nine.uses] == [("arrive", "default", 256), ("wait", "partition0", 256)]
    assert {a.name for a in nine.aliases} == {"%c9_i32_0"} and vias(nine) == {"constant"}


def test_legacy_nvws_tokens_by_create_token_with_task_partitions():
    text = _ir("""\
  tt.func @tokens() {
    %c0 = arith.constant 0 : i32
    %c2 = arith.constant 2 : i32
    %false = arith.constant false
    %t = nvws.create_token {loadType = 1 : i32, numBuffers = 3 : i32} : tensor<3x!nvws.token> loc("tok")
    nvws.producer_acquire %t, %c2, %false {async_task_id = array<i32: 0>} : tensor<3x!nvws.token>, i32, i1
    nvws.producer_commit %t, %c2 {async_task_id = array<i32: 0>} : tensor<3x!nvws.token>, i32
    nvws.consumer_wait %t, %c0, %false {async_task_id = array<i32: 1>, constraints = {WSBarrier = {dstTask = 0 : i32}}} : tensor<3x!nvws.token>, i32, i1
    nvws.consumer_release %t, %c0 {async_task_id = array<i32: 1>} : tensor<3x!nvws.token>, i32
    tt.return
  }
""")
    facts = facts_of(text)
    (tok,) = facts.barriers
    assert tok.kind is BarrierKind.NVWS_TOKEN and tok.slots == 3 and tok.id == f"%t@{line_of(text, 'nvws.create_token')}"
    assert [(u.role.value, u.partition, u.phase) for u in tok.uses] == [
        ("acquire", "task0", "%false"), ("commit", "task0", None), ("wait", "task1", "%false"), ("release", "task1", None)]
    assert [(s.value, s.constant) for s in tok.uses[0].slots] == [("%c2", 2)]
    assert tok.uses[2].constraints == {"WSBarrier": {"dstTask": 0}}


def test_aref_enter_exit_pairs_by_aref_create():
    text = _ir(_typed("""\
  tt.func @aref(%buf: !ttg.memdesc<2x128x128xf32, #tmem, #ttng.tensor_memory, mutable>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %ar = nvws.aref.create %buf : <[!ttg.memdesc<2x128x128xf32, #tmem, #ttng.tensor_memory, mutable>]>
    %v, %tok = nvws.aref.put.enter %ar[%c1, %c0] {ttg.partition = array<i32: 0>} : <[!ttg.memdesc<2x128x128xf32, #tmem, #ttng.tensor_memory, mutable>]> -> TMEM, !ttg.async.token
    nvws.aref.put.exit %ar[%c1], %tok [#nvws.async_op<none>] {ttg.partition = array<i32: 0>} : <[!ttg.memdesc<2x128x128xf32, #tmem, #ttng.tensor_memory, mutable>]>, !ttg.async.token
    %w, %tok2 = nvws.aref.get.enter %ar {ttg.partition = array<i32: 1>} : <[!ttg.memdesc<2x128x128xf32, #tmem, #ttng.tensor_memory, mutable>]> -> TMEM, !ttg.async.token
    nvws.aref.get.exit %ar, %tok2 [#nvws.async_op<tc5mma>] {ttg.partition = array<i32: 1>} : <[!ttg.memdesc<2x128x128xf32, #tmem, #ttng.tensor_memory, mutable>]>, !ttg.async.token
    tt.return
  }
"""))
    (ar,) = facts_of(text).barriers
    assert ar.kind is BarrierKind.AREF and ar.slots == 2 and ar.mechanisms == (Mechanism.AREF,)
    assert [(u.role.value, u.partition, u.phase) for u in ar.uses] == [
        ("put_enter", "task0", "%c0"), ("put_exit", "task0", None), ("get_enter", "task1", None), ("get_exit", "task1", None)]
    assert [(s.value, s.constant) for s in ar.uses[0].slots] == [("%c1", 1)]


# -- SSA hops -------------------------------------------------------------------------------------
def test_capture_hop_to_partition_block_argument():
    facts = facts_of(WS)
    full = barrier(facts, "%full")
    captures = [a for a in full.aliases if a.via == "capture"]
    assert {a.name for a in captures} == {"%f"}
    assert {a.line for a in captures} == {line_of(WS, "partition0("), line_of(WS, "partition1(")}
    assert {"%full_0", "%fs"} <= {a.name for a in full.aliases if a.via == "memdesc_index"}


@pytest.mark.parametrize(
    "view, via",
    [
        ("%v = ttg.memdesc_subslice %bar [2, 0] : BAR4 -> BAR2", "memdesc_subslice"),
        ("%v = ttg.memdesc_reinterpret %bar : BAR4 -> !ttg.memdesc<4xi64, #shared, #smem, mutable>", "memdesc_reinterpret"),
        ("%v = ttg.memdesc_trans %bar {order = array<i32: 1, 0>} : BAR4 -> !ttg.memdesc<1x4xi64, #shared, #smem, mutable>", "memdesc_trans"),
    ],
)
def test_view_hops(view: str, via: str):
    text = _ir(_typed(f"""\
  tt.func @views() {{
    %c1 = arith.constant 1 : i32
    %c0 = arith.constant 0 : i32
    %bar = ttg.local_alloc : () -> BAR4
    {view}
    %s = ttg.memdesc_index %v[%c1] : BAR2 -> BAR1
    ttng.wait_barrier %s, %c0 : BAR1
    tt.return
  }}
"""))
    facts = facts_of(text)
    b = barrier(facts, "%bar")
    assert b.slots == 4 and [u.role for u in b.uses] == [Role.WAIT]
    assert {(a.name, a.via) for a in b.aliases} == {("%v", via), ("%s", "memdesc_index")}


def test_for_iter_args_and_yield():
    text = _ir(_typed("""\
  tt.func @loop() {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c4 = arith.constant 4 : i32
    %bars = ttg.local_alloc : () -> BAR2
    %b0 = ttg.memdesc_index %bars[%c0] : BAR2 -> BAR1
    %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%cur = %b0) -> (BAR1) : i32 {
      ttng.wait_barrier %cur, %c0 : BAR1
      %next = ttg.memdesc_index %bars[%c1] : BAR2 -> BAR1
      scf.yield %next : BAR1
    }
    ttng.arrive_barrier %r, 1 : BAR1
    tt.return
  }
"""))
    facts = facts_of(text)
    assert not facts.unresolved
    b = barrier(facts, "%bars")
    wait, arrive = b.uses
    assert wait.loop_depth == 1 and arrive.loop_depth == 0
    assert {"iter_arg", "for_result", "memdesc_index"} <= vias(b)
    assert ("%cur", line_of(text, "iter_args(%cur")) in {(a.name, a.line) for a in b.aliases}


def test_while_before_after_arguments_and_results():
    text = _ir(_typed("""\
  tt.func @wloop(%go: i1) {
    %c0 = arith.constant 0 : i32
    %bar = ttg.local_alloc : () -> BAR1
    %r = scf.while (%x = %bar) : (BAR1) -> (BAR1) {
      ttng.wait_barrier %x, %c0 : BAR1
      scf.condition(%go) %x : BAR1
    } do {
    ^bb0(%y: BAR1):
      ttng.arrive_barrier %y, 1 : BAR1
      scf.yield %y : BAR1
    }
    ttng.inval_barrier %r : BAR1
    tt.return
  }
"""))
    facts = facts_of(text)
    assert not facts.unresolved
    b = barrier(facts, "%bar")
    assert [u.role for u in b.uses] == [Role.WAIT, Role.ARRIVE, Role.INVAL]
    assert {("%x", "loop_argument"), ("%y", "loop_argument"), ("%r", "while_result")} <= {(a.name, a.via) for a in b.aliases}


def test_if_results_agreeing_and_disagreeing():
    text = _ir(_typed("""\
  tt.func @branches(%cond: i1) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %bars = ttg.local_alloc : () -> BAR2
    %other = ttg.local_alloc : () -> BAR1
    %same = scf.if %cond -> (BAR1) {
      %s0 = ttg.memdesc_index %bars[%c0] : BAR2 -> BAR1
      scf.yield %s0 : BAR1
    } else {
      %s1 = ttg.memdesc_index %bars[%c1] : BAR2 -> BAR1
      scf.yield %s1 : BAR1
    }
    ttng.wait_barrier %same, %c0 : BAR1
    %mixed = scf.if %cond -> (BAR1) {
      scf.yield %other : BAR1
    } else {
      %s2 = ttg.memdesc_index %bars[%c1] : BAR2 -> BAR1
      scf.yield %s2 : BAR1
    }
    ttng.arrive_barrier %mixed, 1 : BAR1
    tt.return
  }
"""))
    facts = facts_of(text)
    b = barrier(facts, "%bars")
    assert [u.role for u in b.uses] == [Role.WAIT] and "if_result" in vias(b)
    (bad,) = facts.unresolved
    assert (bad.op.name, bad.line, bad.operand, bad.role) == (
        "ttng.arrive_barrier", line_of(text, "arrive_barrier %mixed"), "%mixed", Role.ARRIVE)
    assert "%bars" in bad.reason and "%other" in bad.reason
    assert barrier(facts, "%other").uses == ()  # the ambiguous use is not attributed to either


def test_function_argument_is_its_own_logical_barrier():
    text = _ir(_typed("""\
  tt.func private @helper(%bar: BAR1, %ph: i32) {
    ttng.wait_barrier %bar, %ph : BAR1
    ttng.arrive_barrier %bar, 1 : BAR1
    tt.return
  }
"""))
    (b,) = facts_of(text).barriers
    assert b.alloc is None and b.name == "%bar" and [u.role for u in b.uses] == [Role.WAIT, Role.ARRIVE]
    assert vias(b) == {"function_argument"}


def test_unresolved_operands_are_listed_never_dropped():
    text = _ir(_typed("""\
  tt.func @bad() {
    %c0 = arith.constant 0 : i32
    %buf = ttg.local_alloc : () -> A1
    ttng.wait_barrier %nowhere, %c0 : BAR1
    ttng.arrive_barrier %buf, 1 : A1
    tt.return
  }
"""))
    facts = facts_of(text)
    assert facts.barriers == ()
    assert [(u.operand, u.line) for u in facts.unresolved] == [
        ("%nowhere", line_of(text, "%nowhere")), ("%buf", line_of(text, "arrive_barrier %buf"))]
    assert "not defined" in facts.unresolved[0].reason
    assert "not a mbarrier allocation" in facts.unresolved[1].reason


def test_memdesc_helpers():
    md = parse_memdesc(BAR3)
    assert md is not None and (md.shape, md.dtype, md.space) == ((3, 1), "i64", "smem")
    assert memdesc_bytes(A1) == 16384 and memdesc_bytes(TMEM) == 65536
    assert parse_memdesc("i32") is None


# -- commands -------------------------------------------------------------------------------------
def _invoke(tmp_path: Path, text: str, *args: str):
    path = tmp_path / "k.ttgir"
    path.write_text(text)
    result = CliRunner().invoke(app, [args[0], str(path), *args[1:]])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_barriers_json(tmp_path: Path):
    doc = json.loads(_invoke(tmp_path, WS, "barriers", "--format", "json"))
    assert doc["schema"] == "barrier-viz/barriers/v1" and doc["input"]["function"] == "ws"
    assert doc["unresolved"] == []
    by_name = {b["alloc"]["name"]: b for b in doc["barriers"]}
    assert list(by_name) == ["%full", "%empty", "%done"]
    full = by_name["%full"]
    assert full["id"] == f"%full@{line_of(WS, '%full = ttg.local_alloc')}" and full["slots"] == 3
    assert full["mechanisms"] == ["mbarrier_tma"] and full["alloc"]["loc_name"] == "full"
    assert {"name", "line", "via", "region"} == set(full["aliases"][0])
    copy = next(u for u in full["uses"] if u["role"] == "tma_arrive")
    assert copy["partition"] == "partition1" and copy["line"] == line_of(WS, "async_tma_copy_global_to_local")
    assert copy["slot"] == [{"value": "%j", "line": line_of(WS, "%fs = ttg.memdesc_index %f[%j]"), "constant": None}]


def test_barriers_text_is_the_alias_map(tmp_path: Path):
    out = _invoke(tmp_path, WS, "barriers")
    assert "Barrier Alias Map" in out and "0 unresolved" in out
    assert f'Logical barrier "%full@{line_of(WS, "%full = ttg.local_alloc")}"' in out
    assert f"%full = ttg.local_alloc (line {line_of(WS, '%full = ttg.local_alloc')})" in out
    assert f"barrier_expect %fs, 16384 bytes [slot %j] if %true_l (partition1, line {line_of(WS, 'barrier_expect')})" in out
    assert f"%f = partition block argument (line {line_of(WS, 'partition0(')}) -- capture" in out


def test_barriers_text_lists_unresolved(tmp_path: Path):
    text = _ir(_typed("""\
  tt.func @bad() {
    %c0 = arith.constant 0 : i32
    ttng.wait_barrier %nowhere, %c0 : BAR1
    tt.return
  }
"""))
    out = _invoke(tmp_path, text, "barriers")
    assert "Unresolved barrier operands" in out
    assert f"wait_barrier %nowhere (wait, line {line_of(text, '%nowhere')})" in out


def test_ops_gain_partition_and_mechanism(tmp_path: Path):
    doc = json.loads(_invoke(tmp_path, WS, "ops", "--format", "json"))
    rows = {(o["name"], o["line"]): o for o in doc["ops"]}
    expect = rows[("ttng.barrier_expect", line_of(WS, "barrier_expect"))]
    assert (expect["partition"], expect["mechanism"]) == ("partition1", "mbarrier_tma")
    wait_full = rows[("ttng.wait_barrier", line_of(WS, "ttng.wait_barrier %fs"))]
    assert (wait_full["partition"], wait_full["mechanism"]) == ("partition0", "mbarrier_tma")
    alloc = rows[("ttg.local_alloc", line_of(WS, "%done = ttg.local_alloc"))]
    assert (alloc["partition"], alloc["mechanism"]) == (None, "tcgen05_commit")
    mma = rows[("ttng.tc_gen5_mma", line_of(WS, "ttng.tc_gen5_mma"))]
    assert mma["mechanism"] == "mma_barrier"
    buffer = rows[("ttg.local_alloc", line_of(WS, "%a = ttg.local_alloc"))]
    assert buffer["mechanism"] is None


# -- corpus acceptance ----------------------------------------------------------------------------
def _final_ttgir() -> list[Path]:
    real = CORPUS / "real"
    return sorted(real.glob("*.ttgir")) if real.is_dir() else []


@pytest.mark.skipif(not _final_ttgir(), reason=f"corpus not found at {CORPUS} (set BARRIER_VIZ_CORPUS)")
def test_every_barrier_use_in_real_final_ttgir_resolves():
    totals = {"files": 0, "barriers": 0, "uses": 0, "unresolved": 0}
    problems: list[str] = []
    for path in _final_ttgir():
        for unit in open_input(str(path)).units:
            ir = load_unit(unit)
            tracer = Tracer(ir)
            for fn in ir.functions():
                ops = list(fn.walk())
                facts = collect_barriers(ops, tracer, PartitionMap(ops, module_warps(ops)))
                operands = sum(len(barrier_operands(op)) for op in ops)
                assert operands == facts.use_count + len(facts.unresolved), path.name
                totals["barriers"] += len(facts.barriers)
                totals["uses"] += facts.use_count
                totals["unresolved"] += len(facts.unresolved)
                problems += [f"{path.name}:{u.line} {u.op.name} {u.operand}: {u.reason}" for u in facts.unresolved]
        totals["files"] += 1
    assert not problems, problems[:10]
    assert totals["barriers"] > 0 and totals["uses"] > totals["barriers"]
