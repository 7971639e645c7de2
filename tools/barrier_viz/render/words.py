"""Counted nouns in prose: "1 phase", "2 phases", never "1 phases" nor "phase(s)"."""

from __future__ import annotations


def plural(n: int, singular: str, plural_form: str | None = None) -> str:
    """`n` and the noun in the number it takes ("1 wait", "0 waits", "3 waits")."""
    return f"{n} {singular if n == 1 else (plural_form or singular + 's')}"
