"""`check` and `explore` agree on what they claim: a token-ordered synchronous MMA is no race for
either, and `check` says that `explore` looks further (it may add race pairs)."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import run_cli
from test_check import FIXTURE, _ops, _replace_line

SYNC = Path(__file__).parent / "fixtures" / "explore" / "sync_mma_token.mlir"


def test_a_synchronous_mma_orders_the_load_its_token_feeds():
    r = run_cli("explore", str(SYNC), "--format", "json")
    doc = json.loads(r.stdout)
    assert r.exit_code == 0 and doc["result"] == "clean_within_bounds" and not doc["findings"]


def test_an_async_mma_with_no_completion_wait_still_races(tmp_path):
    path = tmp_path / "async.mlir"
    path.write_text(SYNC.read_text().replace("%first, %on :", "%first, %on {is_async} :"))
    doc = json.loads(run_cli("explore", str(path), "--format", "json").stdout)
    assert doc["result"] == "race"
    race = next(f for f in doc["findings"] if f["kind"] == "race.unsynchronized_read")
    # Worded as the engineer reads it: the TMEM read waits for nothing the MMA's completion arrives on.
    assert (f"the read at line {race['lines'][1]} is not ordered after the completion of the MMA write at line "
            f"{race['lines'][0]}") in race["message"]


def test_check_output_says_explore_looks_further(tmp_path):
    base = FIXTURE.read_text()
    wait = _ops(base, "ttng.wait_barrier", "partition0")[-1]
    path = tmp_path / "k.ttgir"
    path.write_text(_replace_line(base, wait.line, []))
    assert "`barrier-viz explore` looks further" in run_cli("check", str(path)).stdout
    assert "`explore` looks further" in run_cli("report", str(path), "--format", "compact").stdout
    assert "`barrier-viz explore` looks further" in run_cli("report", str(path)).stdout


# -- issue 22: `check` finds what `explore` finds on its own schedules -------------------------------
import sys  # noqa: E402

import pytest  # noqa: E402

from test_check import PACKED, BACK_EDGES  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from bench_check_explore import compare, info_with_a_severe_outcome  # noqa: E402 - the one comparison


def _dropped_consumer_wait(tmp_path) -> Path:
    """The GEMM's MMA partition without its last wait: it reads the SMEM tile before the TMA data
    the wait stood for has landed. No static rule pairs that read with a fill; the run does."""
    base = FIXTURE.read_text()
    wait = _ops(base, "ttng.wait_barrier", "partition0")[-1]
    path = tmp_path / "dropped_wait.ttgir"
    path.write_text(_replace_line(base, wait.line, []))
    return path


def _packed_without_back_edges(tmp_path) -> Path:
    """FA's packed TMEM without the outer-cadence back-edges: the next tile's useD=false QK MMA
    rewrites the m_ij / l_i columns the softmax still reads (explore's own test above)."""
    path = tmp_path / "no_back_edges.ttgir"
    path.write_text("\n".join(x for x in PACKED.read_text().split("\n") if not x.strip().startswith(BACK_EDGES)))
    return path


@pytest.mark.parametrize("make", [_dropped_consumer_wait, _packed_without_back_edges])
def test_check_reports_every_race_explore_sees_on_its_schedules(tmp_path, make):
    """Each error race of `explore` is an error of `check` on the same lines, and the race was seen
    on one of the schedules `check` states it ran (its JSON bound), so it is `check`'s finding,
    not a second opinion only `explore` gives."""
    path = make(tmp_path)
    got = compare(path, timeout=10)
    assert got["bound_stated"] and got["check_errors"] > 0, got
    assert got["missed"] == [] and got["explore_result"] == "race"
    doc = json.loads(run_cli("check", str(path), "--format", "json").stdout)
    bound = doc["simulation"]["races"]
    assert bound["schedules"] and set(bound["schedules"]) <= {"favorable", "in_order", "reverse", "round_robin"}
    runs = [f for f in doc["findings"] if f["severity"] == "error" and f["kind"].startswith("race.")
            and (f["evidence"].get("run_race") or f["evidence"]).get("schedule") in bound["schedules"]]
    assert runs, "the race comes from check's own runs (its own finding, or the evidence of a static rule's twin)"


def test_check_states_the_bound_it_explored(tmp_path):
    """Text and JSON both say on which schedules and at which launch races were checked (the text:
    the schedules it lists, at the launch it names), and the JSON what lies beyond (explore's
    starved and random schedules)."""
    path = _packed_without_back_edges(tmp_path)
    text = " ".join(run_cli("check", str(path)).stdout.split())  # the console wraps long lines
    assert "favorable: covered, in_order: covered, reverse: covered, round_robin: covered" in text
    assert "static rules + the schedules above, with their happens-before races" in text
    bound = json.loads(run_cli("check", str(path), "--format", "json").stdout)["simulation"]["races"]
    assert bound["trips"] == 2 and bound["int_args"] > 1 and "explore" in bound["beyond"]


def test_a_correct_kernel_gets_no_race_from_the_runs():
    """The unmodified GEMM and the FA packed-TMEM kernel with its back-edges: vector clocks on in
    every run of `check`, and no race (a false race here would be a false verdict)."""
    for path in (FIXTURE, PACKED):
        doc = json.loads(run_cli("check", str(path), "--format", "json").stdout)
        assert doc["simulation"]["races"]["schedules"]
        assert not [f for f in doc["findings"] if f["severity"] == "error"], path.name
        assert info_with_a_severe_outcome(doc["findings"]) == []


# -- a CI-sized sample of the corpus and the eval cases (bench/bench_check_explore.py runs them all) ---
from corpus_units import CORPUS  # noqa: E402

CASES = Path(__file__).resolve().parents[1] / "evals" / "cases"
# Dropped waits (the racy hand-written kernels in their compiled form: a read no wait
# orders, a refill no release orders), a flipped parity, and unmodified kernels of each family.
SAMPLE_CASES = ("gpu-h200.gemm_persistent.drop_wait_data_L233", "gpu-h200.gemm_persistent.drop_wait_release_L157",
                "fbtriton-metaws.gemm_tile_v0.sm90.drop_wait_data_L96", "gpu-h200.gluon-gemm_2c.flip_parity_data_L51")
SAMPLE_CORPUS = ("families/gluon", "families/tlx", "gpu/gemm_ws_sm90_stages4")


def _sample() -> list[Path]:
    out = [CASES / c / "input.ttgir.gz" for c in SAMPLE_CASES]
    for sub in SAMPLE_CORPUS:
        files = sorted((CORPUS / sub).rglob("*.ttgir")) if (CORPUS / sub).is_dir() else []
        out += files[:1]
    return out


@pytest.mark.parametrize("path", _sample(), ids=lambda p: p.parent.name if p.name == "input.ttgir.gz" else p.name)
def test_explore_never_finds_an_error_race_or_deadlock_check_misses(path):
    """Issue 22's acceptance on a sample: every error race or deadlock `explore --timeout 10`
    reports is an error of `check` too, unless it was seen only beyond `check`'s stated bound;
    and no finding of `check` is an info whose outcome is a hang or wrong results."""
    got = compare(path, timeout=10)
    assert got["missed"] == [], got["missed"]
    assert got["severity_breaks"] == []
    if got["beyond"]:
        assert got["bound_stated"]


def test_a_read_logged_before_an_async_write_says_both_orders_are_missing():
    """A run may log the partition's read before the TMA's write it races (the refill overran the
    reader, or the read ran before the data landed): the message names both missing orders, in
    the engineer's words, never "a write is not ordered after the earlier access"."""
    from barrier_viz.analyses.sim.explore import RaceReport, race_findings

    race = RaceReport(first_line=56, first_op="ttng.warp_group_dot", first_kind="read", first_partition="default",
                      second_line=147, second_op="ttng.async_tma_copy_global_to_local", second_kind="write",
                      second_partition="partition1 (async)", storage="%b_bufs@24", columns=(0, 128), policy="favorable")
    (f,) = race_findings([race])
    assert f.kind == "race.missing_acquire" and f.severity.value == "error"
    assert ("the read at line 56 is not ordered after the completion of the TMA write at line 147 (default waits on "
            "no barrier that write's completion arrives on), nor is that write issued after the read is released") in f.message
