"""`phases` (report section 3): per-barrier depth, cadence, slot and phase formulas, samples.

A hand-written persistent ring pins down the block format and the JSON shape; the corpus tests
are issue 4's acceptance: every `wait_barrier` of every final TTGIR and doTokenLowering snapshot
resolves, and the Hopper and Blackwell persistent GEMMs' operand rings read back as
`idx = cnt % depth`, full parity `(cnt / depth) & 1`, empty parity inverted - checked through the
evaluated samples, not the formula strings.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from barrier_viz.analyses.structure.phases import phase_report
from barrier_viz.analysis import Analysis
from barrier_viz.cli import app
from barrier_viz.commands.phases_cmd import phases_doc_from_report
from barrier_viz.inputs import Unit, default_unit, load_unit
from barrier_viz.schemas import InputRef
from barrier_viz.session import Selection, default_function

from corpus_units import is_dump, open_file

from corpus_units import CORPUS  # noqa: E402 - the one place the corpus is located
REAL = CORPUS / "real"
needs_corpus = pytest.mark.skipif(not REAL.is_dir(), reason="shared corpus not present")

BAR3 = "!ttg.memdesc<3x1xi64, #shared, #smem, mutable>"
BAR1 = "!ttg.memdesc<1xi64, #shared, #smem, mutable>"
BUF3 = "!ttg.memdesc<3x64x64xf16, #shared1, #smem, mutable>"
BUF1 = "!ttg.memdesc<64x64xf16, #shared1, #smem, mutable>"
DESC = "!tt.tensordesc<tensor<64x64xf16, #shared1>>"
TENSOR = "tensor<64x64xf16, #blocked>"


def _slot_and_phase(cnt: str, tag: str, inverted: bool, offset: int = 0) -> str:
    """AutoWS's i64 arithmetic (ir-semantics 5.1): slot = n % 3, parity = (n / 3) & 1 [^ 1]."""
    src = cnt
    lines = []
    if offset:
        lines.append(f"%n{tag} = arith.addi {cnt}, %c{offset}_i64 : i64")
        src = f"%n{tag}"
    lines += [
        f"%q{tag} = arith.divui {src}, %c3_i64 : i64",
        f"%qm{tag} = arith.muli %q{tag}, %c3_i64 : i64",
        f"%r{tag} = arith.subi {src}, %qm{tag} : i64",
        f"%s{tag} = arith.trunci %r{tag} : i64 to i32",
        f"%b{tag} = arith.andi %q{tag}, %c1_i64 : i64",
        f"%t{tag} = arith.trunci %b{tag} : i64 to i1",
    ]
    if inverted:
        lines.append(f"%i{tag} = arith.xori %t{tag}, %true : i1")
        lines.append(f"%p{tag} = arith.extui %i{tag} : i1 to i32")
    else:
        lines.append(f"%p{tag} = arith.extui %t{tag} : i1 to i32")
    return "\n".join("          " + x for x in lines)


CONSTS = """\
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %c0_i64 = arith.constant 0 : i64
      %c1_i64 = arith.constant 1 : i64
      %c2_i64 = arith.constant 2 : i64
      %c3_i64 = arith.constant 3 : i64
      %true = arith.constant true"""


