"""Two cluster rules for real fork bugs, on hand-written minimal IR of the shapes the TLX CLC
helpers produce (and on the history cases when the eval cases are present):

* `race.remote_after_exit` (analyses/cluster/remote_exit.py, the fork's 798274bbb): a remote arrive into
  a CTA that no thread of that CTA waits for any more: the target can exit first, and the
  distributed shared-memory access then faults;
* `wait.remote_barrier` (analyses/rules/remote_wait.py, the fork's 51dd02098): a wait through a
  `map_to_remote_buffer` view polls a shared::cluster address with a shared::cta instruction.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from barrier_viz.analyses.cluster.remote_exit import lowering_exit_sync
from barrier_viz.ir.parse import parse_ir

from cli_support import check_text, run_cli

REPO = Path(__file__).resolve().parent.parent
CASES = REPO / "evals" / "cases"
BAR = "!ttg.memdesc<1xi64, #shared, #smem, mutable>"
BARS = "!ttg.memdesc<1x1xi64, #shared, #smem, mutable>"
REMOTE = "!ttg.memdesc<1xi64, #shared, #ttng.shared_cluster_memory, mutable>"
REMOTES = "!ttg.memdesc<1x1xi64, #shared, #ttng.shared_cluster_memory, mutable>"
HEADER = ('#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>\n'
          '#smem = #ttg.shared_memory\n'
          '#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1>\n')
TMEM = "      %acc = ttng.tmem_alloc : () -> !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>\n"


def module(body: str, extra: str = "") -> str:
    return HEADER + ('module attributes {' + extra + '"ttg.cluster-dim-x" = 2 : i32, "ttg.cluster-dim-y" = 1 : i32, '
                     '"ttg.cluster-dim-z" = 1 : i32, "ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, '
                     'ttg.target = "cuda:100"} {\n') + body + "}\n"


def rounds(last_arrive_skipped: bool, tmem: bool = False) -> str:
    """The CLC multi-CTA handshake of TLX's `clc_producer`/`clc_consumer(multi_ctas=True)`, in
    three rounds: CTA 0 (the producer) waits on its `empty` barrier before each round but the
    first, then hands CTA 1 the round's answer (a remote arrive on CTA 1's `full`, standing for
    the multicast CLC response); CTA 1 waits on its `full`, then releases the round by arriving
    on CTA 0's `empty` through the remote view. After the last round no producer call follows,
    so CTA 0 waits no more and leaves: the fix (798274bbb) predicates CTA 1's arrive on "a tile
    was returned" (here: not the last round)."""
    release = "%release" if last_arrive_skipped else "%is1"
    return f'''  tt.func public @k() {{
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c2_i32 = arith.constant 2 : i32
    %c3_i32 = arith.constant 3 : i32
    %true = arith.constant true
    %rank = nvg.cluster_id
    %empties = ttg.local_alloc : () -> {BARS}
    %empty = ttg.memdesc_index %empties[%c0_i32] : {BARS} -> {BAR}
    ttng.init_barrier %empty, 1 : {BAR}
    %fulls = ttg.local_alloc : () -> {BARS}
    %full = ttg.memdesc_index %fulls[%c0_i32] : {BARS} -> {BAR}
    ttng.init_barrier %full, 1 : {BAR}
{TMEM if tmem else ""}    %is0 = arith.cmpi eq, %rank, %c0_i32 : i32
    %is1 = arith.cmpi eq, %rank, %c1_i32 : i32
    %remote = ttng.map_to_remote_buffer %empty, %c0_i32 : {BAR} -> {REMOTE}
    %answer = ttng.map_to_remote_buffer %full, %c1_i32 : {BAR} -> {REMOTE}
    scf.for %i = %c0_i32 to %c3_i32 step %c1_i32 : i32 {{
      %first = arith.cmpi eq, %i, %c0_i32 : i32
      %later = arith.xori %first, %true : i1
      %waits = arith.andi %is0, %later : i1
      %prev = arith.subi %i, %c1_i32 : i32
      %phase = arith.andi %prev, %c1_i32 : i32
      ttng.wait_barrier %empty, %phase, %waits : {BAR}
      ttng.arrive_barrier %answer, 1, %is0 : {REMOTE}
      %own = arith.andi %i, %c1_i32 : i32
      ttng.wait_barrier %full, %own, %is1 : {BAR}
      %last = arith.cmpi eq, %i, %c2_i32 : i32
      %more = arith.xori %last, %true : i1
      %release = arith.andi %is1, %more : i1
      ttng.arrive_barrier %remote, 1, {release} : {REMOTE}
    }}
    tt.return
  }}
'''




