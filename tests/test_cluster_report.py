"""The cluster in the partition summary and the dependency graph (issue 12: "the report's partition
summary and graph show the cluster (CTA count, which edges cross CTAs)").

Which CTAs an op reaches is decided in one place, `facts.cluster.cta_reach` / `cta_targets`; these
tests check it on hand-written TLX-style kernels (`fixtures/cluster/`: one op of each cross-CTA
kind, and a correct kernel so no rule may fire) and on the unmodified cluster tutorials of the shared
corpus (`families/`, manifest `num_ctas` / `ctas_per_cga`), skipped when the corpus is absent.
"""

from __future__ import annotations

import json
from math import prod
from pathlib import Path

import pytest

from barrier_viz.analyses.verdicts import check
from barrier_viz.analysis import Analysis
from barrier_viz.commands.graph_cmd import graph_document, render_graph
from barrier_viz.commands.partitions_cmd import partitions_document
from barrier_viz.commands.report_cmd import Report
from barrier_viz.facts.barriers import remote_uses
from barrier_viz.facts.cluster import Issuer, ReachKind, cluster_of, cta_targets
from barrier_viz.session import select
from corpus_units import CORPUS

FIX = Path(__file__).parent / "fixtures" / "cluster"
PAIRED = FIX / "paired_ws.ttgir"
COPY_CLC = FIX / "remote_copy_clc.ttgir"
ONE_CTA = Path(__file__).parent / "fixtures" / "gemm_ws_persistent.ttgir"
FAMILIES = CORPUS / "families"


def _sel(path: Path):
    return select(str(path), require_function=True)


def _op(a: Analysis, name: str, operand: str):
    """The op `name` that takes `operand` (the fixture's own SSA names, not line numbers)."""
    return next(op for op in a.ops if op.name == name and operand in op.operands)


def _targets(a: Analysis, name: str, operand: str, barrier: str):
    return cta_targets(_op(a, name, operand), barrier, cluster_of(a.sel.ir), a.values)


# -- one place: facts.cluster.cta_targets ------------------------------------------------------------
def test_cluster_shape_and_form():
    paired = cluster_of(_sel(PAIRED).ir)
    assert (paired.size, paired.form, paired.paired) == (2, "per-cta", True)
    single = cluster_of(_sel(ONE_CTA).ir)
    assert (single.size, single.form, single.paired) == (1, "single", False)


def test_remote_arrive_reaches_the_rank_its_view_names():
    """`map_to_remote_buffer %cta_bar, %peer` with `%peer = rank ^ 1`: CTA s arrives on CTA s^1's
    barrier; `map_to_remote_buffer %leader_bar, %c0`: every CTA arrives on CTA 0's."""
    a = Analysis(_sel(PAIRED))
    peer = _targets(a, "ttng.arrive_barrier", "%remote", "%remote")
    assert peer.reach.kind is ReachKind.REMOTE and peer.targets == (frozenset({1}), frozenset({0}))
    assert peer.crosses is True and peer.describe() == "to the peer CTA (rank ^ 1)"
    leader = _targets(a, "ttng.arrive_barrier", "%to_leader", "%to_leader")
    assert leader.targets == (frozenset({0}), frozenset({0})) and leader.describe() == "to cta0"
    assert leader.crosses is True  # CTA 1 reaches CTA 0
    own = _targets(a, "ttng.arrive_barrier", "%cta_bar_0", "%cta_bar_0")
    assert own.reach.kind is ReachKind.OWN and own.crosses is False


def test_multicast_tma_reaches_every_ctas_of_its_mask():
    a = Analysis(_sel(PAIRED))
    mc = _targets(a, "ttng.async_tma_copy_global_to_local", "%mask_0", "%full_0")
    assert mc.reach.kind is ReachKind.MULTICAST and mc.targets == (frozenset({0, 1}),) * 2
    plain = _targets(a, "ttng.async_tma_copy_global_to_local", "%a_0", "%full_0")
    assert plain.reach.kind is ReachKind.OWN


