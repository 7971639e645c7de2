"""Symbolic slot/phase values: op semantics, recurrence shapes, and the real corpus.

Hand-written snippets pin down each op and each counter shape of ir-semantics §5; the corpus
checks are the acceptance criteria of issue 4 (every wait resolves with no unknown leaf; the
operand rings of the persistent GEMMs have slot = n % depth and the full/empty parities).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from barrier_viz.analyses.symbolic import (
    BinOp,
    Cmp,
    Const,
    EvalError,
    SymbolicAnalysis,
    Unknown,
    Var,
    evaluate,
    leaves,
    render,
    simplify,
    to_json,
    unknown_leaves,
)
from barrier_viz.facts.trace import Tracer
from barrier_viz.ir.parse import parse_ir

from corpus_units import CORPUS  # noqa: E402 - the one place the corpus is located
REAL = CORPUS / "real"


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def analyse(body: str, args: str = "%x: i32, %y: i32") -> tuple[SymbolicAnalysis, dict]:
    """Parse a function around `body`; return the analysis and the `test.sink` ops by label
    (`"test.sink"(%v) {label = "name"}`)."""
    src = f"module {{\n  tt.func @f({args}) {{\n{body}\n    tt.return\n  }}\n}}\n"
    ir = parse_ir(src)
    an = SymbolicAnalysis(ir, src)
    sinks = {}
    for op in ir.walk():
        if op.name == "test.sink":
            sinks[str(op.attr("label")).strip('"')] = op
    return an, sinks


def sink_value(an: SymbolicAnalysis, op, k: int = 0):
    return an.value(op.operands[k], op)


def loop_lines(an: SymbolicAnalysis) -> list[int]:
    """Lines of the loops in written order (outermost first for a simple nest)."""
    return [op.line for op in an.ir.walk() if op.name in ("scf.for", "scf.while")]


def counter_key(sv) -> str:
    keys = {leaf.key for leaf in leaves(sv.expr) if isinstance(leaf, Var) and leaf.kind == "counter"}
    assert len(keys) == 1, sv.formula
    return keys.pop()


# ---------------------------------------------------------------------------------------------
# single ops
# ---------------------------------------------------------------------------------------------

_BIN = [
    ("addi", lambda a, b: a + b), ("subi", lambda a, b: a - b), ("muli", lambda a, b: a * b),
    ("divsi", lambda a, b: int(a / b)), ("divui", lambda a, b: (a % 2**32) // (b % 2**32)),
    ("remsi", lambda a, b: a - int(a / b) * b), ("remui", lambda a, b: (a % 2**32) % (b % 2**32)),
    ("andi", lambda a, b: a & b), ("ori", lambda a, b: a | b), ("xori", lambda a, b: a ^ b),
    ("shli", lambda a, b: a << b), ("shrsi", lambda a, b: a >> b), ("shrui", lambda a, b: (a % 2**32) >> b),
]


@pytest.mark.parametrize("name,fn", _BIN, ids=[b[0] for b in _BIN])
def test_binary_ops_evaluate_like_arith(name, fn):
    an, sinks = analyse(f'    %r = arith.{name} %x, %y : i32\n    "test.sink"(%r) {{label = "r"}} : (i32) -> ()')
    sv = sink_value(an, sinks["r"])
    assert isinstance(sv.raw, BinOp) and sv.raw.line == 3
    for x, y in [(7, 3), (-7, 3), (12, 5), (1, 2)]:
        want = fn(x, y)
        want = (want + 2**31) % 2**32 - 2**31
        assert evaluate(sv.raw, {"x": x, "y": y}) == want, (name, x, y)


@pytest.mark.parametrize("pred,fn", [
    ("eq", lambda a, b: a == b), ("ne", lambda a, b: a != b), ("slt", lambda a, b: a < b),
    ("sle", lambda a, b: a <= b), ("sgt", lambda a, b: a > b), ("sge", lambda a, b: a >= b),
    ("ult", lambda a, b: a % 2**32 < b % 2**32), ("ule", lambda a, b: a % 2**32 <= b % 2**32),
    ("ugt", lambda a, b: a % 2**32 > b % 2**32), ("uge", lambda a, b: a % 2**32 >= b % 2**32),
])
def test_cmpi_predicates_and_select(pred, fn):
    an, sinks = analyse(
        f"    %c = arith.cmpi {pred}, %x, %y : i32\n"
        "    %s = arith.select %c, %x, %y : i32\n"
        '    "test.sink"(%s) {label = "s"} : (i32) -> ()'
    )
    sv = sink_value(an, sinks["s"])
    assert isinstance(sv.raw.cond, Cmp) and sv.raw.cond.pred == pred
    for x, y in [(1, 2), (2, 1), (3, 3), (-1, 1)]:
        assert evaluate(sv.raw, {"x": x, "y": y}) == (x if fn(x, y) else y)


def test_constants_casts_and_index_cast():
    an, sinks = analyse(
        "    %t = arith.constant true\n"
        "    %f = arith.constant false\n"
        "    %m = arith.constant -1 : i64\n"
        "    %s = arith.extsi %t : i1 to i32\n"
        "    %u = arith.extui %t : i1 to i32\n"
        "    %n = arith.trunci %m : i64 to i1\n"
        "    %i = arith.index_cast %x : i32 to index\n"
        "    %z = arith.extui %f : i1 to i32\n"
        '    "test.sink"(%s, %u, %n, %i, %z) {label = "v"} : (i32, i32, i1, index, i32) -> ()'
    )
    op = sinks["v"]
    got = [sink_value(an, op, k) for k in range(5)]
    assert [evaluate(g.expr, {"x": -5}) for g in got] == [-1, 1, 1, -5, 0]
    assert got[0].constant == -1 and got[1].constant == 1 and got[4].constant == 0
    assert all(not g.unknowns for g in got)


def test_unknown_op_is_an_explicit_leaf_with_its_line():
    an, sinks = analyse(
        '    %u = "test.opaque"(%x) : (i32) -> i32\n'
        "    %r = arith.addi %u, %y : i32\n"
        '    "test.sink"(%r) {label = "r"} : (i32) -> ()'
    )
    sv = sink_value(an, sinks["r"])
    assert [(u.op, u.line) for u in sv.unknowns] == [("test.opaque", 3)]
    assert "unknown(test.opaque at line 3)" in sv.formula
    with pytest.raises(EvalError):
        evaluate(sv.expr, {"y": 1})


def test_scf_if_result_becomes_select():
    an, sinks = analyse(
        "    %c = arith.cmpi slt, %x, %y : i32\n"
        "    %r = scf.if %c -> (i32) {\n"
        "      %a = arith.addi %x, %y : i32\n"
        "      scf.yield %a : i32\n"
        "    } else {\n"
        "      scf.yield %y : i32\n"
        "    }\n"
        '    "test.sink"(%r) {label = "r"} : (i32) -> ()'
    )
    sv = sink_value(an, sinks["r"])
    assert evaluate(sv.expr, {"x": 1, "y": 5}) == 6 and evaluate(sv.expr, {"x": 9, "y": 5}) == 5


def test_mod_parity_and_inversion_are_recognised():
    an, sinks = analyse(
        "    %c3 = arith.constant 3 : i64\n"
        "    %c1 = arith.constant 1 : i64\n"
        "    %true = arith.constant true\n"
        "    %q = arith.divui %n, %c3 : i64\n"
        "    %qn = arith.muli %q, %c3 : i64\n"
        "    %r = arith.subi %n, %qn : i64\n"
        "    %idx = arith.trunci %r : i64 to i32\n"
        "    %b = arith.andi %q, %c1 : i64\n"
        "    %ph = arith.trunci %b : i64 to i1\n"
        "    %inv = arith.xori %ph, %true : i1\n"
        "    %p32 = arith.extui %inv : i1 to i32\n"
        '    "test.sink"(%idx, %p32) {label = "w"} : (i32, i32) -> ()',
        args="%n: i64",
    )
    idx, ph = sink_value(an, sinks["w"], 0), sink_value(an, sinks["w"], 1)
    assert idx.formula == "n % 3"
    assert ph.formula == "((n / 3) & 1) ^ 1"
    for n in range(20):
        assert evaluate(idx.expr, {"n": n}) == n % 3
        assert evaluate(ph.expr, {"n": n}) == ((n // 3) & 1) ^ 1


def test_long_chains_end_in_a_depth_unknown_not_a_crash():
    body = "    %v0 = arith.addi %x, %y : i32\n"
    body += "".join(f"    %v{i} = arith.addi %v{i - 1}, %y : i32\n" for i in range(1, 3000))
    body += '    "test.sink"(%v2999) {label = "r"} : (i32) -> ()\n'
    body += '    "test.sink"(%v40) {label = "short"} : (i32) -> ()'
    an, sinks = analyse(body)
    sv = sink_value(an, sinks["r"])
    assert sv.unknowns and all("deeper" in u.reason for u in sv.unknowns)
    # the cut depends on the subtree, not on which query reached it first
    short = sink_value(an, sinks["short"])
    assert not short.unknowns and evaluate(short.expr, {"x": 1, "y": 2}) == 1 + 41 * 2


# ---------------------------------------------------------------------------------------------
# recurrences
# ---------------------------------------------------------------------------------------------

_AUTOWS_NEST = """
    %c0 = arith.constant 0 : i64
    %c1 = arith.constant 1 : i64
    %c3 = arith.constant 3 : i64
    %true = arith.constant true
    %i0 = arith.constant 0 : i32
    %i1 = arith.constant 1 : i32
    %out = scf.for %t = %i0 to %x step %i1 iter_args(%acc = %c0) -> (i64) : i32 {
      %in = scf.for %k = %i0 to %y step %i1 iter_args(%cnt = %acc) -> (i64) : i32 {
        %q = arith.divui %cnt, %c3 : i64
        %qn = arith.muli %q, %c3 : i64
        %r = arith.subi %cnt, %qn : i64
        %idx = arith.trunci %r : i64 to i32
        %b = arith.andi %q, %c1 : i64
        %ph = arith.trunci %b : i64 to i1
        %inv = arith.xori %ph, %true : i1
        %p32 = arith.extui %inv : i1 to i32
        "test.sink"(%idx, %p32) {label = "w"} : (i32, i32) -> ()
        %accum_cnt = arith.addi %cnt, %c1 : i64
        scf.yield %accum_cnt : i64
      }
      scf.yield %in : i64
    }
