"""A subtiled epilogue that releases its sibling buffers: the shape of the AutoWS addmm bug
(EPILOGUE_SUBTILE=2, generate_subtiled_region) on hand-written minimal IR, and its correct twin.

A persistent kernel loads two single-copy bias halves per tile (a loader partition: wait the
half's empty barrier, expect, TMA copy); the epilogue waits both full barriers and reads half A
in subtile 0, half B in subtile 1. Correct: each subtile releases the half it read. The bug
(fbtriton 3.7.4's WSCodePartition threads each consumer-release token into the subtiled region
as a *shared* argument, so every replicated subtile releases every sibling): each subtile
arrives on both empty barriers. Each count-1 empty barrier then completes two phases per tile,
so from a CTA's second tile on the loader's one wait per tile polls a parity that has come back
(a hang), and half B is released after subtile 0, before subtile 1 reads it (a race). A CTA
with one tile (the fork's own test shape: 64 tiles on 148 SMs) never refills, so it never hangs.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import run_cli

BAR = "!ttg.memdesc<1xi64, #shared, #smem, mutable>"
BARS = "!ttg.memdesc<1x1xi64, #shared, #smem, mutable>"
BUF = "!ttg.memdesc<128x64xf16, #shared1, #smem, mutable>"
BUFS = "!ttg.memdesc<1x128x64xf16, #shared1, #smem, mutable>"
DESC = "!tt.tensordesc<tensor<128x64xf16, #shared1>>"
NAMES = ("full_a", "full_b", "empty_a", "empty_b")


def _barriers() -> str:
    return "".join(f"    %{n}_s = ttg.local_alloc : () -> {BARS}\n"
                   f"    %{n} = ttg.memdesc_index %{n}_s[%c0_i32] : {BARS} -> {BAR}\n"
                   f"    ttng.init_barrier %{n}, 1 : {BAR}\n" for n in NAMES)


def _arrive(name: str) -> str:
    return f"        ttng.arrive_barrier %{name}, 1 : {BAR}\n"


def subtiled_epilogue(release_siblings: bool) -> str:
    """The kernel; `release_siblings` makes each subtile arrive on both empty barriers."""
    after_a = (_arrive("empty_a") + _arrive("empty_b")) if release_siblings else _arrive("empty_a")
    after_b = (_arrive("empty_a") + _arrive("empty_b")) if release_siblings else _arrive("empty_b")
    caps = "%bias_desc, %num_tiles, %bias_a, %bias_b, " + ", ".join(f"%{n}_s" for n in NAMES)
    cap_types = f"{DESC}, i32, {BUFS}, {BUFS}, " + ", ".join([BARS] * 4)
    part_args = (f"%desc: {DESC}, %n: i32, %buf_a: {BUFS}, %buf_b: {BUFS}, "
                 + ", ".join(f"%{n}_p: {BARS}" for n in NAMES))
    return f'''#blocked = #ttg.blocked<{{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}}>
#shared = #ttg.swizzled_shared<{{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}}>
#shared1 = #ttg.nvmma_shared<{{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}}>
#smem = #ttg.shared_memory
module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:100", "ttg.threads-per-warp" = 32 : i32}} {{
  tt.func public @subtiled_bias_epilogue(%bias_desc: {DESC}, %num_tiles: i32) {{
    %c0_i32 = arith.constant 0 : i32
{_barriers()}    %bias_a = ttg.local_alloc : () -> {BUFS}
    %bias_b = ttg.local_alloc : () -> {BUFS}
    ttg.warp_specialize({caps}) attributes {{requestedRegisters = array<i32: 24>}}
    default {{
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %c148 = arith.constant 148 : i32
      %pid = tt.get_program_id x : i32
      %done = scf.for %t = %pid to %num_tiles step %c148 iter_args(%cnt = %c0) -> (i32) : i32 {{
        %ph = arith.andi %cnt, %c1 : i32
        ttng.wait_barrier %full_a, %ph : {BAR}
        ttng.wait_barrier %full_b, %ph : {BAR}
        %a = ttg.memdesc_index %bias_a[%c0_i32] : {BUFS} -> {BUF}
        %va = ttg.local_load %a : {BUF} -> tensor<128x64xf16, #blocked>
{after_a}        %b = ttg.memdesc_index %bias_b[%c0_i32] : {BUFS} -> {BUF}
        %vb = ttg.local_load %b : {BUF} -> tensor<128x64xf16, #blocked>
{after_b}        %next = arith.addi %cnt, %c1 : i32
        scf.yield %next : i32
      }}
      ttg.warp_yield
    }}
    partition0({part_args}) num_warps(1) {{
      %z = arith.constant 0 : i32
      %one = arith.constant 1 : i32
      %step = arith.constant 148 : i32
      %true = arith.constant true
      %pid0 = tt.get_program_id x : i32
      %done0 = scf.for %t = %pid0 to %n step %step iter_args(%cnt = %z) -> (i32) : i32 {{
        %ph = arith.andi %cnt, %one : i32
        %eph = arith.xori %ph, %one : i32
        %x = arith.muli %t, %step : i32
        %ea = ttg.memdesc_index %empty_a_p[%z] : {BARS} -> {BAR}
        ttng.wait_barrier %ea, %eph : {BAR}
        %fa = ttg.memdesc_index %full_a_p[%z] : {BARS} -> {BAR}
        ttng.barrier_expect %fa, 16384, %true : {BAR}
        %a = ttg.memdesc_index %buf_a[%z] : {BUFS} -> {BUF}
        ttng.async_tma_copy_global_to_local %desc[%x, %z] %a, %fa, %true : {DESC}, {BAR} -> {BUF}
        %eb = ttg.memdesc_index %empty_b_p[%z] : {BARS} -> {BAR}
        ttng.wait_barrier %eb, %eph : {BAR}
        %fb = ttg.memdesc_index %full_b_p[%z] : {BARS} -> {BAR}
        ttng.barrier_expect %fb, 16384, %true : {BAR}
        %b = ttg.memdesc_index %buf_b[%z] : {BUFS} -> {BUF}
        ttng.async_tma_copy_global_to_local %desc[%x, %step] %b, %fb, %true : {DESC}, {BAR} -> {BUF}
        %next = arith.addi %cnt, %one : i32
        scf.yield %next : i32
      }}
      ttg.warp_return
    }} : ({cap_types}) -> ()
    tt.return
  }}
}}
'''


def _check(tmp_path: Path, text: str, *extra: str) -> dict:
    path = tmp_path / "k.ttgir"
    path.write_text(text)
    r = run_cli("check", str(path), "--format", "json", *extra)
    assert r.exception is None, r.exception
    return json.loads(r.stdout)


def _errors(doc: dict) -> list[dict]:
    return [f for f in doc["findings"] if f["severity"] == "error"]


def test_each_subtile_releasing_both_halves_hangs_and_races(tmp_path: Path) -> None:
    doc = _check(tmp_path, subtiled_epilogue(release_siblings=True))
    kinds = sorted(f["kind"] for f in _errors(doc))
    assert kinds == ["deadlock.parity_cadence", "race.early_release"], kinds
    cadence = next(f for f in doc["findings"] if f["kind"] == "deadlock.parity_cadence")
    assert cadence["evidence"]["cause"] == "duplicated arrival"
    race = next(f for f in doc["findings"] if f["kind"] == "race.early_release")
    text = subtiled_epilogue(release_siblings=True).split("\n")
    release_b = next(i + 1 for i, ln in enumerate(text) if "ttng.arrive_barrier %empty_b" in ln)
    read_b = next(i + 1 for i, ln in enumerate(text) if "ttg.local_load %b " in ln)
    assert {release_b, read_b} <= set(race["lines"])  # half B released in subtile 0, read in subtile 1


def test_each_subtile_releasing_its_own_half_is_clean(tmp_path: Path) -> None:
    doc = _check(tmp_path, subtiled_epilogue(release_siblings=False))
    assert _errors(doc) == [] and not [f for f in doc["findings"] if f["severity"] == "warning"]
    assert all(r["outcome"] in ("completed", "covered") for r in doc["simulation"]["runs"])


def test_the_double_release_hangs_only_from_a_ctas_second_tile(tmp_path: Path) -> None:
    """The fork's test launch (M=N=1024: 64 tiles on 148 SMs) gives every CTA one tile: the
    loader never waits for a refill, so that launch completes; 200 tiles give CTA 0 two."""
    text = subtiled_epilogue(release_siblings=True)
    one = _check(tmp_path, text, "--args", "num_tiles=64", "--pid", "0", "--grid", "148", "--no-input-points")
    assert not [f for f in one["findings"] if f["kind"].startswith("deadlock.")]
    two = _check(tmp_path, text, "--args", "num_tiles=200", "--pid", "0", "--grid", "148", "--no-input-points")
    assert [f for f in two["findings"] if f["kind"] == "deadlock.parity_cadence"]