def test_paired_mma_and_commit_are_issued_by_the_leader_and_arrive_on_both_ctas():
    """MMAv5.cpp: in 2-CTA mode the MMA and the commit run on the even CTA of the pair only, and
    `tcgen05.commit.cta_group::2 ... multicast::cluster` (mask `3 << (rank & ~1)`) arrives on both."""
    a = Analysis(_sel(PAIRED))
    for name, operand in (("ttng.tc_gen5_mma", "%empty_1"), ("ttng.tc_gen5_commit", "%done_1")):
        t = _targets(a, name, operand, operand)
        assert t.reach.kind is ReachKind.PAIR and t.reach.issuer is Issuer.PAIR_LEADER
        assert t.issues == (True, False) and t.targets[0] == frozenset({0, 1})
        assert t.describe() == "to both CTAs of the pair (cta0+cta1), issued by cta0 only"


def test_remote_copy_and_clc_try_cancel():
    a = Analysis(_sel(COPY_CLC))
    copy = _targets(a, "ttg.async_remote_shmem_copy", "%peer", "%bar")
    assert copy.reach.kind is ReachKind.REMOTE and copy.targets == (frozenset({1}), frozenset({0}))
    clc = _targets(a, "ttng.async_clc_try_cancel", "%clc_bar", "%clc_bar")
    assert clc.reach.kind is ReachKind.CLUSTER and clc.issues == (True, False)


def test_expect_bytes_count_through_the_same_reach(tmp_path):
    """The expect-bytes rule reads its targets from `cta_reach` too: the multicast B half of the
    peer counts (24576 per CTA, no finding); a mask holding only the own bit leaves each CTA 4096
    bytes short, and the rule says so per CTA."""
    assert not [f for f in check(Analysis(_sel(PAIRED)), simulate=False).findings if f.kind == "expect.bytes_mismatch"]
    text = PAIRED.read_text().replace("%mask = arith.ori %own_bit, %peer_bit : i32", "%mask = arith.ori %own_bit, %own_bit : i32")
    bad = tmp_path / "own_mask.ttgir"
    bad.write_text(text)
    found = [f for f in check(Analysis(_sel(bad)), simulate=False).findings if f.kind == "expect.bytes_mismatch"]
    assert len(found) == 1 and found[0].evidence["per_cta"] == [20480, 20480]


def test_remote_uses_stay_out_of_the_barrier_facts():
    """A CTA's own arrivals are what the static rules count; remote arrivals are listed apart."""
    a = Analysis(_sel(PAIRED))
    remote = remote_uses(a.barriers, a.tracer, a.partitions)
    assert sorted((r.barrier.name, r.use.partition) for r in remote) == [("%cta_bar", "partition0"),
                                                                      ("%leader_bar", "partition1"),
                                                                      ("%leader_bar", "partition1")]
    lines = {u.line for b in a.barriers.barriers for u in b.uses}
    assert not {r.use.line for r in remote} & lines


# -- the partition summary ---------------------------------------------------------------------------
def test_partition_summary_shows_the_cluster():
    doc = partitions_document(_sel(PAIRED))
    c = doc.cluster
    assert (c.ctas, c.num_ctas, c.dims, c.form, c.paired_mma) == (2, 1, [2, 1, 1], "per-cta", True)
    assert len(c.rank_lines) == 1
    kinds = sorted((o.op.split(".")[-1], o.reach) for o in c.cross_cta_ops)
    assert kinds == [("arrive_barrier", "remote"), ("arrive_barrier", "remote"), ("arrive_barrier", "remote"),
                     ("async_tma_copy_global_to_local", "multicast"), ("tc_gen5_commit", "pair"), ("tc_gen5_mma", "pair")]
    assert all(o.crosses for o in c.cross_cta_ops)
    md = Report(_sel(PAIRED), simulate=False).texts["partitions"]
    assert "- Cluster: 2 CTAs (cluster dims 2x1x1), per-CTA program" in md
    assert "tc_gen5_commit (partition1, %done@" in md and "issued by cta0 only" in md


