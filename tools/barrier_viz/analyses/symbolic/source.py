"""Names for values the way the IR computes them: `offs_ptr[pid_x + 1] - offs_ptr[pid_x]`.

Why: a value loaded from memory (an offset, a group size, a tile schedule) or computed from one,
and a loop-carried value (a persistent program's `tile_id`), reach people through trip counts,
run conditions, limit reasons and witnesses. Internal names (`carried3@315`, an element key, a
model's `?`) tell a kernel engineer nothing; the expression the IR computes does. This module is
the one place that names such a value, and every printer asks it.

`source_text(name, at)` walks the use-def chain from the SSA value `name` used at `at`:

* a function argument is its SSA name without the `%` (the name `check --load` and the input
  points use), a partition's captured argument is the value the parent passes for it;
* `tt.load` of a pointer is `array[index]`: the pointer argument the `tt.addptr` chain starts
  from and the sum of its offsets;
* `arith` operations print as infix arithmetic, casts are left out, constants are their value,
  program ids and counts read `pid_x` / `num_programs_x` (as the input points name them);
* a loop's induction variable or carried value, a loop's or branch's result, and anything else
  is the name the IR gives it: its source location's name, else its SSA name without the `%`
  and without the numeric suffix MLIR adds to make names unique (`%tile_id_14` -> `tile_id`); an
  anonymous value (`%5`) is named by its op and line.

Text only, never a judgement: nothing here decides anything. Deterministic: the same IR gives the
same text. Chains deeper than `MAX_DEPTH` end in the name of the value where they were cut.
"""

from __future__ import annotations

import re

from ...ir.model import BlockArgument, Operation

MAX_DEPTH = 8

_INFIX = {"addi": "+", "subi": "-", "muli": "*", "divsi": "/", "divui": "/", "remsi": "%", "remui": "%",
          "andi": "&", "ori": "|", "xori": "^", "shli": "<<", "shrsi": ">>", "shrui": ">>"}
_CMP = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">=", "ult": "<", "ule": "<=",
        "ugt": ">", "uge": ">="}
_CALLS = {"minsi": "min", "minui": "min", "maxsi": "max", "maxui": "max", "ceildivsi": "cdiv", "ceildivui": "cdiv"}
_CASTS = frozenset({"extsi", "extui", "trunci", "index_cast", "index_castui", "bitcast"})
_SUFFIX = re.compile(r"^(.*[A-Za-z].*?)_\d+$")
_FUNCS = ("tt.func", "func.func", "llvm.func")


def source_text(name: str, at: Operation, depth: int = 0) -> str:
    """The expression the IR computes for the value `name` as used by `at`."""
    found = _definition(name, at)
    if found is None:
        return _plain(name)
    if isinstance(found, BlockArgument):
        return argument_text(found, depth)
    op, index = found
    return op_text(op, index, depth)


def argument_text(arg: BlockArgument, depth: int = 0) -> str:
    """A block argument: a function argument or a loop variable by its name; a partition's
    captured argument as the value its parent passes."""
    block = arg.block
    owner = block.region.parent if block is not None and block.region is not None else None
    if owner is not None and owner.name == "ttg.warp_specialize" and arg.index < len(owner.operands) \
            and depth < MAX_DEPTH:
        return source_text(owner.operands[arg.index], owner, depth + 1)
    if owner is None or owner.name in _FUNCS:
        return arg.name.lstrip("%")  # as written: the name `check --load NAME=[...]` takes
    return arg.loc_name if _identifier(arg.loc_name) else _plain(arg.name)


def op_text(op: Operation, index: int = 0, depth: int = 0) -> str:
    """Result `index` of `op` as an expression of what it reads."""
    name = op.name
    if depth >= MAX_DEPTH:
        return _named(op, index)
    if name == "arith.constant":
        return _constant(op)
    if name in ("tt.get_program_id", "tt.get_num_programs"):
        axis = next((w for w in (*op.keywords, *op.literals) if w in ("x", "y", "z")), "x")
        return f"{'pid' if name == 'tt.get_program_id' else 'num_programs'}_{axis}"
    if name == "tt.load" and op.operands:
        base, offset = _pointer(op.operands[0], op, depth + 1)
        return f"{base}[{offset}]"
    if name == "tt.addptr" and len(op.operands) >= 2:
        base, offset = _pointer(op.results[index], op, depth, defined_here=True)
        return f"&{base}[{offset}]"
    short = name[6:] if name.startswith("arith.") else ""
    args = [source_text(o, op, depth + 1) for o in op.operands]
    if short in _CASTS and args:
        return args[0]
    if short in _INFIX and len(args) == 2:
        if short == "addi" and args[1].startswith("-") and args[1][1:].isdigit():
            return f"{parenthesized(args[0])} - {args[1][1:]}"
        return f"{parenthesized(args[0])} {_INFIX[short]} {parenthesized(args[1])}"
    if short == "cmpi" and len(args) == 2:
        pred = next((w for w in (*op.keywords, *op.literals) if w in _CMP), "eq")
        return f"{parenthesized(args[0])} {_CMP[pred]} {parenthesized(args[1])}"
    if short == "select" and len(args) == 3:
        return f"{parenthesized(args[0])} ? {parenthesized(args[1])} : {parenthesized(args[2])}"
    if short in _CALLS and len(args) == 2:
        return f"{_CALLS[short]}({args[0]}, {args[1]})"
    return _named(op, index)


