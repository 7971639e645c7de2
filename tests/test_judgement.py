"""The three answers of `check` (analyses/model/judgement.py): clean (judged), findings, not judged.

"0 errors" reads as clean; when the simulation stopped at a limit it judged nothing about hangs,
so the headline, the JSON summary, the digest, the exit status and `audit` must say so."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import run_cli
from test_machine import BAR, kernel, loaded_trip_kernel, one_barrier

# The producer's trip count is read from memory the kernel also writes (so not an input) and only
# it reads it; the consumer waits 8 times: a hang the simulation cannot judge (a limit).
LIMITED = loaded_trip_kernel(written=True)
# One arrive for one wait: judged clean.
CLEAN = kernel("", "%bar", one_barrier(), f"      %c0 = arith.constant 0 : i32\n      ttng.wait_barrier %bar, %c0 : {BAR}",
               f"%b1: {BAR}", f"      ttng.arrive_barrier %b1, 1 : {BAR}", BAR)
# Nothing arrives: a hang on every schedule.
HANGS = kernel("", "%bar", one_barrier(), f"      %c0 = arith.constant 0 : i32\n      ttng.wait_barrier %bar, %c0 : {BAR}",
               f"%b1: {BAR}", "      %z = arith.constant 0 : i32", BAR)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_text_headline_and_exit_status_tell_the_three_apart(tmp_path: Path) -> None:
    expect = {"clean": (CLEAN, 0, "clean (judged): 0 error(s)"), "hangs": (HANGS, 1, "findings: 1 error(s)"),
              "limited": (LIMITED, 4, "not judged: ")}
    for name, (text, code, head) in expect.items():
        r = run_cli("check", str(_write(tmp_path, f"{name}.ttgir", text)))
        assert r.exit_code == code, (name, r.exit_code, r.stdout)
        headline = next(ln for ln in r.stdout.splitlines() if "error(s)" in ln)
        assert headline.startswith(head), (name, headline)
    r = run_cli("check", str(tmp_path / "limited.ttgir"))
    assert "schedule ended in a hang that is not a verdict" in r.stdout
    assert "WARNING limit.not_judged -> not judged" in r.stdout


def test_digest_and_report_say_not_judged(tmp_path: Path) -> None:
    path = _write(tmp_path, "limited.ttgir", LIMITED)
    r = run_cli("report", str(path), "--format", "compact")
    assert r.exit_code in (0, 1, 4)
    first = r.stdout.splitlines()[0]
    assert "| not judged: 0 error, " in first, first


def test_audit_counts_the_three_apart(tmp_path: Path) -> None:
    for name, text in (("clean", CLEAN), ("hangs", HANGS), ("limited", LIMITED)):
        _write(tmp_path, f"{name}.ttgir", text)
    r = run_cli("audit", str(tmp_path), "--format", "json", "--no-cache")
    doc = json.loads(r.stdout)
    assert doc["summary"]["verdicts"] == {"clean": 1, "findings": 1, "not judged": 1}
    by_file = {Path(row["path"]).stem: row["verdict"] for row in doc["rows"]}
    assert by_file == {"clean": "clean", "hangs": "findings", "limited": "not judged"}


def test_init_count_no_phase_reaches_is_reported_although_the_run_stopped_at_a_limit(tmp_path: Path) -> None:
    """The same kernel with the barrier initialised to 2 arrivals while the producer arrives
    once per phase (one of the ragged-kernel hangs the GPU showed): whatever the loaded trip
    count, every phase waits for an arrival nobody makes. The run still stops at the limit of
    the assumed trip count, but the cause does not depend on it: an error, not silence."""
    text = LIMITED.replace("ttng.init_barrier %bar, 1", "ttng.init_barrier %bar, 2")
    assert text != LIMITED
    r = run_cli("check", str(_write(tmp_path, "count2.ttgir", text)), "--format", "json")
    doc = json.loads(r.stdout)
    assert doc["simulation"]["runs"][0]["outcome"] == "limit"
    errors = [f for f in doc["findings"] if f["severity"] == "error"]
    assert [f["kind"] for f in errors] == ["deadlock.parity_cadence"]
    assert "init count is not reachable" in errors[0]["evidence"]["cause"] and errors[0]["evidence"]["trip_independent"]
    assert doc["summary"]["verdict"] == "findings" and r.exit_code == 1
    # The unchanged kernel (count 1) is not an error: its hang needs the two counts to differ.
    doc = json.loads(run_cli("check", str(_write(tmp_path, "count1.ttgir", LIMITED)), "--format", "json").stdout)
    assert not [f for f in doc["findings"] if f["severity"] == "error"]


def test_wait_nothing_arrives_on_is_reported_although_the_run_stopped_at_a_limit(tmp_path: Path) -> None:
    """A consumer that first waits on a barrier no operation arrives on (its hand-off arrive
    dropped): no trip count makes that phase complete."""
    text = LIMITED.replace(one_barrier(), one_barrier() + one_barrier("gate")).replace(
        "      %c8 = arith.constant 8 : i32\n",
        f"      %c8 = arith.constant 8 : i32\n      ttng.wait_barrier %gate, %c0 : {BAR}\n")
    assert "%gate, %c0" in text
    doc = json.loads(run_cli("check", str(_write(tmp_path, "gate.ttgir", text)), "--format", "json").stdout)
    kinds = [f["kind"] for f in doc["findings"] if f["severity"] == "error"]
    assert kinds == ["deadlock.no_producer"], (kinds, doc["simulation"])


def _ragged(handoff: str) -> str:
    """A ragged kernel: each program's segment is offs[pid + 1] - offs[pid] (loaded from memory
    by both partitions). The producer loops over its segment and hands off once; the consumer
    waits for the hand-off. `handoff` is the producer's arrive, as written."""
    load = ("      %pid = tt.get_program_id x : i32\n      %one = arith.constant 1 : i32\n"
            "      %pid1 = arith.addi %pid, %one : i32\n"
            "      %ps = tt.addptr {P}, %pid : !tt.ptr<i32>, i32\n      %s = tt.load %ps : !tt.ptr<i32>\n"
            "      %pe = tt.addptr {P}, %pid1 : !tt.ptr<i32>, i32\n      %e = tt.load %pe : !tt.ptr<i32>\n"
            "      %n = arith.subi %e, %s : i32\n      %z = arith.constant 0 : i32\n")
    return kernel("%offs: !tt.ptr<i32>", "%bar, %offs", one_barrier(),
                  load.replace("{P}", "%offs") + f"      ttng.wait_barrier %bar, %z : {BAR}",
                  f"%b1: {BAR}, %o1: !tt.ptr<i32>",
                  load.replace("{P}", "%o1") + "      scf.for %i = %z to %n step %one : i32 {\n      }\n" + handoff,
                  f"{BAR}, !tt.ptr<i32>")


