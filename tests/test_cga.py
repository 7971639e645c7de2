"""Per-CTA model of Triton's CGA form (`ttg.num-ctas` > 1): layouts, shares, barrier copies,
TMA / CLC bytes and commit multicast masks (facts/cga.py), and the expect-bytes rule on CGA IR.

The semantics are the lowering's (see the module docstring): a broadcast barrier is one mbarrier
per group in its leader, which expects the declared bytes once per CTA of the group; a TMA load
lands each CTA's share; a two-CTA MMA / commit is issued by the even CTA and multicasts its
arrival to the CTAs that share its operands.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from barrier_viz.analyses.verdicts import check
from barrier_viz.analysis import Analysis
from barrier_viz.facts import cga
from barrier_viz.ir.parse import parse_ir
from barrier_viz.session import select
from corpus_units import CORPUS

FIX = Path(__file__).parent / "fixtures" / "cga"
LOADS = FIX / "cga_2cta_loads.ttgir"
GLUON = CORPUS / "families" / "gluon"
ALIASES = {
    "#a": "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16, CGALayout = [[1, 0], [2, 0]]}>",
    "#b": "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16, CGALayout = [[0, 1], [0, 0]]}>",
    "#split4": "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0], CGALayout = [[1], [2]]}>",
    "#pairs": "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0], CGALayout = [[0], [1]]}>",
    "#all": "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0], CGALayout = [[0], [0]]}>",
    "#smem": "#ttg.shared_memory",
}


def _md(shape: str, enc: str) -> str:
    return f"!ttg.memdesc<{shape}, {enc}, #smem, mutable>"


# -- layouts ----------------------------------------------------------------------------------------
def test_cga_layout_forms_parse_to_one_basis_per_cta_bit():
    """Shared/TMEM encodings write `CGALayout` (tile units), linear ones `block` (elements), old
    IR the CTAsPerCGA/CTASplitNum/CTAOrder triple; all give the same split / broadcast bits."""
    tmem = "#ttng.tensor_memory_encoding<blockM = 128, blockN = 256, colStride = 1, CGALayout = [[1, 0]], twoCTAs = true>"
    linear = "#ttg.linear<{register = [[0, 1]], lane = [[1, 0]], warp = [[32, 0]], block = [[128, 0], [0, 0]]}>"
    shared_linear = "#ttg.shared_linear<{offset = [[0, 1], [1, 0]], block = [[0, 0]]}, alignment = 128>"
    legacy = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1], " \
             "CTAsPerCGA = [2, 2], CTASplitNum = [2, 1], CTAOrder = [1, 0]}>"
    assert cga.layout_of_encoding(tmem, {}).bases == ((1, 0),)
    lin = cga.layout_of_encoding(linear, {})
    assert lin.bases == ((128, 0), (0, 0)) and lin.broadcast_mask == 0b10 and lin.split_per_dim() == (2, 1)
    assert cga.layout_of_encoding(shared_linear, {}).replicated
    # fromSplitParams: dim 1 first (no split, 2 CTAs -> one broadcast bit), then dim 0 (split 2).
    assert cga.layout_of_encoding(legacy, {}).bases == ((0, 0), (1, 0))
    assert cga.layout_of_encoding("#a", ALIASES).split_per_dim() == (4, 1)
    assert cga.layout_of_encoding("#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>", {}) is None


def test_bytes_per_cta_divide_by_the_distinct_shares_only():
    """A 512x64 f16 A tile split 4 ways is 16 KiB per CTA; B 64x256 split 2 ways and broadcast
    along the other bit is 16 KiB per CTA too (two CTAs hold each half); a leading pipeline
    dimension is not split."""
    assert cga.bytes_per_cta(_md("512x64xf16", "#a"), ALIASES, 4) == 16384
    assert cga.bytes_per_cta(_md("64x256xf16", "#b"), ALIASES, 4) == 16384
    assert cga.bytes_per_cta(_md("4x512x64xf16", "#a"), ALIASES, 4) == 4 * 16384
    assert cga.bytes_per_cta(_md("2xi64", "#all"), ALIASES, 4) == 16
    with pytest.raises(cga.CgaUnknown):
        cga.bytes_per_cta(_md("64x256xf16", "#b"), ALIASES, 2)  # a 4-CTA layout in a 2-CTA module


def test_barrier_arrays_place_one_mbarrier_per_broadcast_group_in_its_leader():
    """`memdesc<4xi64, [[1],[2]]>`: element k in CTA k, each CTA its own; `memdesc<2xi64,
    [[0],[1]]>`: CTAs 0-1 share element 0 (in CTA 0), CTAs 2-3 element 1 (in CTA 2)."""
    own = cga.barrier_home(_md("4xi64", "#split4"), ALIASES, 4)
    assert own.elements_by_cta() == {0: (0,), 1: (1,), 2: (2,), 3: (3,)}
    assert [own.home(c) for c in range(4)] == [0, 1, 2, 3] and own.group_size() == 1
    pairs = cga.barrier_home(_md("2xi64", "#pairs"), ALIASES, 4)
    assert pairs.elements_by_cta() == {0: (0,), 1: (0,), 2: (1,), 3: (1,)}
    assert [pairs.home(c) for c in range(4)] == [0, 0, 2, 2] and pairs.group_size() == 2
    m = cga.CgaModule(4, True, ALIASES)
    assert cga.init_count(1, _md("2xi64", "#pairs"), m) == 2
    assert [cga.waits_on(_md("2xi64", "#pairs"), m, c) for c in range(4)] == [True, False, True, False]
    with pytest.raises(cga.CgaUnknown):  # 4 elements but groups of 2: 8 barriers for 4 CTAs
        cga.barrier_home(_md("4xi64", "#pairs"), ALIASES, 4)


# -- what ops do per CTA --------------------------------------------------------------------------
_OPS = """
module attributes {"ttg.num-ctas" = 4 : i32} {
  tt.func @f(%ad: !tt.tensordesc<tensor<512x64xf16, #a>>, %bd: !tt.tensordesc<tensor<64x256xf16, #b>>, %a: !ttg.memdesc<512x64xf16, #a, #smem, mutable>, %b: !ttg.memdesc<64x256xf16, #b, #smem, mutable>, %d: !ttg.memdesc<512x256xf32, #tm, #ttng.tensor_memory, mutable>, %rdy: !ttg.memdesc<2xi64, #pairs, #smem, mutable>, %emp: !ttg.memdesc<4xi64, #split4, #smem, mutable>, %res: !ttg.memdesc<2xi64, #all, #smem, mutable>) {
    %c0 = arith.constant 0 : i32
    %t = arith.constant true
    ttng.async_tma_copy_global_to_local %ad[%c0, %c0] %a, %rdy, %t : !tt.tensordesc<tensor<512x64xf16, #a>>, !ttg.memdesc<2xi64, #pairs, #smem, mutable> -> !ttg.memdesc<512x64xf16, #a, #smem, mutable>
    ttng.async_tma_copy_global_to_local %bd[%c0, %c0] %b, %rdy, %t {multicast} : !tt.tensordesc<tensor<64x256xf16, #b>>, !ttg.memdesc<2xi64, #pairs, #smem, mutable> -> !ttg.memdesc<64x256xf16, #b, #smem, mutable>
    %tok = ttng.tc_gen5_mma %a, %b, %d[], %t, %t, %emp[%t] {is_async, multicast, two_ctas} : !ttg.memdesc<512x64xf16, #a, #smem, mutable>, !ttg.memdesc<64x256xf16, #b, #smem, mutable>, !ttg.memdesc<512x256xf32, #tm, #ttng.tensor_memory, mutable>, !ttg.memdesc<4xi64, #split4, #smem, mutable>
    ttng.tc_gen5_commit %emp, %t descs %a : !ttg.memdesc<4xi64, #split4, #smem, mutable>, !ttg.memdesc<512x64xf16, #a, #smem, mutable>
    ttng.tc_gen5_commit %emp, %t : !ttg.memdesc<4xi64, #split4, #smem, mutable>
    ttng.tc_gen5_commit %rdy, %t descs %b : !ttg.memdesc<2xi64, #pairs, #smem, mutable>, !ttg.memdesc<64x256xf16, #b, #smem, mutable>
    ttng.clc_try_cancel %res, %emp : !ttg.memdesc<2xi64, #all, #smem, mutable>, !ttg.memdesc<4xi64, #split4, #smem, mutable>
    tt.return
  }
}
"""


def _ops():
    text = "".join(f"{k} = {v}\n" for k, v in ALIASES.items())
    text += "#tm = #ttng.tensor_memory_encoding<blockM = 128, blockN = 256, colStride = 1, CGALayout = [[1, 0], [2, 0]], twoCTAs = true>\n"
    ir = parse_ir(text + _OPS)
    m = cga.cga_module(ir)
    ops = [op for op in ir.walk() if op.name.startswith("ttng.")]
    return m, ops


def test_module_flags_two_ctas_from_the_mmas_when_the_module_does_not_say():
    """make_llir's check_matmul_two_cta sets `ttng.two-ctas` from the MMAs' `two_ctas`."""
    m, _ = _ops()
    assert (m.num_ctas, m.two_ctas) == (4, True)
    assert cga.cga_module(parse_ir('module attributes {"ttg.num-ctas" = 1 : i32} {\n}\n')) is None


def test_tma_bytes_land_per_share_on_the_group_leaders_barrier():
    """A (split 4 ways, no multicast): each CTA's 16 KiB completes on its pair leader's copy.
    B multicast (broadcast bit 1): CTAs 0 and 1 issue, each to itself and CTA +2."""
    m, ops = _ops()
    a_load, b_load = ops[0], ops[1]
    assert [cga.tx_bytes_by_cta(a_load, m, c) for c in range(4)] == [{0: 16384}, {0: 16384}, {2: 16384}, {2: 16384}]
    assert [cga.tx_bytes_by_cta(b_load, m, c) for c in range(4)] == [{0: 16384, 2: 16384}, {0: 16384, 2: 16384}, {}, {}]


def test_commit_multicast_masks_follow_the_descs_broadcast_bits_and_the_pair():
    """MMA (multicast, two-CTA) in CTA 0: A gives the pair {0,1}, B (broadcast bit 1 plus the
    pair bit) all four; odd CTAs issue nothing. A commit without descs reaches the pair."""
    m, ops = _ops()
    mma, commit_a, commit_plain, commit_b, clc = ops[2], ops[3], ops[4], ops[5], ops[6]
    assert [sorted(cga.commit_arrivals(mma, m, c)) for c in range(4)] == [[0, 1, 2, 3], [], [0, 1, 2, 3], []]
    assert sorted(cga.commit_arrivals(commit_a, m, 2)) == [2, 3]
    assert sorted(cga.commit_arrivals(commit_plain, m, 0)) == [0, 1]
    with pytest.raises(cga.CgaUnknown):  # CTA 1's slot of the pair barrier is CTA 0's copy
        cga.commit_arrivals(commit_b, m, 0)
    assert [cga.tx_bytes_by_cta(clc, m, c) for c in range(4)] == [{0: 16, 1: 16, 2: 16, 3: 16}, {}, {}, {}]


# -- the expect rule on CGA IR ----------------------------------------------------------------------
def _expects(path: Path):
    return {e.line: e for e in Analysis(select(str(path), None, None, require_function=True)).buffers.expects}


def _errors(path: Path) -> list:
    a = Analysis(select(str(path), None, None, require_function=True))
    # The TMA store rule's stated limit (stores in flight at a persistent kernel's exit) is no
    # expect-counting limit: these tests are about expects.
    return [f for f in check(a, simulate=False).findings if f.severity.value == "error"
            or (f.kind == "model.limit" and f.evidence.get("rule") != "race.tma_store_reuse")]


def _edit(tmp_path: Path, *pairs: tuple[str, str]) -> Path:
    text = LOADS.read_text()
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new)
    out = tmp_path / LOADS.name
    out.write_text(text)
    return out


def test_expect_counts_each_ctas_share_at_the_shared_barrier():
    """Per CTA: 128x64 of A + 64x128 of B + the replicated 2 KiB scale (multicast by CTA 0 into
    both) = 34816 declared; the one ready barrier (in CTA 0) receives both CTAs' 34816."""
    e = _expects(LOADS)[40]
    assert (e.declared, e.per_cta, e.expected_per_cta, e.status) == (34816, (69632, 0), (69632, 0), "matched")
    assert [c.bytes for c in e.copies] == [16384, 16384, 2048]  # what one CTA's share receives
    assert _errors(LOADS) == []


