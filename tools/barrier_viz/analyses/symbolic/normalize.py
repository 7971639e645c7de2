"""Formula derivation for one value: substitute counters for the iter_args they explain, then
simplify; the simplified form is kept only when it agrees with the substituted one by
evaluation. Also one-iteration-delayed copies of a counter expression (ir-semantics 5.4).
"""

from __future__ import annotations

from typing import Iterable, Mapping

from ...ir.model import Operation
from .arith import EvalError, wrap
from .counters import _const_value
from .evaluate import _CHECK_RANGE, _agree, _retype_to, evaluate
from .expr import BinOp, Const, Expr, Unknown, Var, _rebuild, children, leaves, shape, substitute
from .model import Counter, LoopInfo, SymbolicValue, Tracer
from .render import render
from .simplify import simplify


def _normalize(self: Tracer, name: str, at: Operation, raw: Expr) -> SymbolicValue:
    """Substitute counters for the iter_args and loop results they explain, then simplify;
    the simplified form is kept only if it agrees with the substituted one by evaluation."""
    mapping: dict[str, Expr] = {}
    counters: dict[str, Counter] = {}
    raw_vars = [leaf for leaf in leaves(raw) if isinstance(leaf, Var) and leaf.loop is not None and leaf.index is not None]
    for leaf in raw_vars:
        if leaf.kind == "iter_arg":
            self.counter(leaf.loop, leaf.index)  # type: ignore[arg-type]
    table: dict[tuple, Expr] = {}
    for loop in {leaf.loop for leaf in raw_vars}:
        table.update(self._next_states.get(loop, {}))  # type: ignore[arg-type]
    work = _replace_shapes(raw, table) if table else raw
    for leaf in list(leaves(work)):
        if not isinstance(leaf, Var) or leaf.key in mapping or leaf.loop is None or leaf.index is None:
            continue
        if leaf.kind not in ("iter_arg", "loop_result"):
            continue
        info = self.loop(leaf.loop)
        if info is None:
            continue
        if leaf.kind == "loop_result" and info.kind == "while":
            continue
        found = self.counter(leaf.loop, leaf.index)
        if found is not None and found[1] is not None:
            counters[found[0].key] = found[0]
            mapping[leaf.key] = _retype_to(found[1], leaf.bits)
            continue
        if found is not None:
            continue
        delayed = _delayed(self, info, leaf.index)
        if delayed is not None:
            for c in delayed[1]:
                counters[c.key] = c
            mapping[leaf.key] = _retype_to(delayed[0], leaf.bits)
    mapping = _same_point(work, mapping)
    for e in table.values():
        for v in leaves(e):
            if isinstance(v, Var) and v.kind == "counter" and _uses_counter(work, v.key) and v.key.startswith("wrap:"):
                found_c = self._counter_by_key(v.key)
                if found_c is not None:
                    counters[v.key] = found_c
    counters = {k: c for k, c in counters.items()
                if any(_uses_counter(e, k) for e in mapping.values()) or _uses_counter(work, k)}
    substituted = substitute(work, mapping) if mapping else work
    key = shape(substituted)
    cached = self._normalized.get(key)
    if cached is None:
        expr = simplify(substituted)
        verified = shape(expr) == key or _agree(substituted, expr)
        cached = (expr if verified else substituted, verified)
        self._normalized[key] = cached
    expr, verified = cached
    unknowns = _dependencies(self, expr, counters.values())
    return SymbolicValue(name, at.line, raw, expr, render(expr), tuple(counters.values()), tuple(unknowns), verified)


def _replace_shapes(e: Expr, table: Mapping[tuple, Expr]) -> Expr:
    """Replace every subtree whose shape is in `table`."""
    hit = table.get(shape(e))
    if hit is not None:
        return hit
    kids = children(e)
    return _rebuild(e, tuple(_replace_shapes(k, table) for k in kids)) if kids else e


def _same_point(raw: Expr, mapping: dict[str, Expr]) -> dict[str, Expr]:
    """Drop substitutions that would merge different program points of one counter.

    A counter variable names the running value at the point of use. If one expression used,
    say, an outer loop's iter_arg and the nested loop's result of the same chain, both would
    become the same variable although their values differ; such values are left raw."""
    points: dict[str, set[tuple]] = {}
    raws = {leaf.key: leaf for leaf in leaves(raw) if isinstance(leaf, Var)}
    for key, closed in mapping.items():
        leaf = raws.get(key)
        if leaf is None:
            continue
        for ck in {v.key for v in leaves(closed) if isinstance(v, Var) and v.kind == "counter"}:
            points.setdefault(ck, set()).add((leaf.kind, leaf.loop))
    bad = {ck for ck, pts in points.items() if len(pts) > 1}
    if not bad:
        return mapping
    return {k: v for k, v in mapping.items() if not any(_uses_counter(v, ck) for ck in bad)}


