"""The barrier-level interpreter on hand-written minimal IR: each test is one shape a kernel
engineer would recognise, with the reason it hangs or does not in the docstring."""

from __future__ import annotations

import json
from pathlib import Path

from barrier_viz.analyses.sim.schedule import run
from barrier_viz.ir.parse import parse_ir

from cli_support import run_cli

BAR = "!ttg.memdesc<1xi64, #shared, #smem, mutable>"
BARS = "!ttg.memdesc<1x1xi64, #shared, #smem, mutable>"


def kernel(args: str, captures: str, prologue: str, default: str, part_args: str, partition: str,
           capture_types: str) -> str:
    """A one-CTA warp-specialized kernel: `prologue` allocates barriers, `default` and
    `partition0` are the two partitions (partition0 sees the captures as block arguments)."""
    return f'''module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32}} {{
  tt.func public @k({args}) {{
    %c0_i32 = arith.constant 0 : i32
{prologue}
    ttg.warp_specialize({captures}) attributes {{requestedRegisters = array<i32: 24>}}
    default {{
{default}
      ttg.warp_yield
    }}
    partition0({part_args}) num_warps(1) {{
{partition}
      ttg.warp_return
    }} : ({capture_types}) -> ()
    tt.return
  }}
}}
'''


def one_barrier(name: str = "bar", count: int = 1) -> str:
    return (f"    %{name}s = ttg.local_alloc : () -> {BARS}\n"
            f"    %{name} = ttg.memdesc_index %{name}s[%c0_i32] : {BARS} -> {BAR}\n"
            f"    ttng.init_barrier %{name}, {count} : {BAR}\n")


def nested_if_kernel(depth: int) -> str:
    opens = "".join("      scf.if %f {\n" for _ in range(depth))
    closes = "".join("      }\n" for _ in range(depth))
    return kernel("%flag: i1", "%bar, %flag", one_barrier(),
                  f"      %c0 = arith.constant 0 : i32\n      ttng.wait_barrier %bar, %c0 : {BAR}",
                  f"%b1: {BAR}, %f: i1",
                  opens + f"      ttng.arrive_barrier %b1, 1 : {BAR}\n" + closes,
                  f"{BAR}, i1")


def _check(tmp_path: Path, text: str, *extra: str) -> tuple[int, dict]:
    path = tmp_path / "k.ttgir"
    path.write_text(text)
    r = run_cli("check", str(path), "--format", "json", *extra)
    assert r.exception is None, r.exception
    return r.exit_code, json.loads(r.stdout)


def test_ten_thousand_nested_ifs_simulate_without_recursion(tmp_path: Path) -> None:
    """The interpreter drives nested regions with an explicit stack (like the parser), so an
    arrive under 10,000 nested `scf.if` is reached and releases the waiter: no RecursionError
    (which used to surface as an internal error from about 400 levels), and no false hang."""
    text = nested_if_kernel(10_000)
    fn = next(op for op in parse_ir(text).walk() if op.name == "tt.func")
    result = run(fn, policy="favorable")
    assert result.outcome == "completed"
    code, doc = _check(tmp_path, text)
    assert code == 0
    assert not [f for f in doc["findings"] if f["kind"].startswith("deadlock")]
    for command in ("report", "explore"):
        r = run_cli(command, str(tmp_path / "k.ttgir"), "--format", "json")
        assert r.exception is None and r.exit_code == 0, (command, r.exception, r.stderr[-300:])


def _fn(text: str):
    return next(op for op in parse_ir(text).walk() if op.name == "tt.func")


def _deadlocks(doc: dict) -> list[dict]:
    return [f for f in doc["findings"] if f["kind"].startswith("deadlock")]


PER_THREAD = kernel(
    "", "%bar", one_barrier(count=128),
    f"      %c0 = arith.constant 0 : i32\n      ttng.wait_barrier %bar, %c0 : {BAR}",
    f"%b1: {BAR}", f"      ttng.arrive_barrier %b1, 1 {{perThread}} : {BAR}", BAR)