def test_one_cta_kernel_has_no_cluster_text():
    doc = partitions_document(_sel(ONE_CTA))
    assert doc.cluster.ctas == 1 and doc.cluster.form == "single" and not doc.cluster.cross_cta_ops
    assert "Cluster" not in Report(_sel(ONE_CTA), simulate=False).texts["partitions"]
    g = graph_document(_sel(ONE_CTA))
    assert not any(e.crosses_ctas or e.ctas for e in g.edges)
    assert "Cluster" not in render_graph(g, "ascii")


# -- the graph ------------------------------------------------------------------------------------------
def test_graph_marks_the_edges_that_cross_ctas():
    g = graph_document(_sel(PAIRED))
    crossing = {(e.from_, e.to, e.barrier_name.split("@")[0]) for e in g.edges if e.crosses_ctas}
    assert crossing == {("partition0", "partition0", "%cta_bar"), ("partition0", "partition1", "%full"),
                        ("partition1", "partition1", "%leader_bar"), ("partition1", "default", "%done"),
                        ("partition1", "partition0", "%empty")}
    rendezvous = next(e for e in g.edges if e.barrier_name.startswith("%cta_bar"))
    # the remote arrive joins the edge (it was an unresolved use before) and is the line that crosses
    assert len(rendezvous.lines.arrive) == 2 and [h.line for h in rendezvous.ctas] == rendezvous.lines.arrive[1:]
    assert rendezvous.ctas[0].targets == [[1], [0]]
    data = json.loads(g.model_dump_json(by_alias=True))
    assert data["cluster"]["ctas"] == 2 and all("crosses_ctas" in e for e in data["edges"])
    ascii_ = render_graph(g, "ascii")
    assert "Cluster of 2 CTAs (TLX per-CTA program)" in ascii_ and "5 edge(s) cross CTAs" in ascii_
    assert "[same partition, arrivals from other CTAs of the cluster]" in ascii_
    assert "CTAs: line" in ascii_ and "to the peer CTA (rank ^ 1)" in ascii_
    assert "==>" in render_graph(g, "mermaid") and "penwidth=2" in render_graph(g, "dot")


def test_graph_output_is_deterministic():
    assert render_graph(graph_document(_sel(PAIRED)), "ascii") == render_graph(graph_document(_sel(PAIRED)), "ascii")


# -- the shared corpus -------------------------------------------------------------------------------
def _cluster_entries() -> list[dict]:
    manifest = FAMILIES / "manifest.json"
    if not manifest.is_file():
        return []
    out = []
    for e in json.loads(manifest.read_text())["entries"]:
        cfg = e["config"]
        ctas = cfg.get("num_ctas") or 1
        if cfg.get("ctas_per_cga"):
            ctas = max(ctas, prod(cfg["ctas_per_cga"]))
        if ctas > 1:
            out.append({"file": e["file"], "ctas": ctas, "cga": (cfg.get("num_ctas") or 1) > 1})
    return out


_ENTRIES = _cluster_entries()


@pytest.mark.skipif(not _ENTRIES, reason="shared corpus families/ not found (set BARRIER_VIZ_CORPUS)")
@pytest.mark.parametrize("entry", _ENTRIES, ids=[e["file"] for e in _ENTRIES])
def test_corpus_cluster_files_show_their_cluster(entry):
    """Every cluster tutorial of the families corpus: the summary has the manifest's CTA count and
    form, and every barrier op that reaches another CTA sits on a graph edge marked as crossing
    (or not computable, for the CGA layout's multicasts), never on an edge that says it does not."""
    sel = _sel(FAMILIES / entry["file"])
    c = partitions_document(sel).cluster
    assert c.ctas == entry["ctas"] and c.form == ("cga" if entry["cga"] else "per-cta")
    assert c.cross_cta_ops, "a cluster tutorial signals across CTAs"
    g = graph_document(sel)
    on_edges = {(h.line, h.op): e.crosses_ctas for e in g.edges for h in e.ctas}
    for o in c.cross_cta_ops:
        if (o.line, o.op) in on_edges:
            assert on_edges[(o.line, o.op)] is not False
    assert any(e.crosses_ctas is not False for e in g.edges)
    if not entry["cga"]:
        # a TLX per-CTA program names its peers with computable ranks and masks
        assert all(o.crosses is not None for o in c.cross_cta_ops)
        assert any(e.crosses_ctas for e in g.edges)