def ring_ir(consumer_second_offset: int | None = None, consumer_by_tile: bool = False) -> str:
    """A persistent kernel: the loader (partition0) fills a 3-slot SMEM ring through `full`
    (expect + TMA), the consumer (partition1) reads it and releases `empty`; per tile the
    consumer signals a 1-slot `done` barrier that the default partition waits on. Both ring
    sides carry an i64 use counter through the tile loop into the k loop."""
    second = ""
    if consumer_second_offset is not None:
        second = (_slot_and_phase("%ck", "x", False, consumer_second_offset)
                  + f"\n          %fx = ttg.memdesc_index %f[%sx] : {BAR3} -> {BAR1}"
                  + f"\n          ttng.wait_barrier %fx, %px : {BAR1}")
    # A broken consumer may index the ring by tile (the tile loop's induction variable).
    consumer_prelude = "          %tile64 = arith.extsi %t : i32 to i64\n" if consumer_by_tile else ""
    return f"""\
#blocked = #ttg.blocked<{{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}}>
#shared = #ttg.swizzled_shared<{{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}}>
#shared1 = #ttg.nvmma_shared<{{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}}>
#smem = #ttg.shared_memory
module attributes {{"ttg.num-warps" = 4 : i32}} {{
  tt.func public @ring(%desc: {DESC}, %tiles: i32, %k: i32) {{
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %c0_i64 = arith.constant 0 : i64
    %c1_i64 = arith.constant 1 : i64
    %full = ttg.local_alloc : () -> {BAR3} loc("full")
    %full_0 = ttg.memdesc_index %full[%c0] : {BAR3} -> {BAR1}
    ttng.init_barrier %full_0, 1 : {BAR1}
    %full_1 = ttg.memdesc_index %full[%c1] : {BAR3} -> {BAR1}
    ttng.init_barrier %full_1, 1 : {BAR1}
    %full_2 = ttg.memdesc_index %full[%c2] : {BAR3} -> {BAR1}
    ttng.init_barrier %full_2, 1 : {BAR1}
    %empty = ttg.local_alloc : () -> {BAR3} loc("empty")
    %empty_0 = ttg.memdesc_index %empty[%c0] : {BAR3} -> {BAR1}
    ttng.init_barrier %empty_0, 1 : {BAR1}
    %empty_1 = ttg.memdesc_index %empty[%c1] : {BAR3} -> {BAR1}
    ttng.init_barrier %empty_1, 1 : {BAR1}
    %empty_2 = ttg.memdesc_index %empty[%c2] : {BAR3} -> {BAR1}
    ttng.init_barrier %empty_2, 1 : {BAR1}
    %done = ttg.local_alloc : () -> !ttg.memdesc<1x1xi64, #shared, #smem, mutable> loc("done")
    %done_0 = ttg.memdesc_index %done[%c0] : !ttg.memdesc<1x1xi64, #shared, #smem, mutable> -> {BAR1}
    ttng.init_barrier %done_0, 1 : {BAR1}
    %buf = ttg.local_alloc {{buffer.copy = 3 : i32, buffer.id = 0 : i32}} : () -> {BUF3} loc("buf")
    ttg.warp_specialize(%full, %empty, %buf, %desc, %tiles, %k, %done_0)
    default {{
      %r = scf.for %tt = %c0 to %tiles step %c1 iter_args(%tile_cnt = %c0_i64) -> (i64) : i32 {{
        %db = arith.andi %tile_cnt, %c1_i64 : i64
        %dt = arith.trunci %db : i64 to i1
        %dp = arith.extui %dt : i1 to i32
        ttng.wait_barrier %done_0, %dp : {BAR1}
        %tn = arith.addi %tile_cnt, %c1_i64 : i64 loc("tile_cnt")
        scf.yield %tn : i64
      }}
      ttg.warp_yield
    }}
    partition0(%f: {BAR3}, %e: {BAR3}, %b: {BUF3}, %d: {DESC}, %nt: i32, %nk: i32, %dn: {BAR1}) num_warps(1) {{
{CONSTS}
      %r = scf.for %t = %c0 to %nt step %c1 iter_args(%cnt = %c0_i64) -> (i64) : i32 {{
        %r2 = scf.for %kk = %c0 to %nk step %c1 iter_args(%ck = %cnt) -> (i64) : i32 {{
{_slot_and_phase("%ck", "e", True)}
          %es = ttg.memdesc_index %e[%se] : {BAR3} -> {BAR1}
          ttng.wait_barrier %es, %pe : {BAR1}
          %fs = ttg.memdesc_index %f[%se] : {BAR3} -> {BAR1}
          ttng.barrier_expect %fs, 8192, %true : {BAR1}
          %bs = ttg.memdesc_index %b[%se] : {BUF3} -> {BUF1}
          ttng.async_tma_copy_global_to_local %d[%kk, %t] %bs, %fs, %true : {DESC}, {BAR1} -> {BUF1}
          %next = arith.addi %ck, %c1_i64 : i64 loc("cnt")
          scf.yield %next : i64
        }}
        scf.yield %r2 : i64
      }}
      ttg.warp_return
    }}
    partition1(%f: {BAR3}, %e: {BAR3}, %b: {BUF3}, %d: {DESC}, %nt: i32, %nk: i32, %dn: {BAR1}) num_warps(4) {{
{CONSTS}
      %r = scf.for %t = %c0 to %nt step %c1 iter_args(%cnt = %c0_i64) -> (i64) : i32 {{
        %r2 = scf.for %kk = %c0 to %nk step %c1 iter_args(%ck = %cnt) -> (i64) : i32 {{
{consumer_prelude}{_slot_and_phase("%tile64" if consumer_by_tile else "%ck", "f", False)}
          %fs = ttg.memdesc_index %f[%sf] : {BAR3} -> {BAR1}
          ttng.wait_barrier %fs, %pf : {BAR1}
{second}
          %bs = ttg.memdesc_index %b[%sf] : {BUF3} -> {BUF1}
          %v = ttg.local_load %bs : {BUF1} -> {TENSOR}
          %es = ttg.memdesc_index %e[%sf] : {BAR3} -> {BAR1}
          ttng.arrive_barrier %es, 1 : {BAR1}
          %next = arith.addi %ck, %c1_i64 : i64 loc("cnt")
          scf.yield %next : i64
        }}
        ttng.arrive_barrier %dn, 1 : {BAR1}
        scf.yield %r2 : i64
      }}
      ttg.warp_return
    }} : ({BAR3}, {BAR3}, {BUF3}, {DESC}, i32, i32, {BAR1}) -> ()
    tt.return
  }}
}}
"""


