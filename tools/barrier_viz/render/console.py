"""A rich console: its width is the terminal's, or `COLUMNS` when set (on a terminal, piped, or
captured into the report), and otherwise fixed when piped (same bytes out).

Tables name things (partitions, ops, SSA values): their columns wrap only between words and cut
a word too long for its column with an ellipsis, never in the middle (`table`)."""

from __future__ import annotations

import io
import textwrap
import os
import sys
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator

from rich.console import Console
from rich.table import Table

PIPED_WIDTH = 200  # piped without COLUMNS: wide enough that rows rarely wrap, and fixed
CAPTURE_WIDTH = 160  # the report's embedded sections without COLUMNS


def columns() -> int | None:
    """`COLUMNS` when it is a sensible width (40 or more), else None."""
    text = os.environ.get("COLUMNS", "").strip()
    return int(text) if text.isdigit() and int(text) >= 40 else None

_CAPTURE: ContextVar[io.StringIO | None] = ContextVar("_CAPTURE", default=None)


@contextmanager
def capture() -> Iterator[io.StringIO]:
    """Inside this block every `console()` writes plain text into the yielded buffer: how the
    report reuses each command's text rendering."""
    buf = io.StringIO()
    token = _CAPTURE.set(buf)
    try:
        yield buf
    finally:
        _CAPTURE.reset(token)


def console() -> Console:
    buf = _CAPTURE.get()
    if buf is not None:
        return Console(file=buf, width=columns() or CAPTURE_WIDTH, highlight=False, markup=False, color_system=None,
                       soft_wrap=False, force_terminal=False)
    if sys.stdout.isatty():
        return Console(width=columns(), highlight=False, markup=False)
    return Console(width=columns() or PIPED_WIDTH, highlight=False, markup=False, color_system=None, soft_wrap=False,
                   force_terminal=False)


def table(title: str, names: tuple[str, ...], *, keep: tuple[str, ...] = ()) -> Table:
    """A table whose cells wrap between words only; `keep` columns (short identifiers: a line
    number, a partition, an op name) never wrap at all. A word too long for its column ends in
    an ellipsis instead of being split."""
    t = Table(title=title, title_justify="left")
    for name in names:
        t.add_column(name, overflow="ellipsis", no_wrap=name in keep)
    return t


def shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def wrap_line(line: str, width: int) -> list[str]:
    """`line` cut between words to `width`, continuation lines indented four more than the
    line itself; a word longer than the width stays whole (identifiers are never split)."""
    if len(line) <= width or not line.strip():
        return [line]
    lead = line[: len(line) - len(line.lstrip(" "))]
    return textwrap.wrap(line, width, initial_indent="", subsequent_indent=lead + "    ", break_long_words=False,
                         break_on_hyphens=False, drop_whitespace=True) or [line]


def print_lines(lines) -> None:
    """Print text lines wrapped at the console's width (see `wrap_line`)."""
    out = console()
    text = "\n".join(w for line in lines for part in str(line).split("\n") for w in wrap_line(part, out.width))
    out.print(text, soft_wrap=True)
