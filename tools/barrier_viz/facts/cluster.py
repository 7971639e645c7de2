"""The CTA cluster a kernel runs in, and integer values that depend on a CTA's rank in it.

Two ways to write a cluster kernel reach TTGIR:

* TLX (and hand-written kernels in general) keep `"ttg.num-ctas" = 1` and set
  `"ttg.cluster-dim-x/y/z"`: every CTA runs the same per-CTA program, and the IR asks for its
  rank with `nvg.cluster_id` (peer = `rank ^ 1`, leader = `rank == 0`, multicast masks built
  with `shli`/`ori`). Such values can be computed for each rank.
* Triton's CGA form (`"ttg.num-ctas" = N > 1`) writes one program for the whole cluster with
  distributed layouts: tensor and buffer types are cluster-wide, so per-CTA byte counts are not
  the types' sizes. `Cluster.cga` says so; `cga.py` gives each CTA's share from the layouts.

`RankEvaluator` computes an i1/i32/i64 value for a given rank by following the arithmetic the IR
writes (constants, `nvg.cluster_id`, the `arith` integer ops, `select`, casts); anything else
(a function argument, a loaded value, a loop-carried value) is unknown, and callers must then
state a limit instead of guessing.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from ..ir.model import Operation, ParsedIR
from .values import OpResult, ValueIndex, captured_operand

RANK_OPS = frozenset({"nvg.cluster_id", "ttng.cluster_cta_id", "nvgpu.cluster_id"})
_MAX_DEPTH = 64


@dataclass(frozen=True, slots=True)
class Cluster:
    """Cluster shape from the module attributes."""

    num_ctas: int
    dims: tuple[int, int, int]

    @property
    def size(self) -> int:
        """CTAs that run this per-CTA program together (1: no cluster)."""
        return prod(self.dims) if self.num_ctas == 1 else self.num_ctas

    @property
    def cga(self) -> bool:
        """Triton's cluster-wide (CGA) form: types describe the whole cluster."""
        return self.num_ctas > 1


def cluster_of(ir: ParsedIR) -> Cluster:
    modules = [top for top in ir.operations if top.name == "builtin.module"]
    return cluster_of_module(modules[-1]) if modules else Cluster(1, (1, 1, 1))


def cluster_of_module(module: Operation) -> Cluster:
    """`ttg.num-ctas` and `ttg.cluster-dim-x/y/z` of one module (absent: one CTA)."""
    num_ctas, dims = 1, [1, 1, 1]
    n = _int(module.attr("ttg.num-ctas"))
    if n is not None and n > 0:
        num_ctas = n
    for k, axis in enumerate("xyz"):
        d = _int(module.attr(f"ttg.cluster-dim-{axis}"))
        if d is not None and d > 0:
            dims[k] = d
    return Cluster(num_ctas, (dims[0], dims[1], dims[2]))


class RankEvaluator:
    """Integer values as a function of the CTA rank (None when the IR does not determine them)."""

    def __init__(self, values: ValueIndex):
        self.values = values

    def value(self, name: str, at: Operation, rank: int) -> int | None:
        return self._eval(name, at, rank, 0)

    def _eval(self, name: str, at: Operation, rank: int, depth: int) -> int | None:
        if depth > _MAX_DEPTH:
            return None
        defn = self.values.lookup(name, at)
        if not isinstance(defn, OpResult):
            return self._capture(defn, rank, depth)
        op = defn.op
        if op.name in RANK_OPS:
            return rank
        if op.name == "arith.constant":
            return _constant(op)
        args = [self._eval(o, op, rank, depth + 1) for o in op.positional]
        if any(a is None for a in args):
            return None
        return _apply(op, args)  # type: ignore[arg-type]

    def _capture(self, defn, rank: int, depth: int) -> int | None:
        """A partition capture is the value passed to `ttg.warp_specialize`."""
        cap = captured_operand(defn)
        return self._eval(cap[0], cap[1], rank, depth + 1) if cap is not None else None


def _apply(op: Operation, a: list[int]) -> int | None:
    n = op.name
    binary = {
        "arith.addi": lambda x, y: x + y, "arith.subi": lambda x, y: x - y, "arith.muli": lambda x, y: x * y,
        "arith.andi": lambda x, y: x & y, "arith.ori": lambda x, y: x | y, "arith.xori": lambda x, y: x ^ y,
        "arith.shli": lambda x, y: x << y, "arith.shrui": lambda x, y: x >> y, "arith.shrsi": lambda x, y: x >> y,
        "arith.maxsi": max, "arith.minsi": min, "arith.maxui": max, "arith.minui": min,
    }
    if n in binary and len(a) == 2:
        return binary[n](a[0], a[1])
    if n in ("arith.divsi", "arith.divui") and len(a) == 2 and a[1] != 0:
        return int(a[0] / a[1])
    if n in ("arith.remsi", "arith.remui") and len(a) == 2 and a[1] != 0:
        return a[0] - int(a[0] / a[1]) * a[1]
    if n in ("arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast", "arith.bitcast") and len(a) == 1:
        return a[0]
    if n == "arith.select" and len(a) == 3:
        return a[1] if a[0] else a[2]
    if n == "arith.cmpi" and len(a) == 2 and op.keywords:
        pred = op.keywords[0]
        x, y = a
        table = {"eq": x == y, "ne": x != y, "slt": x < y, "sle": x <= y, "sgt": x > y, "sge": x >= y,
                 "ult": x < y, "ule": x <= y, "ugt": x > y, "uge": x >= y}
        return int(table[pred]) if pred in table else None
    return None


def _constant(op: Operation) -> int | None:
    for text in op.literals:
        if text in ("true", "false"):
            return int(text == "true")
        try:
            return int(text, 0)
        except ValueError:
            continue
    return _int(op.attr("value"))


def _int(v) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None
