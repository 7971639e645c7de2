"""Loaded and loop-carried values are named the way the IR computes them (issue 21 point 1):
`offs_ptr[tile_id + 1] - offs_ptr[tile_id]`, never an internal name (`carried3@315`, an element
key, a model's `?`). One naming function (analyses/symbolic/source.py) serves every printer:
trip counts in input points and run conditions, limit reasons, phase formulas."""

from __future__ import annotations

import json
from pathlib import Path

from barrier_viz.analyses.symbolic.source import loop_text, source_text
from barrier_viz.ir.parse import parse_ir

from cli_support import run_cli

BAR = "!ttg.memdesc<1xi64, #shared, #smem, mutable>"
BARS = "!ttg.memdesc<1x1xi64, #shared, #smem, mutable>"

# A persistent ragged kernel: each program walks segments tile_id = pid, pid + nprog, ... < S
# (a loop-carried tile_id, as persistent kernels write it), and each segment's length is
# offs[tile_id + 1] - offs[tile_id], loaded in both partitions. The producer arrives once per
# row block, the consumer waits once per row block.
RAGGED = f'''#loc1 = loc("k.py":1:0)
module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32}} {{
  tt.func public @ragged(%offs_ptr: !tt.ptr<i32> loc("offs"(#loc1)), %S: i32 loc("S"(#loc1))) {{
    %c0_i32 = arith.constant 0 : i32
    %bars = ttg.local_alloc : () -> {BARS}
    %bar = ttg.memdesc_index %bars[%c0_i32] : {BARS} -> {BAR}
    ttng.init_barrier %bar, 1 : {BAR}
    ttg.warp_specialize(%bar, %offs_ptr, %S) attributes {{requestedRegisters = array<i32: 24>}}
    default {{
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %c64 = arith.constant 64 : i32
      %pid = tt.get_program_id x : i32
      %np = tt.get_num_programs x : i32
      %done:2 = scf.while (%tile_id_3 = %pid, %ph = %c0) : (i32, i32) -> (i32, i32) {{
        %more = arith.cmpi slt, %tile_id_3, %S : i32
        scf.condition(%more) %tile_id_3, %ph : i32, i32
      }} do {{
      ^bb0(%tile_id_5: i32, %ph_6: i32):
        %lo_p = tt.addptr %offs_ptr, %tile_id_5 : !tt.ptr<i32>, i32
        %lo = tt.load %lo_p : !tt.ptr<i32>
        %hi_p = tt.addptr %lo_p, %c1 : !tt.ptr<i32>, i32
        %hi = tt.load %hi_p : !tt.ptr<i32>
        %len = arith.subi %hi, %lo : i32
        %ph_out = scf.for %r = %c0 to %len step %c64 iter_args(%p = %ph_6) -> (i32) : i32 {{
          ttng.wait_barrier %bar, %p : {BAR}
          %q = arith.xori %p, %c1 : i32
          scf.yield %q : i32
        }}
        %next = arith.addi %tile_id_5, %np : i32
        scf.yield %next, %ph_out : i32, i32
      }}
      ttg.warp_yield
    }}
    partition0(%b1: {BAR}, %o1: !tt.ptr<i32>, %s1: i32) num_warps(1) {{
      %z = arith.constant 0 : i32
      %one = arith.constant 1 : i32
      %c64b = arith.constant 64 : i32
      %pid1 = tt.get_program_id x : i32
      %np1 = tt.get_num_programs x : i32
      scf.for %t = %pid1 to %s1 step %np1 : i32 {{
        %a = tt.addptr %o1, %t : !tt.ptr<i32>, i32
        %a0 = tt.load %a : !tt.ptr<i32>
        %a1p = tt.addptr %a, %one : !tt.ptr<i32>, i32
        %a1 = tt.load %a1p : !tt.ptr<i32>
        %n = arith.subi %a1, %a0 : i32
        scf.for %r1 = %z to %n step %c64b : i32 {{
          ttng.arrive_barrier %b1, 1 : {BAR}
        }}
      }}
      ttg.warp_return
    }} : ({BAR}, !tt.ptr<i32>, i32) -> ()
    tt.return
  }}
}}
'''

INTERNAL = ("carried", "iv@", "(?", "? ", "unknown(tt.load")


def _function(text: str):
    ir = parse_ir(text)
    return next(op for op in ir.operations[0].walk() if op.name == "tt.func")


def _loops(text: str):
    return {op.line: op for op in _function(text).walk() if op.name in ("scf.for", "scf.while")}


def test_a_loaded_segment_length_reads_as_the_ir_computes_it() -> None:
    """The inner loops' bounds: the length of segment tile_id, through the pointer argument's
    name and the addptr chain, in both partitions (the worker's captures lead back to the
    function's arguments), with MLIR's uniquing suffix dropped from the carried tile_id."""
    loops = _loops(RAGGED)
    inner = [op for op in loops.values() if op.name == "scf.for" and op.operands[1] in ("%len", "%n")]
    assert [source_text(op.operands[1], op) for op in inner] == [
        "offs_ptr[tile_id + 1] - offs_ptr[tile_id]", "offs_ptr[t + 1] - offs_ptr[t]"]
    outer = next(op for op in loops.values() if op.name == "scf.for" and op.operands[1] == "%s1")
    assert loop_text(outer) == "for t from pid_x to S step num_programs_x"
    loop = next(op for op in loops.values() if op.name == "scf.while")
    assert loop_text(loop) == "while tile_id < S"


def test_check_prints_no_internal_name_for_loaded_or_carried_values(tmp_path: Path) -> None:
    """Whatever check concludes on the ragged kernel, its input points, conditions, limit reasons
    and findings name loaded and loop-carried values by the IR's expressions."""
    path = tmp_path / "ragged.ttgir"
    path.write_text(RAGGED)
    r = run_cli("check", str(path), "--format", "json")
    doc = json.loads(r.stdout)
    text = json.dumps({k: doc.get(k) for k in ("findings", "input_points", "simulation", "summary")})
    assert not [w for w in INTERNAL if w in text], text[:2000]
    human = run_cli("check", str(path)).stdout
    assert not [w for w in INTERNAL if w in human]
    assert "offs_ptr[1] = offs_ptr[0]" in text  # an empty segment, named as --load names the array


def test_the_dd_kernels_name_their_loaded_trip_counts() -> None:
    """On the H200 data-dependent kernels (evals/cases/gpu-h200.dd-*): the MoE weight-gradient
    kernel's rows come from a tile schedule and group offsets, the jagged norm's from offsets."""
    import gzip

    root = Path(__file__).resolve().parent.parent / "evals" / "cases"
    moe = gzip.decompress((root / "gpu-h200.dd-moe_dw.base" / "input.ttgir.gz").read_bytes()).decode()
    texts = {loop_text(op) for op in _loops(moe).values()}
    assert "for t from pid_x to ntiles_ptr[0] step num_programs_x" in texts
    assert "for k from 0 to goffs_ptr[sched_ptr[t * 4] + 1] - goffs_ptr[sched_ptr[t * 4]] step 64" in texts
    jag = gzip.decompress((root / "gpu-h200.dd-jagged_norm.base" / "input.ttgir.gz").read_bytes()).decode()
    assert any("offs_ptr[s + 1] - offs_ptr[s]" in loop_text(op) for op in _loops(jag).values())