def _pointer(name: str, at: Operation, depth: int, defined_here: bool = False) -> tuple[str, str]:
    """(array, index) of a pointer: the argument a `tt.addptr` chain starts from, and the sum of
    the offsets added on the way."""
    offsets: list[str] = []
    current, where = name, at
    for _ in range(MAX_DEPTH):
        found = _definition(current, where) if not defined_here else (at, 0)
        defined_here = False
        if isinstance(found, tuple) and found[0].name == "tt.addptr" and len(found[0].operands) >= 2:
            op = found[0]
            offsets.append(source_text(op.operands[1], op, depth + 1))
            current, where = op.operands[0], op
            continue
        base = argument_text(found, depth) if isinstance(found, BlockArgument) \
            else (op_text(found[0], found[1], depth) if found is not None else _plain(current))
        break
    else:
        base = _plain(current)
    terms = [t for t in reversed(offsets) if t != "0"]
    return base, " + ".join(parenthesized(t) if len(terms) > 1 else t for t in terms) if terms else "0"


def _definition(name: str, at: Operation) -> BlockArgument | tuple[Operation, int] | None:
    """The definition of `name` visible at `at`: a block argument or (op, result index), found
    in `at`'s block and the blocks around it (MLIR's region scoping; a partition region sees
    only its own values and captures, which `argument_text` follows)."""
    op: Operation | None = at
    while op is not None:
        block = op.block
        if block is None:
            return None
        for a in block.arguments:
            if a.name == name:
                return a
        for other in block.operations:
            if name in other.results:
                return other, other.results.index(name)
            if other is op:
                break
        region = block.region
        parent = region.parent if region is not None else None
        if parent is None or parent.name in _FUNCS:
            return None
        if parent.name == "ttg.warp_specialize" and region.label != "default":
            return None  # isolated from above: captures are the region's arguments
        op = parent
    return None


def _constant(op: Operation) -> str:
    lits = [t for t in op.literals if t != ":"]
    text = "".join(lits[:2]) if lits[:1] == ["-"] else (lits[0] if lits else "")
    if text in ("true", "false"):
        return text
    m = re.fullmatch(r"\s*(-?\d+)\s*(?::\s*\w+)?\s*", text or op.attributes.get("value", ""))
    return m.group(1) if m else _named(op, 0)


def _named(op: Operation, index: int) -> str:
    """A value by the name the IR gives it (see the module docstring)."""
    if _identifier(op.loc_name):
        return op.loc_name  # type: ignore[return-value]
    result = op.results[index] if index < len(op.results) else ""
    text = _plain(result)
    if text and not text.replace("#", "").isdigit():
        return text
    return f"{op.name.split('.')[-1]}@line {op.line}"


def _plain(name: str) -> str:
    """An SSA name without `%`, a result-group index (`#1`) or MLIR's uniquing suffix."""
    bare = name.lstrip("%").split("#")[0]
    m = _SUFFIX.match(bare)
    return m.group(1) if m else bare


def _identifier(text: str | None) -> bool:
    return bool(text) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", text) is not None  # type: ignore[arg-type]


def parenthesized(text: str) -> str:
    """Parenthesize a compound operand (one with a space that is not a single bracketed term)."""
    return f"({text})" if " " in text and not _one_term(text) else text


def _one_term(text: str) -> bool:
    """`a[...]`, `f(...)` or `(...)`: the first bracket, opened before any space, closes at the end."""
    first = min((i for i in (text.find("["), text.find("(")) if i >= 0), default=-1)
    if first < 0 or " " in text[:first] or text[-1] not in "])":
        return False
    depth = 0
    for i, c in enumerate(text[first:], first):
        depth += c in "[("
        depth -= c in "])"
        if depth == 0:
            return i == len(text) - 1
    return False


def loop_text(op: Operation) -> str:
    """What decides a loop's trip count, as the IR computes it: `for t from pid_x to
    ntiles_ptr[0] step num_programs_x`, or `while <condition>`."""
    if op.name == "scf.for" and len(op.operands) >= 3:
        lb, ub, step = (source_text(o, op) for o in op.operands[:3])
        iv = op.regions[0].blocks[0].arguments[:1] if op.regions and op.regions[0].blocks else []
        return f"for {argument_text(iv[0]) + ' ' if iv else ''}from {lb} to {ub} step {step}"
    cond = next((o for o in op.walk() if o.name == "scf.condition" and o.operands), None)
    return f"while {source_text(cond.operands[0], cond)}" if cond is not None else op.name
