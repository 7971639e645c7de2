"""Symbolic values: slot indices and phases of barrier operations as formulas of loop counters.

The question behind a hang is "which wait polls a phase that never comes", so every wait's slot
and phase must be known as a function of the iteration it runs in. The IR computes them with
short `arith` chains over loop-carried counters (ir-semantics §5): AutoWS threads i64
accumulation counters through nested loops (`divui/muli/subi` = mod, `andi 1` = parity, `xori
true` = inversion); upstream carries an i32 (stage, phase) pair advanced with `addi 1; cmpi eq|sge
N; select 0; xori 1; select`. This module

* traces an SSA value back to a *raw* expression tree (`Const`, `Var`, `BinOp`, `Cmp`,
  `Select`, `Cast`, `Unknown`), every node carrying the IR line it came from. Ops it does not
  model become an explicit `Unknown` leaf, never a guess;
* recognises loop-carried counters (additive chains across nested loops, wrap-around stage/phase
  pairs, one-iteration-delayed copies) and rewrites the tree in terms of one running counter per
  chain, then simplifies it to the normalized formula (`cnt % 3`, `((cnt / 3) & 1) ^ 1`). The
  simplified form is checked against the unsimplified one by evaluation before it is used;
* evaluates either form: `evaluate(expr, bindings)` for given counter values, and
  `SymbolicAnalysis.simulate(...)` which runs the raw loop recurrences for concrete iteration
  numbers (the ground truth the normalized form is tested against).

The package splits these concepts into small modules: `expr` (the expression model), `arith`
(integer semantics), `evaluate` (values and bounds), `render` (text and JSON), `simplify` (the
simplifier), `model` (loops, counters, traced values), `trace` (SSA value to raw tree,
`SymbolicAnalysis`), `counters` (loop-counter recognition), `normalize` (formula derivation)
and `simulate` (running the raw recurrences). Everything callers use is re-exported here.

Loops are identified by the line of their `scf.for` / `scf.while` op. Trees are bounded in
height (`MAX_HEIGHT`); deeper chains end in an `Unknown` leaf saying so.

May import: `ir/` and `facts/` only (and, like every package of `analyses/`, `limits.py` and
`errors.py`); it sits below the interpreter, so no other package of `analyses/`. Inside it,
`trace` drives `counters`, `normalize` and `simulate`, which see the analysis through the
`model.Tracer` protocol and never import `trace`.
"""

from __future__ import annotations

from .arith import EvalError, apply_binop, apply_cast, apply_cmp, signed, unsigned, wrap
from .evaluate import evaluate, value_range
from .expr import (BinOp, Cast, Cmp, Const, Expr, Select, Unknown, Var, bits_of, children, height, is_memdesc, leaves,
                   same, shape, substitute, unknown_leaves)
from .model import Counter, LoopInfo, Step, SymbolicValue
from .render import render, to_json
from .simplify import simplify
from .trace import MAX_HEIGHT, SymbolicAnalysis, barrier_waits

__all__ = [
    "BinOp", "Cast", "Cmp", "Const", "Counter", "EvalError", "Expr", "LoopInfo", "MAX_HEIGHT", "Select", "Step",
    "SymbolicAnalysis", "SymbolicValue", "Unknown", "Var", "apply_binop", "apply_cast", "apply_cmp", "barrier_waits",
    "bits_of", "children", "evaluate", "height", "is_memdesc", "leaves", "render", "same", "shape", "signed",
    "simplify", "substitute", "to_json", "unknown_leaves", "unsigned", "value_range", "wrap",
]
