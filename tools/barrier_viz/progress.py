"""Progress on long runs: a rich bar on stderr when stderr is a terminal, nothing otherwise.

Why a module of its own: the slow loops live deep down (a schedule run in the interpreter, an
eval case, a chunk of a 200 MB file being scanned), and threading a callback through every
signature between the CLI and them would touch every layer. So the CLI opens one `progress()`
context per command, and the loops call `tick()` (a no-op outside such a context, and when
stderr is not a terminal), or use the `advance` callback the context yields.

Nothing is ever written when stderr is piped or captured: scripts, agents and tests read stderr
for the one-line error contract, and output must stay byte-identical run to run. On a terminal
the bar appears only once a run has lasted `DELAY_S` (a quick command shows nothing) and is
erased when the command ends (`transient`), so it never mixes with the command's output.
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable, Iterator

DELAY_S = 0.5  # a command faster than this never shows a bar


def _stderr_is_terminal() -> bool:
    stream = sys.stderr
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False


class _Bar:
    """One command's bar, started lazily on the first tick after DELAY_S."""

    def __init__(self, description: str, total: float | None, terminal: bool):
        self.description = description
        self.total = total
        self.terminal = terminal
        self.opened = time.monotonic()
        self.done = 0.0
        self._progress = None
        self._task = None

    def advance(self, n: float = 1, *, total: float | None = None, what: str | None = None) -> None:
        if not self.terminal:
            return
        self.done += n
        if total is not None:
            self.total = total
        if self._progress is None:
            if time.monotonic() - self.opened < DELAY_S:
                return
            self._start()
        label = f"{self.description}: {what}" if what else self.description
        self._progress.update(self._task, completed=self.done, total=self.total, description=label)

    def _start(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        console = Console(file=sys.stderr, force_terminal=True, highlight=False)
        columns = [SpinnerColumn(), TextColumn("{task.description}"), BarColumn()]
        columns += [MofNCompleteColumn()] if self.total is not None else []
        columns += [TimeElapsedColumn()]
        self._progress = Progress(*columns, console=console, transient=True)
        self._progress.start()
        self._task = self._progress.add_task(self.description, total=self.total, completed=self.done)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


_CURRENT: ContextVar[_Bar | None] = ContextVar("barrier_viz_progress", default=None)


@contextmanager
def progress(description: str = "barrier-viz", total: float | None = None, *,
             terminal: bool | None = None) -> Iterator[Callable[..., None]]:
    """Open a bar for the duration of the block and yield its `advance(n=1, total=, what=)`.

    `terminal` defaults to whether stderr is a terminal; a nested `progress()` inside an open
    one reuses the outer bar (one line on the screen, whichever layer opened it first)."""
    outer = _CURRENT.get()
    if outer is not None:
        yield outer.advance
        return
    bar = _Bar(description, total, _stderr_is_terminal() if terminal is None else terminal)
    token = _CURRENT.set(bar)
    try:
        yield bar.advance
    finally:
        _CURRENT.reset(token)
        bar.close()


def tick(what: str | None = None, n: float = 1, total: float | None = None) -> None:
    """Advance the bar of the enclosing `progress()` block, if any (cheap: one lookup)."""
    bar = _CURRENT.get()
    if bar is not None and bar.terminal:
        bar.advance(n, total=total, what=what)
