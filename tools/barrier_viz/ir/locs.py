"""Source locations: resolve `loc(...)` text to the variable name it carries, if any.

Names come from `loc("name"(#loc))`, from `#locN` aliases defined before or after the module, and
from the callee of `callsite(callee at caller)` (the innermost name wins). A plain file
location (`loc("x.py":3:4)`) carries no name.
"""

from __future__ import annotations

import re

_NAME_LOC = re.compile(r'^"((?:[^"\\]|\\.)*)"\s*(\(|$)')
_FILE_LOC = re.compile(r'^"(?:[^"\\]|\\.)*"\s*:\s*\d+')
_ALIAS = re.compile(r"^#[\w$.-]+$")
_MAX_HOPS = 64


def strip_loc(text: str) -> str:
    """`loc(X)` -> `X` (whitespace stripped); other text unchanged."""
    t = text.strip()
    if t.startswith("loc(") and t.endswith(")"):
        return t[4:-1].strip()
    return t


def resolve_loc_name(text: str | None, aliases: dict[str, str]) -> str | None:
    """The variable name a location carries, following aliases and call sites."""
    if not text:
        return None
    current = strip_loc(text)
    for _ in range(_MAX_HOPS):
        if _ALIAS.match(current):
            target = aliases.get(current)
            if target is None:
                return None
            current = strip_loc(target)
            continue
        if current.startswith("callsite("):
            inner = current[len("callsite(") : -1] if current.endswith(")") else current[9:]
            callee = _split_at(inner)
            current = callee.strip()
            continue
        if current.startswith("fused"):
            m = re.search(r"\[(.*)\]", current, re.S)
            if not m:
                return None
            current = m.group(1).split(",")[0].strip()
            continue
        if _FILE_LOC.match(current):
            return None
        m = _NAME_LOC.match(current)
        if m:
            return m.group(1)
        return None
    return None


def _split_at(inner: str) -> str:
    """The callee part of `callee at caller`, respecting nesting."""
    depth = 0
    i = 0
    while i < len(inner):
        ch = inner[i]
        if ch == '"':
            j = i + 1
            while j < len(inner) and inner[j] != '"':
                j += 2 if inner[j] == "\\" else 1
            i = j + 1
            continue
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0 and inner.startswith(" at ", i):
            return inner[:i]
        i += 1
    return inner