def _kind(doc: dict, kind: str) -> list[dict]:
    return [f for f in doc["findings"] if f["kind"] == kind]


# -- race.remote_after_exit ------------------------------------------------------------------------
def test_a_trailing_remote_arrive_into_a_cta_that_waits_no_more_is_an_error(tmp_path: Path) -> None:
    """CTA 1's arrive of the last round (line of the arrive_barrier) reaches CTA 0's barrier
    after CTA 0's last wait: nothing keeps CTA 0 alive until it lands."""
    text = module(rounds(last_arrive_skipped=False))
    doc = check_text(tmp_path, text)
    hits = _kind(doc, "race.remote_after_exit")
    arrive = next(i for i, l in enumerate(text.split("\n"), 1) if "ttng.arrive_barrier %remote" in l)
    assert len(hits) == 1, doc["findings"]
    f = hits[0]
    assert f["severity"] == "error" and f["outcome"] == "wrong results"
    assert f["partitions"] == ["cta1.main"] and f["evidence"]["targets"] == [0]
    assert f["lines"] == [arrive]
    assert "cta0" in f["message"]


def test_the_fixed_handshake_skips_the_last_arrive_and_is_clean(tmp_path: Path) -> None:
    """The earlier rounds' remote arrives are each waited on by CTA 0 in the next round."""
    doc = check_text(tmp_path, module(rounds(last_arrive_skipped=True)))
    assert not _kind(doc, "race.remote_after_exit")
    assert not [f for f in doc["findings"] if f["severity"] == "error"], doc["findings"]


def test_the_lowerings_exit_cluster_sync_orders_every_remote_access(tmp_path: Path) -> None:
    """A TLX paired-MMA module with tensor memory gets a cluster arrive/wait before its TMEM
    dealloc at exit (every partition arrives too): CTA 0 cannot leave before CTA 1's last arrive.
    Unless the kernel said it syncs itself (`tlx.user_post_ws_sync`): then the IR's own syncs
    are all there is, and the trailing arrive is an error again."""
    paired = "tlx.enable_paired_cta_mma = true, "
    assert not _kind(check_text(tmp_path, module(rounds(False, tmem=True), paired)), "race.remote_after_exit")
    own = paired + "tlx.user_post_ws_sync = true, "
    assert _kind(check_text(tmp_path, module(rounds(False, tmem=True), own)), "race.remote_after_exit")
    # Without tensor memory there is no dealloc, and no exit sync: the pairing alone orders nothing.
    assert _kind(check_text(tmp_path, module(rounds(False), paired)), "race.remote_after_exit")


def test_a_cluster_barrier_before_the_return_orders_the_trailing_arrive(tmp_path: Path) -> None:
    """The kernel's own cluster barrier at the end: no CTA leaves before every CTA reached it,
    and CTA 1 reaches it after its last arrive."""
    text = module(rounds(last_arrive_skipped=False)).replace("    tt.return", "    ttng.cluster_barrier\n    tt.return")
    assert "ttng.cluster_barrier" in text
    doc = check_text(tmp_path, text)
    assert not [f for f in doc["findings"] if f["severity"] == "error"], doc["findings"]
    assert any(r["outcome"] == "completed" for r in doc["simulation"]["runs"]), doc["simulation"]


def paired_commits(release_commit: bool, done_commit: bool = True) -> str:
    """A paired (2-CTA) module without tensor memory (so no exit sync): CTA 0 commits for both
    CTAs, first on `empty` (the input slot's release, which nobody waits for after the last
    tile), then on `done` (the accumulator), which each CTA's epilogue waits on."""
    release = f"      ttng.tc_gen5_commit %empty : {BAR}\n" if release_commit else ""
    done = f"      ttng.tc_gen5_commit %done : {BAR}\n" if done_commit else ""
    return f'''  tt.func public @k() {{
    %c0_i32 = arith.constant 0 : i32
    %empties = ttg.local_alloc : () -> {BARS}
    %empty = ttg.memdesc_index %empties[%c0_i32] : {BARS} -> {BAR}
    ttng.init_barrier %empty, 1 : {BAR}
    %dones = ttg.local_alloc : () -> {BARS}
    %done = ttg.memdesc_index %dones[%c0_i32] : {BARS} -> {BAR}
    ttng.init_barrier %done, 1 : {BAR}
    ttg.warp_specialize(%empty, %done) attributes {{requestedRegisters = array<i32: 24>}}
    default {{
{release}{done}      ttg.warp_yield
    }}
    partition0(%e: {BAR}, %d: {BAR}) num_warps(1) {{
      %z = arith.constant 0 : i32
      ttng.wait_barrier %d, %z : {BAR}
      ttg.warp_return
    }} : ({BAR}, {BAR}) -> ()
    tt.return
  }}
'''