def test_expect_of_the_cluster_bytes_is_a_hang(tmp_path):
    """Declaring the cluster-wide 69632 bytes arms CTA 0's barrier for 139264: never reached."""
    path = _edit(tmp_path, ("barrier_expect %rdy, 34816", "barrier_expect %rdy, 69632"))
    [f] = _errors(path)
    assert f.kind == "expect.bytes_mismatch" and f.evidence["expected_per_cta"] == [139264, 0]
    assert "copy of the barrier in CTA 0" in f.message


def test_expect_missing_the_multicast_scale_is_a_hang(tmp_path):
    """Forgetting the scale's 2 KiB per CTA: the barrier gets 4 KiB more than it expects."""
    path = _edit(tmp_path, ("barrier_expect %rdy, 34816", "barrier_expect %rdy, 32768"))
    [f] = _errors(path)
    assert f.kind == "expect.bytes_mismatch" and f.evidence["per_cta"] == [69632, 0]


def test_per_cta_ready_barriers_expect_their_own_share(tmp_path):
    """With the ready barrier split (`2xi64`, one per CTA) each CTA's copy expects its 34816."""
    path = _edit(tmp_path, ("!ttg.memdesc<1xi64, #shared_bar", "!ttg.memdesc<2xi64, #per_cta"))
    e = _expects(path)[40]
    assert (e.per_cta, e.expected_per_cta, e.status) == ((34816, 34816), (34816, 34816), "matched")