def test_per_thread_arrive_counts_every_thread_of_the_partition(tmp_path: Path) -> None:
    """TLX warp barriers (`USE_WARP_BARRIER`): `arrive_barrier ... {perThread}` lowers to an
    mbarrier.arrive by every thread (no elected leader), so an empty barrier initialised to 128
    is released by one arrive of a 4-warp consumer. Counting it as one arrival made the
    Hopper TLX GEMM 'deadlock'."""
    text = PER_THREAD.replace("partition0(", "partition0(").replace("num_warps(1)", "num_warps(4)")
    assert run(_fn(text), policy="favorable").outcome == "completed"
    code, doc = _check(tmp_path, text)
    assert not _deadlocks(doc)
    # One warp is 32 threads: the 128-count barrier then really never completes.
    assert run(_fn(PER_THREAD), policy="favorable").outcome == "deadlock"


def test_cluster_dims_run_every_cta_of_the_cluster() -> None:
    """TLX/Gluon keep `ttg.num-ctas = 1` and put the cluster in `ttg.cluster-dim-x/y/z`
    (`ctas_per_cga`): every CTA runs the program, so the run has one main thread and one set of
    partitions per CTA (tests/test_cluster_sim.py has the cross-CTA shapes)."""
    text = nested_if_kernel(1).replace('"ttg.num-ctas" = 1 : i32', '"ttg.cluster-dim-x" = 2 : i32, "ttg.num-ctas" = 1 : i32')
    result = run(_fn(text), policy="favorable")
    assert result.outcome == "completed"
    assert sorted(t.name for t in result.machine.threads) == [
        "cta0.default", "cta0.main", "cta0.partition0", "cta1.default", "cta1.main", "cta1.partition0"]


CLC = f'''module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32}} {{
  tt.func public @k() {{
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %cm1 = arith.constant -1 : i32
    %true = arith.constant true
    %rs = ttg.local_alloc : () -> {BARS}
    %r = ttg.memdesc_index %rs[%c0_i32] : {BARS} -> {BAR}
    ttng.init_barrier %r, 1 : {BAR}
    %es = ttg.local_alloc : () -> {BARS}
    %e = ttg.memdesc_index %es[%c0_i32] : {BARS} -> {BAR}
    ttng.init_barrier %e, 2 : {BAR}
    %resp = ttg.local_alloc : () -> !ttg.memdesc<1xui128, #shared, #smem, mutable>
    ttg.warp_specialize(%r, %e, %resp) attributes {{requestedRegisters = array<i32: 24>}}
    default {{
      %cta = nvg.cluster_id
      %t:3 = scf.while (%tile = %c0_i32, %pp = %c1_i32, %cp = %c0_i32) : (i32, i32, i32) -> (i32, i32, i32) {{
        %go = arith.cmpi ne, %tile, %cm1 : i32
        scf.condition(%go) %tile, %pp, %cp : i32, i32, i32
      }} do {{
      ^bb0(%tile: i32, %pp: i32, %cp: i32):
        ttng.wait_barrier %e, %pp, %true : {BAR}
        ttng.barrier_expect %r, 16, %true : {BAR}
        ttng.async_clc_try_cancel %r, %resp : {BAR}, !ttg.memdesc<1xui128, #shared, #smem, mutable>
        %pp2 = arith.xori %pp, %c1_i32 : i32
        ttng.wait_barrier %r, %cp, %true : {BAR}
        %x, %y, %z = ttng.clc_query_cancel %resp : (!ttg.memdesc<1xui128, #shared, #smem, mutable>) -> (i32, i32, i32)
        %none = arith.cmpi eq, %x, %cm1 : i32
        %off = arith.addi %x, %cta : i32
        %next = arith.select %none, %x, %off : i32
        %valid = arith.cmpi sge, %next, %c0_i32 : i32
        ttng.arrive_barrier %e, 1, %valid : {BAR}
        %cp2 = arith.xori %cp, %c1_i32 : i32
        scf.yield %next, %pp2, %cp2 : i32, i32, i32
      }}
      ttg.warp_yield
    }}
    partition0(%r1: {BAR}, %e1: {BAR}, %resp1: !ttg.memdesc<1xui128, #shared, #smem, mutable>) num_warps(1) {{
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %m1 = arith.constant -1 : i32
      %t1 = arith.constant true
      %u:2 = scf.while (%tile = %c0, %cp = %c0) : (i32, i32) -> (i32, i32) {{
        %go = arith.cmpi ne, %tile, %m1 : i32
        scf.condition(%go) %tile, %cp : i32, i32
      }} do {{
      ^bb0(%tile: i32, %cp: i32):
        ttng.wait_barrier %r1, %cp, %t1 : {BAR}
        %x, %y, %z = ttng.clc_query_cancel %resp1 : (!ttg.memdesc<1xui128, #shared, #smem, mutable>) -> (i32, i32, i32)
        %valid = arith.cmpi sge, %x, %c0 : i32
        ttng.arrive_barrier %e1, 1, %valid : {BAR}
        %cp2 = arith.xori %cp, %c1 : i32
        scf.yield %x, %cp2 : i32, i32
      }}
      ttg.warp_return
    }} : ({BAR}, {BAR}, !ttg.memdesc<1xui128, #shared, #smem, mutable>) -> ()
    tt.return
  }}
}}
'''