def test_a_release_commit_before_the_awaited_commit_has_landed_when_the_epilogue_passes(tmp_path: Path) -> None:
    """tcgen05 work of one thread completes in issue order: CTA 1's epilogue, having seen the
    `done` commit land, has seen the earlier `empty` commit land too. Without the later commit
    nothing in CTA 1 waits, and the release commit into CTA 1 is an error."""
    paired = "tlx.enable_paired_cta_mma = true, "
    assert not _kind(check_text(tmp_path, module(paired_commits(True), paired)), "race.remote_after_exit")
    text = module(paired_commits(True), paired).replace("      ttng.wait_barrier %d, %z", "      // no wait")
    hits = _kind(check_text(tmp_path, text), "race.remote_after_exit")
    assert hits and all(f["partitions"] == ["cta0.default"] for f in hits)
    assert {t for f in hits for t in f["evidence"]["targets"]} == {1}


def test_a_release_commit_after_the_awaited_commit_is_a_warning_not_a_verdict(tmp_path: Path) -> None:
    """The AutoWS 2-CTA shape: the MMA partition ends with the accumulator's commit (CTA 1's
    epilogue waits on it) and then a release commit nobody waits on after the last tile. Both
    track the same MMAs and arrive back to back; CTA 1 exits after the first, so only the commit
    unit's pace orders the second before that exit: a warning naming why, never an error."""
    paired = "tlx.enable_paired_cta_mma = true, "
    text = module(paired_commits(True), paired)
    release = "      ttng.tc_gen5_commit %empty : " + BAR + "\n"
    done = "      ttng.tc_gen5_commit %done : " + BAR + "\n"
    text = text.replace(release + done, done + release)
    hits = _kind(check_text(tmp_path, text), "race.remote_after_exit")
    assert hits and all(f["severity"] == "warning" and f["evidence"]["trails_a_waited_commit"] for f in hits), hits


def test_exit_sync_follows_the_lowering_conditions() -> None:
    def mod(extra: str, tmem: bool, ws: bool = False) -> object:
        body = "  tt.func @k() {\n" + (TMEM if tmem else "") + (
            "    ttg.warp_specialize() attributes {requestedRegisters = array<i32: 24>}\n    default {\n"
            "      ttg.warp_yield\n    }\n    partition0() num_warps(1) {\n      ttg.warp_return\n    } : () -> ()\n"
            if ws else "") + "    tt.return\n  }\n"
        ir = parse_ir(module(body, extra))
        return next(op for op in ir.operations if op.name == "builtin.module")

    assert lowering_exit_sync(mod("tlx.enable_paired_cta_mma = true, ", tmem=True, ws=True))
    assert lowering_exit_sync(mod('"ttng.two-ctas" = true, ', tmem=True))
    # A non-TLX warp-specialized 2-CTA module: the default warps cannot meet the workers in a
    # cluster barrier there, so the lowering puts a CTA barrier only.
    assert not lowering_exit_sync(mod('"ttng.two-ctas" = true, ', tmem=True, ws=True))
    assert not lowering_exit_sync(mod("tlx.enable_paired_cta_mma = true, ", tmem=False))


# -- wait.remote_barrier -----------------------------------------------------------------------------
def producer_wait(through_remote: bool, in_partition: bool = False) -> str:
    """TLX's `clc_producer(multi_ctas=True)`: CTA 0 waits on its `empty` before issuing; both CTAs
    arrive on it through the remote view. 51dd02098's bug: the wait used the remote view too.
    The remote view is taken of the whole allocation and indexed afterwards (an alias chain)."""
    bar = "%rb" if through_remote else "%empty"
    ty = REMOTE if through_remote else BAR
    wait = f"ttng.wait_barrier {bar}, %c0_i32, %is0 : {ty}"
    if in_partition:
        core = f'''    ttg.warp_specialize(%rb, %empty, %is0) attributes {{requestedRegisters = array<i32: 24>}}
    default {{
      ttg.warp_yield
    }}
    partition0(%rb_p: {REMOTE}, %empty_p: {BAR}, %is0_p: i1) num_warps(1) {{
      %z = arith.constant 0 : i32
      ttng.wait_barrier {"%rb_p" if through_remote else "%empty_p"}, %z, %is0_p : {ty}
      ttg.warp_return
    }} : ({REMOTE}, {BAR}, i1) -> ()
'''
    else:
        core = f"    {wait}\n"
    return f'''  tt.func public @k() {{
    %c0_i32 = arith.constant 0 : i32
    %true = arith.constant true
    %rank = nvg.cluster_id
    %empties = ttg.local_alloc : () -> {BARS}
    %empty = ttg.memdesc_index %empties[%c0_i32] : {BARS} -> {BAR}
    ttng.init_barrier %empty, 2 : {BAR}
    %is0 = arith.cmpi eq, %rank, %c0_i32 : i32
    %rv = ttng.map_to_remote_buffer %empties, %c0_i32 : {BARS} -> {REMOTES}
    %rb = ttg.memdesc_index %rv[%c0_i32] : {REMOTES} -> {REMOTE}
    ttng.arrive_barrier %rb, 1 : {REMOTE}
{core}    tt.return
  }}
'''


