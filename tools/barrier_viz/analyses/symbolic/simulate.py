"""Running the raw loop recurrences for concrete iteration numbers: the ground truth the
normalized formulas are tested against, and how `wait_at` gives a wait's concrete slot/parity.
"""

from __future__ import annotations

from typing import Mapping

from .arith import EvalError, apply_binop, apply_cast, apply_cmp, wrap
from .expr import BinOp, Cmp, Const, Expr, Select, Unknown, Var
from .model import LoopInfo, Tracer


class _Simulator:
    """Runs loop recurrences concretely. A loop's carried state at iteration i is computed from
    its inits by applying its yields i times (per component, so one unknown iter_arg does not
    poison the others); nested loop results run the nested loop for its trip count."""

    def __init__(self, analysis: Tracer, iterations: Mapping[int, int], trips: Mapping[int, int],
                 params: Mapping[str, int]):
        self.an = analysis
        self.iterations = iterations
        self.trips = trips
        self.params = params
        self.states: dict[tuple, list[tuple]] = {}

    def eval(self, e: Expr, env: dict[int, int]) -> int:
        if isinstance(e, Const):
            return wrap(e.value, e.bits)
        if isinstance(e, Unknown):
            raise EvalError(f"unknown({e.op} at line {e.line})")
        if isinstance(e, Var):
            return wrap(self._var(e, env), e.bits)
        if isinstance(e, BinOp):
            return apply_binop(e.op, self.eval(e.lhs, env), self.eval(e.rhs, env), e.bits)
        if isinstance(e, Cmp):
            return apply_cmp(e.pred, self.eval(e.lhs, env), self.eval(e.rhs, env), e.lhs.bits)
        if isinstance(e, Select):
            return self.eval(e.true if self.eval(e.cond, env) else e.false, env)
        return apply_cast(e.op, self.eval(e.operand, env), e.from_bits, e.bits)

    def _var(self, v: Var, env: dict[int, int]) -> int:
        if v.kind == "param":
            for k in (v.key, v.name, "%" + v.name):
                if k in self.params:
                    return self.params[k]
            raise EvalError(f"no value for parameter {v.name}")
        if v.loop is None:
            raise EvalError(f"{v.name} is a normalized counter; simulate the raw expression")
        info = self.an.loop(v.loop)
        if info is None:
            raise EvalError(f"loop at line {v.loop} unknown")
        if v.kind == "induction":
            i = self._iteration(v.loop, env)
            if info.lb is None or info.step is None:
                raise EvalError("loop without bounds")
            return self.eval(info.lb, env) + i * self.eval(info.step, env)
        if v.kind == "iter_arg":
            return self._component(info, self._iteration(v.loop, env), v.index or 0, env)
        trip = self._trip(info, env)
        if info.kind == "for":
            return self._component(info, trip, v.index or 0, env)
        inner = dict(env)
        inner[info.line] = trip
        return self.eval(info.results[v.index or 0], inner)

    def _iteration(self, loop: int, env: dict[int, int]) -> int:
        if loop not in env:
            raise EvalError(f"iteration of loop at line {loop} not given")
        return env[loop]

    def _trip(self, info: LoopInfo, env: dict[int, int]) -> int:
        if info.line in self.trips:
            return self.trips[info.line]
        if info.kind == "for" and info.lb is not None and info.ub is not None and info.step is not None:
            lb, ub, st = self.eval(info.lb, env), self.eval(info.ub, env), self.eval(info.step, env)
            if st > 0:
                return max(0, -((lb - ub) // st))
        raise EvalError(f"trip count of loop at line {info.line} not given")

    def _component(self, info: LoopInfo, i: int, j: int, env: dict[int, int]) -> int:
        outer = {l: env[l] for l in info.enclosing if l in env}
        key = (info.line, tuple(sorted(outer.items())))
        states = self.states.get(key)
        if states is None:
            states = [tuple(self._try(e, outer) for e in info.inits)]
            self.states[key] = states
        while len(states) <= i:
            k = len(states) - 1
            env_k = dict(outer)
            env_k[info.line] = k
            states.append(tuple(self._try(e, env_k) for e in info.yields))
        value = states[i][j]
        if isinstance(value, EvalError):
            raise value
        return value

    def _try(self, e: Expr, env: dict[int, int]) -> int | EvalError:
        try:
            return self.eval(e, env)
        except EvalError as exc:
            return exc
