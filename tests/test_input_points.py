"""Input points on hand-written minimal IR: one producer and one consumer partition hand a
2-slot ring (full/empty barriers) to each other; the loops' trip counts come from the kernel's
arguments and program ids the way compilers write them. Each shape has a correct variant (clean
at every input point) and a buggy one that only hangs at some launch, which `check` must name.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import run_cli

MD = "!ttg.memdesc<2x1xi64, #shared, #smem, mutable>"
M1 = "!ttg.memdesc<1xi64, #shared, #smem, mutable>"


def kernel(setup: str, producer: str, consumer: str, header: str = "%K: i32, %N: i32, %flag: i32") -> str:
    """A two-partition kernel; `setup` runs in both partitions (after the captures are bound
    to %K, %N, %flag, %full, %empty), `producer`/`consumer` are their bodies."""
    args = "%K, %N, %flag"
    caps = "%K: i32, %N: i32, %flag: i32, %full: " + MD + ", %empty: " + MD
    consts = "\n".join(f"      %c{v} = arith.constant {v} : i32" for v in (0, 1, 2, 3, 4, 63, 64, 127, 128))
    inits = []
    for ring in ("full", "empty"):
        for s in (0, 1):
            inits.append(f"    %{ring}{s} = ttg.memdesc_index %{ring}[%c{s}] : {MD} -> {M1}")
            inits.append(f"    ttng.init_barrier %{ring}{s}, 1 : {M1}")
    body = "\n".join(inits)
    return f"""#shared = #ttg.swizzled_shared<{{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}}>
