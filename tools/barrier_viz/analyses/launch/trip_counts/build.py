"""Building the model (`build_model`): walk the function once, read every loop's bounds, every
branch's condition and every barrier operation's predicate as expressions over the kernel's
arguments, program ids and program counts, and find the divisibility hints and the per-program
tiles a loop bound cuts an argument into.
"""

from __future__ import annotations

import re

from ....ir.model import Block, Operation
from ...sim.machine import arith_value, int_width
from .model import InputModel, IntArg, Node, OPAQUE, Site
from .text import render, source_name


_INT = re.compile(r"^i(\d+)$")
_AXES = {"x": 0, "y": 1, "z": 2}
MAX_NESTING = 64  # regions deeper than this are not modelled (no targets there, never a verdict)


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
                args.append(IntArg(i, name, a.type, divis.get(name, 1), flag=a.type == "i1", stated=divis.get(name, 1)))
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
    where: dict[int, tuple[int, str]] = {}
    blocks = _block_multiples([s for s in b.sites if s.kind in ("for", "while") and s.barrier], where)
    for a in args:
        if a.position in blocks and not a.flag:
            a.divisibility = _lcm(a.divisibility, blocks[a.position])
            a.block, a.block_at = blocks[a.position], where.get(a.position)
    return InputModel(function, args, b.roots, b.sites, b.pid_axes, b.nprog_axes,
                      _tile_starts([s for s in b.sites if s.kind in ("for", "while") and s.barrier]))


_FLOOR_DIVS = {"arith.divsi": lambda c: c, "arith.divui": lambda c: c,
               "arith.shrsi": lambda c: 1 << c, "arith.shrui": lambda c: 1 << c}


def _block_multiples(loops: list[Site], where: dict[int, tuple[int, str]] | None = None) -> dict[int, int]:
    """Arguments that every barrier loop's bounds use only floor-divided by a constant block
    (`N_CTX / 64`, `K >> 6`), by position. A kernel that sizes its loops as `N // BLOCK` (never
    the ceil-division `(N + BLOCK - 1) // BLOCK`, never N itself) drops a partial block: it is
    written for N a multiple of BLOCK (its host says so: `assert N_CTX % BLOCK == 0`), so a
    launch with a remainder, or with N below one block, is one the kernel does not take. Taking
    N as a multiple of the block keeps the simulated launches, and the input points, among those
    the kernel was written for. An argument some loop uses otherwise (ceil-divided, offset,
    compared) keeps its ragged launches: there the kernel does handle a tail, and a partition
    that rounds it the other way is a real hang. `where` gets, per argument, the first loop line
    and bound formula the block was read from (the reason `launch.contract` states)."""
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
            if where is not None and hit[0] not in where:
                where[hit[0]] = (line, render(node))
            return
        for a in node.args:
            if isinstance(a, Node):
                walk(a)

    line = 0
    for site in loops:
        line = site.op.line
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


def _opaque(op: Operation, index: int = 0) -> Node:
    """A value the model does not compute (a load, a loop's result, an op it does not read):
    evaluated as unknown, named by the IR's expression for it when printed (`text.render`)."""
    return Node("opaque", op=op, index=index)


def _results_opaque(op: Operation, scope: "_Scope") -> None:
    for i, r in enumerate(op.results):
        scope.names[r] = _opaque(op, i)


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
            scope.names[op.results[0]] = Node("const", value=v) if isinstance(v, int) else _opaque(op)
        elif name.startswith("arith.") and op.results:
            scope.names[op.results[0]] = (Node("op", op=op, args=tuple(operands))
                                          if operands and all(n.kind != "opaque" for n in operands) else _opaque(op))
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
            _results_opaque(op, scope)
        else:
            _results_opaque(op, scope)

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
                site.iv = Node("iv", loop=site, name=source_name(body.arguments[0]))
                inner.names[body.arguments[0].name] = site.iv
            for k, a in enumerate(body.arguments[1:]):
                c = Node("carried", loop=site, index=k, name=source_name(a))
                site.carried.append(c)
                inner.names[a.name] = c
            self.block(body, inner, site, 0, depth + 1)
            site.yields = _terminator(body, inner, "scf.yield")
        _results_opaque(op, scope)

    def _while(self, op, scope, operands, parent, branch, depth):
        site = self._site(Site("while", op, parent, branch, inits=list(operands)))
        if len(op.regions) < 2 or not op.regions[0].blocks or not op.regions[1].blocks:
            return
        before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
        bscope = _Scope(parent=scope)
        for k, a in enumerate(before.arguments):
            c = Node("carried", loop=site, index=k, name=source_name(a))
            site.carried.append(c)
            bscope.names[a.name] = c
        self.block(before, bscope, site, 0, depth + 1)
        cond = _terminator(before, bscope, "scf.condition")
        if cond:
            site.cond, site.forwarded = cond[0], cond[1:]
        ascope = _Scope(parent=scope)
        for k, a in enumerate(after.arguments):
            c = Node("carried", loop=site, index=len(before.arguments) + k, name=source_name(a))
            site.after_args.append(c)
            ascope.names[a.name] = c
        self.block(after, ascope, site, 0, depth + 1)
        site.yields = _terminator(after, ascope, "scf.yield")
        _results_opaque(op, scope)

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
            ok = cond.kind != "opaque" and a.kind != "opaque" and b.kind != "opaque"
            scope.names[r] = Node("choice", args=(cond, a, b)) if ok else _opaque(op, i)


def _terminator(block: Block, scope: _Scope, name: str) -> list[Node]:
    term = block.operations[-1] if block.operations else None
    if term is None or term.name != name:
        return []
    return [scope.get(n) for n in term.operands]
