"""Paths to audit -> files -> units, without parsing.

A directory is walked recursively (sorted, so the same tree gives the same order) for IR files
by suffix; a Triton cache or dump folder is a directory like any other. Every file named or
found is accounted for: its units with warp specialization become tasks, and a file that cannot
be read, or holds none, still gets a row saying so.
"""

from __future__ import annotations

import gzip
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..inputs import IR_SUFFIXES, Source, scan_units


@dataclass
class UnitTask:
    """One unit to check: enough to rebuild it in a worker without re-reading the file."""

    path: str
    index: int
    label: str
    kind: str
    start_line: int
    end_line: int
    text: bytes
    functions: list[str]
    flags: list[str]


@dataclass
class FileEntry:
    path: str
    units: int = 0
    tasks: list[UnitTask] = field(default_factory=list)
    duplicates: list[tuple[UnitTask, UnitTask]] = field(default_factory=list)  # (repeat, first) in a dump
    error: str | None = None  # the file could not be read as IR at all


def expand_paths(paths: list[str], read_stdin=None) -> list[str]:
    """Files to audit, in order, without duplicates. `-` reads a list of paths from stdin (one
    per line, blank lines and `#` comments ignored). A path that does not exist is kept: its
    row says so."""
    out: list[str] = []
    for p in paths:
        if p == "-":
            text = read_stdin() if read_stdin else ""
            listed = [line.strip() for line in text.splitlines()]
            out.extend(expand_paths([x for x in listed if x and not x.startswith("#")]))
        elif os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for f in sorted(files):
                    if f.endswith(IR_SUFFIXES):
                        out.append(os.path.join(root, f))
        else:
            out.append(p)
    return list(dict.fromkeys(out))


def _read(path: str) -> bytes:
    p = Path(path)
    if not p.exists():
        raise InputError(path, "no such file or directory", 1, 1)
    try:
        if path.endswith(".gz"):
            return gzip.decompress(p.read_bytes())
        return p.read_bytes()
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(path, f"cannot read: {exc}", 1, 1) from None


def discover_file(path: str) -> FileEntry:
    """The file's units, and a task for each one with warp specialization (LLVM units never:
    there are no partitions left to check)."""
    entry = FileEntry(path)
    try:
        data = _read(path)
        units = scan_units(Source(path, data=data))
    except InputError as exc:
        entry.error = str(exc)
        return entry
    entry.units = len(units)
    lines = data.splitlines(keepends=True)
    for u in units:
        if not u.is_warp_specialized or "llvm" in u.flags:
            continue
        text = u._text if u._text is not None else b"".join(lines[u.start_line - 1 : u.end_line])
        entry.tasks.append(UnitTask(path, u.index, u.label, u.kind, u.start_line, u.end_line, text,
                                    list(u.functions), list(u.flags)))
    return entry
