"""Tracing: from an SSA value back to a raw expression tree, through `arith` chains, `scf.if`
results, captures and loop-carried values (iter_args become variables, never guesses).
`SymbolicAnalysis` is the entry point; counter recognition is mixed in from `counters`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from ...facts.values import OpResult, ValueIndex
from ...ir.model import BlockArgument, Operation, ParsedIR
from .arith import wrap
from .counters import CounterRecognition
from .evaluate import value_range
from .expr import BinOp, Cast, Cmp, Const, Expr, Select, Unknown, Var, bits_of, is_memdesc
from .model import Counter, LoopInfo, SymbolicValue, _axis, _bare, _terminator
from .normalize import _normalize
from .render import render
from .simulate import _Simulator
from .source import op_text


MAX_HEIGHT = 64


_BINOPS = {
    "arith.addi": "add", "arith.subi": "sub", "arith.muli": "mul", "arith.divsi": "divs",
    "arith.divui": "divu", "arith.remsi": "rems", "arith.remui": "remu", "arith.andi": "and",
    "arith.ori": "or", "arith.xori": "xor", "arith.shli": "shl", "arith.shrsi": "shrs",
    "arith.shrui": "shru", "arith.minsi": "mins", "arith.maxsi": "maxs", "arith.minui": "minu",
    "arith.maxui": "maxu", "arith.floordivsi": "floordivs", "arith.ceildivsi": "ceildivs",
    "arith.ceildivui": "ceildivu",
}


_CASTS = {"arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast", "arith.index_castui"}


_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")


_PRED_RE = re.compile(r"arith\.cmpi\s+(eq|ne|slt|sle|sgt|sge|ult|ule|ugt|uge)\b")


_VIEW_OPS = frozenset({"ttg.memdesc_trans", "ttg.memdesc_subslice", "ttg.memdesc_reinterpret",
                       "ttg.memdesc_reshape", "ttng.tmem_subslice", "ttg.memdesc_subview"})


_PROGRAM_QUERIES = {"tt.get_program_id": "program_id", "tt.get_num_programs": "num_programs"}


_ALLOC_OPS = frozenset({"ttg.local_alloc", "ttng.tmem_alloc"})


@dataclass
class _Frame:
    key: tuple
    defn: object
    at: Operation | None
    slot: bool
    deps: list[tuple] = field(default_factory=list)
    expanded: bool = False


class SymbolicAnalysis(CounterRecognition):
    """Traces and normalizes integer values and barrier slot indices of one parsed unit.

    `source` (the unit's text) is a fallback only: `arith.cmpi` predicates and program-id axes
    are read from the op's keywords and literals; the text is consulted for models built without them.
    """

    def __init__(self, ir: ParsedIR, source: bytes | str | None = None, values: ValueIndex | None = None):
        self.ir = ir
        self.values = values or ValueIndex(ir)
        self._source = source.encode() if isinstance(source, str) else source
        self._memo: dict[tuple, Expr] = {}
        self._heights: dict[tuple, int] = {}
        self._normalized: dict[tuple, tuple[Expr, bool]] = {}
        self._next_states: dict[int, dict[tuple, Expr]] = {}
        self._loops: dict[int, LoopInfo] = {}
        self._loop_ops: dict[int, Operation] = {}
        self._counters: dict[tuple[int, int], tuple[Counter, Expr] | None] = {}
        self._in_progress: set[tuple[int, int]] = set()

    # -- public API ---------------------------------------------------------------------------
    def raw(self, name: str, at: Operation) -> Expr:
        """The raw expression tree of integer value `name` as used by `at`."""
        return self._trace(name, at, slot=False)

    def raw_slot(self, name: str, at: Operation) -> Expr:
        """The slot index of memdesc value `name` (the `memdesc_index` index it was taken at,
        through views, captures, loop-carried memdescs and `scf.if` results)."""
        return self._trace(name, at, slot=True)

    def value(self, name: str, at: Operation) -> SymbolicValue:
        return self._finish(name, at, self.raw(name, at))

    def slot(self, name: str, at: Operation) -> SymbolicValue:
        return self._finish(name, at, self.raw_slot(name, at))

    def _finish(self, name: str, at: Operation, raw: Expr) -> SymbolicValue:
        return _normalize(self, name, at, raw)

    def wait(self, op: Operation) -> tuple[SymbolicValue, SymbolicValue]:
        """(slot, phase) of a `ttng.wait_barrier`. The phase is the parity the wait compares:
        the low bit of the i32 operand, so an `extsi` of an i1 (0 or -1) reads as 0 or 1."""
        if len(op.operands) < 2:
            u = Unknown(op.name, op.line, "wait without phase operand")
            bad = SymbolicValue("?", op.line, u, u, render(u), (), (u,))
            return bad, bad
        slot = self.slot(op.operands[0], op)
        phase = self.value(op.operands[1], op)
        if value_range(phase.expr) not in ((0, 0), (0, 1), (1, 1)):
            raw = phase.raw
            parity = BinOp("and", raw, Const(1, raw.bits, op.line), raw.bits, op.line)
            phase = self._finish(op.operands[1], op, parity)
        return slot, phase

    def wait_at(self, op: Operation, iterations: Mapping[int, int], trip_counts: Mapping[int, int] | None = None,
                params: Mapping[str, int] | None = None) -> tuple[int, int]:
        """Concrete (slot, parity) a `ttng.wait_barrier` polls when the loops around it (by line)
        are at the given iterations: the IR's recurrences run by `simulate`. Raises EvalError
        when a needed trip count or kernel input is not given."""
        slot, phase = self.wait(op)
        sim = _Simulator(self, iterations, trip_counts or {}, params or {})
        return sim.eval(slot.raw, dict(iterations)), sim.eval(phase.raw, dict(iterations)) & 1

    def loop(self, line: int) -> LoopInfo | None:
        """The loop at `line` (after any trace reached it)."""
        if line not in self._loops and line in self._loop_ops:
            self._loops[line] = self._loop_info(self._loop_ops[line])
        return self._loops.get(line)

    def describe(self, var: Var) -> str:
        """What a variable left in a formula stands for: a loop variable's loop, initial value
        and the recurrence its yield applies (raw, in terms of the loop's iter_args)."""
        if var.kind == "counter":
            found = self._counter_by_key(var.key)
            return found.describe() if found is not None else var.name
        if var.kind == "param":
            return f"{var.name}: kernel input (function argument or program id)"
        info = self.loop(var.loop) if var.loop is not None else None
        if info is None:
            return var.name
        if var.kind == "induction":
            parts = [render(x) if x is not None else "?" for x in (info.lb, info.ub, info.step)]
            return f"{var.name}: induction variable of loop at line {info.line} ({parts[0]} to {parts[1]} step {parts[2]})"
        j = var.index or 0
        if var.kind == "loop_result" and info.kind == "while":
            return f"{var.name}: result {j} of while loop at line {info.line} = {render(info.results[j])} after the last iteration"
        what = "iter_arg" if var.kind == "iter_arg" else "result (final iter_arg)"
        return (f"{var.name}: {what} {j} of loop at line {info.line}; starts at {render(info.inits[j])}, "
                f"next = {render(info.yields[j])}")

    def simulate(self, e: Expr, iterations: Mapping[int, int], trip_counts: Mapping[int, int] | None = None,
                 params: Mapping[str, int] | None = None) -> int:
        """Concrete value of raw expression `e` when each loop (by line) is at the given
        iteration (0-based), running the IR's own recurrences. Loop results need the trip
        counts of their loops (given, or computed from constant bounds)."""
        return _Simulator(self, iterations, trip_counts or {}, params or {}).eval(e, dict(iterations))

    # -- tracing ------------------------------------------------------------------------------
    def _trace(self, name: str, at: Operation, slot: bool) -> Expr:
        defn = self.values.lookup(name, at)
        if defn is None:
            return Unknown("undefined", at.line, f"{name} is not defined")
        return self._build(defn, at, slot)

    def _key(self, defn: object, slot: bool) -> tuple:
        if isinstance(defn, OpResult):
            return ("r", id(defn.op), defn.index, slot)
        return ("a", id(defn), slot)

    def _build(self, root: object, at: Operation, slot: bool) -> Expr:
        """Post-order construction with an explicit stack; results memoized per definition.
        SSA use-def chains are acyclic once loop back-edges are cut (iter_args are leaves), so
        a frame is simply revisited until all its operands are built. A node whose tree would be
        taller than MAX_HEIGHT becomes an `Unknown` leaf, which bounds every later recursion."""
        root_key = self._key(root, slot)
        if root_key in self._memo:
            return self._memo[root_key]
        stack = [_Frame(root_key, root, at, slot)]
        budget = 1_000_000
        while stack:
            budget -= 1
            if budget < 0:  # pragma: no cover - defensive: only a malformed model could loop
                self._memo[root_key] = Unknown("trace", at.line, "trace did not terminate")
                break
            fr = stack[-1]
            if fr.key in self._memo:
                stack.pop()
                continue
            if not fr.expanded:
                fr.expanded = True
                fr.deps = self._deps(fr)
            missing = [d for d in fr.deps if d[0] not in self._memo]
            if missing:
                stack.extend(_Frame(k, d, a, s) for k, d, a, s in missing)
                continue
            stack.pop()
            kids = [self._memo[d[0]] for d in fr.deps]
            node = self._node(fr, kids)
            # Height depends only on the subtree, so the cut is the same whatever the query.
            h = 1 + max((self._heights.get(d[0], 1) for d in fr.deps), default=0)
            if h > MAX_HEIGHT:
                node = Unknown(self._op_name(fr), self._line(fr), f"trace deeper than {MAX_HEIGHT}")
                h = 1
            self._heights[fr.key] = h
            self._memo[fr.key] = node
        return self._memo[root_key]

    def _op_name(self, fr: _Frame) -> str:
        return fr.defn.op.name if isinstance(fr.defn, OpResult) else "block argument"

    def _line(self, fr: _Frame) -> int:
        return fr.defn.op.line if isinstance(fr.defn, OpResult) else fr.defn.line  # type: ignore[union-attr]

    def _dep(self, name: str, at: Operation, slot: bool) -> tuple:
        defn = self.values.lookup(name, at)
        if defn is None:
            key = ("undef", name, id(at))
            self._memo.setdefault(key, Unknown("undefined", at.line, f"{name} is not defined"))
            return (key, None, at, slot)
        return (self._key(defn, slot), defn, at, slot)

    def _deps(self, fr: _Frame) -> list[tuple]:
        """The values node `fr` is built from, as (key, definition, use site, slot mode)."""
        d = fr.defn
        if isinstance(d, OpResult):
            op = d.op
            if fr.slot:
                if op.name == "ttg.memdesc_index" and len(op.operands) > 1:
                    return [self._dep(op.operands[1], op, False)]
                if op.name in _VIEW_OPS and op.operands:
                    return [self._dep(op.operands[0], op, True)]
                if op.name == "scf.if":
                    return self._if_deps(op, d.index, True)
                if op.name == "ttg.warp_specialize":
                    return self._ws_deps(op, d.index, True)
                return []
            if op.name in _BINOPS or op.name == "arith.cmpi":
                return [self._dep(n, op, False) for n in op.operands[:2]] if len(op.operands) >= 2 else []
            if op.name == "arith.select" and len(op.operands) == 3:
                return [self._dep(n, op, False) for n in op.operands]
            if op.name in _CASTS and op.operands:
                return [self._dep(op.operands[0], op, False)]
            if op.name == "scf.if":
                return self._if_deps(op, d.index, False)
            if op.name == "ttg.warp_specialize":
                return self._ws_deps(op, d.index, False)
            return []
        arg: BlockArgument = d  # type: ignore[assignment]
        owner = arg.block.region.parent if arg.block is not None and arg.block.region is not None else None
        if owner is not None and owner.name == "ttg.warp_specialize" and arg.index < len(owner.operands):
            return [self._dep(owner.operands[arg.index], owner, fr.slot)]
        if owner is not None and owner.name == "scf.while" and arg.block.region.index == 1:  # type: ignore[union-attr]
            cond = _terminator(owner, 0)
            if cond is not None and arg.index + 1 < len(cond.operands):
                return [self._dep(cond.operands[arg.index + 1], cond, fr.slot)]
        return []

    def _ws_deps(self, op: Operation, index: int, slot: bool) -> list[tuple]:
        """A warp_specialize result is what its default region yields (`ttg.warp_yield`)."""
        if not op.regions or not op.regions[0].blocks or not op.regions[0].blocks[-1].operations:
            return []
        term = op.regions[0].blocks[-1].operations[-1]
        if term.name != "ttg.warp_yield" or index >= len(term.operands):
            return []
        return [self._dep(term.operands[index], term, slot)]

    def _if_deps(self, op: Operation, index: int, slot: bool) -> list[tuple]:
        if len(op.regions) < 2 or not op.operands:
            return []
        then_y, else_y = _terminator(op, 0), _terminator(op, 1)
        if then_y is None or else_y is None or index >= len(then_y.operands) or index >= len(else_y.operands):
            return []
        return [self._dep(op.operands[0], op, False), self._dep(then_y.operands[index], then_y, slot),
                self._dep(else_y.operands[index], else_y, slot)]

    def _node(self, fr: _Frame, kids: list[Expr]) -> Expr:
        d = fr.defn
        if isinstance(d, OpResult):
            return self._op_node(d, fr.slot, kids)
        return self._arg_node(d, fr.slot, kids)  # type: ignore[arg-type]

    def _op_node(self, d: OpResult, slot: bool, kids: list[Expr]) -> Expr:
        op = d.op
        line = op.line
        rbits = bits_of(d.type)
        if op.name == "scf.if" and len(kids) == 3:
            return Select(kids[0], kids[1], kids[2], 32 if slot else rbits, line)
        if op.name == "ttg.warp_specialize" and len(kids) == 1:
            return kids[0]
        if op.name in _PROGRAM_QUERIES and not slot:
            words = [w for w in (*getattr(op, "keywords", ()), *op.literals) if w in ("x", "y", "z")]
            m = None if words else re.search(r"\b(?:get_program_id|get_num_programs)\s+(x|y|z)\b", self._text(op))
            axis = words[0] if words else (m.group(1) if m else _axis(op.attr("axis")))
            label = f"{_PROGRAM_QUERIES[op.name]}_{axis}"
            return Var(f"param:{label}", label, "param", rbits, line)
        if op.name in ("scf.for", "scf.while"):
            self._loop_ops[line] = op
            return Var(f"L{line}.result{d.index}", f"{_bare(d.name)}", "loop_result",
                       32 if slot else rbits, line, loop=line, index=d.index)
        if slot:
            if op.name == "ttg.memdesc_index" and kids:
                return kids[0]
            if op.name in _VIEW_OPS and kids:
                return kids[0]
            if op.name in _ALLOC_OPS:
                return Const(0, 32, line)  # an unindexed allocation: its only slot
            return Unknown(op.name, line, "barrier not reached through memdesc_index", 32)
        if op.name == "arith.constant":
            return self._constant(op, rbits)
        if op.name in _BINOPS and len(kids) == 2:
            return BinOp(_BINOPS[op.name], kids[0], kids[1], rbits, line)
        if op.name == "arith.cmpi" and len(kids) == 2:
            pred = self._predicate(op)
            if pred is None:
                return Unknown(op.name, line, "predicate not readable")
            return Cmp(pred, kids[0], kids[1], line)
        if op.name == "arith.select" and len(kids) == 3:
            return Select(kids[0], kids[1], kids[2], rbits, line)
        if op.name in _CASTS and kids:
            from_bits = bits_of(op.types[0]) if op.types else kids[0].bits
            return Cast(op.name.split(".", 1)[1], kids[0], rbits, from_bits, line)
        if op.name == "tt.load":
            return Unknown(op.name, line, "loaded from memory", rbits, op_text(op, d.index))
        return Unknown(op.name, line, "", rbits)

    def _arg_node(self, arg: BlockArgument, slot: bool, kids: list[Expr]) -> Expr:
        if kids:
            return kids[0]  # a capture or a while "after" argument: same value
        block = arg.block
        owner = block.region.parent if block is not None and block.region is not None else None
        bits = 32 if slot else bits_of(arg.type)
        label = _bare(arg.name)
        if owner is None or owner.name in ("tt.func", "func.func", "llvm.func"):
            return Var(f"param:{arg.name}@{arg.line}", label, "param", bits, arg.line)
        if owner.name == "scf.for" and block.region.index == 0:  # type: ignore[union-attr]
            self._loop_ops[owner.line] = owner
            if arg.index == 0:
                return Var(f"L{owner.line}.iv", label, "induction", bits, arg.line, loop=owner.line)
            return Var(f"L{owner.line}.iter{arg.index - 1}", label, "iter_arg", bits, arg.line,
                       loop=owner.line, index=arg.index - 1)
        if owner.name == "scf.while" and block.region.index == 0:  # type: ignore[union-attr]
            self._loop_ops[owner.line] = owner
            return Var(f"L{owner.line}.iter{arg.index}", label, "iter_arg", bits, arg.line,
                       loop=owner.line, index=arg.index)
        return Unknown(owner.name, arg.line, f"argument {arg.name} of {owner.name}")

    def _constant(self, op: Operation, bits: int) -> Expr:
        lits = [t for t in op.literals if t not in (":",)]
        text = "".join(lits[:2]) if lits[:1] == ["-"] else (lits[0] if lits else "")
        if text == "true":
            return Const(1, 1, op.line)
        if text == "false":
            return Const(0, 1, op.line)
        try:
            return Const(wrap(int(text, 0), bits), bits, op.line)
        except ValueError:
            value = op.attributes.get("value", "")
            m = re.fullmatch(r"\s*(-?\d+)\s*(?::\s*\w+)?\s*", value)
            if m:
                return Const(wrap(int(m.group(1)), bits), bits, op.line)
            return Unknown(op.name, op.line, "not an integer constant")

    def _text(self, op: Operation) -> str:
        if self._source is None or op.end_byte <= op.start_byte:
            return ""
        return self._source[op.start_byte:op.end_byte].decode("utf-8", "replace")

    def _predicate(self, op: Operation) -> str | None:
        pred = getattr(op, "predicate", None)
        if isinstance(pred, str) and pred in _PREDICATES:
            return pred
        attr = op.attr("predicate")
        if isinstance(attr, int) and 0 <= attr < len(_PREDICATES):
            return _PREDICATES[attr]
        if isinstance(attr, str) and attr.strip() in _PREDICATES:
            return attr.strip()
        # The parser keeps the bare predicate word (`slt` of `arith.cmpi slt, ...`), so the
        # unit's source text is needed only for models built without keywords.
        words = [w for w in getattr(op, "keywords", ()) if w in _PREDICATES]
        if words:
            return words[0]
        m = _PRED_RE.search(self._text(op))
        return m.group(1) if m else None

    # -- loops ----------------------------------------------------------------------------------
    def _loop_info(self, op: Operation) -> LoopInfo:
        enclosing = tuple(reversed([a.line for a in op.ancestors() if a.name in ("scf.for", "scf.while")]))
        for a in op.ancestors():
            if a.name in ("scf.for", "scf.while"):
                self._loop_ops.setdefault(a.line, a)
        if op.name == "scf.for":
            args = op.regions[0].arguments[1:] if op.regions else []
            inits = op.operands[3:3 + len(args)]
            y = _terminator(op, 0)
            slots = [is_memdesc(a.type) for a in args]
            init_e = tuple(self._trace(n, op, s) for n, s in zip(inits, slots))
            yield_e = tuple(self._trace(y.operands[j], y, slots[j]) if y is not None and j < len(y.operands)
                            else Unknown("scf.for", op.line, "missing yield") for j in range(len(args)))
            results = tuple(Var(f"L{op.line}.iter{j}", _bare(a.name), "iter_arg", 32 if slots[j] else bits_of(a.type),
                                a.line, loop=op.line, index=j) for j, a in enumerate(args))
            lb, ub, st = (self._trace(n, op, False) for n in op.operands[:3]) if len(op.operands) >= 3 else (None,) * 3
            return LoopInfo(op.line, "for", tuple(a.name for a in args), tuple(32 if s else bits_of(a.type) for a, s in zip(args, slots)),
                            init_e, yield_e, results, lb, ub, st, enclosing, tuple(a.loc_name for a in args))
        args = op.regions[0].arguments if op.regions else []
        slots = [is_memdesc(a.type) for a in args]
        init_e = tuple(self._trace(n, op, s) for n, s in zip(op.operands, slots))
        y = _terminator(op, 1) if len(op.regions) > 1 else None
        yield_e = tuple(self._trace(y.operands[j], y, slots[j]) if y is not None and j < len(y.operands)
                        else Unknown("scf.while", op.line, "missing yield") for j in range(len(args)))
        cond = _terminator(op, 0)
        nres = len(op.results)
        res_slots = [is_memdesc(t) for t in op.result_types] + [False] * nres
        results = tuple(self._trace(cond.operands[j + 1], cond, res_slots[j]) if cond is not None and j + 1 < len(cond.operands)
                        else Unknown("scf.while", op.line, "missing condition") for j in range(nres))
        return LoopInfo(op.line, "while", tuple(a.name for a in args), tuple(32 if s else bits_of(a.type) for a, s in zip(args, slots)),
                        init_e, yield_e, results, None, None, None, enclosing, tuple(a.loc_name for a in args))


def barrier_waits(ops: Iterable[Operation]) -> list[Operation]:
    """The `ttng.wait_barrier` ops among `ops`."""
    return [op for op in ops if op.name == "ttng.wait_barrier"]
