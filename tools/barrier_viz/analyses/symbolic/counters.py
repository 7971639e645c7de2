"""Recognising loop-carried counters: additive chains across nested loops, upstream wrap-around
(stage, phase) pairs and toggles, each with a closed form in one running counter variable.
"""

from __future__ import annotations

from ...ir.model import Operation
from .arith import wrap
from .evaluate import _const, _retype_to
from .expr import BinOp, Cast, Cmp, Const, Expr, Select, Var, children, same, shape
from .model import Counter, LoopInfo, Step, Tracer, _bare
from .render import render
from .simplify import _plus, simplify


class CounterRecognition:
    """Loop-counter recognition, mixed into `trace.SymbolicAnalysis`: which iter_args form one running
    counter (additive chains, wrap-around stage/phase pairs, toggles) and its closed form."""

    # -- counters -----------------------------------------------------------------------------
    def counter(self, loop: int, index: int) -> tuple[Counter, Expr | None] | None:
        """The counter iter_arg `index` of loop `loop` belongs to, and its closed form in terms of
        the counter variable (the variable itself for additive counters). The closed form is None
        for a wrap pair whose stage starts at -1: only its advanced values have one."""
        key = (loop, index)
        if key in self._counters:
            return self._counters[key]
        if key in self._in_progress:
            return None
        self._in_progress.add(key)
        try:
            found = self._recognise(loop, index)
        finally:
            self._in_progress.discard(key)
        self._counters[key] = found
        return found

    def _recognise(self, loop: int, index: int) -> tuple[Counter, Expr] | None:
        info = self.loop(loop)
        if info is None or index >= len(info.yields):
            return None
        wrap_found = self._wrap(info, index)
        if wrap_found is not None:
            return wrap_found
        toggle_found = self._toggle(info, index)
        if toggle_found is not None:
            return toggle_found
        root = self._chain_root(info, index)
        if root is not None:
            return root
        steps = self._additive(info.yields[index], info, index, 0)
        if not steps:
            return None
        label = _increment_label(self, info, index) or _bare(info.names[index])
        name = label if label == _bare(info.names[index]) else f"{label}({info.names[index]})"
        init = info.inits[index]
        init_value = _const_value(init)
        # Counters are assumed never to overflow their width (they count uses of a buffer).
        nonneg = init_value is not None and init_value >= 0 and all((s.amount or 0) >= 0 for s in steps)
        members = self._members(info, index)
        c = Counter(f"counter:L{loop}.{index}", name, "additive", info.line, loop, init, tuple(steps), members)
        return c, Var(c.key, name, "counter", info.bits[index], info.line, nonneg=nonneg)

    def _chain_root(self, info: LoopInfo, index: int) -> tuple[Counter, Expr] | None:
        """An inner link of a chain: its init comes from an enclosing counter that carries it."""
        init = info.inits[index]
        outer = _base_var(init)
        if outer is None or outer.kind != "iter_arg" or outer.loop is None or outer.index is None:
            return None
        found = self.counter(outer.loop, outer.index)
        if found is None or found[0].kind != "additive":
            return None
        if (info.line, index) not in found[0].members:
            return None
        return found

    def _members(self, info: LoopInfo, index: int) -> tuple[tuple[int, int], ...]:
        out = [(info.line, index)]
        stack = [info.yields[index]]
        while stack:
            e = stack.pop()
            if isinstance(e, Var) and e.kind == "loop_result" and e.loop is not None and e.index is not None:
                inner = self.loop(e.loop)
                if inner is not None and e.index < len(inner.inits):
                    out.extend(m for m in self._members(inner, e.index) if m not in out)
            stack.extend(children(e))
        return tuple(out)

    def _additive(self, y: Expr, info: LoopInfo, index: int, depth: int) -> list[Step] | None:
        """Steps by which yield `y` advances iter_arg `index` of `info`, or None when `y` is not
        the iter_arg plus constants, conditional constants and nested-loop advances."""
        if depth > 16:
            return None
        me = f"L{info.line}.iter{index}"
        if isinstance(y, Var) and y.key == me:
            return []
        if isinstance(y, Cast):
            return self._additive(y.operand, info, index, depth + 1)
        if isinstance(y, BinOp) and y.op == "add" and isinstance(y.rhs, Const):
            base = self._additive(y.lhs, info, index, depth + 1)
            return None if base is None else base + [Step(info.line, y.rhs.value)]
        if isinstance(y, BinOp) and y.op == "add" and isinstance(y.lhs, Const):
            base = self._additive(y.rhs, info, index, depth + 1)
            return None if base is None else base + [Step(info.line, y.lhs.value)]
        if isinstance(y, Select):
            a = self._additive(y.true, info, index, depth + 1)
            b = self._additive(y.false, info, index, depth + 1)
            if a is None or b is None:
                return None
            if not a and not b:
                return []
            cond = render(simplify(y.cond))
            out = [s for s in a + b if s.via is not None]
            sum_a = sum(s.amount or 0 for s in a)
            sum_b = sum(s.amount or 0 for s in b)
            if sum_a:
                out.append(Step(info.line, sum_a, cond, y.line))
            if sum_b:
                out.append(Step(info.line, sum_b, f"not ({cond})", y.line))
            return out
        if isinstance(y, Var) and y.kind == "loop_result" and y.loop is not None and y.index is not None:
            inner = self.loop(y.loop)
            if inner is None or inner.kind != "for" or y.index >= len(inner.inits):
                return None
            pre = self._additive(inner.inits[y.index], info, index, depth + 1)
            if pre is None:
                return None
            inner_steps = self._additive(inner.yields[y.index], inner, y.index, 0)
            if inner_steps is None:
                return None
            return pre + [Step(info.line, None, via=inner.line)] + inner_steps
        return None

    def _wrap(self, info: LoopInfo, index: int) -> tuple[Counter, Expr] | None:
        pair = self._wrap_pair(info, index)
        if pair is None:
            return None
        stage, phase, modulus, steps = pair
        # The chain's root: follow inits outward while they are an enclosing wrap pair.
        root_info, rs, rp = info, stage, phase
        for _ in range(16):
            s0, p0 = root_info.inits[rs], root_info.inits[rp]
            if isinstance(s0, Var) and isinstance(p0, Var) and s0.kind == p0.kind == "iter_arg" and s0.loop == p0.loop \
                    and s0.loop is not None and s0.index is not None and p0.index is not None:
                outer = self.loop(s0.loop)
                outer_pair = self._wrap_pair(outer, s0.index) if outer is not None else None
                if outer_pair is not None and outer_pair[:3] == (s0.index, p0.index, modulus) \
                        and (root_info.line, rs) in self._members(outer, s0.index):
                    root_info, rs, rp = outer, s0.index, p0.index  # type: ignore[assignment]
                    continue
            break
        s0, p0 = root_info.inits[rs], root_info.inits[rp]
        s0v = _const_value(s0)
        if s0v is None or not -1 <= s0v < modulus:
            return None
        label = root_info.loc_names[rs] if root_info.loc_names and root_info.loc_names[rs] else _bare(root_info.names[rs])
        key = f"wrap:L{root_info.line}.{rs}"
        name = f"n({label})" if label == _bare(root_info.names[rs]) else f"n({label}, {root_info.names[rs]})"
        members = self._members(root_info, rs)
        c = Counter(key, name, "wrap", root_info.line, root_info.line, s0, tuple(steps), members, modulus, p0)
        bits_s, bits_p = info.bits[stage], info.bits[phase]
        n = Var(key, name, "counter", bits_s, root_info.line, nonneg=True)
        direct = _direct_wrap(info, stage, phase)
        if direct is not None:
            # The advanced values (the selects the yield passes on) after n advances are the
            # state after n + 1: valid for every n >= 0 once s0 >= -1.
            ys, yp = info.yields[stage], info.yields[phase]
            if direct[1] is not None:
                ys, yp = ys.true, yp.true  # type: ignore[union-attr]
            table = self._next_states.setdefault(info.line, {})
            table[shape(ys)] = _wrap_stage(n, s0v + 1, modulus, bits_s, ys.line)
            table[shape(yp)] = _wrap_phase(n, s0v + 1, modulus, p0, bits_s, bits_p, yp.line)
        if s0v < 0:
            # s = -1 before the first advance: no closed form for the iter_arg itself.
            found_none = (c, None)
            self._counters[(info.line, phase)] = found_none  # type: ignore[assignment]
            self._counters[(info.line, stage)] = found_none  # type: ignore[assignment]
            return found_none  # type: ignore[return-value]
        stage_e = _wrap_stage(n, s0v, modulus, bits_s, s0.line)
        phase_e = _wrap_phase(n, s0v, modulus, p0, bits_s, bits_p, p0.line)
        self._counters[(info.line, phase)] = (c, phase_e)
        if index == phase:
            self._counters[(info.line, stage)] = (c, stage_e)
            return c, phase_e
        return c, stage_e

    def _counter_by_key(self, key: str) -> Counter | None:
        for found in self._counters.values():
            if found is not None and found[0].key == key:
                return found[0]
        return None

    def _toggle(self, info: LoopInfo, index: int) -> tuple[Counter, Expr] | None:
        """A phase flipped once per use with no stage (single-buffered upstream channels):
        `p' = p ^ 1`, possibly guarded or carried through a nested loop; p = p0 ^ (n & 1)."""
        steps = self._toggle_steps(info, index, 0)
        if not steps:
            return None
        root_info, ri = info, index
        for _ in range(16):
            init = root_info.inits[ri]
            if isinstance(init, Var) and init.kind == "iter_arg" and init.loop is not None and init.index is not None:
                outer = self.loop(init.loop)
                if outer is not None and self._toggle_steps(outer, init.index, 0) \
                        and (root_info.line, ri) in self._members(outer, init.index):
                    root_info, ri = outer, init.index
                    continue
            break
        p0 = root_info.inits[ri]
        if _const_value(p0) not in (0, 1):
            return None
        bits = info.bits[index]
        label = root_info.loc_names[ri] if root_info.loc_names and root_info.loc_names[ri] else _bare(root_info.names[ri])
        key = f"toggle:L{root_info.line}.{ri}"
        name = f"n({label})"
        c = Counter(key, name, "toggle", root_info.line, root_info.line, p0, tuple(self._toggle_steps(root_info, ri, 0) or ()),
                    self._members(root_info, ri), 1, p0)
        n = Var(key, name, "counter", bits, root_info.line, nonneg=True)
        closed = simplify(BinOp("xor", BinOp("and", n, Const(1, bits, p0.line), bits, p0.line), _retype_to(p0, bits), bits, p0.line))
        return c, closed

    def _toggle_steps(self, info: LoopInfo, index: int, depth: int) -> list[Step] | None:
        if depth > 16 or index >= len(info.yields):
            return None
        me = f"L{info.line}.iter{index}"
        y = info.yields[index]
        guard: Expr | None = None
        if isinstance(y, Select) and isinstance(y.false, Var) and y.false.key == me:
            guard, y = y.cond, y.true
        if isinstance(y, BinOp) and y.op == "xor" and _const(y.rhs, 1) and isinstance(y.lhs, Var) and y.lhs.key == me:
            g = render(simplify(guard)) if guard is not None else None
            return [Step(info.line, 1, g, guard.line if guard is not None else None)]
        if guard is None and isinstance(y, Var) and y.kind == "loop_result" and y.loop is not None and y.index is not None:
            inner = self.loop(y.loop)
            if inner is None or inner.kind != "for" or y.index >= len(inner.inits):
                return None
            init = inner.inits[y.index]
            if not (isinstance(init, Var) and init.key == me):
                return None
            sub = self._toggle_steps(inner, y.index, depth + 1)
            return None if not sub else [Step(info.line, None, via=inner.line)] + sub
        return None

    def _wrap_pair(self, info: LoopInfo, index: int) -> tuple[int, int, int, list[Step]] | None:
        """(stage index, phase index, modulus, steps) when iter_arg `index` is half of a
        wrap-around pair advanced in this loop (directly or by a nested loop it carries)."""
        for stage in range(len(info.yields)):
            for phase in range(len(info.yields)):
                if stage == phase or index not in (stage, phase):
                    continue
                direct = _direct_wrap(info, stage, phase)
                if direct is not None:
                    guard = direct[1]
                    step = Step(info.line, 1, render(simplify(guard)) if guard is not None else None,
                                guard.line if guard is not None else None)
                    return stage, phase, direct[0], [step]
                ys, yp = info.yields[stage], info.yields[phase]
                if isinstance(ys, Var) and isinstance(yp, Var) and ys.kind == yp.kind == "loop_result" \
                        and ys.loop == yp.loop and ys.loop is not None:
                    inner = self.loop(ys.loop)
                    if inner is None or ys.index is None or yp.index is None:
                        continue
                    si, pi = inner.inits[ys.index], inner.inits[yp.index]
                    if not (isinstance(si, Var) and si.key == f"L{info.line}.iter{stage}"
                            and isinstance(pi, Var) and pi.key == f"L{info.line}.iter{phase}"):
                        continue
                    sub = self._wrap_pair(inner, ys.index)
                    if sub is not None and sub[:2] == (ys.index, yp.index):
                        return stage, phase, sub[2], [Step(info.line, None, via=inner.line)] + sub[3]
        return None