def test_a_barrier_without_a_cga_layout_is_a_stated_limit(tmp_path):
    """In a 2-CTA module a barrier type must say where it lives; without it no verdict."""
    path = _edit(tmp_path, ("#shared_bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0], "
                            "CGALayout = [[0]]}>", "#shared_bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, "
                            "maxPhase = 1, order = [0]}>"))
    [f] = _errors(path)
    assert f.kind == "model.limit" and "has no CGA layout in a 2-CTA module" in f.message


def test_a_broadcast_tma_barrier_outside_a_two_cta_module_is_read_cta_local(tmp_path):
    """CTA 1's bytes can reach CTA 0's barrier only as a two-CTA copy (`cta_group::2`). Without a
    two-CTA MMA, newer Triton rejects a broadcast TMA barrier and Triton 3.6 lowers every barrier
    CTA-locally, so the IR is read that way: each CTA expects the whole group's 34816 bytes on its
    own copy but receives only its share, a hang-kind error in CTA 1 (no limit)."""
    from barrier_viz.facts.cga import cga_module_of
    from barrier_viz.ir.parse import parse_ir

    path = _edit(tmp_path, ("{is_async, multicast, two_ctas}", "{is_async, multicast}"))
    ir = parse_ir(path.read_text())
    module = next(op for op in ir.operations if op.name == "builtin.module")
    assert cga_module_of(module, ir.aliases).local_barriers
    assert cga_module_of(next(op for op in parse_ir(LOADS.read_text()).operations
                              if op.name == "builtin.module")).local_barriers is False
    findings = check(Analysis(select(str(path), None, None, require_function=True))).findings
    assert not [f for f in findings if f.kind == "model.limit"]
    assert [f for f in findings if f.severity.value == "error" and "cta1" in f.message], [f.message for f in findings]


