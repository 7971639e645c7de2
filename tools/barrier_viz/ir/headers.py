"""Reading an operation's header for the structurer of `parse`: result names (`%r:2` is two
results), block labels with their arguments, and the result and operand types after the
header's colon (functional `(ins) -> outs` or trailing `: type`).
"""

from __future__ import annotations

import re

from .attrs import split_top_level
from .lexer import Atom
from .model import BlockArgument, Operation


_RESULT = re.compile(r"^(%[^:#\s]+)(?::(\d+))?$")
_BLOCK_LABEL = re.compile(r"^(\^[\w$.-]+)\s*(?:\((.*)\))?\s*:?\s*$", re.S)


def _expand_result(text: str) -> list[str]:
    m = _RESULT.match(text)
    if not m:
        return [text]
    name, count = m.group(1), m.group(2)
    if count is None:
        return [name]
    return [f"{name}#{k}" for k in range(int(count))]


_PAIRS = {"<": ">", "{": "}", "[": "]", "(": ")"}


def _unclosed_bracket(text: str) -> int | None:
    """Offset of the first bracket of an alias definition left open (strings and `->` skipped),
    or None when every bracket closes."""
    stack: list[int] = []
    k, n = 0, len(text)
    while k < n:
        c = text[k]
        if c == '"':
            k += 1
            while k < n and text[k] != '"':
                k += 2 if text[k] == "\\" else 1
        elif c == "-" and text.startswith("->", k):
            k += 1
        elif c in _PAIRS:
            stack.append(k)
        elif c in ">}])" and stack and _PAIRS[text[stack[-1]]] == c:
            stack.pop()
        k += 1
    return stack[0] if stack else None


def _parse_block_label(atom: Atom) -> tuple[str, list[BlockArgument]]:
    text = atom[1]
    m = _BLOCK_LABEL.match(text.strip())
    if not m:
        return text.split("(")[0].strip().rstrip(":"), []
    label, body = m.group(1), m.group(2) or ""
    args: list[BlockArgument] = []
    for part in split_top_level(body):
        name, _, rest = part.partition(":")
        rest = rest.strip()
        loc = None
        k = rest.find(" loc(")
        if k >= 0:
            loc = rest[k + 1 :].strip()
            rest = rest[:k].strip()
        args.append(BlockArgument(name.strip(), rest or None, atom[2], atom[3], loc_name=loc))
    return label, args


def _assign_types(op: Operation, header: list[tuple[str, str, int]]) -> None:
    """Types written in the header, and which of them are the result types."""
    types = [t for k, t, _ in header if k == "T"]
    op.types = types
    nres = len(op.results)
    arrow = -1
    for idx, (k, _, d) in enumerate(header):
        if k == "->" and d == 0:
            arrow = idx
    if arrow >= 0:
        after: list[str] = []
        for k, t, d in header[arrow + 1 :]:
            if k == ":" and d == 0:
                break
            if k == "T":
                after.append(t)
        op.result_types = after
    elif nres:
        colon = next((idx for idx, (k, _, d) in enumerate(header) if k == ":" and d == 0), -1)
        after = [t for k, t, _ in header[colon + 1 :] if k == "T"] if colon >= 0 else []
        if op.name in ("arith.cmpi", "arith.cmpf"):
            op.result_types = ["i1"] * nres
        elif len(after) >= nres:
            op.result_types = after[-nres:] if len(after) != nres else after
        else:
            op.result_types = after
    # Region arguments introduced by `%x = %init` carry the loop's result types.
    if op.name in ("scf.for", "scf.while") and op.regions:
        args = op.regions[0].arguments
        if op.name == "scf.for" and args:
            colon_types = _types_after_last_colon(header)
            args[0].type = args[0].type or (colon_types[0] if colon_types else "index")
            for arg, rtype in zip(args[1:], op.result_types):
                arg.type = arg.type or rtype
        elif op.name == "scf.while":
            first_types = _types_after_first_colon(header)
            for arg, t in zip(args, first_types):
                arg.type = arg.type or t


def _types_after_last_colon(header: list[tuple[str, str, int]]) -> list[str]:
    last = -1
    for idx, (k, _, d) in enumerate(header):
        if k == ":" and d == 0:
            last = idx
    if last < 0:
        return []
    return [t for k, t, _ in header[last + 1 :] if k == "T"]


def _types_after_first_colon(header: list[tuple[str, str, int]]) -> list[str]:
    colon = next((idx for idx, (k, _, d) in enumerate(header) if k == ":" and d == 0), -1)
    if colon < 0:
        return []
    out: list[str] = []
    for k, t, d in header[colon + 1 :]:
        if k == "->" and d == 0:
            break
        if k == "T":
            out.append(t)
    return out