def test_clc_persistent_loop_gets_tiles_then_no_more(tmp_path: Path) -> None:
    """Blackwell cluster launch control (TLX `*_clc` kernels): the scheduler partition expects
    16 bytes and issues `async_clc_try_cancel`, whose response completes those bytes on the
    barrier (complete_tx, like a TMA copy); every partition reads the next tile with
    `clc_query_cancel` and releases the response. Unmodelled, the bytes never landed and the
    kernel 'hung' at its first tile; modelled, the loop takes a bounded number of tiles and
    ends when the answer is -1 (no cluster left to cancel)."""
    result = run(_fn(CLC), policy="favorable")
    assert result.outcome == "completed"
    loops = [n for n in result.machine.loop_trips.values()]
    assert loops and all(n == 8 for n in loops)  # CLC_TILES tiles per CTA, in every partition
    code, doc = _check(tmp_path, CLC)
    assert not _deadlocks(doc)


def test_clc_response_never_requested_is_a_real_hang() -> None:
    """Without the try_cancel nothing delivers the 16 expected bytes: the consumers' wait on
    the response barrier really hangs (the witness must still be found)."""
    text = CLC.replace("        ttng.async_clc_try_cancel %r, %resp : {BAR}, !ttg.memdesc<1xui128, #shared, #smem, mutable>\n".format(BAR=BAR), "")
    assert "async_clc_try_cancel" not in text
    assert run(_fn(text), policy="favorable").outcome == "deadlock"


def test_unmodelled_op_on_a_barrier_is_a_limit_not_a_deadlock(tmp_path: Path) -> None:
    """An op we do not model that takes the awaited barrier (here a made-up remote-arrive op)
    may be exactly the arrival the waiter needs: the hang is reported as a limit of the
    simulation, never as a deadlock."""
    text = kernel("", "%bar", one_barrier(),
                  f"      %c0 = arith.constant 0 : i32\n      ttng.wait_barrier %bar, %c0 : {BAR}",
                  f"%b1: {BAR}", f"      ttng.remote_signal %b1 : {BAR}", BAR)
    code, doc = _check(tmp_path, text)
    assert not _deadlocks(doc)
    assert doc["simulation"]["runs"][0]["outcome"] == "limit"
    assert "ttng.remote_signal at line" in doc["simulation"]["runs"][0]["reason"]
    _assert_not_judged(code, doc, "ttng.remote_signal at line")
    # Without that op the same wait really has no producer.
    code, doc = _check(tmp_path, text.replace(f"      ttng.remote_signal %b1 : {BAR}\n", ""))
    assert {f["kind"] for f in _deadlocks(doc)} == {"deadlock.no_producer"}


def _named(default_ops: str, partition_ops: str) -> str:
    consts = "      %c9 = arith.constant 9 : i32\n      %c10 = arith.constant 10 : i32\n      %c256 = arith.constant 256 : i32\n"
    return kernel("", "%bar", one_barrier(), consts + default_ops, f"%b1: {BAR}",
                  consts + partition_ops, BAR).replace("num_warps(1)", "num_warps(4)")


def test_named_barrier_pingpong_completes() -> None:
    """TLX pingpong: two 4-warp groups hand a named barrier back and forth (bar.arrive by one,
    bar.sync by the other, 256 threads): each generation gets its 256 threads."""
    text = _named("      ttng.wait_barrier_named %c9, %c256 : i32, i32\n      ttng.arrive_barrier_named %c10, %c256 : i32, i32",
                  "      ttng.arrive_barrier_named %c9, %c256 : i32, i32\n      ttng.wait_barrier_named %c10, %c256 : i32, i32")
    assert run(_fn(text), policy="favorable").outcome == "completed"