def _wrap_stage(n: Var, offset: int, modulus: int, bits: int, line: int) -> Expr:
    """(n + offset) % modulus."""
    return simplify(BinOp("remu", _plus(n, offset, bits, line), Const(modulus, bits, line), bits, line))


def _wrap_phase(n: Var, offset: int, modulus: int, p0: Expr, bits_s: int, bits_p: int, line: int) -> Expr:
    """p0 ^ (((n + offset) / modulus) & 1): one flip per wrap."""
    q = BinOp("divu", _plus(n, offset, bits_s, line), Const(modulus, bits_s, line), bits_s, line)
    par: Expr = BinOp("and", q, Const(1, bits_s, line), bits_s, line)
    if bits_p != bits_s:
        par = Cast("trunci" if bits_s > bits_p else "extui", par, bits_p, bits_s, line)
    return simplify(BinOp("xor", par, _retype_to(p0, bits_p), bits_p, line))


def _direct_wrap(info: LoopInfo, stage: int, phase: int) -> tuple[int, Expr | None] | None:
    """(N, guard) when the yields are `s' = (s+1 ==|>= N) ? 0 : s+1` and `p' = (same cond) ?
    p^1 : p`, possibly both under one guard `g ? advanced : unchanged` (predicated iterations:
    the pair then advances only when g holds)."""
    ys, yp = info.yields[stage], info.yields[phase]
    s_key, p_key = f"L{info.line}.iter{stage}", f"L{info.line}.iter{phase}"
    guard: Expr | None = None
    if isinstance(ys, Select) and isinstance(yp, Select) and same(ys.cond, yp.cond) \
            and isinstance(ys.false, Var) and ys.false.key == s_key and isinstance(yp.false, Var) and yp.false.key == p_key \
            and isinstance(ys.true, Select) and isinstance(yp.true, Select):
        guard, ys, yp = ys.cond, ys.true, yp.true
    if not (isinstance(ys, Select) and isinstance(yp, Select) and same(ys.cond, yp.cond)):
        return None
    c = ys.cond
    if not (isinstance(c, Cmp) and c.pred in ("eq", "sge", "uge") and isinstance(c.rhs, Const) and c.rhs.value > 0):
        return None
    inc = c.lhs
    if not (isinstance(inc, BinOp) and inc.op == "add" and _const(inc.rhs, 1) and isinstance(inc.lhs, Var)
            and inc.lhs.key == s_key):
        return None
    if not (_const(ys.true, 0) and same(ys.false, inc)):
        return None
    t = yp.true
    if not (isinstance(yp.false, Var) and yp.false.key == p_key and isinstance(t, BinOp) and t.op == "xor"
            and _const(t.rhs, 1) and isinstance(t.lhs, Var) and t.lhs.key == p_key):
        return None
    return c.rhs.value, guard


