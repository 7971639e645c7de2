"""Trip counts and runtime conditions as functions of the kernel's inputs.

Why: whether a warp-specialized kernel hangs often depends on its launch: a split-K kernel
whose last split has no K iterations, a persistent kernel with fewer tiles than CTAs, a causal
mask that empties the first rows' loop, a runtime flag one partition tests and the other does
not. The IR computes every trip count itself (`ceildiv`, `min`, `select`, splits of K, tiles
per program); this package reads that computation as expressions over the kernel's integer
arguments, program ids and program counts, so `input_points` can ask which inputs make a loop
run 0, 1 or a ring-ragged number of times, or take either side of a condition.

The model (`InputModel`) holds, for every loop and `scf.if` that holds barrier operations (and
every barrier operation's predicate), the expression of its bounds or condition, and where it
sits (the enclosing loop or branch). `observe` evaluates it at one concrete point, walking only
these loops and branches: an outer persistent loop is stepped (its induction variable and
carried values computed concretely, up to a cap) so that inner loops whose bounds depend on the
tile see each tile's value. Integer semantics are the interpreter's own (`machine.arith_value`),
so a trip count here is the trip count the simulation will run.

The package keeps one concept per module: `model` (the expressions, sites and launch points),
`build` (reading the IR into the model), `evaluation` (`observe`: the model at one launch) and
`text` (formulas in words). Callers import from the package.
"""

from __future__ import annotations

from .build import _PRED_AT, MAX_NESTING, build_model
from .evaluation import MAX_STEPS, evaluate, observe, observe_site
from .model import OPAQUE, InputModel, IntArg, Node, Observation, Point, Site
from .text import render, render_trips, site_variables, variables

__all__ = ["MAX_NESTING", "MAX_STEPS", "OPAQUE", "InputModel", "IntArg", "Node", "Observation", "Point", "Site",
           "_PRED_AT", "build_model", "evaluate", "observe", "observe_site", "render", "render_trips", "site_variables", "variables"]
