"""The model in words: an expression as the formula a kernel engineer would write (`render`),
the inputs it reads (`variables`, `site_variables`) and a loop's trip count (`render_trips`).
"""

from __future__ import annotations

from ...symbolic.source import argument_text, op_text, parenthesized
from .model import Node, Site


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
        arg = _loop_argument(node)
        return argument_text(arg) if arg is not None else f"a value carried by the loop at line {node.loop.op.line}"
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


def _loop_argument(node: Node):
    """The block argument of the IR an `iv` / `carried` node stands for (its name is the IR's)."""
    op = node.loop.op
    blocks = [r.blocks[0] for r in op.regions if r.blocks]
    if not blocks:
        return None
    if node.kind == "iv":
        return blocks[0].arguments[0] if blocks[0].arguments else None
    if op.name == "scf.for":
        args = blocks[0].arguments[1:]
        return args[node.index] if node.index < len(args) else None
    before = blocks[0].arguments
    after = blocks[1].arguments if len(blocks) > 1 else []
    args = list(before) + list(after)
    return args[node.index] if node.index < len(args) else None


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
