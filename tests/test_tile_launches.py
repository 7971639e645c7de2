"""Launches the kernel is given: a loop bound `N - (pid + 1) * TILE` cuts N into per-program
tiles (a causal FA backward's off-diagonal loop), so the programs that exist start their tile
below N and N comes in whole tiles. Hand-written minimal IR of that shape."""

from __future__ import annotations

import json
from pathlib import Path

from barrier_viz.analyses.launch.input_points import model_of
from barrier_viz.analyses.launch.trip_counts import Point, observe
from barrier_viz.analysis import Analysis
from barrier_viz.session import select

from cli_support import run_cli

BAR = "!ttg.memdesc<1xi64, #shared, #smem, mutable>"
BARS = "!ttg.memdesc<1x1xi64, #shared, #smem, mutable>"

KERNEL = f'''#shared = #ttg.swizzled_shared<{{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}}>
#smem = #ttg.shared_memory
module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32}} {{
  tt.func public @k(%N: i32) {{
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c64_i32 = arith.constant 64 : i32
    %c128_i32 = arith.constant 128 : i32
    %bars = ttg.local_alloc : () -> {BARS}
    %bar = ttg.memdesc_index %bars[%c0_i32] : {BARS} -> {BAR}
    ttng.init_barrier %bar, 1 : {BAR}
    %pid = tt.get_program_id x : i32
    %next = arith.addi %pid, %c1_i32 : i32
    %end = arith.muli %next, %c128_i32 : i32
    %rest = arith.subi %N, %end : i32
    %n = arith.divsi %rest, %c64_i32 : i32
    ttg.warp_specialize(%bar, %n) attributes {{requestedRegisters = array<i32: 24>}}
    default {{
      scf.for %i = %c0_i32 to %n step %c1_i32 : i32 {{
        ttng.arrive_barrier %bar, 1 : {BAR}
      }}
      ttg.warp_yield
    }}
    partition0(%b: {BAR}, %m: i32) num_warps(1) {{
      %z = arith.constant 0 : i32
      %one = arith.constant 1 : i32
      scf.for %j = %z to %m step %one : i32 {{
        %ph = arith.andi %j, %one : i32
        ttng.wait_barrier %b, %ph : {BAR}
      }}
      ttg.warp_return
    }} : ({BAR}, i32) -> ()
    tt.return
  }}
}}
'''


def _model(tmp_path: Path):
    path = tmp_path / "k.ttgir"
    path.write_text(KERNEL)
    return path, model_of(Analysis(select(str(path), require_function=True)))


def test_a_loop_over_the_rest_of_the_problem_names_the_programs_tile(tmp_path: Path) -> None:
    path, model = _model(tmp_path)
    assert model.tiles == ((0, 0, 128),)
    assert model.args[0].divisibility % 128 == 0  # N in whole tiles (the loop floor-divides the rest by 64)
    # Program 1 at N = 128 would start its tile at 128, past the problem: no such program.
    assert not observe(model, Point(((0, 128),), (1, 0, 0), (2, 1, 1))).valid
    assert observe(model, Point(((0, 256),), (1, 0, 0), (2, 1, 1))).valid


def test_input_points_stay_among_the_programs_that_exist(tmp_path: Path) -> None:
    path, _ = _model(tmp_path)
    doc = json.loads(run_cli("check", str(path), "--format", "json").stdout)
    points = doc["input_points"]["points"]
    assert points
    for p in points:
        n, pid = p["args"].get("N"), p["pids"][0]
        assert n is None or pid * 128 < n, p
