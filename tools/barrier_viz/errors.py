"""Errors the CLI turns into a one-line message and exit code 2."""

from __future__ import annotations


class InputError(Exception):
    """Bad input or bad usage: names the file, 1-based line and column, and what is wrong."""

    def __init__(self, path: str, message: str, line: int | None = None, column: int | None = None):
        super().__init__(message)
        self.path = path
        self.message = message
        self.line = line
        self.column = column

    def __str__(self) -> str:
        where = self.path
        if self.line is not None:
            where += f":{self.line}:{self.column or 1}"
        return f"{where}: {self.message}"
