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
        self._stdout = None
        self.finished = False

    def advance(self, n: float = 1, *, total: float | None = None, what: str | None = None) -> None:
        if not self.terminal or self.finished:
            return
        self.done += n
        if total is not None:
            self.total = total
        first = self._progress is None
        if first:
            if time.monotonic() - self.opened < DELAY_S:
                return
            self._start()
        label = f"{self.description}: {what}" if what else self.description
        # The first update is drawn at once; later ones by rich's refresh thread (10 per second).
        self._progress.update(self._task, completed=self.done, total=self.total, description=label, refresh=first)

    def _start(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        console = Console(file=sys.stderr, force_terminal=True, highlight=False)
        columns = [SpinnerColumn(), TextColumn("{task.description}"), BarColumn()]
        columns += [MofNCompleteColumn()] if self.total is not None else []
        columns += [TimeElapsedColumn()]
        self._progress = Progress(*columns, console=console, transient=True, redirect_stdout=False,
                                  redirect_stderr=False)
        self._progress.start()
        self._task = self._progress.add_task(self.description, total=self.total, completed=self.done)
        # The command's output must not interleave with the bar on the terminal they share: the
        # first write to stdout erases the bar for good (the work it measured is over by then).
        self._stdout = sys.stdout
        sys.stdout = _CloseOnWrite(self._stdout, self)

    def close(self) -> None:
        self.finished = True
        if self._progress is not None:
            progress, self._progress = self._progress, None
            progress.stop()
        if self._stdout is not None:
            if isinstance(sys.stdout, _CloseOnWrite) and sys.stdout.bar is self:
                sys.stdout = self._stdout
            self._stdout = None


class _CloseOnWrite:
    """stdout while a bar is shown: the first write closes the bar, then passes through."""

    def __init__(self, stream, bar: _Bar):
        self.stream = stream
        self.bar = bar

    def write(self, text):
        self.bar.close()
        return self.stream.write(text)

    def writelines(self, lines):
        self.bar.close()
        return self.stream.writelines(lines)

    def __getattr__(self, name):
        return getattr(self.stream, name)


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