"""


def test_autows_counter_carried_across_the_outer_loop():
    an, sinks = analyse(_AUTOWS_NEST)
    op = sinks["w"]
    idx, ph = sink_value(an, op, 0), sink_value(an, op, 1)
    assert idx.formula.endswith("% 3") and ph.formula.endswith("/ 3) & 1) ^ 1")
    (counter,) = idx.counters
    assert counter.kind == "additive" and counter.name.startswith("accum_cnt")
    assert isinstance(counter.init, Const) and counter.init.value == 0
    outer, inner = loop_lines(an)
    text = counter.describe()
    assert f"+1 per iteration of loop at line {inner}" in text and f"carried through loop at line {inner}" in text
    assert f"before loop at line {outer}" in text
    trip = 4
    for t in range(3):
        for k in range(trip):
            n = t * trip + k
            it = {outer: t, inner: k}
            assert an.simulate(idx.raw, it, {inner: trip}) == n % 3
            assert an.simulate(ph.raw, it, {inner: trip}) == ((n // 3) & 1) ^ 1
            assert evaluate(idx.expr, {counter.key: n}) == n % 3
    json.dumps(idx.to_json())
    json.dumps(ph.to_json())


def test_values_of_one_counter_at_different_points_are_not_merged():
    """The outer iter_arg and the nested loop's result belong to one chain but differ; their
    difference must not collapse to 0."""
    an, sinks = analyse("""
    %c0 = arith.constant 0 : i64
    %c1 = arith.constant 1 : i64
    %i0 = arith.constant 0 : i32
    %i1 = arith.constant 1 : i32
    %out = scf.for %t = %i0 to %x step %i1 iter_args(%acc = %c0) -> (i64) : i32 {
      %in = scf.for %k = %i0 to %y step %i1 iter_args(%cnt = %acc) -> (i64) : i32 {
        %n2 = arith.addi %cnt, %c1 : i64
        scf.yield %n2 : i64
      }
      %d = arith.subi %in, %acc : i64
      "test.sink"(%d) {label = "d"} : (i64) -> ()
      scf.yield %in : i64
    }
