"""Explaining the harmless (analyses/rules/explanations.py), on mutants of the hand-written persistent
GEMM built through the parser: an arrive nobody waits for whose reuse another wait still orders
reads as harmless, its mirror image (that other wait dropped too) does not; an allocated,
initialised, never-used barrier gets an info line; a same-partition wait says whether it is the
only guard of a cross-partition access."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import run_cli
from test_check import FIXTURE, _ops, _replace_line

BASE = FIXTURE.read_text()
BAR = "!ttg.memdesc<1xi64, #shared, #smem, mutable>"


def _with_spare(text: str, extra_in_default: list[str]) -> str:
    """A new barrier %spare allocated and initialised before the fork; `extra_in_default` is
    inserted in the default partition right after its release of the accumulator."""
    lines = text.splitlines()
    release = next(i for i, line in enumerate(lines) if line.strip().startswith("ttng.arrive_barrier") and "%acc_19" in line)
    indent = lines[release][: len(lines[release]) - len(lines[release].lstrip())]
    lines[release + 1:release + 1] = [indent + x for x in extra_in_default]
    fork = next(i for i, line in enumerate(lines) if line.strip().startswith("ttg.warp_specialize("))
    lines[fork:fork] = [f"    %spare = ttg.local_alloc : () -> {BAR}", f"    ttng.init_barrier %spare, 1 : {BAR}"]
    return "\n".join(lines) + "\n"


def _check(tmp_path: Path, text: str) -> list[dict]:
    path = tmp_path / "k.ttgir"
    path.write_text(text)
    r = run_cli("check", str(path), "--format", "json", "--no-simulate")
    assert r.exception is None
    return json.loads(r.stdout)["findings"]


SPARE_ARRIVE = [f"ttng.arrive_barrier %spare, 1 {{async_task_id = array<i32: 0>}} : {BAR}"]


def test_an_unpaired_arrive_whose_reuse_another_wait_orders_is_harmless(tmp_path):
    found = _check(tmp_path, _with_spare(BASE, SPARE_ARRIVE))
    unpaired = [f for f in found if f["kind"] == "arrive.unpaired"]
    assert len(unpaired) == 1 and unpaired[0]["severity"] == "info" and unpaired[0]["outcome"] == "harmless"
    assert "Harmless: another wait orders the reuse" in unpaired[0]["message"] and "%acc_empty" in unpaired[0]["message"]


def test_the_mirror_image_with_that_wait_dropped_is_a_race(tmp_path):
    """Issue 22: an unpaired arrive that was the only guard is what it causes, a race (the MMA's
    overwrite of the accumulator the epilogue still reads), never an info. Statically it is a
    warning; `check`'s runs show the two accesses unordered, which makes it an error."""
    text = _with_spare(BASE, SPARE_ARRIVE)
    acquire = _ops(text, "ttng.wait_barrier", "partition0")[0]  # the MMA's wait for the accumulator's release
    found = _check(tmp_path, _replace_line(text, acquire.line, []))
    assert not [f for f in found if f["kind"] == "arrive.unpaired" and f["barrier"].startswith("%spare")]
    spare = [f for f in found if (f.get("barrier") or "").startswith("%spare")]
    assert len(spare) == 1 and spare[0]["kind"] == "race.missing_acquire" and spare[0]["severity"] == "warning"
    assert spare[0]["outcome"] == "wrong results" and spare[0]["evidence"]["arrive_unpaired"]
    assert "Nothing orders partition0's write" in spare[0]["message"]
    path = tmp_path / "k.ttgir"
    simulated = json.loads(run_cli("check", str(path), "--format", "json").stdout)["findings"]
    race = [f for f in simulated if (f.get("barrier") or "").startswith("%spare")]
    assert race and race[0]["severity"] == "error" and race[0]["evidence"]["run_race"]["schedule"]


def test_an_unpaired_arrive_whose_wait_never_meets_it_is_a_hang(tmp_path):
    """The producer fills slot 0 of the `full` ring and the consumer waits on slot 1: each side is
    unpaired, and the consumer's wait gets no arrival at all. The arrive is a hang (a warning
    naming the wait), and the run shows it (a deadlock error)."""
    a, b = "%a_46 = ttg.memdesc_index %full_27[%a_40]", "%a_53 = ttg.memdesc_index %full_27[%a_50]"
    text = BASE.replace(a, "%a_46 = ttg.memdesc_index %full_27[%c0_i32_32]").replace(
        b, "%a_53 = ttg.memdesc_index %full_27[%c1_i32_33]")
    assert text.count("%full_27[%c") == 2
    found = _check(tmp_path, text)
    unpaired = [f for f in found if f["kind"] == "arrive.unpaired"]
    wait = _ops(text, "ttng.wait_barrier", "partition0")[-1]
    assert len(unpaired) == 1 and unpaired[0]["severity"] == "warning" and unpaired[0]["outcome"] == "hang"
    assert wait.line in unpaired[0]["lines"] and unpaired[0]["evidence"]["waits"] == [wait.line]
    simulated = json.loads(run_cli("check", str(tmp_path / "k.ttgir"), "--format", "json").stdout)["findings"]
    assert any(f["severity"] == "error" and f["outcome"] == "hang" for f in simulated)


def test_a_barrier_that_is_only_initialised_is_unused_and_harmless(tmp_path):
    found = _check(tmp_path, _with_spare(BASE, []))
    unused = [f for f in found if f["kind"] == "barrier.unused"]
    assert len(unused) == 1 and unused[0]["barrier"] == "%spare" and unused[0]["outcome"] == "harmless"
    assert not any(f["kind"] == "barrier.unused" for f in _check(tmp_path, BASE))


def _same_partition_wait(text: str) -> list[str]:
    return SPARE_ARRIVE + [f"ttng.wait_barrier %spare, %c0_i32_8 {{async_task_id = array<i32: 0>}} : {BAR}"]


def test_a_same_partition_wait_says_whether_it_is_the_only_guard(tmp_path):
    found = _check(tmp_path, _with_spare(BASE, _same_partition_wait(BASE)))
    same = [f for f in found if f["kind"] == "channel.same_partition"]
    assert same and same[0]["outcome"] == "harmless" and "not the only guard" in same[0]["message"]

    # Move it to where the accumulator-ready wait was: now it is the only guard of the read.
    text = _with_spare(BASE, [])
    ready = _ops(text, "ttng.wait_barrier", "default")[0]
    line = text.splitlines()[ready.line - 1]
    indent = line[: len(line) - len(line.lstrip())]
    mutated = _replace_line(text, ready.line, [indent + x for x in _same_partition_wait(text)])
    same = [f for f in _check(tmp_path, mutated) if f["kind"] == "channel.same_partition"]
    assert same and same[0]["outcome"] == "wrong results" and same[0]["severity"] == "warning"
    assert "It is the only wait before default's read" in same[0]["message"]