def _uses_counter(e: Expr, key: str) -> bool:
    return any(isinstance(v, Var) and v.key == key for v in leaves(e))


def _delayed(self: Tracer, info: LoopInfo, index: int) -> tuple[Expr, list[Counter]] | None:
    """An iter_arg that carries the previous iteration's value of an expression F over
    counters started by this loop (ir-semantics §5.4: the barrier and phase of the previous
    MMA; pipelined AutoWS loops: a counter one use behind another): d = F(counter one
    iteration earlier). Accepted only when d's init equals F one iteration before the first
    (wrap: n = -1; additive: init - step) and the simplified form checks out by evaluation."""
    y = info.yields[index]
    me = f"L{info.line}.iter{index}"
    if any(isinstance(leaf, Var) and leaf.key == me for leaf in leaves(y)):
        return None
    mapping: dict[str, Expr] = {}
    used: dict[str, Counter] = {}
    start: dict[str, int] = {}
    stride: dict[str, int] = {}
    for leaf in leaves(y):
        if isinstance(leaf, Var) and leaf.kind == "iter_arg" and leaf.loop == info.line and leaf.index is not None:
            found = self.counter(info.line, leaf.index)
            if found is None or found[1] is None or found[0].root_loop != info.line:
                return None
            c = found[0]
            if c.kind == "additive":
                init = _const_value(c.init)
                if init is None or len(c.steps) != 1 or c.steps[0].condition is not None or c.steps[0].amount is None \
                        or c.steps[0].loop != info.line:
                    return None
                start[c.key], stride[c.key] = init, c.steps[0].amount
            elif c.kind in ("wrap", "toggle"):
                start[c.key], stride[c.key] = 0, 1
            else:
                return None
            used[c.key] = c
            mapping[leaf.key] = _retype_to(found[1], leaf.bits)
        elif isinstance(leaf, Unknown) or (isinstance(leaf, Var) and leaf.kind != "param"):
            return None
    if not used:
        return None
    f = substitute(y, mapping)
    init = _const_value(info.inits[index])
    if init is None:
        return None
    vars_in_f = {v.key: v for v in leaves(f) if isinstance(v, Var) and v.key in used}
    shift = {k: BinOp("add", v, Const(-stride[k], v.bits, info.line), v.bits, info.line) for k, v in vars_in_f.items()}
    shifted = substitute(f, shift)
    try:
        if evaluate(shifted, start) != wrap(init, shifted.bits):
            return None
    except EvalError:
        return None
    out = simplify(shifted)
    for i in range(_CHECK_RANGE):
        bind = {k: start[k] + i * stride[k] for k in used}
        try:
            if evaluate(out, bind) != evaluate(shifted, bind):
                out = shifted
                break
        except EvalError:
            return None
    return out, list(used.values())


def _dependencies(self: Tracer, expr: Expr, counters: Iterable[Counter]) -> list[Unknown]:
    """Unknown leaves the value depends on: in the formula, in counter inits, and in the inits
    and yields of iter_args the formula still refers to (loop bounds excluded: they decide how
    often, not which slot or phase)."""
    out: list[Unknown] = []
    seen_vars: set[str] = set()
    stack: list[Expr] = [expr] + [c.init for c in counters] + [c.phase_init for c in counters if c.phase_init]
    while stack:
        e = stack.pop()
        for leaf in leaves(e):
            if isinstance(leaf, Unknown):
                if leaf not in out:
                    out.append(leaf)
            elif isinstance(leaf, Var) and leaf.kind in ("iter_arg", "loop_result") and leaf.key not in seen_vars:
                seen_vars.add(leaf.key)
                info = self.loop(leaf.loop) if leaf.loop is not None else None
                if info is None or leaf.index is None:
                    continue
                if leaf.kind == "loop_result" and info.kind == "while":
                    if leaf.index < len(info.results):
                        stack.append(info.results[leaf.index])
                    continue
                if leaf.index < len(info.inits):
                    stack.extend((info.inits[leaf.index], info.yields[leaf.index]))
    return out
