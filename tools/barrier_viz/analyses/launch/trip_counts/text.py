"""The model in words: an expression as the formula a kernel engineer would write (`render`),
the inputs it reads (`variables`, `site_variables`) and a loop's trip count (`render_trips`).
"""

from __future__ import annotations

import re

from ....ir.model import BlockArgument
from ...symbolic.source import argument_text, op_text, parenthesized
from .model import Node, Site

_SSA_SUFFIX = re.compile(r"_\d+$")
_ANONYMOUS = re.compile(r"^(arg|iv|v)\d*$")


def source_name(arg: BlockArgument) -> str:
    """A loop's induction variable or carried value by the name the IR gives it
    (`analyses.symbolic.source.argument_text`: its `loc("tile_id")`, else its SSA name without `%`
    and MLIR's suffix). Where that short name says nothing (a bare number, an anonymous `%arg3`)
    or is shared by several arguments of the loop (the printer often names every argument of a
    loop after its result: `%acc_168` for the induction variable of a loop whose results are
    `%acc_164`), the full SSA name as printed, which names exactly one value a reader can find."""
    name = argument_text(arg)
    siblings = arg.block.arguments if arg.block is not None else []
    if not name.strip("_") or name[0].isdigit() or _ANONYMOUS.match(name) or not name.isidentifier() \
            or sum(1 for a in siblings if _base(a.name) == _base(arg.name)) > 1:
        return arg.name if arg.name.startswith("%") else f"%{arg.name}"
    return name


def _base(ssa: str) -> str:
    return _SSA_SUFFIX.sub("", ssa.lstrip("%"))


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
    if k in ("iv", "carried"):
        if node.name:
            return node.name
        line = node.loop.op.line
        return f"the induction variable of the loop at line {line}" if k == "iv" else f"a value carried by the loop at line {line}"
    if k == "opaque":
        return parenthesized(op_text(node.op, node.index)) if node.op is not None else "?"
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
