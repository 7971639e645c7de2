"""The barrier dependency graph and its renderings (issue 4, items 3-4 and the `graph` command).

Hand-written IR pins each rule: a producer/consumer ring gives one forward and one backward edge,
direction comes from `WSBarrier` constraints when written and from the first wait's parity
otherwise, token and aref channels split into full/empty, same-partition pairs are self-loops,
backward edges of persistent kernels are return edges. The corpus tests (skipped without
../shared/corpus) check the FA forward persistent kernel's graph, a reviewed ASCII snapshot, and
that `dot -Tsvg` accepts the DOT of every final `.ttgir`. Lines are looked up from the text.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from barrier_viz.analyses.structure.graph import DependencyGraph, GraphEdge, build_graph
from barrier_viz.analysis import Analysis
from barrier_viz.cli import app
from barrier_viz.commands.graph_cmd import graph_document, render_graph
from barrier_viz.session import select

REPO = Path(__file__).resolve().parents[1]
from corpus_units import CORPUS  # noqa: E402 - the one place the corpus is located
REAL = CORPUS / "real"
FA = REAL / "fa_fwd_persist_sm100.ttgir"
SNAPSHOTS = Path(__file__).parent / "snapshots"
needs_corpus = pytest.mark.skipif(not FA.is_file(), reason=f"corpus not found at {CORPUS}")
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz `dot` not installed")

BAR2 = "!ttg.memdesc<2x1xi64, #shared, #smem, mutable>"
BAR1 = "!ttg.memdesc<1xi64, #shared, #smem, mutable>"
BUF2 = "!ttg.memdesc<2x128x64xf16, #shared, #smem, mutable>"
BUF1 = "!ttg.memdesc<128x64xf16, #shared, #smem, mutable>"
TENSOR = "tensor<128x64xf16, #blocked>"
HEADER = """\
#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#smem = #ttg.shared_memory
"""


def _ir(body: str) -> str:
    for key, value in (("BAR2", BAR2), ("BAR1", BAR1), ("BUF2", BUF2), ("BUF1", BUF1), ("TENSOR", TENSOR)):
        body = body.replace(key, value)
    return HEADER + 'module attributes {"ttg.num-warps" = 4 : i32} {\n' + body + "}\n"


def _ring(*, outer: bool = False, producer_wait_attrs: str = "", consumer_slot: str = "%s") -> str:
    """Two partitions sharing a 2-slot ring `buf` with barriers `full` and `empty`: the producer
    stores and arrives on full, the consumer loads and arrives on empty; phases are the standard
    `(i / 2) & 1` (consumer) and its inversion (producer's pre-inverted acquire). `outer` wraps
    each partition's loop in a tile loop (a persistent kernel)."""

    def loop(body: str, tag: str) -> str:
        inner = f"""\
      scf.for %i{tag} = %c0{tag} to %n{tag} step %c1{tag} : i32 {{
        %s{tag} = arith.remsi %i{tag}, %c2{tag} : i32
        %q{tag} = arith.divsi %i{tag}, %c2{tag} : i32
        %p{tag} = arith.andi %q{tag}, %c1{tag} : i32
{body}
        scf.yield
      }}
"""
        if not outer:
            return inner
        return f"      scf.for %t{tag} = %c0{tag} to %n{tag} step %c1{tag} : i32 {{\n{inner}        scf.yield\n      }}\n"

    producer = f"""\
        %pi = arith.xori %pp, %c1p : i32
        %es = ttg.memdesc_index %e[%sp] : BAR2 -> BAR1
        ttng.wait_barrier %es, %pi {producer_wait_attrs}: BAR1
        %bs = ttg.memdesc_index %b[%sp] : BUF2 -> BUF1
        ttg.local_store %cst, %bs : TENSOR -> BUF1
        %fs = ttg.memdesc_index %f[%sp] : BAR2 -> BAR1
        ttng.arrive_barrier %fs, 1 : BAR1"""
    slot = consumer_slot.replace("%s", "%sc")
    consumer = f"""\
        %fs = ttg.memdesc_index %f[{slot}] : BAR2 -> BAR1
        ttng.wait_barrier %fs, %pc : BAR1
        %bs = ttg.memdesc_index %b[%sc] : BUF2 -> BUF1
        %v = ttg.local_load %bs : BUF1 -> TENSOR
        %es = ttg.memdesc_index %e[%sc] : BAR2 -> BAR1
        ttng.arrive_barrier %es, 1 : BAR1"""
    consts = lambda t: "\n".join(f"      %c{k}{t} = arith.constant {k} : i32" for k in (0, 1, 2))  # noqa: E731
    return _ir(f"""\
  tt.func public @ring(%n: i32) {{
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %full = ttg.local_alloc : () -> BAR2 loc("full")
    %full_0 = ttg.memdesc_index %full[%c0] : BAR2 -> BAR1
    ttng.init_barrier %full_0, 1 : BAR1
    %full_1 = ttg.memdesc_index %full[%c1] : BAR2 -> BAR1
    ttng.init_barrier %full_1, 1 : BAR1
    %empty = ttg.local_alloc : () -> BAR2 loc("empty")
    %empty_0 = ttg.memdesc_index %empty[%c0] : BAR2 -> BAR1
    ttng.init_barrier %empty_0, 1 : BAR1
    %empty_1 = ttg.memdesc_index %empty[%c1] : BAR2 -> BAR1
    ttng.init_barrier %empty_1, 1 : BAR1
    %buf = ttg.local_alloc : () -> BUF2 loc("buf")
    ttg.warp_specialize(%full, %empty, %buf, %n)
    default {{
      ttg.warp_yield
    }}
    partition0(%f: BAR2, %e: BAR2, %b: BUF2, %np: i32) num_warps(1) {{
{consts("p")}
      %cst = arith.constant dense<0.000000e+00> : TENSOR
{loop(producer, "p")}      ttg.warp_return
    }}
    partition1(%f: BAR2, %e: BAR2, %b: BUF2, %nc: i32) num_warps(4) {{
{consts("c")}
{loop(consumer, "c")}      ttg.warp_return
    }}
    tt.return
  }}
""")


def line_of(text: str, needle: str, nth: int = 0) -> int:
    hits = [n for n, line in enumerate(text.splitlines(), 1) if needle in line]
    assert len(hits) > nth, f"{needle!r} not found"
    return hits[nth]


def graph_of(text: str, tmp_path: Path, name: str = "k.ttgir") -> DependencyGraph:
    path = tmp_path / name
    path.write_text(text)
    return build_graph(Analysis(select(str(path), require_function=True)))


def edge(g: DependencyGraph, src: str, dst: str, direction: str) -> GraphEdge:
    found = [e for e in g.edges if (e.source_node, e.target_node, e.direction) == (src, dst, direction)]
    assert len(found) == 1, [(e.source_node, e.target_node, e.direction, e.barrier) for e in g.edges]
    return found[0]


def cli(tmp_path: Path, text: str, *args: str) -> str:
    path = tmp_path / "k.ttgir"
    path.write_text(text)
    result = CliRunner().invoke(app, ["graph", str(path), *args])
    assert result.exit_code == 0, result.output
    return result.stdout


# -- the dependency graph -------------------------------------------------------------------------
def test_ring_gives_one_forward_and_one_backward_edge(tmp_path: Path):
    text = _ring()
    g = graph_of(text, tmp_path)
    assert len(g.edges) == 2 and not g.unmatched and not g.persistent
    fwd = edge(g, "partition0", "partition1", "forward")
    assert fwd.barrier == f"%full@{line_of(text, '%full = ttg.local_alloc')}"
    assert fwd.mechanism == "arrive_barrier" and fwd.mechanisms == ("mbarrier_explicit",) and fwd.agent is None
    assert fwd.direction_source == "phase" and "parity 0" in fwd.direction_note
    assert [d.name for d in fwd.data] == ["buf"] and fwd.data[0].shape == "128x64xf16" and fwd.data_source == "ends"
    assert fwd.arrive_lines == (line_of(text, "ttng.arrive_barrier %fs"),)
    assert fwd.wait_lines == (line_of(text, "ttng.wait_barrier %fs"),)
    bwd = edge(g, "partition1", "partition0", "backward")
    assert bwd.barrier == f"%empty@{line_of(text, '%empty = ttg.local_alloc')}"
    assert bwd.direction_source == "phase" and "pre-inverted" in bwd.direction_note
    assert [d.name for d in bwd.data] == ["buf"] and bwd.data_source == "ends"
    assert not bwd.self_loop and not bwd.return_edge


def test_constraints_decide_the_direction_and_say_so(tmp_path: Path):
    # The producer's acquire says "forward" in its WSBarrier: the tool reports what the compiler
    # wrote (and says it did) instead of its own phase inference.
    text = _ring(producer_wait_attrs='{constraints = {WSBarrier = {direction = "forward", dstTask = 2 : i32}}} ')
    g = graph_of(text, tmp_path)
    e = edge(g, "partition1", "partition0", "forward")
    assert e.direction_source == "constraints"
    assert e.direction_note == f"WSBarrier direction on the wait at line {line_of(text, 'ttng.wait_barrier %es')}"
    assert not e.dst_task_mismatch  # dstTask 2 = partition1 (task 2), the arriving end


def test_persistent_backward_edges_are_return_edges(tmp_path: Path):
    g = graph_of(_ring(outer=True), tmp_path)
    assert g.persistent
    assert edge(g, "partition1", "partition0", "backward").return_edge
    assert not edge(g, "partition0", "partition1", "forward").return_edge


def test_different_constant_slots_never_meet(tmp_path: Path):
    # The consumer waits on full[1] only while the producer's arrives use dynamic slots: they may
    # meet. Constants on both sides that differ may not (checked on the empty side below).
    text = _ring(consumer_slot="%c1c")
    g = graph_of(text, tmp_path)
    assert edge(g, "partition0", "partition1", "forward").wait_lines == (line_of(text, "ttng.wait_barrier %fs"),)
    text2 = text.replace("%es = ttg.memdesc_index %e[%sp]", "%es = ttg.memdesc_index %e[%c0p]").replace(
        "%es = ttg.memdesc_index %e[%sc]", "%es = ttg.memdesc_index %e[%c1c]")
    g2 = graph_of(text2, tmp_path, "k2.ttgir")
    assert not [e for e in g2.edges if e.barrier.startswith("%empty")]
    assert {(u.partition, u.kind) for u in g2.unmatched} == {("partition1", "arrive without wait"),
                                                             ("partition0", "wait without arrive")}


def test_tma_and_mma_arrivals_are_charged_to_the_issuing_partition(tmp_path: Path):
    from test_barriers import WS  # the TMA -> MMA -> default pipeline of the barrier facts tests

    g = graph_of(WS, tmp_path)
    load = edge(g, "partition1", "partition0", "forward")
    assert load.mechanism == "barrier_expect + async_tma_copy" and load.agent == "TMA engine"
    assert load.direction_source == "constraints"  # the MMA's wait carries direction = "forward"
    assert [d.name for d in load.data] == ["a"] and load.data[0].shape == "128x64xf16"
    release = edge(g, "partition0", "partition1", "backward")
    assert release.mechanism == "tc_gen5_mma barrier" and release.agent == "tensor core"
    assert release.direction_source == "phase" and [d.name for d in release.data] == ["a"]
    done = edge(g, "partition0", "default", "forward")
    assert done.mechanism == "tc_gen5_commit" and done.agent == "tensor core"
    assert done.arrive_lines == (line_of(WS, "ttng.tc_gen5_commit"),)
    assert [n.id for n in g.nodes] == ["default", "partition0", "partition1"]
    assert g.ranks["partition1"] < g.ranks["partition0"] < g.ranks["default"]


TOKENS = _ir("""\
  tt.func @tokens() {
    %c0 = arith.constant 0 : i32
    %false = arith.constant false
    %t = nvws.create_token {loadType = 1 : i32, numBuffers = 1 : i32} : tensor<1x!nvws.token> loc("tok")
    nvws.producer_acquire %t, %c0, %false {async_task_id = array<i32: 0>} : tensor<1x!nvws.token>, i32, i1
    nvws.producer_commit %t, %c0 {async_task_id = array<i32: 0>} : tensor<1x!nvws.token>, i32
    nvws.consumer_wait %t, %c0, %false {async_task_id = array<i32: 1>} : tensor<1x!nvws.token>, i32, i1
    nvws.consumer_release %t, %c0 {async_task_id = array<i32: 1>} : tensor<1x!nvws.token>, i32
    tt.return
  }
""")


def test_token_channel_splits_into_full_and_empty(tmp_path: Path):
    g = graph_of(TOKENS, tmp_path)
    full = edge(g, "task0", "task1", "forward")
    assert (full.channel, full.direction_source) == ("full", "lowering")
    assert full.mechanism == "producer_commit (nvws_token full)"
    assert full.arrive_lines == (line_of(TOKENS, "producer_commit"),) and full.wait_lines == (line_of(TOKENS, "consumer_wait"),)
    empty = edge(g, "task1", "task0", "backward")
    assert (empty.channel, empty.mechanism) == ("empty", "consumer_release (nvws_token empty)")
    assert empty.wait_lines == (line_of(TOKENS, "producer_acquire"),)


def test_same_partition_pair_is_a_marked_self_loop(tmp_path: Path):
    text = _ir("""\
  tt.func public @selfloop() {
    %c0 = arith.constant 0 : i32
    %bar = ttg.local_alloc : () -> BAR1
    ttng.init_barrier %bar, 1 : BAR1
    ttg.warp_specialize(%bar)
    default {
      ttg.warp_yield
    }
    partition0(%b: BAR1) num_warps(1) {
      %z = arith.constant 0 : i32
      ttng.arrive_barrier %b, 1 : BAR1
      ttng.wait_barrier %b, %z : BAR1
      ttg.warp_return
    }
    tt.return
  }
""")
    g = graph_of(text, tmp_path)
    (e,) = g.edges
    assert e.self_loop and (e.source_node, e.target_node, e.direction) == ("partition0", "partition0", "forward")
    assert "[self-loop: same partition]" in cli(tmp_path, text)


# -- renderings and the command -------------------------------------------------------------------
def test_ascii_has_forward_and_backward_blocks_with_annotations(tmp_path: Path):
    text = _ring(outer=True)
    out = cli(tmp_path, text)
    assert out.startswith("Barrier Dependency Graph\n========================\n")
    fwd_at, bwd_at = out.index("Forward barriers"), out.index("Backward barriers")
    assert fwd_at < bwd_at
    forward, backward = out[fwd_at:bwd_at], out[bwd_at:]
    # a hand-written partition that stores into shared memory is named by it, never "other"
    assert "  partition0 (Shared-memory staging (buf))\n      |\n      | arrive_barrier  (" in forward
    assert f"%full@{line_of(text, '%full = ttg.local_alloc')}" in forward
    assert "data: buf [128x64xf16 smem]" in forward and "forward (by phase:" in forward
    assert f"%empty@{line_of(text, '%empty = ttg.local_alloc')}" in backward
    assert "backward, return edge (by phase:" in backward and "next iteration  [return edge]" in backward
    assert "\n      v\n" in forward and "\n      v\n" in backward


def test_json_shape(tmp_path: Path):
    doc = json.loads(cli(tmp_path, _ring(), "--format", "json"))
    assert doc["schema"] == "barrier-viz/graph/v1" and doc["input"]["function"] == "ring"
    assert [n["id"] for n in doc["nodes"]] == ["default", "partition0", "partition1"]
    assert {"from", "to", "barrier", "mechanism", "data", "direction", "lines"} <= set(doc["edges"][0])
    by_dir = {e["direction"]: e for e in doc["edges"]}
    assert (by_dir["forward"]["from"], by_dir["forward"]["to"]) == ("partition0", "partition1")
    assert (by_dir["backward"]["from"], by_dir["backward"]["to"]) == ("partition1", "partition0")
    assert by_dir["forward"]["data"][0]["name"] == "buf" and by_dir["forward"]["source"] == "phase"
    assert set(by_dir["forward"]["lines"]) == {"arrive", "wait"}


def test_mermaid_shape(tmp_path: Path):
    out = cli(tmp_path, _ring(), "--format", "mermaid")
    lines = out.splitlines()
    assert lines[0] == "flowchart TD"
    assert lines[1:4] == ['  n0["default<br/>idle (empty)"]', '  n1["partition0<br/>Shared-memory staging (buf)"]',
                         '  n2["partition1<br/>Shared-memory staging (buf)"]']
    assert any(ln.startswith("  n1 -->|") and ln.endswith("| n2") for ln in lines)
    assert any(ln.startswith("  n2 -.->|") and ln.endswith("| n1") for ln in lines)
    assert '"' not in "".join(ln.split('|"', 1)[1].rsplit('"|', 1)[0] for ln in lines if "|" in ln)


def test_dot_escapes_and_styles(tmp_path: Path):
    out = cli(tmp_path, _ring(), "--format", "dot")
    assert out.startswith("digraph barrier_dependencies {") and out.rstrip().endswith("}")
    back = [ln for ln in out.splitlines() if '"partition1" -> "partition0"' in ln]
    assert len(back) == 1 and "style=dashed" in back[0] and "constraint=false" in back[0]
    assert '\\"full\\"' in out  # the loc name in quotes, escaped inside the DOT string


@needs_dot
def test_dot_is_accepted_by_graphviz(tmp_path: Path):
    for text in (_ring(), _ring(outer=True), TOKENS):
        dot = cli(tmp_path, text, "--format", "dot")
        run = subprocess.run(["dot", "-Tsvg"], input=dot.encode(), capture_output=True, timeout=60)
        assert run.returncode == 0 and not run.stderr, run.stderr


def test_output_is_deterministic(tmp_path: Path):
    text = _ring(outer=True)
    for fmt in ("ascii", "dot", "mermaid", "json"):
        assert cli(tmp_path, text, "--format", fmt) == cli(tmp_path, text, "--format", fmt)


# -- corpus acceptance ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def fa_doc():
    return graph_document(select(str(FA), require_function=True))


@needs_corpus
def test_fa_forward_persistent_graph(fa_doc):
    doc = fa_doc
    assert doc.persistent
    role = {n.id: n.label for n in doc.nodes}
    load = [n for n, r in role.items() if r.startswith("TMA loads")]
    mma = [n for n, r in role.items() if r == "MMA"]
    softmax = [n for n, r in role.items() if r.startswith("Softmax")]
    assert len(load) == 1 and len(mma) == 1 and len(softmax) == 2
    (load,), (mma,) = load, mma
    cross = [e for e in doc.edges if not e.self_loop]
    fwd = {(e.from_, e.to): e for e in cross if e.direction == "forward"}
    # load -> MMA by TMA, for every SMEM operand ring
    tma = [e for e in cross if (e.from_, e.to, e.direction) == (load, mma, "forward")]
    assert tma and all(e.mechanisms == ["mbarrier_tma"] and e.agent == "TMA engine" for e in tma)
    assert {d.name for e in tma for d in e.data} == {"q0_0", "q0_1", "k", "v"}
    # MMA -> each softmax partition by MMA barriers (QK ready) and tcgen05 commits (O ready)
    for sm in softmax:
        mechs = {m for e in cross if (e.from_, e.to, e.direction) == (mma, sm, "forward") for m in e.mechanisms}
        assert mechs == {"mma_barrier", "tcgen05_commit"}
        assert (sm, mma) in fwd and fwd[(sm, mma)].mechanisms == ["mbarrier_explicit"]  # P / rescaled O ready
    # every ring has its backward edge: each forward channel's buffer is released again
    released = {d.name for e in cross if e.direction == "backward" for d in e.data}
    assert {"q0_0", "q0_1", "k", "v"} <= released
    for sm in softmax:
        assert any(e.direction == "backward" and e.from_ == sm and e.to == mma for e in cross)
        assert any(e.direction == "backward" and e.from_ == mma and e.to == sm for e in cross)
    assert all(e.return_edge for e in doc.edges if e.direction == "backward")
    # the no-op same-task wait of ir-semantics 7.4 is kept as a self-loop of each softmax partition
    assert {e.from_ for e in doc.edges if e.self_loop and e.mechanisms == ["mbarrier_explicit"]} == set(softmax)
    assert not doc.unmatched


@needs_corpus
def test_fa_ascii_snapshot(fa_doc):
    """The reviewed rendering; regenerate with BARRIER_VIZ_UPDATE_SNAPSHOTS=1 and review the diff."""
    out = render_graph(fa_doc, "ascii").replace(str(FA), "<corpus>/real/" + FA.name)
    snap = SNAPSHOTS / "graph_fa_fwd_persist_sm100.txt"
    if os.environ.get("BARRIER_VIZ_UPDATE_SNAPSHOTS"):
        snap.parent.mkdir(exist_ok=True)
        snap.write_text(out)
    assert out == snap.read_text()


@needs_corpus
@needs_dot
def test_dot_accepts_every_final_ttgir():
    failures = []
    for path in sorted(REAL.glob("*.ttgir")):
        dot = render_graph(graph_document(select(str(path), require_function=True)), "dot")
        run = subprocess.run(["dot", "-Tsvg", "-o", os.devnull], input=dot.encode(), capture_output=True, timeout=120)
        if run.returncode or run.stderr:
            failures.append((path.name, run.stderr.decode()[:200]))
    assert not failures


def _named(default_ops: str, p0_ops: str, p0_warps: int = 4) -> str:
    """A default partition (4 warps, 128 threads) and partition0 using named barrier 9."""
    return _ir(f"""\
  tt.func public @named() {{
    ttg.warp_specialize()
    default {{
      %c9 = arith.constant 9 : i32
      %c128 = arith.constant 128 : i32
      %c256 = arith.constant 256 : i32
{default_ops}
      ttg.warp_yield
    }}
    partition0() num_warps({p0_warps}) {{
      %c9 = arith.constant 9 : i32
      %c128 = arith.constant 128 : i32
      %c256 = arith.constant 256 : i32
{p0_ops}
      ttg.warp_return
    }} : () -> ()
    tt.return
  }}
""")


def _named_graph(tmp_path: Path, text: str) -> DependencyGraph:
    path = tmp_path / "named.ttgir"
    path.write_text(text)
    return build_graph(Analysis(select(str(path), None, None, require_function=True)))


def test_named_barrier_sync_of_one_partitions_threads_is_paired(tmp_path: Path):
    """`bar.sync 9, 128` in a 4-warp partition is a barrier over that partition's own threads
    (TLX's named-barrier sync of one warp group): every generation completes when its 128
    threads arrive. It is a self loop, not a "wait without arrive"."""
    g = _named_graph(tmp_path, _named("      ttng.wait_barrier_named %c9, %c128 : i32, i32", ""))
    assert not g.unmatched
    (e,) = g.edges
    assert e.self_loop and e.source_node == "default" and e.direction_source == "named"


def test_named_barrier_producer_consumer_pair(tmp_path: Path):
    """`bar.arrive 9, 256` in partition0 and `bar.sync 9, 256` in the default partition (128
    threads each): the sync completes when both groups arrived, an edge partition0 -> default;
    the sync does not also wait on itself."""
    g = _named_graph(tmp_path, _named("      ttng.wait_barrier_named %c9, %c256 : i32, i32",
                                      "      ttng.arrive_barrier_named %c9, %c256 : i32, i32"))
    assert not g.unmatched
    assert [(e.source_node, e.target_node) for e in g.edges] == [("partition0", "default")]


def test_named_barrier_lone_sync_that_cannot_complete_is_unmatched(tmp_path: Path):
    """`bar.sync 9, 256` in a 128-thread partition with nobody else on barrier 9 never
    completes: that one is a "wait without arrive"."""
    g = _named_graph(tmp_path, _named("      ttng.wait_barrier_named %c9, %c256 : i32, i32", ""))
    assert [(u.partition, u.kind) for u in g.unmatched] == [("default", "wait without arrive")]
    assert not g.edges