""")
    sv = sink_value(an, sinks["d"])
    assert sv.constant is None
    outer, inner = loop_lines(an)
    assert an.simulate(sv.raw, {outer: 2}, {inner: 5}) == 5
    assert "iter_arg 0 of loop" in an.describe(next(v for v in leaves(sv.expr) if isinstance(v, Var) and v.kind == "iter_arg"))


def test_peeled_conditional_increment_seeds_the_inner_loop():
    an, sinks = analyse("""
    %c0 = arith.constant 0 : i64
    %c1 = arith.constant 1 : i64
    %i0 = arith.constant 0 : i32
    %i1 = arith.constant 1 : i32
    %out = scf.for %t = %i0 to %x step %i1 iter_args(%acc = %c0) -> (i64) : i32 {
      %go = arith.cmpi sgt, %y, %i0 : i32
      "test.sink"(%acc) {label = "peeled"} : (i64) -> ()
      %inc = arith.addi %acc, %c1 : i64
      %seed = arith.select %go, %inc, %acc : i64
      %in = scf.for %k = %i0 to %y step %i1 iter_args(%cnt = %seed) -> (i64) : i32 {
        "test.sink"(%cnt) {label = "inner"} : (i64) -> ()
        %n2 = arith.addi %cnt, %c1 : i64
        scf.yield %n2 : i64
      }
      scf.yield %in : i64
    }
