"""A rich console whose output does not depend on the terminal when piped (same bytes out)."""

from __future__ import annotations

import sys

from rich.console import Console


def console() -> Console:
    if sys.stdout.isatty():
        return Console(highlight=False, markup=False)
    return Console(width=200, highlight=False, markup=False, color_system=None, soft_wrap=False, force_terminal=False)


def shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