def line_of(text: str, needle: str) -> int:
    hits = [n for n, line in enumerate(text.splitlines(), 1) if needle in line]
    assert hits, f"{needle!r} not found"
    return hits[0]


def run_phases(tmp_path: Path, text: str, *args: str) -> str:
    path = tmp_path / "ring.ttgir"
    path.write_text(text)
    result = CliRunner().invoke(app, ["phases", str(path), *args])
    assert result.exit_code == 0, (result.output, result.exception)
    return result.stdout


def by_loc(doc: dict, loc: str) -> dict:
    found = [b for b in doc["barriers"] if b["loc_name"] == loc]
    assert len(found) == 1, [b["id"] for b in doc["barriers"]]
    return found[0]


def assert_ring_samples(wait: dict, depth: int, inverted: bool) -> None:
    """slot = n % depth and parity = ((n / depth) & 1) ^ inverted at every sample, with n the
    counter's value bound for that sample; the samples cover two full laps."""
    samples = wait["samples"]
    assert len(samples) == 2 * depth + 2, samples
    assert [s["i"] for s in samples] == list(range(2 * depth + 2))
    for s in samples:
        (n,) = s["n"].values()
        assert s["slot"] == n % depth, (wait["line"], s)
        assert s["parity"] == ((n // depth) & 1) ^ int(inverted), (wait["line"], s)
    assert wait["side"] == ("producer" if inverted else "consumer")


# -- hand-written ring ------------------------------------------------------------------------------
def test_ring_json_has_formulas_samples_cadence_and_contributions(tmp_path: Path):
    text = ring_ir()
    doc = json.loads(run_phases(tmp_path, text, "--format", "json"))
    assert doc["schema"] == "barrier-viz/phases/v1" and doc["input"]["function"] == "ring"
    assert doc["summary"] == {"barriers": 3, "waits": 3, "wait_barrier_ops": 3, "resolved": 3, "unresolved": 0}

    full, empty, done = by_loc(doc, "full"), by_loc(doc, "empty"), by_loc(doc, "done")
    assert full["id"] == f"%full@{line_of(text, '%full = ttg.local_alloc')}"
    assert (full["depth"], empty["depth"], done["depth"]) == (3, 3, 1)
    # The ring advances per k step (the leaf loop); `done` per tile (the loops that carry it
    # are tile loops of a kernel that runs a loop nest).
    assert (full["cadence"], empty["cadence"], done["cadence"]) == ("inner", "inner", "outer")
    assert not full["constant_phase"] and not done["constant_phase"]

    (fw,) = full["waits"]
    (ew,) = empty["waits"]
    assert fw["partition"] == "partition1" and ew["partition"] == "partition0"
    assert fw["line"] == line_of(text, "ttng.wait_barrier %fs") and ew["line"] == line_of(text, "ttng.wait_barrier %es")
    assert fw["slot"]["formula"] == "cnt % 3" and ew["slot"]["formula"] == "cnt % 3"
    assert fw["phase"]["formula"] == "(cnt / 3) & 1"
    assert ew["phase"]["formula"] == "((cnt / 3) & 1) ^ 1"
    assert fw["phase"]["constant"] is None and not fw["slot"]["unknowns"] and not ew["phase"]["unknowns"]
    # The machine form is the expression tree: remu(counter, 3), under the i64 -> i32 trunci.
    expr = fw["slot"]["expr"]
    while expr["kind"] == "cast":
        expr = expr["operand"]
    assert expr["kind"] == "binop" and expr["op"] == "remu"
    assert expr["rhs"]["value"] == 3 and expr["lhs"]["kind"] == "var" and expr["lhs"]["name"] == "cnt"
    assert fw["offset"] == {"counter": "cnt", "offset": 0, "modulus": 3, "lines": []}
    assert [a["level"] for a in fw["advanced_by"]] == ["inner"]
    assert_ring_samples(fw, 3, inverted=False)
    assert_ring_samples(ew, 3, inverted=True)

    (dw,) = done["waits"]
    assert dw["slot"]["constant"] == 0 and dw["phase"]["formula"] == "tile_cnt & 1"
    assert [(s["slot"], s["parity"]) for s in dw["samples"]] == [(0, i & 1) for i in range(4)]

    # Arrive sites: the expect arms 8192 bytes that the TMA copy delivers; the release is one
    # explicit arrival of the init count 1; the per-tile arrive on `done` reads no counter.
    expect, tma = full["arrives"]
    assert (expect["role"], expect["arrivals"], expect["init_count"], expect["tx_bytes"]) == ("expect", 1, 1, 8192)
    assert expect["expect"]["status"] == "matched" and expect["expect"]["copy_lines"] == [tma["line"]]
    assert (tma["role"], tma["arrivals"], tma["tx_bytes"], tma["mechanism"]) == ("tma_arrive", 0, 8192, "mbarrier_tma")
    assert tma["slot"]["formula"] == "cnt % 3" and tma["partition"] == "partition0"
    (release,) = empty["arrives"]
    assert (release["arrivals"], release["init_count"], release["mechanism"]) == (1, 1, "mbarrier_explicit")
    assert "completes the phase alone" in release["contributes"]
    (per_tile,) = done["arrives"]
    assert per_tile["slot"]["constant"] == 0 and per_tile["cadence"] == "constant"
    assert [d["name"] for d in full["data"]] == ["buf"] and full["buffer_ids"] == [0]
    assert not full["stagger"] and not empty["stagger"]
    # full and empty guard the same buffer.id, each side at offset 0 of its own counter: no stagger.
    (group,) = doc["stagger_groups"]
    assert group["buffer_id"] == 0 and not group["staggered"]
    assert {m["barrier"] for m in group["barriers"]} == {full["id"], empty["id"]}


def test_ring_text_is_one_section3_block_per_barrier(tmp_path: Path):
    text = ring_ir()
    out = run_phases(tmp_path, text)
    assert "3 barrier(s); 3 wait_barrier(s), 3 with slot and phase resolved" in out
    blocks = out.split("\nBarrier: ")[1:]
    assert len(blocks) == 3
    full = next(b for b in blocks if b.startswith('mbarrier %full@'))
    empty = next(b for b in blocks if b.startswith('mbarrier %empty@'))
    assert "for SMEM buffer buf [64x64xf16] (buffer.id = 0)" in full.splitlines()[0]
    assert re.search(r"^  Depth:   3 \(triple-buffered\); init count 1; mechanism mbarrier_tma$", full, re.M)
    assert re.search(r"^  Cadence: inner ", full, re.M)
    assert re.search(r"^  Index:   cnt % 3$", full, re.M) and re.search(r"^  Index:   cnt % 3$", empty, re.M)
    assert re.search(r"^  Phase:   \(cnt / 3\) & 1 \(1-bit: flips every 3 uses\)$", full, re.M)
    assert re.search(r"^  Phase:   \(\(cnt / 3\) & 1\) \^ 1 \(1-bit: flips every 3 uses\)$", empty, re.M)
    # The sample table: two laps of the ring, parity inverted on the empty side.
    assert re.search(r"^      slot    +0 +1 +2 +0 +1 +2 +0 +1$", full, re.M)
    assert re.search(r"^      parity  +0 +0 +0 +1 +1 +1 +0 +0$", full, re.M)
    assert re.search(r"^      parity  +1 +1 +1 +0 +0 +0 +1 +1$", empty, re.M)
    assert "consumer side" in full and "producer side" in empty
    assert f"line {line_of(text, 'ttng.barrier_expect')} partition0 barrier_expect" in full
    assert "1 arrival of 1 + expects 8192 tx bytes" in full and "(matched)" in full
    assert "Stagger:" not in out


def test_a_second_offset_on_one_barrier_is_reported_as_stagger(tmp_path: Path):
    text = ring_ir(consumer_second_offset=1)
    doc = json.loads(run_phases(tmp_path, text, "--format", "json"))
    full = by_loc(doc, "full")
    offsets = {(o["offset"], tuple(o["lines"])) for o in full["stagger"]}
    second = line_of(text, "ttng.wait_barrier %fx")
    assert (1, (second,)) in offsets and any(off == 0 for off, _ in offsets)
    (group,) = doc["stagger_groups"]
    assert group["staggered"]
    w = next(w for w in full["waits"] if w["line"] == second)
    assert w["slot"]["formula"] == "(cnt + 1) % 3"
    for s in w["samples"]:
        (n,) = s["n"].values()
        assert (s["slot"], s["parity"]) == ((n + 1) % 3, ((n + 1) // 3) & 1)
    out = run_phases(tmp_path, text)
    assert re.search(rf"^  Stagger: .*\(cnt \+ 1\) % 3 at line {second}", out, re.M)
    assert re.search(r"^  Index \(partition1 line \d+\): \(cnt \+ 1\) % 3$", out, re.M)


def test_uses_at_different_loop_levels_make_a_mixed_cadence(tmp_path: Path):
    # The consumer indexes the ring by tile (advanced per tile) while the loader advances it
    # per k step: the full barrier's waits and arrives disagree.
    text = ring_ir(consumer_by_tile=True)
    doc = json.loads(run_phases(tmp_path, text, "--format", "json"))
    full = by_loc(doc, "full")
    assert full["cadence"] == "mixed"
    assert full["cadence_lines"]["outer"] == [line_of(text, "ttng.wait_barrier %fs")]
    assert line_of(text, "ttng.barrier_expect") in full["cadence_lines"]["inner"]
    assert any("disagree on cadence" in n for n in full["notes"])
    assert by_loc(doc, "full")["waits"][0]["cadence"] == "outer"
    assert json.loads(run_phases(tmp_path, ring_ir(), "--format", "json"))["barriers"][0]["notes"] == []


def test_no_wait_means_no_samples_but_a_reason(tmp_path: Path):
    # A phase read from a kernel input cannot be sampled: the tool says so instead of guessing.
    text = ring_ir().replace("%dp = arith.extui %dt : i1 to i32", "%dp = arith.andi %k, %c1 : i32")
    doc = json.loads(run_phases(tmp_path, text, "--format", "json"))
    (dw,) = by_loc(doc, "done")["waits"]
    assert dw["phase"]["formula"] == "k & 1" and dw["samples"] == []
    assert "kernel input" in dw["samples_note"]
    assert by_loc(doc, "done")["cadence"] == "constant"


# -- corpus acceptance ------------------------------------------------------------------------------
def _acceptance_units() -> list[tuple[Path, Unit]]:
    """Every final .ttgir and every doTokenLowering snapshot (file or dump unit) in real/."""
    out: list[tuple[Path, Unit]] = []
    for p in sorted(REAL.iterdir()):
        if p.suffix == ".ttgir" or p.name.endswith("doTokenLowering.mlir"):
            out.append((p, default_unit(open_file(p).units)))
        elif is_dump(p):
            out.extend((p, u) for u in open_file(p).units if u.label.endswith("doTokenLowering"))
    return out


def _phases_json(path: Path, unit: Unit) -> tuple[dict, int]:
    """The phases document (without the dependency graph's data names, which do not bear on
    formulas) and the number of wait_barrier ops in the selected function. The input sets are
    the corpus tests' session-wide cached ones, so a dump is scanned once."""
    ir = load_unit(unit)
    fns = ir.functions()
    sel = Selection(open_file(path), unit, ir, default_function(fns) if fns else None)
    report = phase_report(Analysis(sel), with_data=False)
    doc = phases_doc_from_report(report, InputRef(**sel.input_ref()), [])
    ops = sum(1 for op in sel.operations() if op.name == "ttng.wait_barrier")
    return json.loads(doc.model_dump_json(by_alias=True)), ops


@needs_corpus
def test_every_corpus_wait_barrier_has_resolved_slot_and_phase():
    units = _acceptance_units()
    total = resolved = snapshots = 0
    bad: list[str] = []
    for path, unit in units:
        doc, ops = _phases_json(path, unit)
        waits = [w for b in doc["barriers"] for w in b["waits"] if w["op"] == "ttng.wait_barrier"]
        assert len(waits) == ops, (path.name, unit.index, len(waits), ops)
        snapshots += "doTokenLowering" in unit.label
        for w in waits:
            total += 1
            if w["slot"] and w["phase"] and not w["slot"]["unknowns"] and not w["phase"]["unknowns"]:
                resolved += 1
            else:
                bad.append(f"{path.name}[{unit.index}]:{w['line']}")
    print(f"\nphases: {len(units)} units ({snapshots} doTokenLowering snapshots), {total} wait_barrier, "
          f"{resolved} resolved, {total - resolved} with unknowns")
    assert snapshots >= 3 and total > 1000
    assert not bad, bad


# Hopper and Blackwell, AutoWS (fb-, gemm_ws) and upstream (up-) lowering, 3 and 2 stages.
RING_CASES = [
    ("gemm_ws_sm100.ttgir", 3),
    ("fb-sm90__gemm_persistent__default.ttgir", 3),
    ("fb-sm100__gemm_persistent__default.ttgir", 3),
    ("up-sm100__gemm_persistent__default.ttgir", 3),
    ("fb-sm100__gemm_persistent__stages2.ttgir", 2),
    ("up-sm100__gemm_persistent__stages2.ttgir", 2),
]


def _stages(path: Path) -> int:
    """The number of pipeline stages, read independently of the tool: the leading dimension of
    the rank-3 SMEM data allocations (the operand tiles), TMA store staging buffers excluded."""
    dims = set()
    for line in path.read_text().splitlines():
        m = re.search(r"ttg\.local_alloc[^\n]*-> !ttg\.memdesc<(\d+)x\d+x\d+x[a-z0-9]+, #shared\d*, #smem", line)
        if m and "tmaStaging" not in line:
            dims.add(int(m.group(1)))
    assert len(dims) == 1, dims
    return dims.pop()


@needs_corpus
@pytest.mark.parametrize("name,expected", RING_CASES)
def test_persistent_gemm_operand_ring_hand_derived(name: str, expected: int):
    path = REAL / name
    if not path.is_file():
        pytest.skip(f"{name} not in corpus")
    depth = _stages(path)
    assert depth == expected
    result = CliRunner().invoke(app, ["phases", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    # The operand ring: barriers of `depth` slots whose data is an SMEM operand tile, filled by
    # TMA (full) or released after the MMA read it (empty), advanced per k step.
    ring = [b for b in doc["barriers"] if b["depth"] == depth and b["cadence"] == "inner"
            and any(d["space"] == "smem" for d in b["data"])]
    full = [b for b in ring if "mbarrier_tma" in b["mechanisms"]]
    empty = [b for b in ring if "mbarrier_tma" not in b["mechanisms"]]
    assert full and len(empty) == len(full), [b["id"] for b in ring]
    checked = {"full": 0, "empty": 0}
    for side, barriers in (("full", full), ("empty", empty)):
        for b in barriers:
            assert b["waits"], b["id"]
            for w in b["waits"]:
                assert w["slot"]["formula"].endswith(f"% {depth}"), w["slot"]["formula"]
                assert_ring_samples(w, depth, inverted=side == "empty")
                checked[side] += 1
    # Each full barrier pairs with an empty one protecting the same buffer.
    assert sorted(d["name"] for b in full for d in b["data"]) == sorted(d["name"] for b in empty for d in b["data"])
    print(name, depth, checked)

