"""Shared test setup: text output depends on COLUMNS (render/console.py), so no test inherits
the width of the terminal pytest runs in; tests that need a width set it themselves."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_terminal_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