""")
    peeled, inner = sink_value(an, sinks["peeled"]), sink_value(an, sinks["inner"])
    assert peeled.counters[0].key == inner.counters[0].key  # one running counter
    outer, inner_loop = loop_lines(an)
    select_line = next(op.line for op in an.ir.walk() if op.name == "arith.select")
    assert any(s.condition_line == select_line for s in peeled.counters[0].steps)
    # tile 0 used 1 (peeled) + 3 (inner) values: tile 1's peeled use is 4, its first inner use 5
    assert an.simulate(peeled.raw, {outer: 1}, {inner_loop: 3}, {"y": 3}) == 4
    assert an.simulate(inner.raw, {outer: 1, inner_loop: 0}, {inner_loop: 3}, {"y": 3}) == 5


_UPSTREAM_PAIR = """
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %c3 = arith.constant 3 : i32
    %out:2 = scf.for %t = %c0 to %x step %c1 iter_args(%s0 = %c2, %p0 = %PH) -> (i32, i32) : i32 {
      %in:2 = scf.for %k = %c0 to %y step %c1 iter_args(%s = %s0, %p = %p0) -> (i32, i32) : i32 {
        %a = arith.addi %s, %c1 : i32
        %w = arith.cmpi CMP, %a, %c3 : i32
        %s2 = arith.select %w, %c0, %a : i32
        %x1 = arith.xori %p, %c1 : i32
        %p2 = arith.select %w, %x1, %p : i32
        "test.sink"(%s2, %p2) {label = "w"} : (i32, i32) -> ()
        scf.yield %s2, %p2 : i32, i32
      }
      scf.yield %in#0, %in#1 : i32, i32
    }
