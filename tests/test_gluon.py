"""Hand-written warp specialization (our Gluon kernels, evals/gen/gluon_kernels.py, compiled by
triton 3.6 for sm90 and observed on the H200): the mutation operators for hand-written idioms,
and the rules those kernels exercised.

Every mutant here is made from an unmodified base by the mutation engine, so what each test
expects follows from the edit; the GPU labels of the same mutants are in evals/cases
(gpu-h200.gluon-*), scored by tests/test_evals.py.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from barrier_viz.analyses.model.findings import HANG_KINDS
from barrier_viz.evals.cases import Case, load_case
from barrier_viz.evals.mutate import mutants
from barrier_viz.evals.scoring import Reported, score_case
from barrier_viz.ir.parse import parse_ir

from cli_support import check_text, run_cli

CASES = Path(__file__).resolve().parent.parent / "evals" / "cases"


def _base(kernel: str) -> str:
    return gzip.decompress(load_case(CASES / f"gpu-h200.gluon-{kernel}.base").input.read_bytes()).decode()




def _errors(findings: list[dict]) -> set[str]:
    return {f["kind"] for f in findings if f["severity"] == "error"}


@pytest.fixture(scope="module", params=["gemm_ws", "gemm_2c", "rowstats"])
def base(request) -> tuple[str, str]:
    return request.param, _base(request.param)


def test_bases_are_clean(tmp_path, base):
    """The unmodified kernels computed the right result on the H200: no error."""
    assert not _errors(check_text(tmp_path, base[1])["findings"])


def test_drop_pre_arrive_removes_one_prologue_arrival():
    text = _base("gemm_ws")
    ms = mutants(text, operators=["drop_pre_arrive"])
    assert ms
    ws_line = next(op.line for op in parse_ir(text).walk() if op.name == "ttg.warp_specialize")
    for m in ms:
        before = [op.line for op in parse_ir(text).walk() if op.name == "ttng.arrive_barrier" and op.line < ws_line]
        after = [op for op in parse_ir(m.text).walk() if op.name == "ttng.arrive_barrier" and op.line < ws_line]
        assert len(after) == len(before) - 1 and m.line in before
        assert m.findings == [{"kind": "hang"}]


def test_phase_no_flip_yields_the_phase_back_unchanged(tmp_path):
    text = _base("rowstats")
    ms = mutants(text, operators=["phase_no_flip"])
    assert len(ms) == 3  # one per partition's ring counter
    for m in ms:
        sel = next(op for op in parse_ir(m.text).walk() if op.name == "arith.select" and op.line == m.line)
        assert sel.operands[1] == sel.operands[2]
    # The consumer whose bit no longer flips polls one parity in its loop: a constant phase,
    # found statically (the schedules this kernel runs under need not expose the hang the H200 saw).
    consumer = next(m for m in ms if m.line < 100)
    assert "phase.constant_in_loop" in _errors(check_text(tmp_path, consumer.text)["findings"])


def test_early_release_moves_the_arrive_above_the_read(tmp_path):
    for kernel, read in (("gemm_ws", "ttng.warp_group_dot_wait"), ("rowstats", "ttg.local_load")):
        ms = mutants(_base(kernel), operators=["early_release"])
        assert ms and all(m.extra["read"] == read for m in ms)
        assert not _released_right_before(_base(kernel), read)
        for m in ms:
            assert _released_right_before(m.text, read)  # the release now precedes the read it releases
            found = check_text(tmp_path, m.text)["findings"]
            assert "race.early_release" in _errors(found) and not _errors(found) & HANG_KINDS


def _released_right_before(text: str, read: str) -> bool:
    for op in parse_ir(text).walk():
        ops = op.block.operations if op.block is not None else []
        if op.name == "ttng.arrive_barrier" and ops.index(op) + 1 < len(ops) and ops[ops.index(op) + 1].name == read:
            return True
    return False


def test_init_count_less_only_for_shared_releases():
    assert not mutants(_base("gemm_ws"), operators=["init_count_less"])  # every count is 1
    ms = mutants(_base("gemm_2c"), operators=["init_count_less"])
    assert len(ms) == 1 and ms[0].describe()["edit"] == "init count 2 -> 1"


def test_pre_arrived_slot_is_initial_state_not_an_overrun(tmp_path):
    """gemm_ws pre-arrives its empty barriers and its loader waits parity 0 first. Flipping that
    acquire makes it wait for the consumer's first release, which needs the loader's own fill:
    a cycle (the H200 hung). The pre-arrival's completion must not read as a consumer that
    released faster than the producer refilled (a race verdict that hid the hang)."""
    m = next(m for m in mutants(_base("gemm_ws"), operators=["flip_parity"]) if m.extra["wait_kind"] == "release")
    errors = _errors(check_text(tmp_path, m.text)["findings"])
    assert "deadlock.cycle" in errors and "race.unsynchronized_read" not in errors


def test_family_and_error_expectations():
    race = Reported("race.early_release", "error", [5])
    warn = Reported("race.missing_acquire", "warning", [5])
    assert score_case(Case("c", Path("x"), findings=[{"kind": "race.*"}]), [race]).passed
    assert not score_case(Case("c", Path("x"), findings=[{"kind": "race.*"}]), [warn]).passed
    hang = Reported("deadlock.cycle", "error", [3])
    assert score_case(Case("c", Path("x"), findings=[{"kind": "error"}]), [hang]).passed
    assert not score_case(Case("c", Path("x"), findings=[{"kind": "error"}]), [warn]).passed
    # a run that faulted is no known-good input, whatever its absent list says
    assert not Case("c", Path("x"), absent=["deadlock.*"], truth="fault").known_good


def test_consumer_first_wait_on_parity_one_is_a_race(tmp_path):
    """A flipped data wait polls parity 1 first, which a fresh barrier satisfies at once: the
    consumer reads before the TMA data lands (the H200 computed wrong values for gemm_2c, and hung
    for rowstats). Whatever the schedule does next, the early read is reported as a race."""
    for kernel in ("gemm_2c", "rowstats"):
        ms = [m for m in mutants(_base(kernel), operators=["flip_parity"]) if m.extra["wait_kind"] == "data"]
        assert ms
        for m in ms:
            assert "race.unsynchronized_read" in _errors(check_text(tmp_path, m.text)["findings"]), m.name


from corpus_units import CORPUS  # noqa: E402 - the one place the corpus is located
ADDMM = CORPUS / "families" / "autows"


@pytest.mark.skipif(not ADDMM.is_dir(), reason=f"corpus not found at {CORPUS} (set BARRIER_VIZ_CORPUS)")
def test_early_release_is_per_buffer():
    """Meta AutoWS's epilogue-subtiled addmm fills one bias buffer per subtile, each acquired
    right before its own copy. With 4 subtiles each is waited, read, then released in turn: the
    release of one subtile's bias before the next subtile's read is no early release. With 2
    subtiles the compiler releases the second bias buffer (line of the arrive) before reading it:
    that one is flagged."""
    es4 = next(ADDMM.glob("addmm_kernel_tma_persistent_ws__*_ES4_*.ttgir"), None)
    es2 = next(ADDMM.glob("addmm_kernel_tma_persistent_ws__BM128_BN128_BK64_ES2_*.ttgir"), None)
    if es4 is None or es2 is None:
        pytest.skip("addmm autows kernels not in this corpus")
    r4 = run_cli("check", str(es4), "--no-simulate", "--format", "json")
    assert not [f for f in r4.json()["findings"] if f["kind"] == "race.early_release"]
    r2 = run_cli("check", str(es2), "--no-simulate", "--format", "json")
    early = [f for f in r2.json()["findings"] if f["kind"] == "race.early_release"]
    assert len(early) == 1
    text = es2.read_text().splitlines()
    release, read = early[0]["evidence"]["release_line"], early[0]["evidence"]["read_line"]
    assert "ttng.arrive_barrier" in text[release - 1] and "ttg.local_load" in text[read - 1] and release < read
