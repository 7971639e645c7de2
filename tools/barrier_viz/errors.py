"""Errors the CLI turns into a one-line message and exit code 2."""

from __future__ import annotations


class InputError(Exception):
    """Bad input or bad usage: names the file, 1-based line and column, and what is wrong.

    Printed as `FILE:LINE:COL: what` (the shape editors and agents parse), or `FILE: what` when
    the error has no position (a bad option value, a destination folder). Errors about an input
    as a whole (empty, no IR, unknown `--unit`) point at its start, 1:1.
    """

    def __init__(self, path: str, message: str, line: int | None = None, column: int | None = None):
        super().__init__(message)
        self.path = path
        self.message = message
        self.line = line
        self.column = column

    def __str__(self) -> str:
        # Always one line, whatever the message holds (a syntax snippet, a multi-line reason).
        message = " ".join(self.message.split())
        if self.line is None:
            return f"{self.path}: {message}"
        return f"{self.path}:{self.line}:{self.column or 1}: {message}"
