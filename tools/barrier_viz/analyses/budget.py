"""One wall-clock budget for every simulation (`check`, `report`, `explore`, `eval`).

Why: running a kernel's barrier program costs what its loops cost, and a user (or an agent
calling six tools) must get an answer in bounded time whatever the input. The budget is one
deadline shared by everything a command simulates — choosing the integer bounds, then each
schedule — and the interpreter checks it inside its step loop (`Machine._check_bounds`), so a
loop nest without barrier operations cannot run past it. A run stopped by it says
`bound_reached` and what it had covered; it never turns into a verdict.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

DEFAULT_SECONDS = 10.0
ENV = "BARRIER_VIZ_SIM_BUDGET"  # seconds; overrides DEFAULT_SECONDS for every command


def default_seconds() -> float:
    raw = os.environ.get(ENV, "")
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_SECONDS
    return value if value > 0 else DEFAULT_SECONDS


@dataclass
class Budget:
    """`seconds` of wall-clock time from `started` (perf_counter)."""

    seconds: float = field(default_factory=default_seconds)
    started: float = field(default_factory=time.perf_counter)

    @property
    def deadline(self) -> float:
        return self.started + self.seconds

    def left(self) -> float:
        return max(0.0, self.deadline - time.perf_counter())

    def spent(self) -> bool:
        return time.perf_counter() >= self.deadline

    def share(self, fraction: float) -> float:
        """A deadline for a sub-step that may use `fraction` of what is left."""
        return time.perf_counter() + self.left() * fraction

    def describe(self) -> dict:
        return {"seconds": round(self.seconds, 3), "spent_seconds": round(time.perf_counter() - self.started, 3)}
