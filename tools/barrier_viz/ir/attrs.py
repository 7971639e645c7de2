"""Attribute text: split dictionaries into entries and turn common values into Python values.

Only the shapes the analyses read are decoded (integers with their type suffix, booleans,
strings, `array<i32: ...>`, `[...]` lists and nested `{...}` dictionaries such as
`constraints = {WSBarrier = {...}}`). Anything else stays the raw text it was written as, so
unknown attributes pass through untouched.
"""

from __future__ import annotations

import re
from typing import Any

_OPEN = {"(": ")", "[": "]", "{": "}", "<": ">"}
_CLOSE = {")", "]", "}", ">"}
_INT = re.compile(r"^-?(0x[0-9a-fA-F]+|\d+)(\s*:\s*[a-z]\w*)?$")
_FLOAT = re.compile(r"^-?\d+\.\d*([eE][+-]?\d+)?(\s*:\s*[a-z]\w*)?$")
_ARRAY = re.compile(r"^array<\s*[a-z]\w*\s*(:\s*(?P<body>.*))?>$", re.S)
_MAX_DEPTH = 64


_SPLIT_TOKEN = re.compile(r'->|["()\[\]{}<>]|,')


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """Split `text` at `sep` characters that are not nested in brackets or inside strings.

    `->` is not a closing angle bracket, so function types inside attributes split correctly.
    The scan jumps from one bracket, quote or separator to the next (a regex does the walking),
    because every attribute dictionary of a unit comes through here.
    """
    if sep != ",":
        return _split_top_level_slow(text, sep)
    parts: list[str] = []
    depth = 0
    start = 0
    pos = 0
    search = _SPLIT_TOKEN.search
    while True:
        m = search(text, pos)
        if m is None:
            break
        tok = m.group()
        pos = m.end()
        if tok == '"':
            pos = _skip_string(text, m.start())
        elif tok in _OPEN:
            depth += 1
        elif tok in _CLOSE:
            depth = max(0, depth - 1)
        elif tok == "," and depth == 0:
            parts.append(text[start : m.start()])
            start = pos
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _split_top_level_slow(text: str, sep: str) -> list[str]:
    """`split_top_level` for a separator other than `,`, one character at a time."""
    parts: list[str] = []
    depth = 0
    start = 0
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            i = _skip_string(text, i)
            continue
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            if not (ch == ">" and i > 0 and text[i - 1] == "-"):
                depth = max(0, depth - 1)
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _skip_string(text: str, i: int) -> int:
    """Index just past the string literal starting at `text[i] == '"'`."""
    j = i + 1
    n = len(text)
    while j < n:
        if text[j] == "\\":
            j += 2
            continue
        if text[j] == '"':
            return j + 1
        j += 1
    return n


def parse_dictionary(text: str) -> dict[str, str]:
    """`{a = 1 : i32, b, "c.d" = [..]}` (or `<{...}>` properties) -> {name: raw value text}.

    A key without a value is a unit attribute and maps to the empty string.
    """
    body = text.strip()
    if body.startswith("<{") and body.endswith("}>"):
        body = body[2:-2]
    elif body.startswith("{") and body.endswith("}"):
        body = body[1:-1]
    entries: dict[str, str] = {}
    for entry in split_top_level(body):
        key, value = _split_entry(entry)
        if key:
            entries[key] = value
    return entries


def _split_entry(entry: str) -> tuple[str, str]:
    if entry.startswith('"'):
        end = _skip_string(entry, 0)
        key = entry[1 : end - 1]
        rest = entry[end:].strip()
    else:
        m = re.match(r"[^\s=]+", entry)
        if not m:
            return "", ""
        key = m.group(0)
        rest = entry[m.end() :].strip()
    if rest.startswith("="):
        return key, rest[1:].strip()
    return key, ""


def parse_attribute_value(text: str, _depth: int = 0) -> Any:
    """Decode one attribute value; fall back to the stripped raw text."""
    t = text.strip()
    if t == "":
        return True  # unit attribute
    if t in ("true", "false"):
        return t == "true"
    if _depth > _MAX_DEPTH:
        return t
    m = _INT.match(t)
    if m:
        num = m.group(1)
        value = int(num, 16) if num.startswith("0x") else int(num)
        return -value if t.startswith("-") and value > 0 else value
    if _FLOAT.match(t):
        try:
            return float(t.split(":")[0])
        except ValueError:
            return t
    if t.startswith('"') and _skip_string(t, 0) == len(t):
        return t[1:-1]
    m = _ARRAY.match(t)
    if m:
        body = m.group("body") or ""
        return [parse_attribute_value(p, _depth + 1) for p in split_top_level(body)]
    if t.startswith("[") and t.endswith("]"):
        return [parse_attribute_value(p, _depth + 1) for p in split_top_level(t[1:-1])]
    if t.startswith("{") and t.endswith("}"):
        return {k: parse_attribute_value(v, _depth + 1) for k, v in parse_dictionary(t).items()}
    return t


def int_list(value: Any) -> list[int]:
    """Interpret an attribute value as a list of integers (`array<i32: 1, 2>` or a single int)."""
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, int) and not isinstance(v, bool)]
    return []