def _const_value(e: Expr) -> int | None:
    s = simplify(e)
    return wrap(s.value, s.bits) if isinstance(s, Const) else None


def _base_var(e: Expr) -> Var | None:
    """The iter_arg an additive init expression starts from (`x`, `x + c`, `c ? x + 1 : x`)."""
    for _ in range(16):
        if isinstance(e, Var):
            return e
        if isinstance(e, Cast):
            e = e.operand
        elif isinstance(e, BinOp) and e.op == "add" and isinstance(e.rhs, Const):
            e = e.lhs
        elif isinstance(e, BinOp) and e.op == "add" and isinstance(e.lhs, Const):
            e = e.rhs
        elif isinstance(e, Select):
            a, b = _base_var(e.true), _base_var(e.false)
            return a if a is not None and b is not None and a.key == b.key else None
        else:
            return None
    return None


def _increment_label(analysis: Tracer, info: LoopInfo, index: int) -> str | None:
    """Loc name of the op that increments the counter (AutoWS: `loc("accum_cnt")`), found as
    the `addi` on the innermost link of the chain."""
    stack = [info.yields[index]]
    while stack:
        e = stack.pop()
        if isinstance(e, BinOp) and e.op == "add":
            op = _op_at_line(analysis, e.line, "arith.addi")
            if op is not None:
                return op.loc_name or _bare(op.results[0])
        if isinstance(e, Var) and e.kind == "loop_result" and e.loop is not None and e.index is not None:
            inner = analysis.loop(e.loop)
            if inner is not None and e.index < len(inner.yields):
                stack.append(inner.yields[e.index])
                continue
        stack.extend(children(e))
    return None


def _op_at_line(analysis: Tracer, line: int, name: str) -> Operation | None:
    cache = getattr(analysis, "_by_line", None)
    if cache is None:
        cache = {}
        for op in analysis.ir.walk():
            cache.setdefault((op.line, op.name), op)
        analysis._by_line = cache  # type: ignore[attr-defined]
    return cache.get((line, name))
