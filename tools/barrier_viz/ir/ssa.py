"""SSA sanity of one unit: duplicate definitions, uses before their definition, undefined values.

Why: every fact and verdict resolves an operand to the one operation or block argument that
defines it. Invalid IR breaks that silently: with `%bar` defined twice the second definition is
never seen, a use before its definition or of a name defined nowhere resolves to nothing, and
`check` then reports a deadlock or race that has nothing to do with the kernel. MLIR's own
parser rejects all three; we diagnose them (as warnings, errors with `--strict`), and
`tainted_lines` tells the verdict layer which operations depend on such a value so that no
verdict is based on one (they become `limit.unresolved_value` notes).

Scoping follows MLIR:
* names live in the scope of the nearest region that is isolated from above: a function, a
  module, and each partition region of `ttg.warp_specialize` (partitions capture their values
  explicitly and reuse names freely); other regions (loop bodies, `default`, `scf.if`) see the
  values of the regions enclosing them;
* an operation's results are visible after it, not inside its own regions;
* a block argument may reuse a name from an enclosing region (it shadows it: hand-written lit
  tests name combiner arguments `%arg0` inside functions whose argument is `%arg0`);
* a use before a definition is only reported when both are in the same block: across blocks
  of a CFG region, dominance, not text order, decides.

The walk is iterative (IR nested 10,000 regions deep is fine).
"""

from __future__ import annotations

from dataclasses import dataclass

from .model import Block, Diagnostic, Operation, ParsedIR, Region

_ISOLATED_OPS = frozenset({"builtin.module", "tt.func", "func.func", "llvm.func", "gpu.module", "gpu.func",
                           "llvm.mlir.global", "ttg.warp_specialize.partitions"})


@dataclass(frozen=True, slots=True)
class SsaProblem:
    kind: str  # "duplicate" | "use_before_def" | "undefined"
    name: str
    line: int
    column: int
    op: Operation
    message: str

    def diagnostic(self) -> Diagnostic:
        return Diagnostic("warning", self.message, self.line, self.column)


def isolated(region: Region) -> bool:
    """Does `region` start a fresh name scope (IsolatedFromAbove)?"""
    parent = region.parent
    if parent is None:
        return True
    if parent.name in _ISOLATED_OPS:
        return True
    # `ttg.warp_specialize`'s `default` region sees the enclosing values; its partition regions
    # (written `partitionN(%args) num_warps(K) {`) are isolated: their values come in as arguments.
    return parent.name == "ttg.warp_specialize" and region.index > 0


class _Frame:
    __slots__ = ("region", "isolated", "names", "pending")

    def __init__(self, region: Region | None, is_isolated: bool):
        self.region = region
        self.isolated = is_isolated
        # name -> (kind, line, column, block, order): "arg" or "result"; order = position of the
        # defining op among its block's ops (for use-before-def within one block)
        self.names: dict[str, tuple[str, int, int, Block | None, int]] = {}
        # uses not resolved when seen: (name, op, line, column, block of the use in this region, order)
        self.pending: list[tuple[str, Operation, int, int, Block | None, int]] = []


