"""`check` and `explore` on a hand-written persistent GEMM and single-point mutants of it.

Every mutant is made by locating the operation to change through the parser (by partition and
op kind, never by line number), so the truth of each case comes from its construction:
dropping the only release of a ring hangs (no producer), flipping the producer's acquire parity
makes it wait for a release that needs its own fill (cycle), a duplicated arrive completes two
phases per use (cadence), and so on.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from barrier_viz.analyses.model.findings import HANG_KINDS
from barrier_viz.ir.parse import parse_ir

from cli_support import run_cli

FIXTURE = Path(__file__).parent / "fixtures" / "gemm_ws_persistent.ttgir"


def _ops(text: str, name: str, partition: str) -> list:
    ir = parse_ir(text)
    found = []
    for op in ir.walk():
        if op.name != name:
            continue
        region = next((a for a in [op, *op.ancestors()] if a.parent_region is not None and a.parent_region.label == partition), None)
        if region is not None:
            found.append(op)
    return found


def _line(text: str, n: int) -> str:
    return text.splitlines()[n - 1]


def _replace_line(text: str, n: int, new: str | list[str]) -> str:
    lines = text.splitlines()
    lines[n - 1 : n] = [new] if isinstance(new, str) else new
    return "\n".join(lines) + "\n"


def _check(tmp_path: Path, text: str) -> tuple[int, dict]:
    path = tmp_path / "k.ttgir"
    path.write_text(text)
    r = run_cli("check", str(path), "--format", "json")
    assert r.exception is None and "Traceback" not in r.stderr
    return r.exit_code, json.loads(r.stdout)


def _kinds(doc: dict, severity: str | None = None) -> set[str]:
    return {f["kind"] for f in doc["findings"] if severity is None or f["severity"] == severity}


@pytest.fixture(scope="module")
def base() -> str:
    return FIXTURE.read_text()


def test_unmodified_kernel_is_clean(tmp_path, base):
    code, doc = _check(tmp_path, base)
    assert code == 0
    assert _kinds(doc, "error") == set()
    assert doc["simulation"]["runs"], "the kernel must have been simulated"
    assert all(r["outcome"] in ("completed", "covered") for r in doc["simulation"]["runs"])


def test_dropping_the_only_release_is_no_producer(tmp_path, base):
    mma = _ops(base, "ttng.tc_gen5_mma", "partition0")[0]
    line = _line(base, mma.line)
    bar, pred = mma.operands[-2], mma.operands[-1]
    mutated = _replace_line(base, mma.line, line.replace(f", {bar}[{pred}]", ""))
    code, doc = _check(tmp_path, mutated)
    assert code == 1
    loader_wait = _ops(mutated, "ttng.wait_barrier", "partition1")[0]
    hang = [f for f in doc["findings"] if f["kind"] == "deadlock.no_producer"]
    assert hang and loader_wait.line in hang[0]["lines"]


def test_flipped_acquire_parity_is_a_cycle(tmp_path, base):
    wait = _ops(base, "ttng.wait_barrier", "partition1")[0]
    line = _line(base, wait.line)
    phase = wait.operands[1]
    indent = line[: len(line) - len(line.lstrip())]
    mutated = _replace_line(base, wait.line, [
        f"{indent}%flip_one = arith.constant 1 : i32",
        f"{indent}%flipped = arith.xori {phase}, %flip_one : i32",
        line.replace(f"{wait.operands[0]}, {phase}", f"{wait.operands[0]}, %flipped"),
    ])
    code, doc = _check(tmp_path, mutated)
    assert code == 1
    cyc = [f for f in doc["findings"] if f["kind"].startswith("deadlock.")]
    assert cyc and cyc[0]["kind"] == "deadlock.cycle"
    assert wait.line + 2 in cyc[0]["lines"]
    assert cyc[0]["evidence"]["blocked"], "a deadlock carries its witness"


def test_duplicated_arrive_breaks_the_cadence(tmp_path, base):
    arrive = _ops(base, "ttng.arrive_barrier", "default")[0]
    line = _line(base, arrive.line)
    code, doc = _check(tmp_path, _replace_line(base, arrive.line, [line, line]))
    assert code == 1
    assert "deadlock.parity_cadence" in _kinds(doc, "error")


def test_wrong_expect_bytes(tmp_path, base):
    expect = _ops(base, "ttng.barrier_expect", "partition1")[0]
    line = _line(base, expect.line)
    nbytes = expect.literals[0]
    code, doc = _check(tmp_path, _replace_line(base, expect.line, line.replace(f", {nbytes} ", f", {int(nbytes) - 8} ")))
    assert code == 1
    mismatch = [f for f in doc["findings"] if f["kind"] == "expect.bytes_mismatch"]
    assert mismatch and expect.line in mismatch[0]["lines"]


def test_constant_phase_in_loop(tmp_path, base):
    wait = _ops(base, "ttng.wait_barrier", "partition0")[-1]  # the inner-loop full wait
    line = _line(base, wait.line)
    indent = line[: len(line) - len(line.lstrip())]
    mutated = _replace_line(base, wait.line, [
        f"{indent}%const_phase = arith.constant 0 : i32",
        line.replace(f"{wait.operands[0]}, {wait.operands[1]}", f"{wait.operands[0]}, %const_phase"),
    ])
    code, doc = _check(tmp_path, mutated)
    assert code == 1
    assert "phase.constant_in_loop" in _kinds(doc, "error")
    assert _kinds(doc, "error") <= HANG_KINDS | {"race.unsynchronized_read", "race.missing_acquire"}


def test_duplicated_wait_is_redundant_not_a_deadlock(tmp_path, base):
    wait = _ops(base, "ttng.wait_barrier", "partition0")[-1]
    line = _line(base, wait.line)
    code, doc = _check(tmp_path, _replace_line(base, wait.line, [line, line]))
    assert code == 0
    assert "wait.redundant" in _kinds(doc, "info")
    assert not any(k.startswith("deadlock.") for k in _kinds(doc))


def test_dropped_consumer_wait_is_an_unsynchronized_read(tmp_path, base):
    wait = _ops(base, "ttng.wait_barrier", "partition0")[-1]
    code, doc = _check(tmp_path, _replace_line(base, wait.line, []))
    assert "race.unsynchronized_read" in _kinds(doc, "error")
    assert not any(k.startswith("deadlock.") for k in _kinds(doc))


def test_dropped_producer_acquire_is_a_missing_acquire(tmp_path, base):
    wait = _ops(base, "ttng.wait_barrier", "partition1")[0]
    code, doc = _check(tmp_path, _replace_line(base, wait.line, []))
    assert "race.missing_acquire" in _kinds(doc, "error")
    assert not any(k.startswith("deadlock.") for k in _kinds(doc))


def test_explore_clean_and_deadlock(tmp_path, base):
    path = tmp_path / "k.ttgir"
    path.write_text(base)
    r = run_cli("explore", str(path), "--format", "json")
    code, doc = r.exit_code, json.loads(r.stdout)
    assert code == 0 and doc["result"] == "clean_within_bounds"
    assert doc["schema"] == "barrier-viz/explore/v1" and doc["states"] > 0 and len(doc["schedules"]) >= 4

    arrive = _ops(base, "ttng.arrive_barrier", "default")[0]
    path.write_text(_replace_line(base, arrive.line, []))
    r = run_cli("explore", str(path), "--format", "json")
    code, doc = r.exit_code, json.loads(r.stdout)
    assert code == 1 and doc["result"] == "deadlock"
    blocked = doc["findings"][0]["evidence"]["blocked"]
    assert {b["partition"] for b in blocked} and all(b["last_ops"] is not None for b in blocked)


def test_explore_finds_the_race_of_a_dropped_wait(tmp_path, base):
    wait = _ops(base, "ttng.wait_barrier", "partition0")[-1]
    path = tmp_path / "k.ttgir"
    path.write_text(_replace_line(base, wait.line, []))
    r = run_cli("explore", str(path), "--format", "json")
    code, doc = r.exit_code, json.loads(r.stdout)
    assert code == 1 and doc["result"] == "race"
    assert any(f["kind"] == "race.unsynchronized_read" for f in doc["findings"])


PACKED = Path(__file__).parent / "fixtures" / "coverage" / "fa_packed_persistent.ttgir"
BACK_EDGES = ("ttng.wait_barrier %m_empty_g", "ttng.wait_barrier %l_empty_g")


def test_explore_packed_tmem_race_needs_the_outer_back_edges(tmp_path):
    """The next tile's useD=false QK MMA rewrites all owner columns, including m_ij (65) and
    l_i0 (66) that the default partition reads per tile: without the outer-cadence back-edges
    the two are unordered; with them, nothing races."""
    r = run_cli("explore", str(PACKED), "--format", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["result"] == "clean_within_bounds"

    lines = [x for x in PACKED.read_text().split("\n") if not x.strip().startswith(BACK_EDGES)]
    path = tmp_path / "no_back_edges.ttgir"
    path.write_text("\n".join(lines))
    r = run_cli("explore", str(path), "--format", "json")
    doc = json.loads(r.stdout)
    assert r.exit_code == 1 and doc["result"] == "race"
    packed = [f for f in doc["findings"] if f["kind"] == "race.packed_tmem_overwrite"]
    cols = {c for f in packed for c in range(f["evidence"]["columns"][0], f["evidence"]["columns"][1])}
    assert {65, 66} <= cols
    reads = [f for f in packed if "ttng.tmem_load" in (f["evidence"]["first"]["op"], f["evidence"]["second"]["op"])]
    assert reads and all("default" in f["partitions"] for f in reads)
    assert any("tc_gen5_mma" in f["evidence"]["first"]["op"] + f["evidence"]["second"]["op"] for f in reads)
