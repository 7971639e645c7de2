"""Checks of the raw text that `parse_ir` runs before (or after a failed) structuring, each a
one-line `IRSyntaxError` with line and column instead of a confusing failure further on: line
continuations (MLIR has none), brackets nested past `limits.NESTING` within one line, and an
unterminated string literal (which swallows the lines after it).
"""

from __future__ import annotations

import re

from .. import limits


class IRSyntaxError(Exception):
    """Input that cannot be read as IR; carries the 1-based position of the problem."""

    def __init__(self, message: str, line: int, column: int):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


_CONTINUATION = re.compile(rb"\\[ \t]*\r?$", re.M)
_BRACKET = re.compile(rb'"(?:[^"\\\n]|\\.)*"|->|[\[({<]|[\])}>]')


def _check_nesting(data: bytes, line_offset: int) -> None:
    """Brackets nested deeper than `limits.NESTING` within one line (types, attributes, operand
    lists) are refused before tree-sitter and the attribute decoder pay for them. Printed IR
    nests a handful deep; regions nest across lines and are bounded by the operation cap. Only
    lines long enough to hold that many brackets are scanned token by token."""
    cap = limits.NESTING.value
    if len(data) <= cap:
        return
    for long_line in re.finditer(rb"^[^\n]{%d,}" % (cap + 1), data, re.M):
        text = long_line.group()
        if sum(text.count(c) for c in (b"(", b"[", b"{", b"<")) <= cap:
            continue
        depth = 0
        for m in _BRACKET.finditer(text):
            tok = m.group()
            if tok[:1] in b"[({<" and tok != b"->":
                depth += 1
                if depth > cap:
                    line = data.count(b"\n", 0, long_line.start()) + 1 + line_offset
                    column = len(text[: m.start()].decode("utf-8", "replace")) + 1
                    raise IRSyntaxError(limits.NESTING.message(f"brackets nest more than {cap} deep"), line, column)
            elif tok[:1] in b"])}>" :
                depth = max(0, depth - 1)


def _reject_line_continuations(data: bytes, line_offset: int) -> None:
    """A `\\` ending a line (outside a comment or string) is a shell/C-preprocessor line
    continuation: MLIR has none, and tree-sitter would misread what follows (reporting, much
    later, unbalanced braces). Say so, at the backslash."""
    if b"\\" not in data:
        return
    for m in _CONTINUATION.finditer(data):
        start = data.rfind(b"\n", 0, m.start()) + 1
        prefix = data[start : m.start()]
        if prefix.lstrip().startswith(b"//") or b"//" in _outside_strings(prefix):
            continue
        if _open_quote(prefix):
            continue
        line = data.count(b"\n", 0, m.start()) + 1 + line_offset
        column = len(prefix.decode("utf-8", "replace")) + 1
        raise IRSyntaxError("line continuation is not MLIR: a '\\' at the end of a line does not join lines; "
                            "write the construct on one line", line, column)


def _outside_strings(text: bytes) -> bytes:
    """`text` with the bodies of its string literals removed (for finding `//` comments)."""
    out = bytearray()
    quoted = False
    k = 0
    while k < len(text):
        c = text[k]
        if quoted and c == 0x5C:
            k += 2
            continue
        if c == 0x22:
            quoted = not quoted
        elif not quoted:
            out.append(c)
        k += 1
    return bytes(out)


def _open_quote(text: bytes) -> bool:
    """Does `text` (one line, or the start of one) end inside a string literal?"""
    quoted = False
    k = 0
    while k < len(text):
        c = text[k]
        if quoted and c == 0x5C:
            k += 2
            continue
        if c == 0x22:
            quoted = not quoted
        elif not quoted and c == 0x2F and text[k : k + 2] == b"//":
            return False
        k += 1
    return quoted


def _first_unterminated_string(data: bytes, line_offset: int) -> tuple[int, int] | None:
    """(line, column) of the first `"` whose string does not end on its line, or None."""
    if b'"' not in data:
        return None
    for lineno, raw in enumerate(data.split(b"\n"), 1):
        if b'"' not in raw or raw.lstrip().startswith(b"//"):
            continue
        if _open_quote(raw):
            quoted = False
            k = 0
            opened = 0
            while k < len(raw):
                c = raw[k]
                if quoted and c == 0x5C:
                    k += 2
                    continue
                if c == 0x22:
                    quoted = not quoted
                    opened = k
                k += 1
            return lineno + line_offset, len(raw[:opened].decode("utf-8", "replace")) + 1
    return None
