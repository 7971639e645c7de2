"""Trip counts and runtime conditions as functions of the kernel's inputs.

Why: whether a warp-specialized kernel hangs often depends on its launch: a split-K kernel
whose last split has no K iterations, a persistent kernel with fewer tiles than CTAs, a causal
mask that empties the first rows' loop, a runtime flag one partition tests and the other does
not. The IR computes every trip count itself (`ceildiv`, `min`, `select`, splits of K, tiles
per program); this module reads that computation as expressions over the kernel's integer
arguments, program ids and program counts, so `input_points` can ask which inputs make a loop
run 0, 1 or a ring-ragged number of times, or take either side of a condition.

The model (`InputModel`) holds, for every loop and `scf.if` that holds barrier operations (and
every barrier operation's predicate), the expression of its bounds or condition, and where it
sits (the enclosing loop or branch). `observe` evaluates it at one concrete point, walking only
these loops and branches: an outer persistent loop is stepped (its induction variable and
carried values computed concretely, up to a cap) so that inner loops whose bounds depend on the
tile see each tile's value. Integer semantics are the interpreter's own (`machine.arith_value`),
so a trip count here is the trip count the simulation will run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...ir.model import Block, Operation
from ..sim.machine import arith_value, int_width, wrap_int

_INT = re.compile(r"^i(\d+)$")
_AXES = {"x": 0, "y": 1, "z": 2}
MAX_NESTING = 64  # regions deeper than this are not modelled (no targets there, never a verdict)
MAX_STEPS = 8  # iterations of an enclosing loop stepped to see inner loops' entries


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
    divisibility: int = 1
    flag: bool = False  # an i1, or only ever compared: 0 is a launch value (a size never is)


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


# -- building ----------------------------------------------------------------------------------------
def build_model(function: Operation, barrier_ops: set[int], header: str = "",
                pred_at: dict[str, int] | None = None) -> InputModel:
    """Read `function` into expressions. `barrier_ops`: ids of the operations that act on a
    barrier; `header`: the function's written header (for `tt.divisibility` of arguments);
    `pred_at`: the predicate operand of each op kind whose predicate is a site (default
    `_PRED_AT`, the barrier operations')."""
    body = function.regions[0].blocks[0] if function.regions and function.regions[0].blocks else None
    divis = _divisibility(header)
    args: list[IntArg] = []
    env: dict[str, Node] = {}
    if body is not None:
        for i, a in enumerate(body.arguments):
            if a.type and _INT.match(a.type):
                name = a.name.lstrip("%")
                args.append(IntArg(i, name, a.type, divis.get(name, 1), flag=a.type == "i1"))
                env[a.name] = Node("arg", index=i, name=name, value=int_width(a.type))
    b = _Builder(barrier_ops, pred_at if pred_at is not None else _PRED_AT)
    if body is not None:
        b.block(body, _Scope(env), None, 0, 0)
    uses = b.arg_uses
    for a in args:
        kinds = uses.get(a.position, set())
        if kinds and kinds <= {"arith.cmpi", "arith.select", "scf.if"}:
            a.flag = True
    for s in b.sites:
        s.barrier = s.barrier or any(c.barrier for c in _descendants(s))
    blocks = _block_multiples([s for s in b.sites if s.kind in ("for", "while") and s.barrier])
    for a in args:
        if a.position in blocks and not a.flag:
            a.divisibility = _lcm(a.divisibility, blocks[a.position])
    return InputModel(function, args, b.roots, b.sites, b.pid_axes, b.nprog_axes,
                      _tile_starts([s for s in b.sites if s.kind in ("for", "while") and s.barrier]))


_FLOOR_DIVS = {"arith.divsi": lambda c: c, "arith.divui": lambda c: c,
               "arith.shrsi": lambda c: 1 << c, "arith.shrui": lambda c: 1 << c}


def _block_multiples(loops: list[Site]) -> dict[int, int]:
    """Arguments that every barrier loop's bounds use only floor-divided by a constant block
    (`N_CTX / 64`, `K >> 6`), by position. A kernel that sizes its loops as `N // BLOCK` (never
    the ceil-division `(N + BLOCK - 1) // BLOCK`, never N itself) drops a partial block: it is
    written for N a multiple of BLOCK (its host says so: `assert N_CTX % BLOCK == 0`), so a
    launch with a remainder, or with N below one block, is one the kernel does not take. Taking
    N as a multiple of the block keeps the simulated launches, and the input points, among those
    the kernel was written for. An argument some loop uses otherwise (ceil-divided, offset,
    compared) keeps its ragged launches: there the kernel does handle a tail, and a partition
    that rounds it the other way is a real hang."""
    blocks: dict[int, int] = {}
    other: set[int] = set()
    seen: set[int] = set()

    def floor_block(node: Node) -> tuple[int, int] | None:
        if node.kind != "op" or node.op is None or node.op.name not in _FLOOR_DIVS or len(node.args) != 2:
            return None
        x, c = node.args
        shift = node.op.name.startswith("arith.shr")
        if not (c.kind == "const" and isinstance(c.value, int) and (0 < c.value < 31 if shift else 1 < c.value <= 1 << 20)):
            return None
        block = _FLOOR_DIVS[node.op.name](c.value)
        if x.kind == "arg":
            return x.index, block
        # `(N - (pid + 1) * 128) / 64`: N cut into per-program tiles of 128, the rest in blocks of
        # 64: N is written for whole tiles too (a causal FA backward's off-diagonal loop).
        if x.kind == "op" and x.op is not None and x.op.name == "arith.subi" and len(x.args) == 2 \
                and isinstance(x.args[0], Node) and x.args[0].kind == "arg" \
                and any(m.kind == "pid" for m in _nodes(x.args[1])):
            tile = _constant_factor(x.args[1])
            if tile is not None:
                return x.args[0].index, _lcm(block, tile)
        return None

    def walk(node: Node) -> None:
        if node.kind == "arg":
            other.add(node.index)
            return
        if id(node) in seen:
            return
        seen.add(id(node))
        hit = floor_block(node)
        if hit is not None:
            blocks[hit[0]] = _lcm(blocks.get(hit[0], 1), hit[1])
            return
        for a in node.args:
            if isinstance(a, Node):
                walk(a)

    for site in loops:
        for n in (site.lb, site.ub, site.step, site.cond, *site.inits):
            walk(n)
    return {k: v for k, v in blocks.items() if k not in other}


def _tile_starts(loops: list[Site]) -> tuple[tuple[int, int, int], ...]:
    """`(arg, axis, C)` for every `arg - X` in a barrier loop's bounds where X is C times an
    expression of program id `axis` (`(pid_x + 1) * 128`): see `InputModel.tiles`."""
    out: set[tuple[int, int, int]] = set()
    seen: set[int] = set()
    stack = [n for site in loops for n in (site.lb, site.ub, site.step, site.cond, *site.inits) if isinstance(n, Node)]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if n.kind == "op" and n.op is not None and n.op.name == "arith.subi" and len(n.args) == 2 \
                and isinstance(n.args[0], Node) and n.args[0].kind == "arg":
            c = _constant_factor(n.args[1])
            axes = {m.index for m in _nodes(n.args[1]) if m.kind == "pid"}
            if c is not None and len(axes) == 1:
                out.add((n.args[0].index, axes.pop(), c))
        stack.extend(a for a in n.args if isinstance(a, Node))
    return tuple(sorted(out))


def _nodes(node: Node):
    stack, seen = [node], set()
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        yield n
        stack.extend(a for a in n.args if isinstance(a, Node))


def _constant_factor(node) -> int | None:
    """C when `node` is C times something (`x * C`, `(pid + 1) * C`), or the constant C itself."""
    if not isinstance(node, Node):
        return None
    if node.kind == "const" and isinstance(node.value, int) and node.value > 1:
        return node.value
    if node.kind == "op" and node.op is not None and node.op.name == "arith.muli" and len(node.args) == 2:
        for a in node.args:
            if isinstance(a, Node) and a.kind == "const" and isinstance(a.value, int) and a.value > 1:
                return a.value
    return None


def _lcm(a: int, b: int) -> int:
    from math import gcd
    return a * b // gcd(a, b)


def _descendants(site: Site):
    stack = list(site.children)
    while stack:
        s = stack.pop()
        yield s
        stack.extend(s.children)


def _divisibility(header: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for part in re.split(r"(?=%[\w.$-]+\s*:)", header):
        m = re.match(r"%([\w.$-]+)\s*:", part)
        d = re.search(r"tt\.divisibility\s*=\s*(\d+)", part)
        if m and d:
            out[m.group(1)] = int(d.group(1))
    return out


class _Scope:
    __slots__ = ("names", "parent")

    def __init__(self, names: dict[str, Node] | None = None, parent: "_Scope | None" = None):
        self.names, self.parent = names if names is not None else {}, parent

    def get(self, name: str) -> Node:
        s: _Scope | None = self
        while s is not None:
            n = s.names.get(name)
            if n is not None:
                return n
            s = s.parent
        return OPAQUE


_PRED_AT = {"ttng.wait_barrier": 2, "ttng.arrive_barrier": 1, "ttng.barrier_expect": 1,
            "ttng.async_tma_copy_global_to_local": 3, "ttng.tc_gen5_commit": 1}


class _Builder:
    def __init__(self, barrier_ops: set[int], pred_at: dict[str, int]):
        self.barrier_ops = barrier_ops
        self.pred_at = pred_at
        self.sites: list[Site] = []
        self.roots: list[Site] = []
        self.pid_axes: set[int] = set()
        self.nprog_axes: set[int] = set()
        self.arg_uses: dict[int, set[str]] = {}

    def _site(self, site: Site) -> Site:
        self.sites.append(site)
        (site.parent.children if site.parent is not None else self.roots).append(site)
        return site

    def block(self, block: Block, scope: _Scope, parent: Site | None, branch: int, depth: int) -> None:
        if depth > MAX_NESTING:
            return
        for op in block.operations:
            self.op(op, scope, parent, branch, depth)

    def op(self, op: Operation, scope: _Scope, parent: Site | None, branch: int, depth: int) -> None:
        name = op.name
        operands = [scope.get(n) for n in op.operands]
        for n in operands if name != "ttg.warp_specialize" else ():  # a capture is no use
            if n.kind == "arg":
                self.arg_uses.setdefault(n.index, set()).add(name)
        if id(op) in self.barrier_ops:
            if parent is not None:
                parent.barrier = True
            self._predicate(op, scope, parent, branch)
        if name == "arith.constant":
            v = arith_value(op, [])
            scope.names[op.results[0]] = Node("const", value=v) if isinstance(v, int) else OPAQUE
        elif name.startswith("arith.") and op.results:
            scope.names[op.results[0]] = (Node("op", op=op, args=tuple(operands))
                                          if operands and all(n is not OPAQUE for n in operands) else OPAQUE)
        elif name in ("tt.get_program_id", "tt.get_num_programs") and op.results:
            axis = next((_AXES[w] for w in list(op.keywords) + list(op.literals) if w in _AXES), 0)
            if name == "tt.get_program_id":
                self.pid_axes.add(axis)
            else:
                self.nprog_axes.add(axis)
            scope.names[op.results[0]] = Node("pid" if name == "tt.get_program_id" else "nprog", index=axis)
        elif name in ("llvm.intr.assume", "tt.assume") and operands:
            self._site(Site("assume", op, parent, branch, cond=operands[0]))
        elif name == "scf.for":
            self._for(op, scope, operands, parent, branch, depth)
        elif name == "scf.while":
            self._while(op, scope, operands, parent, branch, depth)
        elif name == "scf.if":
            self._if(op, scope, operands, parent, branch, depth)
        elif name == "ttg.warp_specialize":
            for region in op.regions:
                if not region.blocks:
                    continue
                if region.label == "default":
                    inner = _Scope(parent=scope)
                else:
                    inner = _Scope({a.name: operands[i] if i < len(operands) else OPAQUE
                                    for i, a in enumerate(region.blocks[0].arguments)})
                self.block(region.blocks[0], inner, parent, branch, depth + 1)
            for r in op.results:
                scope.names[r] = OPAQUE
        else:
            for r in op.results:
                scope.names[r] = OPAQUE

    def _predicate(self, op: Operation, scope: _Scope, parent: Site | None, branch: int) -> None:
        at = self.pred_at.get(op.name)
        pos = op.positional
        if at is None or at >= len(pos):
            return
        cond = scope.get(pos[at])
        if cond.kind in ("op", "arg", "choice"):
            self._site(Site("pred", op, parent, branch, cond=cond, barrier=True))

    def _for(self, op, scope, operands, parent, branch, depth):
        site = self._site(Site("for", op, parent, branch))
        if len(operands) >= 3:
            site.lb, site.ub, site.step = operands[:3]
            site.inits = list(operands[3:])
        body = op.regions[0].blocks[0] if op.regions and op.regions[0].blocks else None
        if body is not None:
            inner = _Scope(parent=scope)
            if body.arguments:
                site.iv = Node("iv", loop=site)
                inner.names[body.arguments[0].name] = site.iv
            for k, a in enumerate(body.arguments[1:]):
                c = Node("carried", loop=site, index=k)
                site.carried.append(c)
                inner.names[a.name] = c
            self.block(body, inner, site, 0, depth + 1)
            site.yields = _terminator(body, inner, "scf.yield")
        for r in op.results:
            scope.names[r] = OPAQUE

    def _while(self, op, scope, operands, parent, branch, depth):
        site = self._site(Site("while", op, parent, branch, inits=list(operands)))
        if len(op.regions) < 2 or not op.regions[0].blocks or not op.regions[1].blocks:
            return
        before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
        bscope = _Scope(parent=scope)
        for k, a in enumerate(before.arguments):
            c = Node("carried", loop=site, index=k)
            site.carried.append(c)
            bscope.names[a.name] = c
        self.block(before, bscope, site, 0, depth + 1)
        cond = _terminator(before, bscope, "scf.condition")
        if cond:
            site.cond, site.forwarded = cond[0], cond[1:]
        ascope = _Scope(parent=scope)
        for k, a in enumerate(after.arguments):
            c = Node("carried", loop=site, index=len(before.arguments) + k)
            site.after_args.append(c)
            ascope.names[a.name] = c
        self.block(after, ascope, site, 0, depth + 1)
        site.yields = _terminator(after, ascope, "scf.yield")
        for r in op.results:
            scope.names[r] = OPAQUE

    def _if(self, op, scope, operands, parent, branch, depth):
        cond = operands[0] if operands else OPAQUE
        site = self._site(Site("if", op, parent, branch, cond=cond))
        yields: list[list[Node]] = []
        for k, region in enumerate(op.regions[:2]):
            if not region.blocks:
                yields.append([])
                continue
            inner = _Scope(parent=scope)
            self.block(region.blocks[0], inner, site, k, depth + 1)
            yields.append(_terminator(region.blocks[0], inner, "scf.yield"))
        while len(yields) < 2:
            yields.append([])
        for i, r in enumerate(op.results):
            a = yields[0][i] if i < len(yields[0]) else OPAQUE
            b = yields[1][i] if i < len(yields[1]) else OPAQUE
            ok = cond is not OPAQUE and a is not OPAQUE and b is not OPAQUE
            scope.names[r] = Node("choice", args=(cond, a, b)) if ok else OPAQUE


def _terminator(block: Block, scope: _Scope, name: str) -> list[Node]:
    term = block.operations[-1] if block.operations else None
    if term is None or term.name != name:
        return []
    return [scope.get(n) for n in term.operands]


# -- evaluation --------------------------------------------------------------------------------------
class _Frame:
    __slots__ = ("values", "parent", "memo")

    def __init__(self, values: dict[int, int | None], parent: "_Frame | None"):
        self.values, self.parent, self.memo = values, parent, {}

    def lookup(self, node: Node):
        f: _Frame | None = self
        while f is not None:
            if id(node) in f.values:
                return f.values[id(node)]
            f = f.parent
        return None


def evaluate(node: Node, point: Point, frame: _Frame | None = None, memo: dict | None = None):
    """The value of `node` at `point` (None when it depends on something opaque). Iterative:
    a long chain of arithmetic never exhausts the Python stack. `memo` keeps the values that
    do not depend on any loop iteration across calls at the same point."""
    glob = memo if memo is not None else {}
    local = frame.memo if frame is not None else glob
    args = point.args_map if hasattr(point, "args_map") else dict(point.args)
    stack = [(node, False)]
    while stack:
        n, ready = stack.pop()
        key = id(n)
        memo_ = local if n.dep else glob
        if key in memo_:
            continue
        memo = memo_
        kind = n.kind
        if kind == "const":
            memo[key] = n.value
        elif kind == "arg":
            v = args.get(n.index)
            memo[key] = wrap_int(v, n.value) if v is not None else None
        elif kind == "pid":
            memo[key] = point.pids[n.index] if n.index < 3 else 0
        elif kind == "nprog":
            memo[key] = point.grid[n.index] if n.index < 3 else 1
        elif kind in ("iv", "carried"):
            memo[key] = frame.lookup(n) if frame is not None else None
        elif kind == "opaque":
            memo[key] = None
        elif not ready:
            stack.append((n, True))
            stack.extend((c, False) for c in n.args if id(c) not in (local if c.dep else glob))
        elif kind == "choice":
            c = _get(n.args[0], local, glob)
            memo[key] = None if c is None else _get(n.args[1] if c else n.args[2], local, glob)
        else:
            vals = [_get(c, local, glob) for c in n.args]
            memo[key] = None if any(v is None for v in vals) else arith_value(n.op, vals)
    return _get(node, local, glob)


def _get(n: Node, local: dict, glob: dict):
    return (local if n.dep else glob).get(id(n))


def observe(model: InputModel, point: Point, max_steps: int = MAX_STEPS) -> Observation:
    """Trip counts of every loop entry and sides of every condition at `point`."""
    obs = Observation({}, {})
    memo: dict = {}
    args = dict(point.args)
    for arg, axis, tile in model.tiles:
        n, pid = args.get(arg), (point.pids[axis] if axis < len(point.pids) else 0)
        if isinstance(n, int) and pid * tile >= n:
            obs.valid = False
            obs.why_invalid = (f"program {pid} along {'xyz'[axis]} would start its {tile}-wide tile at {pid * tile}, "
                               f"past the size {n}: no launch has that program")
    work: list[tuple[Site, _Frame | None]] = [(s, None) for s in reversed(model.roots)]
    budget = 1024  # site visits: a bound on the cost of one observation
    while work and budget > 0:
        site, frame = work.pop()
        budget -= 1
        if site.kind == "assume":
            if evaluate(site.cond, point, frame, memo) == 0:
                obs.valid, obs.why_invalid = False, f"the assumption at line {site.op.line} does not hold"
            continue
        if site.kind in ("if", "pred"):
            c = evaluate(site.cond, point, frame, memo)
            if c is None:
                continue
            side = 0 if c else 1
            obs.branches.setdefault(id(site), set()).add(side)
            work.extend((ch, frame) for ch in reversed(site.children) if ch.branch == side)
            continue
        frames = _iterations(site, point, frame, max_steps, obs, memo)
        for f in reversed(frames):
            work.extend((ch, f) for ch in reversed(site.children))
    return obs


def _iterations(site: Site, point: Point, frame: _Frame | None, cap: int, obs: Observation, memo: dict) -> list[_Frame]:
    """Step the loop at `site` once (one entry): record its trip count and return one frame
    per iteration stepped (at most `cap`), holding the induction variable and the carried
    values some bound or condition inside it reads (the others are never computed)."""
    need = _needed(site)
    ev = lambda n, f: evaluate(n, point, f, memo)  # noqa: E731
    carried = [ev(n, frame) if k in need else None for k, n in enumerate(site.inits)]
    frames: list[_Frame] = []
    trips: int | None
    if site.kind == "for":
        lb, ub, step = (ev(n, frame) for n in (site.lb, site.ub, site.step))
        if None in (lb, ub, step) or step <= 0:
            obs.trips.setdefault(id(site), []).append(None)
            return []
        trips = max(0, -(-(ub - lb) // step))
        for k in range(min(trips, cap) if site.children else 0):
            values = {id(site.iv): lb + k * step} if site.iv is not None else {}
            values.update({id(c): v for c, v in zip(site.carried, carried)})
            f = _Frame(values, frame)
            frames.append(f)
            if site.yields and len(site.yields) == len(carried):
                carried = [ev(n, f) if k in need else None for k, n in enumerate(site.yields)]
        obs.trips.setdefault(id(site), []).append(trips)
        return frames
    # scf.while: step until the condition is false (or unknown, or the cap)
    trips = 0
    while trips <= cap:
        f = _Frame({id(c): v for c, v in zip(site.carried, carried)}, frame)
        cond = ev(site.cond, f)
        if cond is None:
            trips = None
            break
        if not cond:
            break
        fwd = [ev(n, f) for n in site.forwarded]
        f.values.update({id(c): v for c, v in zip(site.after_args, fwd)})
        frames.append(f)
        trips += 1
        if not site.yields or len(site.yields) != len(carried):
            trips = None
            break
        carried = [ev(n, f) if k in need else None for k, n in enumerate(site.yields)]
    else:
        trips = None  # longer than the cap: unknown here
    obs.trips.setdefault(id(site), []).append(trips)
    return frames if site.children else []


def _needed(site: Site) -> set[int]:
    """Indices of the carried values of `site` that its own condition, or a bound or condition
    of a site inside it, reads (directly or through other carried values)."""
    if site.needed is not None:
        return site.needed
    roots = [site.cond, *site.forwarded]
    for d in _descendants(site):
        roots += [d.lb, d.ub, d.step, d.cond, *d.inits]
    need: set[int] = set()
    stack, seen = list(roots), set()
    while stack:
        n = stack.pop()
        if id(n) in seen or not n.dep:
            continue
        seen.add(id(n))
        if n.kind == "carried" and n.loop is site:
            if n.index not in need:
                need.add(n.index)
                if site.kind == "for" and n.index < len(site.yields):
                    stack.append(site.yields[n.index])
                elif site.kind == "while":
                    stack += list(site.yields) + list(site.forwarded)
        elif n.kind == "carried" or n.kind == "iv":
            continue  # another loop's: that loop steps it
        else:
            stack.extend(n.args)
    if site.kind == "while":
        need = set(range(len(site.carried)))  # a while loop's condition is stepped in full
    site.needed = need
    return need


# -- rendering ---------------------------------------------------------------------------------------
_BIN = {"addi": "+", "subi": "-", "muli": "*", "divsi": "/", "divui": "/", "remsi": "%", "remui": "%",
        "andi": "&", "ori": "|", "xori": "^", "shli": "<<", "shrsi": ">>", "shrui": ">>"}
_CMP = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">=", "ult": "<", "ule": "<=",
        "ugt": ">", "uge": ">="}


def render(node: Node, depth: int = 0) -> str:
    """A short formula for `node` (what a kernel engineer would write), cut at depth 8."""
    if depth > 8:
        return "…"
    k = node.kind
    if k == "const":
        return str(node.value)
    if k == "arg":
        return node.name
    if k == "pid":
        return f"pid_{'xyz'[node.index]}"
    if k == "nprog":
        return f"num_programs_{'xyz'[node.index]}"
    if k == "iv":
        return f"iv@{node.loop.op.line}"
    if k == "carried":
        return f"carried{node.index}@{node.loop.op.line}"
    if k == "choice":
        c, a, b = (render(x, depth + 1) for x in node.args)
        return f"({c} ? {a} : {b})"
    if k != "op":
        return "?"
    name = node.op.name[6:]
    args = [render(x, depth + 1) for x in node.args]
    if name == "divsi" and node.args[0].kind == "op" and node.args[0].op.name == "arith.addi" \
            and node.args[1].kind == "const" and node.args[0].args[1].kind == "const" \
            and node.args[0].args[1].value == node.args[1].value - 1:
        return f"cdiv({render(node.args[0].args[0], depth + 1)}, {node.args[1].value})"
    if name in _BIN and len(args) == 2:
        return f"({args[0]} {_BIN[name]} {args[1]})"
    if name == "cmpi" and len(args) == 2:
        pred = next((w for w in list(node.op.keywords) + list(node.op.literals) if w in _CMP), "eq")
        return f"({args[0]} {_CMP[pred]} {args[1]})"
    if name in ("minsi", "minui", "maxsi", "maxui"):
        return f"{name[:3]}({', '.join(args)})"
    if name in ("ceildivsi", "ceildivui"):
        return f"cdiv({', '.join(args)})"
    if name == "select" and len(args) == 3:
        return f"({args[0]} ? {args[1]} : {args[2]})"
    if name in ("extsi", "extui", "trunci", "index_cast", "index_castui") and args:
        return args[0]
    return f"{name}({', '.join(args)})"


def variables(node: Node) -> set[tuple[str, int]]:
    """The inputs `node` depends on: ("arg", position), ("pid", axis), ("nprog", axis), and
    through a loop's induction variable or carried values, what that loop's bounds depend on."""
    out: set[tuple[str, int]] = set()
    seen: set[int] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if n.kind == "arg":
            out.add(("arg", n.index))
        elif n.kind in ("pid", "nprog"):
            out.add((n.kind, n.index))
        elif n.kind in ("iv", "carried"):
            s = n.loop
            stack.extend([s.lb, s.ub, s.step, s.cond, *s.inits, *s.yields, *s.forwarded])
        else:
            stack.extend(n.args)
    return out


def site_variables(site: Site) -> set[tuple[str, int]]:
    """What decides whether and how often `site` runs: its own bounds or condition, and those of
    every loop and branch around it."""
    out: set[tuple[str, int]] = set()
    s: Site | None = site
    while s is not None:
        for n in (s.lb, s.ub, s.step, s.cond):
            out |= variables(n)
        s = s.parent
    return out


def render_trips(site: Site) -> str:
    """The trip count of an `scf.for` as written: `ub`, `ub - lb`, or `cdiv(ub - lb, step)`."""
    lb, ub = render(site.lb), render(site.ub)
    span = ub if site.lb.kind == "const" and site.lb.value == 0 else f"{ub} - {lb}"
    if site.step.kind == "const" and site.step.value == 1:
        return span
    return f"cdiv({span}, {render(site.step)})"