"""


@pytest.mark.parametrize("cmp", ["eq", "sge"])
@pytest.mark.parametrize("init_phase,inverted", [("%c0", True), ("%c1", False)])
def test_upstream_stage_phase_pair_is_a_wrap_counter(cmp, init_phase, inverted):
    """§5.3: the load partition starts (2, 0) → first wait slot 0 phase 1 (empty side); the MMA
    partition starts (2, 1) → slot 0 phase 0 (full side)."""
    an, sinks = analyse(_UPSTREAM_PAIR.replace("%PH", init_phase).replace("CMP", cmp))
    slot, phase = sink_value(an, sinks["w"], 0), sink_value(an, sinks["w"], 1)
    assert slot.formula == f"{slot.counters[0].name} % 3"
    expected_phase = f"(({slot.counters[0].name} / 3) & 1)" + (" ^ 1" if inverted else "")
    assert phase.formula == (expected_phase if inverted else expected_phase[1:-1])
    c = slot.counters[0]
    assert c.kind == "wrap" and c.modulus == 3
    key = counter_key(slot)
    outer, inner = loop_lines(an)
    trip = 4
    for t in range(3):
        for k in range(trip):
            n = t * trip + k
            want = ((n // 3) & 1) ^ (1 if inverted else 0)
            assert evaluate(slot.expr, {key: n}) == n % 3 and evaluate(phase.expr, {key: n}) == want
            it = {outer: t, inner: k}
            assert an.simulate(slot.raw, it, {inner: trip}) == n % 3
            assert an.simulate(phase.raw, it, {inner: trip}) == want


def test_stage_starting_at_minus_one_uses_the_advanced_values():
    """Upstream Hopper starts the stage at -1 so the first advance lands on slot 0; only the
    advanced values have a closed form (n % N), the iter_arg itself is -1 before it."""
    an, sinks = analyse("""
    %m1 = arith.constant -1 : i32
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c3 = arith.constant 3 : i32
    %r:2 = scf.for %k = %c0 to %x step %c1 iter_args(%s = %m1, %p = %c0) -> (i32, i32) : i32 {
      %a = arith.addi %s, %c1 : i32
      %w = arith.cmpi sge, %a, %c3 : i32
      %s2 = arith.select %w, %c0, %a : i32
      %x1 = arith.xori %p, %c1 : i32
      %p2 = arith.select %w, %x1, %p : i32
      "test.sink"(%s2, %p2) {label = "w"} : (i32, i32) -> ()
      scf.yield %s2, %p2 : i32, i32
    }
""")
    slot, phase = sink_value(an, sinks["w"], 0), sink_value(an, sinks["w"], 1)
    name = slot.counters[0].name
    assert slot.formula == f"{name} % 3" and phase.formula == f"({name} / 3) & 1"
    (loop,) = loop_lines(an)
    key = counter_key(slot)
    for k in range(9):
        assert an.simulate(slot.raw, {loop: k}) == evaluate(slot.expr, {key: k}) == k % 3
        assert an.simulate(phase.raw, {loop: k}) == evaluate(phase.expr, {key: k}) == (k // 3) & 1


def test_partition_local_mma_barrier_with_delayed_phase():
    """§5.4: the wait uses the previous iteration's barrier and phase (iter_args yielded from
    the values before the sge wrap)."""
    an, sinks = analyse("""
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %bars = ttg.local_alloc : () -> !ttg.memdesc<2x1xi64, #shared, #smem, mutable>
    %b0 = ttg.memdesc_index %bars[%c0] : !ttg.memdesc<2x1xi64, #shared, #smem, mutable> -> !ttg.memdesc<1xi64, #shared, #smem, mutable>
    %r:4 = scf.for %k = %c0 to %x step %c1 iter_args(%ph = %c0, %st = %c1, %pb = %b0, %pph = %c0) -> (i32, i32, !ttg.memdesc<1xi64, #shared, #smem, mutable>, i32) : i32 {
      %cur = ttg.memdesc_index %bars[%st] : !ttg.memdesc<2x1xi64, #shared, #smem, mutable> -> !ttg.memdesc<1xi64, #shared, #smem, mutable>
      ttng.wait_barrier %pb, %pph : !ttg.memdesc<1xi64, #shared, #smem, mutable>
      %f = arith.xori %ph, %c1 : i32
      %a = arith.addi %st, %c1 : i32
      %w = arith.cmpi sge, %a, %c2 : i32
      %s2 = arith.select %w, %c0, %a : i32
      %p2 = arith.select %w, %f, %ph : i32
      scf.yield %p2, %s2, %cur, %ph : i32, i32, !ttg.memdesc<1xi64, #shared, #smem, mutable>, i32
    }
