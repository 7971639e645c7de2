"""The trip-count model: one integer value of the IR as an expression (`Node`), a loop, branch
or barrier predicate (`Site`), the kernel's integer arguments (`IntArg`), the whole model
(`InputModel`), one concrete launch (`Point`) and what evaluating the model there saw
(`Observation`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ....ir.model import Operation


class Node:
    """One integer value of the IR as an expression. `kind`: const, arg, pid, nprog, opaque,
    op (an arith op over `args`), iv / carried (a loop's induction variable or iter_arg
    `index`), choice (an `scf.if` result: `args` = cond, then, else)."""

    __slots__ = ("kind", "op", "args", "value", "loop", "index", "name", "dep")

    def __init__(self, kind: str, op: Operation | None = None, args: tuple = (), value=None, loop=None,
                 index: int = 0, name: str = ""):
        self.kind, self.op, self.args, self.value, self.loop, self.index, self.name = kind, op, args, value, loop, index, name
        # depends on a loop's iteration (an induction variable or carried value): evaluated per
        # iteration; everything else once per launch
        self.dep = kind in ("iv", "carried") or any(a.dep for a in args)


OPAQUE = Node("opaque")


@dataclass(eq=False)
class Site:
    """A loop, a branch or a barrier predicate in the model. `parent` is the enclosing loop or
    `scf.if` (with `branch`, the side this site sits in), None at the top of a partition."""

    kind: str  # "for" | "while" | "if" | "pred" | "assume"
    op: Operation
    parent: "Site | None"
    branch: int = 0
    lb: Node = OPAQUE
    ub: Node = OPAQUE
    step: Node = OPAQUE
    cond: Node = OPAQUE  # if / pred / assume; while: the scf.condition operand
    inits: list[Node] = field(default_factory=list)
    yields: list[Node] = field(default_factory=list)
    forwarded: list[Node] = field(default_factory=list)  # while: scf.condition's forwarded values
    iv: Node | None = None
    carried: list[Node] = field(default_factory=list)  # for: iter_args; while: before-block args
    after_args: list[Node] = field(default_factory=list)  # while: after-block args
    children: list["Site"] = field(default_factory=list)
    barrier: bool = False  # holds (or is) a barrier operation
    needed: set[int] | None = None  # carried values that some bound or condition inside reads


@dataclass
class IntArg:
    position: int
    name: str
    type: str
    divisibility: int = 1  # what the launches the tool makes are multiples of: the IR's and the inferred block
    flag: bool = False  # an i1, or only ever compared: 0 is a launch value (a size never is)
    stated: int = 1  # the IR's own `tt.divisibility` (a fact: another value is another compilation)
    block: int = 1  # the block the tool infers from `N // BLOCK` loop bounds (an assumption: launch.contract)
    block_at: tuple[int, str] | None = None  # (loop line, bound formula) that inference rests on


@dataclass
class InputModel:
    function: Operation
    args: list[IntArg]
    roots: list[Site]
    sites: list[Site]
    pid_axes: set[int]
    nprog_axes: set[int]
    # (argument position, program-id axis, tile size C): a loop bound `N - (pid + k) * C` cuts N
    # into per-program tiles, so a program whose tile starts at or past N (pid * C >= N) has no
    # work: hosts launch cdiv(N, C) programs. Such a launch is not one the kernel is given.
    tiles: tuple[tuple[int, int, int], ...] = ()

    def loops(self) -> list[Site]:
        return [s for s in self.sites if s.kind in ("for", "while") and s.barrier]

    def conditions(self) -> list[Site]:
        return [s for s in self.sites if s.kind in ("if", "pred") and s.barrier]


@dataclass(frozen=True)
class Point:
    """A concrete launch: integer argument values by position, program ids and program counts
    per axis (x, y, z)."""

    args: tuple[tuple[int, int], ...]
    pids: tuple[int, int, int] = (0, 0, 0)
    grid: tuple[int, int, int] = (1, 1, 1)


@dataclass
class Observation:
    trips: dict[int, list[int | None]]  # id(loop site) -> trip count of each entry seen
    branches: dict[int, set[int]]  # id(if/pred site) -> sides taken (0 then/true, 1 else/false)
    valid: bool = True  # every assumption the IR states holds
    why_invalid: str = ""
