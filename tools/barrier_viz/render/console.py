"""A rich console whose output does not depend on the terminal when piped (same bytes out)."""

from __future__ import annotations

import io
import sys
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator

from rich.console import Console

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
        return Console(file=buf, width=160, highlight=False, markup=False, color_system=None, soft_wrap=False,
                       force_terminal=False)
    if sys.stdout.isatty():
        return Console(highlight=False, markup=False)
    return Console(width=200, highlight=False, markup=False, color_system=None, soft_wrap=False, force_terminal=False)


def shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