def test_named_barrier_syncs_on_different_ids_hang() -> None:
    """Each group bar.syncs on its own id expecting 256 threads but only its 128 arrive: the
    named-barrier deadlock (every thread stuck in bar.sync) is found, with the barrier named."""
    text = _named("      ttng.wait_barrier_named %c9, %c256 : i32, i32",
                  "      ttng.wait_barrier_named %c10, %c256 : i32, i32")
    result = run(_fn(text), policy="favorable")
    assert result.outcome == "deadlock"
    assert {b.wait.slot.named for b in result.blocked} == {9, 10}


def test_budget_stops_a_loop_nest_without_barrier_ops(tmp_path: Path) -> None:
    """A partition can run for a long time between two barrier operations (a loop nest with
    none): the step budget is charged inside the interpreter's step loop, so the run stops
    with `bound_reached` and says what it covered instead of running on."""
    from barrier_viz.analyses.sim.budget import Budget
    from barrier_viz.analyses.sim.deadlock import analyse_deadlocks

    loops = ("      %n = arith.constant 1000000000 : i32\n      %one = arith.constant 1 : i32\n"
             "      scf.for %i = %c0 to %n step %one : i32 {\n        %x = arith.addi %i, %one : i32\n      }\n")
    text = kernel("", "%bar", one_barrier(),
                  f"      %c0 = arith.constant 0 : i32\n" + loops + f"      ttng.wait_barrier %bar, %c0 : {BAR}",
                  f"%b1: {BAR}", f"      ttng.arrive_barrier %b1, 1 : {BAR}", BAR)
    dyn = analyse_deadlocks(_fn(text), {}, budget=Budget(200_000))
    assert dyn.bound_reached and not dyn.findings
    summary = dyn.summary()
    assert summary["bound_reached"] is True
    first = summary["runs"][0]
    assert first["outcome"] == "bound_reached" and first["covered"]["operations"] > 0


PER_TILE = kernel(
    "%n: i32", "%n", "",
    "      %c1 = arith.constant 1 : i32\n"
    "      scf.for %t = %c0_i32 to %n step %c1 : i32 {\n"
    f"        %bs = ttg.local_alloc : () -> {BARS}\n"
    f"        %b = ttg.memdesc_index %bs[%c0_i32] : {BARS} -> {BAR}\n"
    f"        ttng.init_barrier %b, 1 : {BAR}\n"
    f"        ttng.arrive_barrier %b, 1 : {BAR}\n"
    f"        ttng.wait_barrier %b, %c0_i32 : {BAR}\n"
    "      }",
    "%n1: i32", "", "i32")


def test_barrier_allocated_per_tile_needs_no_ring_wrap() -> None:
    """A barrier allocated and initialised inside the persistent loop is a fresh barrier every
    tile: it completes one phase per tile and never wraps. Demanding that it wrap made the
    bound search escalate the problem size to its largest candidate (the 7-13 s `check` of
    the flattened persistent GEMMs)."""
    from barrier_viz.analyses.sim.machine import Params
    from barrier_viz.analyses.sim.schedule import choose_params

    assert choose_params(_fn(PER_TILE), Params(max_steps=60_000), min_trips=2).int_args == 16


def test_gluon_clc_ops_are_modelled_like_tlx_ones() -> None:
    """Gluon (upstream ops) spells CLC as `clc_try_cancel %response, %bar` (operands in the other
    order), `clc_load_result`, `clc_is_canceled` and `clc_get_program_id`: the same answer
    flows through them, so the persistent loop ends after the same bounded number of tiles."""
    resp = "!ttg.memdesc<1xui128, #shared, #smem, mutable>"
    text = CLC.replace(f"ttng.async_clc_try_cancel %r, %resp : {BAR}, {resp}", f"ttng.clc_try_cancel %resp, %r : {resp}, {BAR}")
    for query, var in (("%x, %y, %z = ttng.clc_query_cancel %resp : ", "resp"), ("%x, %y, %z = ttng.clc_query_cancel %resp1 : ", "resp1")):
        text = text.replace(query + f"({resp}) -> (i32, i32, i32)",
                            f"%raw = ttng.clc_load_result %{var} : {resp} -> i128\n"
                            f"        %ok = ttng.clc_is_canceled %raw : i128 -> i1\n"
                            f"        %pid = ttng.clc_get_program_id %raw, x : i128 -> i32\n"
                            f"        %x = arith.select %ok, %pid, %cm1 : i32")
    text = text.replace("%m1 = arith.constant -1 : i32", "%m1 = arith.constant -1 : i32\n      %cm1 = arith.constant -1 : i32")
    assert "clc_query_cancel" not in text and "async_clc" not in text
    result = run(_fn(text), policy="favorable")
    assert result.outcome == "completed"
    assert all(n == 8 for n in result.machine.loop_trips.values())


