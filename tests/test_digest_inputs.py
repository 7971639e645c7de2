"""The compact digest on IR shapes whose facts are partial: it prints what is known, never crashes."""

from __future__ import annotations

from pathlib import Path

from cli_support import run_cli

FIX = Path(__file__).parent / "fixtures" / "digest"


def test_a_barrier_passed_as_an_argument_has_no_allocation_op():
    """A function that gets its barrier as an argument (a helper, or Triton's barrier-op lit
    tests) has a barrier with no allocating op: the digest row says what it knows."""
    r = run_cli("report", str(FIX / "barrier_argument.mlir"), "--format", "compact")
    assert r.exit_code == 0, r.stderr
    assert r.exception is None
    assert "## 5" in r.stdout or "barriers" in r.stdout.lower()
