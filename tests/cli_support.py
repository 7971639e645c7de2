"""Running the CLI in-process, for the input and error-contract tests.

`typer.testing.CliRunner` is 10-100x faster than a subprocess, which lets the property tests
afford hundreds of examples. Exit codes, stdout and stderr are the ones a shell would see.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from barrier_viz.cli import app

FIXTURES = Path(__file__).parent / "fixtures"
FIXTURE_FILES = sorted(p for p in FIXTURES.iterdir() if p.is_file())


@dataclass
class Run:
    """What one CLI invocation printed and returned."""

    exit_code: int
    stdout: str
    stderr: str
    exception: BaseException | None  # an exception that escaped the CLI (a crash), else None

    def json(self) -> Any:
        return json.loads(self.stdout)


def run_cli(*args: str, input: bytes | None = None) -> Run:
    """Run `barrier-viz ARGS`, with `input` on stdin."""
    result = CliRunner().invoke(app, list(args), input=input)
    exc = None if result.exception is None or isinstance(result.exception, SystemExit) else result.exception
    return Run(result.exit_code, result.stdout, result.stderr, exc)


def check_text(tmp_path: Path, text: str) -> dict:
    """`check --format json` on IR text written to a file under `tmp_path` (hand-written kernels)."""
    path = tmp_path / "k.ttgir"
    path.write_text(text)
    r = run_cli("check", str(path), "--format", "json")
    assert r.exception is None and "Traceback" not in r.stderr, (r.exception, r.stderr)
    doc = json.loads(r.stdout)
    # The exit status is the verdict's: 0 clean (judged), 1 findings, 4 not judged.
    assert r.exit_code == {"clean": 0, "findings": 1, "not judged": 4}[doc["summary"]["verdict"]], r.exit_code
    return doc


def line_of(path: Path, needle: str, *, skip_comments: bool = True) -> int:
    """1-based line of the first line of `path` containing `needle` (comment lines skipped),
    so tests state *what* they look for instead of hard-coding line numbers."""
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        if needle in line and not (skip_comments and line.lstrip().startswith("//")):
            return lineno
    raise AssertionError(f"{needle!r} not in {path}")
