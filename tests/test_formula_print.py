"""Formulas are printed in their simplest equivalent form (analyses/symbolic/simplify.printable):
a reader should never have to cancel `^ 1) ^ 1` or `x - x` in their head."""

from __future__ import annotations

from barrier_viz.analyses.symbolic import BinOp, Cast, Const, Var, evaluate, render
from barrier_viz.analyses.symbolic.simplify import printable

from test_symbolic import analyse, sink_value

_DOUBLE_FLIP = """
    %c0 = arith.constant 0 : i64
    %c1 = arith.constant 1 : i64
    %true = arith.constant true
    %i0 = arith.constant 0 : i32
    %i1 = arith.constant 1 : i32
    %out = scf.for %t = %i0 to %x step %i1 iter_args(%cnt = %c0) -> (i64) : i32 {
      %b = arith.andi %cnt, %c1 : i64
      %inv = arith.xori %b, %c1 : i64
      %ph = arith.trunci %inv : i64 to i1
      %again = arith.xori %ph, %true : i1
      %p32 = arith.extui %again : i1 to i32
      %zero = arith.subi %cnt, %cnt : i64
      %prev = arith.subi %cnt, %c1 : i64
      "test.sink"(%p32, %zero, %prev) {label = "w"} : (i32, i64, i64) -> ()
      %accum_cnt = arith.addi %cnt, %c1 : i64
      scf.yield %accum_cnt : i64
    }
"""


def test_a_double_inversion_through_casts_prints_as_the_plain_parity():
    an, sinks = analyse(_DOUBLE_FLIP)
    phase = sink_value(an, sinks["w"], 0)
    assert phase.formula == "accum_cnt(%cnt) & 1"


def test_x_minus_x_is_zero_and_a_negative_offset_reads_as_subtraction():
    an, sinks = analyse(_DOUBLE_FLIP)
    assert sink_value(an, sinks["w"], 1).formula == "0"
    assert sink_value(an, sinks["w"], 2).formula == "accum_cnt(%cnt) - 1"


def test_rules_on_trees():
    p = Var("counter:p", "p", "counter", 32, 1, nonneg=True)
    one = Const(1, 32, 1)
    parity = BinOp("and", p, one, 32, 1)
    twice = BinOp("xor", Cast("trunci", BinOp("xor", parity, one, 32, 1), 1, 32, 1), Const(1, 1, 1), 1, 1)
    assert render(twice) == "p & 1"
    assert render(BinOp("xor", p, p, 32, 1)) == "0"
    assert render(BinOp("and", parity, Const(3, 32, 1), 32, 1)) == "p & 1"
    assert render(BinOp("mul", BinOp("add", Const(2, 32, 1), Const(3, 32, 1), 32, 1), p, 32, 1)) == "p * 5"
    for n in range(8):  # the printed form is the same function
        assert evaluate(printable(twice), {"counter:p": n}) == evaluate(twice, {"counter:p": n})
