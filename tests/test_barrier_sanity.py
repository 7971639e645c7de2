"""Barrier declarations no kernel can mean (issue 24, `analyses/rules/barrier_sanity.py`).

Before the rule, `init_barrier` with a count of 0 or -1 passed `check` with "0 error(s)": the
simulator completes such a slot at once, so nothing hung. On hardware `mbarrier.init` needs
1 <= count < 2^20 and the first wait never returns. A count above every arriving thread of the
CTA is the same hang unless a thread arrives several times per phase (a warning), and an expect
of 0 bytes with no copy is a plain arrival (an info, harmless).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_support import run_cli
from test_machine import BAR, kernel, one_barrier


def handoff(count: int, arrive: str = f"      ttng.arrive_barrier %b1, 1 : {BAR}") -> str:
    """Two partitions: partition0 arrives once, the default partition waits (4 + 1 warps)."""
    return kernel("", "%bar", one_barrier(count=count),
                  f"      %c0 = arith.constant 0 : i32\n      ttng.wait_barrier %bar, %c0 : {BAR}",
                  f"%b1: {BAR}", arrive, BAR)


def findings(tmp_path: Path, text: str) -> tuple[int, list[dict]]:
    path = tmp_path / "k.ttgir"
    path.write_text(text)
    r = run_cli("check", str(path), "--format", "json")
    assert r.exception is None and r.exit_code in (0, 1), (r.exit_code, r.stderr, r.exception)
    return r.exit_code, json.loads(r.stdout)["findings"]


def of_kind(found: list[dict], kind: str) -> list[dict]:
    return [f for f in found if f["kind"] == kind]


@pytest.mark.parametrize("count", [0, -1, 1 << 20])
def test_an_init_count_no_arrivals_complete_is_an_error_that_hangs(tmp_path: Path, count: int) -> None:
    code, found = findings(tmp_path, handoff(count))
    bad = of_kind(found, "barrier.init_count_invalid")
    assert code == 1 and len(bad) == 1, found
    assert bad[0]["severity"] == "error" and bad[0]["evidence"]["consequence"] == "hang"
    assert bad[0]["evidence"]["count"] == count


def test_a_count_above_every_arriving_thread_is_a_hang_warning(tmp_path: Path) -> None:
    # 5 warps = 160 threads arriving one at a time cannot make 1000 arrivals in one phase
    _, found = findings(tmp_path, handoff(1000))
    far = of_kind(found, "barrier.count_unreachable")
    assert len(far) == 1 and far[0]["severity"] == "warning", found
    assert far[0]["evidence"]["threads"] == 160 and far[0]["evidence"]["consequence"] == "hang"
    assert not of_kind(found, "barrier.init_count_invalid")


def test_counts_real_kernels_use_are_no_finding(tmp_path: Path) -> None:
    # one arrival per phase; and 160 (every thread arriving once) is reachable
    for count in (1, 160):
        _, found = findings(tmp_path, handoff(count))
        assert not of_kind(found, "barrier.init_count_invalid") and not of_kind(found, "barrier.count_unreachable"), \
            (count, found)


def test_an_expect_of_zero_bytes_without_a_copy_is_a_harmless_info(tmp_path: Path) -> None:
    expect = f"      %true = arith.constant true\n      ttng.barrier_expect %b1, 0, %true : {BAR}"
    _, found = findings(tmp_path, handoff(1, expect))
    zero = of_kind(found, "expect.zero_bytes")
    assert len(zero) == 1 and zero[0]["severity"] == "info" and zero[0]["evidence"]["consequence"] == "harmless", found
    _, found = findings(tmp_path, handoff(1, expect.replace("%b1, 0,", "%b1, 16,")))
    assert not of_kind(found, "expect.zero_bytes")
