"""One work budget for every simulation (`check`, `report`, `eval`, `audit`), counted in steps.

Why: running a kernel's barrier program costs what its loops cost, and a user (or an agent
calling six tools) must get an answer in bounded time whatever the input. The budget is one
allowance shared by everything a command simulates — choosing the integer bounds, then each
schedule, the cluster races and the input points — and the interpreter charges it inside its
step loop (`Machine._check_bounds`, every 1,024 operations), so a loop nest without barrier
operations cannot run past it. A run stopped by it says `bound_reached` and what it had covered;
it never turns into a verdict.

Which clock: `check`, `report`, `eval` and `audit` count *interpreter operations* (`STEPS`), not
time. A time budget (wall or CPU) cut the same kernel at different points on a fast machine, a
slow one, or a loaded CI runner, so the same tree gave different verdicts (a GPU-observed
hanging mutant passed the gate when its simulation was cut under load). Operations are the same
on every machine, so the same input gives the same bytes. `explore` counts steps too (its own,
larger allowance: `explore --steps`); its `--timeout` is only a wall-clock backstop
(`Backstop`) for what a user waits, and a run it cuts is reported as not judged within time,
never as a verdict.

The default, `DEFAULT_STEPS` (`BARRIER_VIZ_SIM_STEPS` overrides it), is 2 million operations:
10-80 s of simulation at the 25k-130k operations per CPU second measured on the corpus, more
than any real kernel here needs; `audit --budget` sets it per kernel.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Callable

DEFAULT_STEPS = 2_000_000
ENV = "BARRIER_VIZ_SIM_STEPS"  # interpreter operations; overrides DEFAULT_STEPS for every command


def default_steps() -> float:
    raw = os.environ.get(ENV, "")
    try:
        value = int(raw.replace("_", ""))
    except ValueError:
        return DEFAULT_STEPS
    return value if value > 0 else DEFAULT_STEPS


class _Work:
    """Interpreter operations this process has executed, charged by `Machine._check_bounds`."""

    __slots__ = ("ops",)

    def __init__(self) -> None:
        self.ops = 0


WORK = _Work()


def STEPS() -> float:  # noqa: N802 - a clock, named like WALL and CPU
    """The step clock: operations executed so far (monotonic, machine-independent)."""
    return WORK.ops


WALL = time.perf_counter
CPU = time.process_time


@dataclass(frozen=True)
class Deadline:
    """A point on one clock; the interpreter polls `passed()` in its step loop."""

    at: float
    clock: Callable[[], float] = WALL

    def passed(self) -> bool:
        return self.clock() > self.at


class Backstop:
    """A wall-clock limit behind a step budget (`explore --timeout`): what a user waits, never
    the bound a verdict rests on. `fired` records that it stopped something, so the caller
    reports that cut as such ("not judged within time") instead of as the step bound."""

    def __init__(self, seconds: float) -> None:
        self.wall = Deadline(WALL() + seconds, WALL)
        self.fired = False

    def over(self, steps: Deadline) -> "_StepsOrWall":
        """A deadline passed once `steps` is, or once the wall clock has."""
        return _StepsOrWall(steps, self)

    def passed(self) -> bool:
        if self.wall.passed():
            self.fired = True
        return self.fired


@dataclass(frozen=True)
class _StepsOrWall:
    steps: Deadline
    backstop: Backstop

    def passed(self) -> bool:
        return self.steps.passed() or self.backstop.passed()


def as_deadline(d: "Deadline | float | None") -> "Deadline | None":
    """Deadlines given as bare numbers are wall-clock (perf_counter) times."""
    return Deadline(d) if isinstance(d, (int, float)) else d


@dataclass
class Budget:
    """`amount` on `clock` from `started`: operations on STEPS (the default), seconds on WALL."""

    amount: float = field(default_factory=default_steps)
    clock: Callable[[], float] = STEPS
    started: float | None = None

    def __post_init__(self) -> None:
        if self.started is None:
            self.started = self.clock()

    @property
    def unit(self) -> str:
        return "steps" if self.clock is STEPS else "seconds"

    @property
    def deadline(self) -> Deadline:
        return Deadline(self.started + self.amount, self.clock)

    def used(self) -> float:
        return self.clock() - self.started

    def left(self) -> float:
        return max(0.0, self.started + self.amount - self.clock())

    def spent(self) -> bool:
        return self.clock() >= self.started + self.amount

    def share(self, fraction: float) -> Deadline:
        """A deadline for a sub-step that may use `fraction` of what is left."""
        return Deadline(self.clock() + self.left() * fraction, self.clock)

    def describe(self) -> dict:
        if self.clock is STEPS:
            return {"steps": int(self.amount), "spent_steps": int(self.used()), "clock": "steps"}
        return {"seconds": round(self.amount, 3), "spent_seconds": round(self.used(), 3), "clock": "wall"}