RAGGED_OK = _ragged(f"      ttng.arrive_barrier %b1, 1 : {BAR}\n")
# The hand-off is skipped when the segment is empty (one of the GPU's ragged-kernel hangs).
RAGGED_SKIPS = _ragged("      %some = arith.cmpi sgt, %n, %z : i32\n      scf.if %some {\n"
                       f"        ttng.arrive_barrier %b1, 1 : {BAR}\n      }}\n")


def test_loaded_offsets_are_inputs_and_an_empty_segment_is_searched(tmp_path: Path) -> None:
    """The segment length is loaded from memory in both partitions: one input, the same in each.
    The correct kernel is judged clean, also with an empty segment; the mutant that skips its
    hand-off on an empty segment hangs there, and the finding names the loaded value."""
    r = run_cli("check", str(_write(tmp_path, "ok.ttgir", RAGGED_OK)), "--format", "json")
    doc = json.loads(r.stdout)
    assert doc["summary"]["verdict"] == "clean" and r.exit_code == 0, doc["summary"]
    empty = [p for p in doc["input_points"]["points"] if p.get("loaded")]
    assert empty and all(p["outcome"] == "completed" for p in empty)
    assert any(p["loaded"] == "offs[1] = offs[0]" for p in empty)

    r = run_cli("check", str(_write(tmp_path, "skips.ttgir", RAGGED_SKIPS)), "--format", "json")
    doc = json.loads(r.stdout)
    hangs = [f for f in doc["findings"] if f["severity"] == "error" and f["outcome"] == "hang"]
    assert hangs and r.exit_code == 1, doc["findings"]
    assert "offs[1] = offs[0]" in hangs[0]["message"] and hangs[0]["evidence"]["input"]["loaded"] == "offs[1] = offs[0]"
    # The user's own offsets: a non-empty segment completes, an empty one hangs.
    r = run_cli("check", str(tmp_path / "skips.ttgir"), "--load", "offs=[0,64]", "--no-input-points")
    assert r.exit_code == 0, r.stdout
    r = run_cli("check", str(tmp_path / "skips.ttgir"), "--load", "offs=[64,64]", "--no-input-points")
    assert r.exit_code == 1 and "ERROR deadlock." in r.stdout, r.stdout


def test_load_option_errors_are_one_line_exit_2(tmp_path: Path) -> None:
    path = _write(tmp_path, "ok.ttgir", RAGGED_OK)
    for bad, says in (("nope=[1]", "'nope' is not a pointer argument"), ("offs=1,2", "expects NAME=[v0,v1,...]"),
                      ("offs=[a]", "must be integers")):
        r = run_cli("check", str(path), "--load", bad)
        assert r.exit_code == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, (bad, r.stderr)
