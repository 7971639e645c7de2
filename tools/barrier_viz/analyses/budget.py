"""One time budget for every simulation (`check`, `report`, `explore`, `eval`).

Why: running a kernel's barrier program costs what its loops cost, and a user (or an agent
calling six tools) must get an answer in bounded time whatever the input. The budget is one
deadline shared by everything a command simulates — choosing the integer bounds, then each
schedule — and the interpreter checks it inside its step loop (`Machine._check_bounds`), so a
loop nest without barrier operations cannot run past it. A run stopped by it says
`bound_reached` and what it had covered; it never turns into a verdict.

Which clock: `explore --timeout` is the wall-clock time a user waits for. `check` (and so
`report` and `eval`) count this process's CPU time: on a machine shared with other jobs a
wall-clock cut would change the verdicts with the load, and the same input must give the same
bytes; on an idle machine the two are the same.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Callable

DEFAULT_SECONDS = 10.0
ENV = "BARRIER_VIZ_SIM_BUDGET"  # seconds; overrides DEFAULT_SECONDS for every command


def default_seconds() -> float:
    raw = os.environ.get(ENV, "")
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_SECONDS
    return value if value > 0 else DEFAULT_SECONDS


WALL = time.perf_counter
CPU = time.process_time


@dataclass(frozen=True)
class Deadline:
    """A point in time on one clock; the interpreter polls `passed()` in its step loop."""

    at: float
    clock: Callable[[], float] = WALL

    def passed(self) -> bool:
        return self.clock() > self.at


def as_deadline(d: "Deadline | float | None") -> "Deadline | None":
    """Deadlines given as bare numbers are wall-clock (perf_counter) times."""
    return Deadline(d) if isinstance(d, (int, float)) else d


@dataclass
class Budget:
    """`seconds` on `clock` from `started`."""

    seconds: float = field(default_factory=default_seconds)
    clock: Callable[[], float] = CPU
    started: float | None = None

    def __post_init__(self) -> None:
        if self.started is None:
            self.started = self.clock()

    @property
    def deadline(self) -> Deadline:
        return Deadline(self.started + self.seconds, self.clock)

    def left(self) -> float:
        return max(0.0, self.started + self.seconds - self.clock())

    def spent(self) -> bool:
        return self.clock() >= self.started + self.seconds

    def share(self, fraction: float) -> Deadline:
        """A deadline for a sub-step that may use `fraction` of what is left."""
        return Deadline(self.clock() + self.left() * fraction, self.clock)

    def describe(self) -> dict:
        return {"seconds": round(self.seconds, 3), "spent_seconds": round(self.clock() - self.started, 3),
                "clock": "cpu" if self.clock is CPU else "wall"}
