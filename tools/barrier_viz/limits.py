"""Resource limits: the caps that keep one command's memory and time bounded on any input.

Why: the tool runs in CI gates and agent loops on files nobody checked. Without caps a 10 MB
`loc("...")` line, a gzip bomb, `- < /dev/zero`, a million operations or `ttg.num-ctas = 2^128`
cost gigabytes or never return. Every cap here is checked where the data is first read (the
input stream, the unit before it is parsed, the module's attributes), before the cost is paid,
and breaking one is a one-line exit 2 that names the limit and the variable that raises it:

    big.ttgir:1:1: line 1 is longer than the limit (limit for one line: 262,144 bytes; set BARRIER_VIZ_MAX_LINE_KB to raise it)

The defaults sit far above every real kernel of the corpus (the longest line is 11 KB, the
largest kernel 436 KB, the best gzip ratio 21x, clusters of 2-8 CTAs, barrier rings of 1-8 slots) and low enough that the
parsed unit stays within a few hundred MB. The simulation has its own budget, in steps
(`analyses.sim.budget`); `CPU_SECONDS` is the backstop for everything else.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .errors import InputError

KIB = 1024
MIB = 1024 * 1024


@dataclass(frozen=True)
class Limit:
    """One cap: `default` in `unit`s (the environment variable `env` overrides it)."""

    what: str
    env: str
    default: int
    scale: int = 1  # bytes per unit of the variable (KiB, MiB) or 1

    @property
    def value(self) -> int:
        raw = os.environ.get(self.env, "").replace("_", "")
        try:
            n = int(raw)
        except ValueError:
            n = self.default
        return (n if n > 0 else self.default) * self.scale

    def message(self, found: str) -> str:
        """What was found, the limit, and how to raise it, on one line."""
        unit = " bytes" if self.scale > 1 else ""
        return f"{found} (limit for {self.what}: {self.value:,}{unit}; set {self.env} to raise it)"

    def error(self, path: str, found: str, line: int | None = 1, column: int | None = 1) -> InputError:
        """The exit-2 error for breaking this cap."""
        return InputError(path, self.message(found), line, column)


INPUT_BYTES = Limit("one input, decompressed", "BARRIER_VIZ_MAX_INPUT_MB", 512, MIB)
LINE_BYTES = Limit("one line", "BARRIER_VIZ_MAX_LINE_KB", 256, KIB)
GZIP_RATIO = Limit("the gzip expansion ratio", "BARRIER_VIZ_MAX_GZIP_RATIO", 100)
UNIT_BYTES = Limit("one unit that is parsed", "BARRIER_VIZ_MAX_UNIT_MB", 2, MIB)
OPERATIONS = Limit("operations in one unit", "BARRIER_VIZ_MAX_OPS", 100_000)
NESTING = Limit("bracket nesting within one line", "BARRIER_VIZ_MAX_NESTING", 256)
CTAS = Limit("CTAs per cluster", "BARRIER_VIZ_MAX_CTAS", 16)
WARPS = Limit("warps per CTA", "BARRIER_VIZ_MAX_WARPS", 64)
SLOTS = Limit("barrier slots of one allocation", "BARRIER_VIZ_MAX_SLOTS", 256)
CPU_SECONDS = Limit("CPU seconds of one command", "BARRIER_VIZ_MAX_CPU_SECONDS", 600)
MEMORY = Limit("memory of one command", "BARRIER_VIZ_MAX_MEMORY_MB", 4096, MIB)


def check_barrier_slots(facts, path: str) -> None:
    """A barrier ring (or NVWS token, aref) with more slots than `SLOTS`: the phase samples and
    tables are per slot and depth (a `memdesc<1000000000x1xi64>` ring ran `report` past 300 s),
    so it is refused where the barrier facts are built, at the allocation's line."""
    for b in facts.barriers:
        if b.slots is not None and b.slots > SLOTS.value:
            column = b.alloc.column if b.alloc is not None else 1
            raise SLOTS.error(path, f"{b.name} has {b.slots:,} slots", b.line, column)


class LimitExceeded(InputError):
    """A cap hit while running (CPU time, memory) rather than while reading: exit 2 like the rest."""

    def __init__(self, message: str):
        super().__init__("resource limit", message)


ALL = (INPUT_BYTES, LINE_BYTES, GZIP_RATIO, UNIT_BYTES, OPERATIONS, NESTING, CTAS, WARPS, SLOTS, CPU_SECONDS, MEMORY)
# Below this many decompressed bytes a gzip input is not held to the ratio (tiny files compress
# by any ratio).
GZIP_RATIO_FLOOR = 1 * MIB