#smem = #ttg.shared_memory
module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:100", "ttg.threads-per-warp" = 32 : i32}} {{
  tt.func public @k({header}) {{
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %full = ttg.local_alloc : () -> {MD}
    %empty = ttg.local_alloc : () -> {MD}
{body}
    ttg.warp_specialize({args}, %full, %empty)
    default {{
      ttg.warp_yield
    }}
    partition0({caps}) num_warps(1) {{
{consts}
{setup}
{producer}
      ttg.warp_return
    }}
    partition1({caps}) num_warps(4) {{
{consts}
{setup}
{consumer}
      ttg.warp_return
    }} : (i32, i32, i32, {MD}, {MD}) -> ()
    tt.return
  }}
}}
"""


def ring_loop(side: str, lb: str, ub: str, step: str = "%c1", iv_offset: str | None = None) -> str:
    """One ring use per iteration: the producer waits `empty` (pre-inverted parity) and arrives
    on `full`; the consumer waits `full` and arrives on `empty`. The use index is iv - offset."""
    wait, arrive, flip = ("empty", "full", True) if side == "producer" else ("full", "empty", False)
    idx = f"%u = arith.subi %i, {iv_offset} : i32" if iv_offset else "%u = arith.addi %i, %c0 : i32"
    par = "%par = arith.xori %p, %c1 : i32" if flip else "%par = arith.addi %p, %c0 : i32"
    return f"""      scf.for %i = {lb} to {ub} step {step} : i32 {{
        {idx}
        %s = arith.remsi %u, %c2 : i32
        %q = arith.divsi %u, %c2 : i32
        %p = arith.andi %q, %c1 : i32
        {par}
        %w = ttg.memdesc_index %{wait}[%s] : {MD} -> {M1}
        ttng.wait_barrier %w, %par : {M1}
        %a = ttg.memdesc_index %{arrive}[%s] : {MD} -> {M1}
        ttng.arrive_barrier %a, 1 : {M1}
      }}"""


def peeled_consumer(guard: str | None, ub: str) -> str:
    """The consumer's first use peeled out of its loop; `guard` predicates it (None: it is
    unconditional, the bug)."""
    pred = f", {guard}" if guard else ""
    return f"""      %f0 = ttg.memdesc_index %full[%c0] : {MD} -> {M1}
      ttng.wait_barrier %f0, %c0{pred} : {M1}
      %e0 = ttg.memdesc_index %empty[%c0] : {MD} -> {M1}
      ttng.arrive_barrier %e0, 1{pred} : {M1}
{ring_loop("consumer", "%c1", ub)}"""


SPLITK = """      %pidk = tt.get_program_id y : i32
      %t0 = arith.addi %K, %c63 : i32
      %tiles = arith.divsi %t0, %c64 : i32
      %p0 = arith.addi %tiles, %c3 : i32
      %per = arith.divsi %p0, %c4 : i32
      %lo = arith.muli %pidk, %per : i32
      %hi0 = arith.addi %lo, %per : i32
      %hi = arith.minsi %hi0, %tiles : i32
      %n = arith.subi %hi, %lo : i32
      %has = arith.cmpi sgt, %n, %c0 : i32"""

CAUSAL = """      %pidm = tt.get_program_id x : i32
      %rows = arith.muli %pidm, %c128 : i32
      %hi = arith.minsi %rows, %N : i32
      %h0 = arith.addi %hi, %c63 : i32
      %n = arith.divsi %h0, %c64 : i32
      %has = arith.cmpi sgt, %hi, %c0 : i32"""

PERSISTENT = """      %pid = tt.get_program_id x : i32
      %np = tt.get_num_programs x : i32
      %t0 = arith.addi %K, %c127 : i32
      %tiles = arith.divsi %t0, %c128 : i32
      %has = arith.cmpi slt, %pid, %tiles : i32
      %r0 = arith.subi %tiles, %pid : i32
      %r1 = arith.addi %r0, %np : i32
      %r2 = arith.subi %r1, %c1 : i32
      %n = arith.divsi %r2, %np : i32"""


def _check(tmp_path: Path, text: str, *extra: str) -> tuple[int, dict]:
    path = tmp_path / "k.ttgir"
    path.write_text(text)
    r = run_cli("check", str(path), "--format", "json", *extra)
    assert r.exception is None and "Traceback" not in r.stderr, r.stderr
    return r.exit_code, json.loads(r.stdout)


def _errors(doc: dict) -> list[dict]:
    return [f for f in doc["findings"] if f["severity"] == "error"]


def _assert_clean_everywhere(code: int, doc: dict) -> None:
    assert code == 0 and _errors(doc) == []
    points = doc["input_points"]["points"]
    assert points, "boundary launches must have been simulated"
    assert all(p["outcome"] == "completed" for p in points), points


def _assert_hang_named(code: int, doc: dict, *names: str) -> dict:
    assert code == 1
    hangs = [f for f in _errors(doc) if f["kind"].startswith("deadlock.")]
    assert hangs, doc["findings"]
    f = next((h for h in hangs if "input" in h["evidence"]), None)
    assert f is not None, "the hang must carry the launch that produces it"
    for name in names:
        assert f"{name}=" in f["message"], f["message"]
    return f


def test_split_k_last_split_empty(tmp_path):
    producer = ring_loop("producer", "%c0", "%n")
    good = kernel(SPLITK, producer, peeled_consumer("%has", "%n"))
    _assert_clean_everywhere(*_check(tmp_path, good))
    bad = kernel(SPLITK, producer, peeled_consumer(None, "%n"))
    code, doc = _check(tmp_path, bad)
    # the default launch (pid_y = 0, large K) does not hang; the last split of a small K does
    assert doc["simulation"]["runs"][0]["outcome"] in ("completed", "covered")
    f = _assert_hang_named(code, doc, "K", "pid_y")
    assert f["evidence"]["input"]["pids"][1] > 0
    assert "runs no iteration" in f["message"]


def test_causal_first_rows_have_no_block(tmp_path):
    producer = ring_loop("producer", "%c0", "%n")
    good = kernel(CAUSAL, producer, peeled_consumer("%has", "%n"))
    _assert_clean_everywhere(*_check(tmp_path, good))
    bad = kernel(CAUSAL, producer, peeled_consumer(None, "%n"))
    f = _assert_hang_named(*_check(tmp_path, bad), "pid_x")
    assert f["evidence"]["input"]["pids"][0] == 0


def test_persistent_with_fewer_tiles_than_ctas(tmp_path):
    producer = ring_loop("producer", "%pid", "%tiles", "%np", iv_offset="%pid")
    consumer_loop = ring_loop("consumer", "%pid", "%tiles", "%np", iv_offset="%pid")
    good = kernel(PERSISTENT, producer, consumer_loop)
    _assert_clean_everywhere(*_check(tmp_path, good))
    # the consumer's first tile peeled, unguarded: a CTA with no tile waits forever
    peeled = peeled_consumer(None, "%n")
    f = _assert_hang_named(*_check(tmp_path, kernel(PERSISTENT, producer, peeled)), "pid_x")
    inp = f["evidence"]["input"]
    assert inp["pids"][0] < inp["grid"][0], "a program id below the program count the kernel reads"


def test_sequence_length_not_a_multiple_of_the_block(tmp_path):
    ceil = "      %n0 = arith.addi %N, %c63 : i32\n      %nc = arith.divsi %n0, %c64 : i32\n      %nf = arith.divsi %N, %c64 : i32"
    good = kernel(ceil, ring_loop("producer", "%c0", "%nc"), ring_loop("consumer", "%c0", "%nc"))
    _assert_clean_everywhere(*_check(tmp_path, good))
    # the producer rounds down, the consumer up: a ragged tail is never filled
    bad = kernel(ceil, ring_loop("producer", "%c0", "%nf"), ring_loop("consumer", "%c0", "%nc"))
    code, doc = _check(tmp_path, bad)
    f = _assert_hang_named(code, doc, "N")
    assert f["evidence"]["input"]["args"]["N"] % 64 != 0


def test_divisibility_rules_out_the_ragged_launch(tmp_path):
    """With N divisible by 64 (tt.divisibility) the same mismatch can never hang: no point may
    claim it does (a false deadlock from an impossible launch is worse than a miss)."""
    ceil = "      %n0 = arith.addi %N, %c63 : i32\n      %nc = arith.divsi %n0, %c64 : i32\n      %nf = arith.divsi %N, %c64 : i32"
    bad = kernel(ceil, ring_loop("producer", "%c0", "%nf"), ring_loop("consumer", "%c0", "%nc"),
                 header="%K: i32, %N: i32 {tt.divisibility = 64 : i32}, %flag: i32")
    code, doc = _check(tmp_path, bad)
    assert _errors(doc) == [] and code == 0
    for p in doc["input_points"]["points"]:
        assert p["args"]["N"] % 64 == 0


def test_assumption_rules_out_the_ragged_launch(tmp_path):
    ceil = ("      %n0 = arith.addi %N, %c63 : i32\n      %nc = arith.divsi %n0, %c64 : i32\n"
            "      %nf = arith.divsi %N, %c64 : i32\n      %rem = arith.remsi %N, %c64 : i32\n"
            "      %ok = arith.cmpi eq, %rem, %c0 : i32\n      llvm.intr.assume %ok : i1")
    bad = kernel(ceil, ring_loop("producer", "%c0", "%nf"), ring_loop("consumer", "%c0", "%nc"))
    code, doc = _check(tmp_path, bad)
    assert _errors(doc) == [] and code == 0, doc["findings"]
    for p in doc["input_points"]["points"]:
        assert p["args"]["N"] % 64 == 0


def test_runtime_flag_in_one_partition_only(tmp_path):
    setup = "      %on = arith.cmpi ne, %flag, %c0 : i32\n      %f0 = ttg.memdesc_index %full[%c0] : " + MD + " -> " + M1
    producer = f"""      scf.if %on {{
        ttng.arrive_barrier %f0, 1 : {M1}
      }}"""
    guarded = f"""      scf.if %on {{
        ttng.wait_barrier %f0, %c0 : {M1}
      }}"""
    good = kernel(setup, producer, guarded)
    _assert_clean_everywhere(*_check(tmp_path, good))
    bad = kernel(setup, producer, f"      ttng.wait_barrier %f0, %c0 : {M1}")
    f = _assert_hang_named(*_check(tmp_path, bad), "flag")
    assert f["evidence"]["input"]["args"]["flag"] == 0
    assert "else branch" in f["message"]


def test_user_launch_is_simulated_and_listed(tmp_path):
    producer = ring_loop("producer", "%c0", "%n")
    bad = kernel(SPLITK, producer, peeled_consumer(None, "%n"))
    code, doc = _check(tmp_path, bad, "--args", "K=128", "--pid", "0,3", "--no-input-points")
    assert code == 1
    launch = doc["input_points"]["launch"]
    assert launch["args"]["K"] == 128 and launch["pids"][:2] == [0, 3] and launch["outcome"] == "deadlock"
    code, doc = _check(tmp_path, bad, "--args", "K=4096", "--pid", "0,0", "--no-input-points")
    assert code == 0 and doc["input_points"]["launch"]["outcome"] in ("completed", "covered")


def test_bad_launch_values_are_one_line_errors(tmp_path):
    path = tmp_path / "k.ttgir"
    producer = ring_loop("producer", "%c0", "%n")
    path.write_text(kernel(SPLITK, producer, peeled_consumer("%has", "%n")))
    for extra, needle in ((("--args", "Q=3"), "no integer argument named 'Q'"), (("--args", "K"), "NAME=VALUE"),
                          (("--pid", "x"), "not an integer"), (("--pid", "1,2,3,4"), "1 to 3")):
        r = run_cli("check", str(path), *extra)
        assert r.exit_code == 2 and "Traceback" not in r.stderr
        assert r.stderr.count("\n") == 1 and needle in r.stderr, r.stderr


def test_same_input_same_bytes(tmp_path):
    producer = ring_loop("producer", "%c0", "%n")
    bad = kernel(CAUSAL, producer, peeled_consumer(None, "%n"))
    path = tmp_path / "k.ttgir"
    path.write_text(bad)
    outs = {run_cli("check", str(path), "--format", "json").stdout for _ in range(2)}
    assert len(outs) == 1


def test_report_and_digest_list_the_points(tmp_path):
    producer = ring_loop("producer", "%c0", "%n")
    path = tmp_path / "k.ttgir"
    path.write_text(kernel(SPLITK, producer, peeled_consumer("%has", "%n")))
    compact = run_cli("report", str(path), "--format", "compact").stdout
    line = next(x for x in compact.splitlines() if x.startswith("input points: "))
    assert "pid_y=" in line and "completed" in line
    md = run_cli("report", str(path)).stdout
    assert "Input points (boundary launches" in md and "runs no iteration" in md