""")
    wait = next(op for op in an.ir.walk() if op.name == "ttng.wait_barrier")
    slot, phase = an.wait(wait)
    assert not slot.unknowns and not phase.unknowns
    assert slot.counters and slot.counters[0].kind == "wrap"
    key = counter_key(slot)
    (loop,) = loop_lines(an)
    for k in range(10):
        # iteration 0 waits on the initial (slot 0, phase 0); iteration k on MMA k-1's slot
        want_slot = 0 if k == 0 else (1 + k - 1) % 2
        want_phase = 0 if k == 0 else ((1 + k - 1) // 2) & 1
        assert an.simulate(slot.raw, {loop: k}) == want_slot
        assert an.simulate(phase.raw, {loop: k}) == want_phase
        assert an.wait_at(wait, {loop: k}) == (want_slot, want_phase)
        assert evaluate(slot.expr, {key: k}) == want_slot and evaluate(phase.expr, {key: k}) == want_phase


def test_toggled_phase_without_stage():
    an, sinks = analyse("""
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = scf.for %k = %c0 to %x step %c1 iter_args(%p = %c0) -> (i32) : i32 {
      %go = arith.cmpi slt, %k, %y : i32
      "test.sink"(%p) {label = "p"} : (i32) -> ()
      %f = arith.xori %p, %c1 : i32
      %n = arith.select %go, %f, %p : i32
      scf.yield %n : i32
    }