def test_a_wait_through_a_remote_view_is_an_error_naming_the_waiting_cta(tmp_path: Path) -> None:
    """try_wait takes a shared::cta address: through the mapa'd view it polls the wrong memory
    (even though the view names the waiter's own rank). Only CTA 0 runs the wait."""
    text = module(producer_wait(through_remote=True))
    doc = check_text(tmp_path, text)
    hits = _kind(doc, "wait.remote_barrier")
    lines = text.split("\n")
    wait = next(i for i, l in enumerate(lines, 1) if "ttng.wait_barrier %rb" in l)
    view = next(i for i, l in enumerate(lines, 1) if "map_to_remote_buffer" in l)
    assert len(hits) == 1 and hits[0]["severity"] == "error" and hits[0]["outcome"] == "hang"
    assert hits[0]["partitions"] == ["cta0.main"]
    assert set(hits[0]["lines"]) == {wait, view}


def test_a_wait_on_the_local_barrier_is_clean(tmp_path: Path) -> None:
    doc = check_text(tmp_path, module(producer_wait(through_remote=False)))
    assert not _kind(doc, "wait.remote_barrier")


def test_a_remote_view_captured_into_a_partition_is_followed(tmp_path: Path) -> None:
    doc = check_text(tmp_path, module(producer_wait(through_remote=True, in_partition=True)))
    hits = _kind(doc, "wait.remote_barrier")
    assert len(hits) == 1 and hits[0]["partitions"] == ["cta0.partition0"]
    assert not _kind(check_text(tmp_path, module(producer_wait(through_remote=False, in_partition=True))),
                     "wait.remote_barrier")


# -- the history cases (the fixes' own kernels, compiled with fbtriton 3.7.4) ---------------------------
def _case(name: str) -> Path:
    path = CASES / name / "input.ttgir.gz"
    if not path.exists():
        pytest.skip(f"{name} is not present")
    return path


@pytest.mark.parametrize("name, kind, line, partition", [
    ("regression.tlx_clc_multi_cta_exit.798274bbb", "race.remote_after_exit", 70, "cta1.main"),
    ("regression.tlx_clc_multi_cta_remote_wait.51dd02098", "wait.remote_barrier", 41, "cta0.main"),
])
def test_history_buggy_sides_are_found_and_fixed_sides_are_clean(name: str, kind: str, line: int, partition: str) -> None:
    buggy = run_cli("check", str(_case(name + ".buggy")), "--format", "json").json()
    assert any(f["kind"] == kind and line in f["lines"] and partition in f["partitions"] for f in buggy["findings"])
    fixed = run_cli("check", str(_case(name + ".fixed")), "--format", "json").json()
    assert not [f for f in fixed["findings"] if f["kind"] in ("race.remote_after_exit", "wait.remote_barrier")]
    assert not [f for f in fixed["findings"] if f["severity"] == "error"], json.dumps(fixed["findings"])[:600]


def test_the_2cta_fa_trailing_arrives_are_ordered_by_the_exit_sync() -> None:
    """The 2-CTA FA forward (paired MMA, TMEM): fbtriton 3.7.4 lowers it with a cluster arrive/wait
    before the TMEM dealloc, and each partition arrives before returning, so CTA 1's trailing
    arrives (the buggy side's, line 362 and the partitions') land before CTA 0 can exit."""
    doc = run_cli("check", str(_case("regression.tlx_fa_2cta_clc_exit.798274bbb.buggy")), "--format", "json").json()
    assert not _kind(doc, "race.remote_after_exit")