def test_a_layout_the_compiler_would_reject_is_a_stated_limit(tmp_path):
    """A CGA basis moving along two dimensions is not a permutation (the verifier rejects it):
    no share is computed, no verdict given."""
    path = _edit(tmp_path, ("CGALayout = [[1, 0]]}>\n#b_l", "CGALayout = [[1, 1]]}>\n#b_l"))
    [f] = _errors(path)
    assert f.kind == "model.limit" and "moves along two dimensions" in f.message


@pytest.mark.parametrize("stem", [
    "_matmul_kernel__BM128_BN256_BK64_st6_cga1_nctas2",
    "_matmul_kernel__BM128_BN256_BK64_st4_cga2_nctas4",
    "mma_scaled_warp_specialized_kernel__ex04_mxfp4_BM256_BN256_nctas2",
    "mma_scaled_warp_specialized_kernel__ex04_mxfp8_BM256_BN256_nctas2",
])
def test_gluon_cga_tutorials_match_every_expect(stem):
    """Gluon 03-matmul-multicta (2 and 4 CTAs) and 04-2cta-block-scale-matmul: every expect is
    counted (no model.limit left) and matches in every barrier copy."""
    path = GLUON / f"{stem}.ttgir"
    if not path.exists():
        pytest.skip(f"{path} not found (set BARRIER_VIZ_CORPUS)")
    expects = _expects(path).values()
    assert expects and all(e.status == "matched" and e.expected_per_cta is not None for e in expects)
    assert _errors(path) == []