def ssa_problems(ir: ParsedIR) -> list[SsaProblem]:
    """Every duplicate definition, same-block use before definition and undefined value of
    `ir`, in written order."""
    problems: list[SsaProblem] = []
    frames: list[_Frame] = [_Frame(None, True)]

    def lookup(name: str) -> bool:
        for frame in reversed(frames):
            if name in frame.names:
                return True
            if frame.isolated:
                return False
        return False

    def define(frame: _Frame, name: str, kind: str, line: int, column: int, block, order: int, op: Operation) -> None:
        if kind == "result":
            for f in reversed(frames):
                prior = f.names.get(name)
                if prior is not None and (f is frame or prior[0] == "result"):
                    problems.append(SsaProblem(
                        "duplicate", name, line, column, op,
                        f"{name} is defined twice (first at line {prior[1]}); uses resolve to the first definition"))
                    return
                if f.isolated:
                    break
        elif name in frame.names:
            prior = frame.names[name]
            problems.append(SsaProblem("duplicate", name, line, column, op,
                                       f"{name} is defined twice (first at line {prior[1]}); uses resolve to the first definition"))
            return
        frame.names[name] = (kind, line, column, block, order)

    def close(frame: _Frame) -> None:
        """At the end of a region: pending uses defined later in it are uses before definition;
        the others wait for an enclosing region, or are undefined at an isolation boundary."""
        outer = frames[-1] if frames else None
        for name, op, line, column, block, order in frame.pending:
            found = frame.names.get(name)
            if found is not None:
                kind, dline, _, dblock, dorder = found
                if kind == "result" and dblock is block and block is not None and dorder > order:
                    problems.append(SsaProblem("use_before_def", name, line, column, op,
                                               f"{name} is used before its definition at line {dline}"))
                continue  # defined in another block of this region: a CFG, where dominance decides
            if frame.isolated or outer is None:
                problems.append(SsaProblem("undefined", name, line, column, op, f"use of undefined value {name}"))
            else:
                # Seen from the enclosing region, the use sits at the op that owns this region.
                owner = frame.region.parent if frame.region is not None else None
                oblock = owner.block if owner is not None else None
                oorder = _order(owner) if owner is not None else 0
                outer.pending.append((name, op, line, column, oblock, oorder))

    # Events: ("op", op, order) visits an operation's operands and enters its regions;
    # ("results", op, order) defines its results after its regions; ("close", frame) ends a region.
    stack: list[tuple] = []
    for i, top in reversed(list(enumerate(ir.operations))):
        stack.append(("results", top, i))
        stack.append(("op", top, i))
    while stack:
        event = stack.pop()
        tag = event[0]
        if tag == "close":
            frame = frames.pop()
            close(frame)
            continue
        if tag == "enter":
            region = event[1]
            new = _Frame(region, isolated(region))
            frames.append(new)
            for block in region.blocks:
                for arg in block.arguments:
                    define(new, arg.name, "arg", arg.line, arg.column, block, -1, region.parent)
            continue
        op, order = event[1], event[2]
        frame = frames[-1]
        if tag == "results":
            for name in op.results:
                define(frame, name, "result", op.line, op.column, op.block, order, op)
            continue
        positions = op.operand_positions if len(op.operand_positions) == len(op.operands) else None
        for k, name in enumerate(op.operands):
            if not name.startswith("%"):
                continue
            if not lookup(name):
                line, column = positions[k] if positions else (op.line, op.column)
                frame.pending.append((name, op, line, column, op.block, order))
        # Regions in written order, each: enter, its operations, close (pushed in reverse).
        for region in reversed(op.regions):
            stack.append(("close",))
            events: list[tuple] = []
            for block in region.blocks:
                for j, inner in enumerate(block.operations):
                    events.append(("op", inner, j))
                    events.append(("results", inner, j))
            stack.extend(reversed(events))
            stack.append(("enter", region))
    while len(frames) > 1:
        close(frames.pop())
    close(frames.pop())
    problems.sort(key=lambda p: (p.line, p.column))
    return problems


def _order(op: Operation) -> int:
    block = op.block
    if block is None:
        return 0
    for i, o in enumerate(block.operations):
        if o is op:
            return i
    return 0


def tainted_lines(ir: ParsedIR, problems: list[SsaProblem]) -> set[int]:
    """Lines of the operations whose operands depend on a value with an SSA problem: the users
    of such a value, the results of those users, and onwards through region arguments (a loop's
    iter_args, a partition's captures) and yields. Conservative: a use of a name with a problem
    anywhere in its scope counts, whichever definition it would have resolved to."""
    if not problems:
        return set()
    bad_names = {p.name for p in problems}
    bad_ops = {id(p.op) for p in problems}
    ops = list(ir.walk())
    changed = True
    passes = 0
    while changed and passes < 8:
        changed = False
        passes += 1
        for op in ops:
            hit = id(op) in bad_ops or any(v in bad_names for v in op.operands)
            if not hit:
                continue
            if id(op) not in bad_ops:
                bad_ops.add(id(op))
                changed = True
            new = set(op.results)
            new.update(_region_args_fed_by(op, bad_names))
            if op.name == "scf.yield" or op.name.endswith(".yield"):
                parent = op.parent_op
                if parent is not None:
                    new.update(parent.results)
                    for region in parent.regions:
                        for block in region.blocks:
                            new.update(a.name for a in block.arguments)
            if not new <= bad_names:
                bad_names |= new
                changed = True
    return {op.line for op in ops if id(op) in bad_ops}


def _region_args_fed_by(op: Operation, bad: set[str]) -> set[str]:
    """Names of `op`'s region arguments that receive a value in `bad`. Where the binding is
    known by position (a partition's captures are the op's operands; `scf.for`'s iter_args are
    its operands after lb, ub, step) only those; otherwise every region argument."""
    if op.name == "ttg.warp_specialize":
        idx = {k for k, v in enumerate(op.operands) if v in bad}
        return {r.arguments[k].name for r in op.regions[1:] for k in idx if k < len(r.arguments)}
    if op.name == "scf.for" and op.regions and len(op.operands) >= 3:
        args = op.regions[0].arguments
        out = {args[0].name} if args and any(v in bad for v in op.operands[:3]) else set()
        out |= {args[k - 2].name for k, v in enumerate(op.operands) if k >= 3 and v in bad and k - 2 < len(args)}
        return out
    return {a.name for r in op.regions for b in r.blocks for a in b.arguments}