def test_compact_digest_names_the_cluster_and_the_crossing_edges():
    from barrier_viz.commands.digest import digest_document

    d = digest_document(Report(_sel(PAIRED), simulate=False))
    assert any(r.startswith("cluster: 2 CTAs per-cta (2x1x1), paired MMA") and "6 barrier op(s)" in r
               for r in d.sections["partitions"])
    crossing = [r for r in d.sections["graph"] if "cross-CTA" in r]
    assert len(crossing) == 5 and any("to the peer CTA (rank ^ 1)" in r for r in crossing)
    one = digest_document(Report(_sel(ONE_CTA), simulate=False))
    assert not any("cluster" in r or "cross-CTA" in r for r in one.sections["partitions"] + one.sections["graph"])


def test_a_rank_the_ir_does_not_determine_is_not_computable_never_local(tmp_path):
    """A remote copy to a CTA given by a kernel argument: the reach is stated as not computable
    (`crosses` null, `[cross-CTA?]`), not as a local arrival."""
    text = COPY_CLC.read_text().replace("@remote_copy_clc()", "@remote_copy_clc(%r: i32)").replace("rank %peer", "rank %r")
    path = tmp_path / "arg_rank.ttgir"
    path.write_text(text)
    c = partitions_document(_sel(path)).cluster
    copy = next(o for o in c.cross_cta_ops if o.op == "ttg.async_remote_shmem_copy")
    assert copy.crosses is None and copy.targets == [None, None] and "not computable" in copy.text
    g = graph_document(_sel(path))
    edge = next(e for e in g.edges if any(h.op == "ttg.async_remote_shmem_copy" for h in e.ctas))
    assert edge.crosses_ctas is None and "[cross-CTA?]" in render_graph(g, "ascii")


def test_a_rank_predicate_narrows_who_issues(tmp_path):
    """`arrive_barrier %remote, 1, %leader`: only CTA 0 issues it, so only CTA 0 reaches its peer."""
    text = PAIRED.read_text().replace("ttng.arrive_barrier %remote, 1 :", "ttng.arrive_barrier %remote, 1, %leader_0 :")
    path = tmp_path / "leader_arrive.ttgir"
    path.write_text(text)
    a = Analysis(_sel(path))
    t = cta_targets(_op(a, "ttng.arrive_barrier", "%remote"), "%remote", cluster_of(a.sel.ir), a.values,
                    predicates=("%leader_0",))
    assert t.issues == (True, False) and t.targets[0] == frozenset({1})
    assert t.describe() == "to cta1, issued by cta0 only"


def test_barriers_say_whose_copy_a_remote_view_is():
    from barrier_viz.commands.barriers_cmd import barriers_document

    doc = barriers_document(_sel(PAIRED))
    # a remote view is resolved (the tracer follows map_to_remote_buffer), not an unresolved operand
    assert not [u for u in doc.unresolved if u.operand in ("%remote", "%to_leader")]
    remote = {r.operand: r for r in doc.remote_uses}
    assert remote["%remote"].barrier.startswith("%cta_bar@") and remote["%remote"].rank == "%peer_0"
    assert remote["%to_leader"].rank == "%c0"
    from barrier_viz.render.console import capture
    from barrier_viz.commands.barriers_cmd import render_barriers_text

    with capture() as buf:
        render_barriers_text(doc)
    assert "in the CTA %peer_0 names" in buf.getvalue()


@pytest.mark.parametrize("path", [PAIRED, COPY_CLC], ids=["paired", "remote_copy_clc"])
def test_fixtures_are_correct_cluster_kernels(path):
    """The fixtures are correct kernels: no error from the static rules or the cluster simulation
    (the remote copy's kernel meets at a cluster barrier after its inits, so no peer signals a
    barrier before it is initialized)."""
    assert not [f for f in check(Analysis(_sel(path)), simulate=True).findings if f.severity.value == "error"]


def test_cluster_wide_barrier_is_listed():
    c = partitions_document(_sel(COPY_CLC)).cluster
    assert len(c.cluster_sync_lines) == 1 and not partitions_document(_sel(PAIRED)).cluster.cluster_sync_lines