def _endless_loop_kernel() -> str:
    loops = ("      %n = arith.constant 1000000000 : i32\n      %one = arith.constant 1 : i32\n"
             "      scf.for %i = %c0 to %n step %one : i32 {\n        %x = arith.addi %i, %one : i32\n      }\n")
    return kernel("", "%bar", one_barrier(),
                  "      %c0 = arith.constant 0 : i32\n" + loops + f"      ttng.wait_barrier %bar, %c0 : {BAR}",
                  f"%b1: {BAR}", f"      ttng.arrive_barrier %b1, 1 : {BAR}", BAR)


def test_explore_step_budget_bounds_its_bounds_search_and_runs() -> None:
    """`explore --steps` is one budget for the whole command, counted in interpreter steps: the
    bounds search and every schedule stop inside a long loop nest, and the result says
    `bound_reached` and why, instead of running the loop to its end (what made the
    causal-attention lit file take 200 s). Steps, not seconds: two runs stop at the same
    operation, whatever the machine's load (what `explore --timeout` alone did not)."""
    from barrier_viz.analyses.sim.explore import explore

    first, again = (explore(_fn(_endless_loop_kernel()), steps=40_000, timeout=600) for _ in range(2))
    assert first.result == "bound_reached" and first.reason and not first.timed_out
    assert all(r.outcome == "bound_reached" for r in first.runs)
    assert {**first.bounds(), "bounds_seconds": 0} == {**again.bounds(), "bounds_seconds": 0}
    assert [(r.policy, r.steps) for r in first.runs] == [(r.policy, r.steps) for r in again.runs]


def test_explore_timeout_is_a_backstop_reported_as_not_judged() -> None:
    """The wall clock stops a step budget it cannot finish in time: the result is "not judged
    within time", never `clean_within_bounds` or a `bound_reached` the budget did not choose."""
    from barrier_viz.analyses.sim.explore import explore

    res = explore(_fn(_endless_loop_kernel()), steps=10**12, timeout=0.5)
    assert res.timed_out and res.result == "not_judged"
    assert res.reason.startswith("not judged within time: the --timeout 0.5 s wall-clock backstop")
    assert res.bounds()["timed_out"] is True


def loaded_trip_kernel(written: bool = False) -> str:
    """The consumer waits 8 times; the producer arrives once per iteration of a loop whose count
    it loads from memory (only it loads it). `written`: the kernel also stores through that
    pointer, so the load is not an input (analyses.program.loaded) and its count stays unknown."""
    store = "      tt.store %p1, %z : !tt.ptr<i32>\n" if written else ""
    return kernel("%ptr: !tt.ptr<i32>", "%bar, %ptr", one_barrier(),
                  "      %c0 = arith.constant 0 : i32\n      %c1 = arith.constant 1 : i32\n      %c8 = arith.constant 8 : i32\n"
                  "      scf.for %i = %c0 to %c8 step %c1 iter_args(%p = %c0) -> (i32) : i32 {\n"
                  f"        ttng.wait_barrier %bar, %p : {BAR}\n"
                  "        %q = arith.xori %p, %c1 : i32\n        scf.yield %q : i32\n      }",
                  f"%b1: {BAR}, %p1: !tt.ptr<i32>",
                  "      %z = arith.constant 0 : i32\n      %one = arith.constant 1 : i32\n"
                  "      %n = tt.load %p1 : !tt.ptr<i32>\n" + store +
                  "      scf.for %i = %z to %n step %one : i32 {\n"
                  f"        ttng.arrive_barrier %b1, 1 : {BAR}\n      }}",
                  f"{BAR}, !tt.ptr<i32>")