""")
    sv = sink_value(an, sinks["p"])
    assert sv.counters[0].kind == "toggle" and sv.formula == f"{sv.counters[0].name} & 1"
    (loop,) = loop_lines(an)
    assert [an.simulate(sv.raw, {loop: k}, params={"y": 3}) for k in range(6)] == [0, 1, 0, 1, 1, 1]


def test_while_arguments_and_results():
    an, sinks = analyse("""
    %c0 = arith.constant 0 : i64
    %c1 = arith.constant 1 : i64
    %r:2 = scf.while (%t = %x, %cnt = %c0) : (i32, i64) -> (i32, i64) {
      %go = arith.cmpi slt, %t, %y : i32
      scf.condition(%go) %t, %cnt : i32, i64
    } do {
    ^bb0(%t2: i32, %cnt2: i64):
      "test.sink"(%cnt2) {label = "body"} : (i64) -> ()
      %n = arith.addi %cnt2, %c1 : i64
      scf.yield %t2, %n : i32, i64
    }
    "test.sink"(%r#1) {label = "after"} : (i64) -> ()
""")
    body, after = sink_value(an, sinks["body"]), sink_value(an, sinks["after"])
    assert body.counters and body.counters[0].kind == "additive" and not body.unknowns
    (loop,) = loop_lines(an)
    assert [an.simulate(body.raw, {loop: i}) for i in range(4)] == [0, 1, 2, 3]
    assert an.simulate(after.raw, {}, {loop: 6}) == 6


def test_warp_specialize_capture_resolves_to_the_outer_value():
    an, sinks = analyse("""
    %c5 = arith.constant 5 : i32
    ttg.warp_specialize(%c5, %x)
    default {
      ttg.warp_yield
    }
    partition0(%a: i32, %b: i32) num_warps(1) {
      %s = arith.addi %a, %b : i32
      "test.sink"(%s) {label = "s"} : (i32) -> ()
      ttg.warp_return
    } : (i32, i32) -> ()
""")
    sv = sink_value(an, sinks["s"])
    assert sv.formula == "x + 5" and evaluate(sv.expr, {"x": 2}) == 7


def test_simplify_keeps_what_it_cannot_prove():
    n = Var("v", "v", "param", 32, 1)  # may be negative: (v + 3) % 3 must not become v % 3
    e = BinOp("rems", BinOp("add", n, Const(3, 32, 1), 32, 1), Const(3, 32, 1), 32, 1)
    assert simplify(e) == e
    assert render(e) == "(v + 3) % 3"
    assert to_json(Unknown("x.y", 4))["line"] == 4
    assert unknown_leaves(Unknown("x.y", 4)) == [Unknown("x.y", 4)]


# ---------------------------------------------------------------------------------------------
# corpus acceptance
# ---------------------------------------------------------------------------------------------


def _corpus_files() -> list[Path]:
    if not REAL.is_dir():
        return []
    files = sorted(REAL.glob("*.ttgir")) + sorted(REAL.glob("*doTokenLowering*.mlir"))
    return [f for f in files if f.is_file()]


needs_corpus = pytest.mark.skipif(not _corpus_files(), reason=f"corpus not found at {REAL}")


@needs_corpus
def test_every_corpus_wait_resolves_without_unknowns():
    """Acceptance: every wait's slot and phase resolve with 0 unknown leaves. Also, wherever a
    wait's formula uses one counter advanced +1 per iteration of the loop around the wait,
    the normalized formula must agree with running the IR's own recurrences."""
    total = resolved = checked = 0
    reasons: dict[str, int] = {}
    mismatches: list[str] = []
    for path in _corpus_files():
        src = path.read_bytes()
        ir = parse_ir(src)
        an = SymbolicAnalysis(ir, src)
        for op in ir.walk():
            if op.name != "ttng.wait_barrier":
                continue
            total += 1
            slot, phase = an.wait(op)
            assert slot.verified and phase.verified
            if slot.resolved and phase.resolved:
                resolved += 1
            for u in slot.unknowns + phase.unknowns:
                key = f"{path.name}:{op.line}: {render(u)} {u.reason}"
                reasons[key] = reasons.get(key, 0) + 1
            for sv in (slot, phase):
                bad = _cross_check(an, op, sv)
                if bad is None:
                    continue
                checked += 1
                if bad:
                    mismatches.append(f"{path.name}:{op.line}: {sv.formula}: {bad}")
    print(f"\nsymbolic: {total} waits, {resolved} resolved, {total - resolved} with unknowns; "
          f"{checked} formulas cross-checked by simulation")
    assert total > 1000
    assert not reasons, reasons
    assert checked > 500 and not mismatches, mismatches


def _cross_check(an: SymbolicAnalysis, op, sv) -> str | None:
    """None when not applicable; "" when the formula matches the simulated IR for the first
    seven iterations of the loop around the wait (outer loops at iteration 0)."""
    loops = [a for a in op.ancestors() if a.name == "scf.for"]
    if not loops or len(sv.counters) != 1:
        return None
    loop, c = loops[0], sv.counters[0]
    if c.root_loop != loop.line or not c.steps or not all(
            s.loop == loop.line and s.amount == 1 and s.condition is None and s.via is None for s in c.steps):
        return None
    base = 0
    if c.kind == "additive":
        if not isinstance(c.init, Const):
            return None
        base = c.init.value
    fn = next((a for a in op.ancestors() if a.name == "tt.func"), None)
    params = {a.name: 320 for a in fn.regions[0].arguments} if fn is not None else {}
    params["program_id_x"] = 0
    it = {a.line: 0 for a in loops}
    for k in range(7):
        it[loop.line] = k
        try:
            got = an.simulate(sv.raw, it, {}, params)
        except EvalError as exc:
            return f"simulation failed: {exc}"
        want = evaluate(sv.expr, {c.key: base + k})
        if got != want:
            return f"iteration {k}: IR gives {got}, formula {want}"
    return ""


_RING_CASES = [
    "gemm_ws_sm100.ttgir",
    "fb-sm90__gemm_persistent__default.ttgir",
    "fb-sm100__gemm_persistent__default.ttgir",
    "up-sm100__gemm_persistent__default.ttgir",
    "up-sm90__gemm_persistent__default.ttgir",
]
_TMA = "ttng.async_tma_copy_global_to_local"
_MMA = ("ttng.tc_gen5_mma", "ttng.warp_group_dot")


def _depth(tracer: Tracer, name: str, at) -> int | None:
    tr = tracer.trace(name, at)
    if tr.root is None or not tr.root.result_types:
        return None
    t = tr.root.result_types[tr.root_result]
    head = t.split("<", 1)[1].split("x", 1)[0] if "<" in t else ""
    return int(head) if head.isdigit() else None


def _ring_waits(an: SymbolicAnalysis, tracer: Tracer, loop, role: str):
    """Waits directly in `loop` on a barrier ring indexed like the SMEM operand ring that the
    loop's TMA copy writes (role "empty") or its MMA reads (role "full")."""
    body = list(loop.regions[0].operations())
    if role == "empty":
        users = [(op, op.operands[-3]) for op in body if op.name == _TMA]  # dst memdesc
    else:
        users = [(op, op.operands[0]) for op in body if op.name in _MMA]
    out = []
    seen: set[int] = set()
    for user, buf in users:
        depth = _depth(tracer, buf, user)
        ring_slot = an.slot(buf, user)
        if not depth or depth < 2:
            continue
        for op in body:
            if op.name != "ttng.wait_barrier":
                continue
            slot, phase = an.wait(op)
            if id(op) not in seen and _depth(tracer, op.operands[0], op) == depth and slot.formula == ring_slot.formula:
                seen.add(id(op))
                out.append((op, depth, slot, phase))
    return out


@needs_corpus
@pytest.mark.parametrize("name", _RING_CASES)
def test_operand_ring_slot_and_parity_hand_derived(name):
    path = REAL / name
    if not path.is_file():
        pytest.skip(f"{name} not in corpus")
    src = path.read_bytes()
    ir = parse_ir(src)
    an = SymbolicAnalysis(ir, src)
    tracer = Tracer(ir)
    loops = [op for op in ir.walk() if op.name == "scf.for"]
    found = {"empty": 0, "full": 0}
    for role in ("empty", "full"):
        for loop in loops:
            for op, depth, slot, phase in _ring_waits(an, tracer, loop, role):
                found[role] += 1
                key = counter_key(slot)
                assert counter_key(phase) == key
                counter = slot.counters[0]
                assert counter.kind == "wrap" or (isinstance(counter.init, Const) and counter.init.value == 0)
                for n in range(2 * depth + 2):
                    want = ((n // depth) & 1) ^ (1 if role == "empty" else 0)
                    assert evaluate(slot.expr, {key: n}) == n % depth, (op.line, n)
                    assert evaluate(phase.expr, {key: n}) == want, (op.line, n, phase.formula)
                if any(s.loop == loop.line and s.amount == 1 and s.condition is None for s in counter.steps):
                    _check_simulation(an, op, loop, depth, role)
                    found[role + "_simulated"] = found.get(role + "_simulated", 0) + 1
    print(name, found)
    assert found["empty"] >= 1 and found["full"] >= 1 and found.get("empty_simulated", 0) >= 1, found


def _check_simulation(an, op, loop, depth, role):
    """Run the IR's own recurrences: over consecutive iterations of the ring loop (and, for the
    producer, across two outer iterations) the uses must be consecutive n."""
    outer = [a for a in op.ancestors() if a.name in ("scf.for", "scf.while")]
    fn = next(a for a in op.ancestors() if a.name == "tt.func")
    params = {a.name: 320 for a in fn.regions[0].arguments}
    params.update({"program_id_x": 0})
    trip = depth + 2
    seq = []
    tiles = 2 if role == "empty" and len(outer) > 1 else 1
    for t in range(tiles):
        for k in range(trip):
            it = {loop.line: k}
            if len(outer) > 1:
                it[outer[1].line] = t
            seq.append(an.wait_at(op, it, {loop.line: trip}, params))
    flip = 1 if role == "empty" else 0
    starts = [n0 for n0 in range(2 * depth)
              if all(seq[i] == ((n0 + i) % depth, (((n0 + i) // depth) & 1) ^ flip) for i in range(len(seq)))]
    assert starts, (op.line, seq)
