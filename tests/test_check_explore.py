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
    assert any(f["kind"] == "race.unsynchronized_read" for f in doc["findings"])


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
    """Text and JSON both say on which schedules and at which launch races were checked, and what
    lies beyond (explore's starved and random schedules)."""
    path = _packed_without_back_edges(tmp_path)
    text = " ".join(run_cli("check", str(path)).stdout.split())  # the console wraps long lines
    assert "races: happens-before checked on the schedules favorable, in_order, reverse, round_robin" in text
    assert "beyond this bound: starved partitions and random schedules: `barrier-viz explore`" in text
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