def test_runtime_trip_count_in_one_partition_only_is_a_limit(tmp_path: Path) -> None:
    """The producer's loop count is read from memory (a runtime value only it sees) while the
    consumer's is a known constant: the interpreter must assume a count for the producer, so a
    hang from the two counts disagreeing is not something the hardware is shown to take."""
    text = loaded_trip_kernel()
    code, doc = _check(tmp_path, text)
    assert not _deadlocks(doc)
    # The loaded count is an input (analyses.program.loaded) only the producer reads: the schedule in
    # which the two counts disagree stops at a limit.
    first = next(r for r in doc["simulation"]["runs"] if r["outcome"] != "completed")
    assert first["outcome"] == "limit" and "for i from 0 to ptr[0] step 1" in first["reason"]
    assert "trip count loaded from memory (this run read ptr[0])" in first["reason"]
    # Never "0 errors" as if clean: the hang possibility is a warning naming the loop and the wait.
    limit = _assert_not_judged(code, doc, "trip count loaded from memory")
    assert {_line(text, "scf.for %i = %z to %n"), _line(text, "ttng.wait_barrier %bar, %p")} <= set(limit["lines"])


def test_wait_on_a_barrier_only_the_waiter_arrives_on_later_is_named_a_self_wait(tmp_path: Path) -> None:
    """A partition-local barrier (an MMA-completion barrier) waited on before the op that
    arrives on it, in the same partition: no other partition can release it, so the hang holds
    on every schedule; the finding says so instead of describing a cross-partition cycle."""
    text = kernel("", "%bar", one_barrier(),
                  "      %c0 = arith.constant 0 : i32",
                  f"%b1: {BAR}",
                  f"      %z = arith.constant 0 : i32\n      ttng.wait_barrier %b1, %z : {BAR}\n"
                  f"      ttng.arrive_barrier %b1, 1 : {BAR}", BAR)
    code, doc = _check(tmp_path, text)
    cycles = [f for f in doc["findings"] if f["kind"] == "deadlock.cycle"]
    assert cycles and cycles[0]["evidence"]["cause"] == "self-wait"
    assert "only partition0 itself arrives" in cycles[0]["message"]


def test_runtime_if_deciding_barrier_ops_runs_both_sides_without_a_verdict(tmp_path: Path) -> None:
    """The producer arrives only under `scf.if` on a value read from memory (a runtime flag):
    the then-side completes; the else-side run would hang the consumer. Which side the GPU takes
    is unknown, so the second run is reported as a `limit` naming the if, never as a deadlock."""
    text = kernel("%ptr: !tt.ptr<i1>", "%bar, %ptr", one_barrier(),
                  f"      %c0 = arith.constant 0 : i32\n      ttng.wait_barrier %bar, %c0 : {BAR}",
                  f"%b1: {BAR}, %p1: !tt.ptr<i1>",
                  "      %f = tt.load %p1 : !tt.ptr<i1>\n      scf.if %f {\n"
                  f"        ttng.arrive_barrier %b1, 1 : {BAR}\n      }}",
                  f"{BAR}, !tt.ptr<i1>")
    code, doc = _check(tmp_path, text)
    assert not _deadlocks(doc)
    runs = {r["policy"]: r for r in doc["simulation"]["runs"]}
    assert runs["favorable"]["outcome"] in ("completed", "covered")
    assert runs["favorable:else"]["outcome"] == "limit" and "scf.if at line" in runs["favorable:else"]["reason"]
    _assert_not_judged(code, doc, "scf.if at line")


def _line(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)


def _assert_not_judged(code: int, doc: dict, reason: str) -> dict:
    """A run that stopped at a limit, with no error reported: the verdict is `not judged` (exit
    4), never clean, and a `limit.not_judged` warning carries the reason."""
    assert doc["summary"]["verdict"] == "not judged" and doc["summary"]["errors"] == 0
    assert code == 4
    assert any("stopped at a limit" in why for why in doc["summary"]["not_judged"])
    limit = next(f for f in doc["findings"] if f["kind"] == "limit.not_judged" and reason in f["message"])
    assert limit["severity"] == "warning" and limit["outcome"] == "not judged" and limit["lines"]
    return limit
