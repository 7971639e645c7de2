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
