"""What the analysis knows about loops and values: a loop's carried state (`LoopInfo`), how a
loop advances a counter (`Step`), a running counter through nested loops (`Counter`), and
one traced operand with its formula (`SymbolicValue`), plus small IR helpers they share.

`Tracer` is the interface `trace.SymbolicAnalysis` offers to the modules it drives (`counters`,
`normalize`, `simulate`): declared here, below them, so that none of them imports `trace`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ...ir.model import Operation, ParsedIR
from .arith import wrap
from .expr import Const, Expr, Unknown
from .render import render, to_json


@dataclass(frozen=True, slots=True)
class LoopInfo:
    """What a loop carries. For `scf.for`, `inits`/`yields` are per iter_arg; `results[j]` is
    the value of result j in terms of the loop's iter_args after the last iteration (for a
    while: the `scf.condition` operands). Memdesc iter_args carry their slot index."""

    line: int
    kind: str  # "for" | "while"
    names: tuple[str, ...]
    bits: tuple[int, ...]
    inits: tuple[Expr, ...]
    yields: tuple[Expr, ...]
    results: tuple[Expr, ...]
    lb: Expr | None
    ub: Expr | None
    step: Expr | None
    enclosing: tuple[int, ...]  # lines of the loops around it, outermost first
    loc_names: tuple[str | None, ...] = ()


@dataclass(frozen=True, slots=True)
class Step:
    """How one loop advances a counter: by `amount` per iteration, only when `condition`
    holds (a select at `condition_line`), or by what a nested loop adds (`via` its line)."""

    loop: int
    amount: int | None
    condition: str | None = None
    condition_line: int | None = None
    via: int | None = None

    def describe(self) -> str:
        if self.via is not None:
            return f"carried through loop at line {self.via}"
        amount = f"+{self.amount}" if self.amount is not None and self.amount >= 0 else str(self.amount)
        text = f"{amount} per iteration of loop at line {self.loop}"
        if self.condition is not None:
            text += f" when {self.condition} (select at line {self.condition_line})"
        return text


@dataclass(frozen=True, slots=True)
class Counter:
    """A running counter: one value threaded through nested loops (iter_args linked by inits and
    loop results). `kind` "additive": its value is `init` plus the steps taken so far (the
    formula uses the value itself). `kind` "wrap": an upstream (stage, phase) pair; the formula
    uses `n`, the number of advances so far, with stage = (stage_init + n) % modulus and phase =
    phase_init ^ (((stage_init + n) / modulus) & 1)."""

    key: str
    name: str
    kind: str
    line: int
    root_loop: int
    init: Expr
    steps: tuple[Step, ...]
    members: tuple[tuple[int, int], ...]
    modulus: int | None = None
    phase_init: Expr | None = None

    def describe(self) -> str:
        steps = "; ".join(s.describe() for s in self.steps) or "never advanced"
        if self.kind == "toggle":
            return (f"{self.name}: flips of the phase carried from loop at line {self.root_loop}, "
                    f"starting at {render(self.init)}; {steps}")
        if self.kind == "wrap":
            return (f"{self.name}: advances of the (stage, phase) pair carried from loop at line {self.root_loop}, "
                    f"stage starts at {render(self.init)}, phase at {render(self.phase_init) if self.phase_init else '?'}, "
                    f"wraps at {self.modulus}; {steps}")
        return f"{self.name}: starts at {render(self.init)} before loop at line {self.root_loop}; {steps}"

    def to_json(self) -> dict:
        out = {"key": self.key, "name": self.name, "kind": self.kind, "line": self.line, "root_loop": self.root_loop,
               "init": to_json(self.init), "steps": [s.describe() for s in self.steps],
               "members": [list(m) for m in self.members], "description": self.describe()}
        if self.modulus is not None:
            out["modulus"] = self.modulus
        if self.phase_init is not None:
            out["phase_init"] = to_json(self.phase_init)
        return out


@dataclass(frozen=True, slots=True)
class SymbolicValue:
    """One traced operand: its raw tree, the normalized tree and formula, the counters the
    formula uses, and every unknown leaf it depends on (including counter inits and the
    recurrences of iter_args left as variables)."""

    name: str
    line: int
    raw: Expr
    expr: Expr
    formula: str
    counters: tuple[Counter, ...]
    unknowns: tuple[Unknown, ...]
    verified: bool = True

    @property
    def resolved(self) -> bool:
        return not self.unknowns

    @property
    def constant(self) -> int | None:
        return wrap(self.expr.value, self.expr.bits) if isinstance(self.expr, Const) else None

    def to_json(self) -> dict:
        return {"name": self.name, "line": self.line, "formula": self.formula, "expr": to_json(self.expr),
                "counters": [c.to_json() for c in self.counters],
                "unknowns": [render(u) for u in self.unknowns], "constant": self.constant is not None}


def _terminator(op: Operation, region_index: int) -> Operation | None:
    if region_index >= len(op.regions):
        return None
    region = op.regions[region_index]
    if not region.blocks or not region.blocks[-1].operations:
        return None
    last = region.blocks[-1].operations[-1]
    return last if last.name in ("scf.yield", "scf.condition") else None


def _bare(name: str) -> str:
    return name[1:] if name.startswith("%") else name


def _axis(value: object) -> str:
    return {0: "x", 1: "y", 2: "z"}.get(value, "x") if isinstance(value, int) else "x"


class Tracer(Protocol):
    """What counter recognition, normalization and the simulator need from the analysis that
    drives them (`trace.SymbolicAnalysis` implements it): the parsed unit, its loops, its
    recognised counters and the caches they share."""

    ir: ParsedIR
    _normalized: dict[tuple, tuple[Expr, bool]]
    _next_states: dict[int, dict[tuple, Expr]]

    def loop(self, line: int) -> LoopInfo | None: ...

    def counter(self, loop: int, index: int) -> tuple[Counter, Expr | None] | None: ...

    def _counter_by_key(self, key: str) -> Counter | None: ...
