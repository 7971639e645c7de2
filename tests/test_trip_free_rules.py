"""Rules that need no trip count (issue 21, point 2), and so run whatever the simulation concluded.

* `phase.unpaced_release`: a consumer releases ring slots while waiting, in that iteration,
  on nothing its producer signals (its data wait was dropped);
* `phase.counter_restart`: one partition restarts a ring's slot/phase counter per segment
  while its peer carries it across segments;
* `deadlock.predicate_mismatch`: an arrive runs under a condition (`seg_len > 0`) its partner
  wait does not share; `race.predicated_wait`, the reverse: a wait runs under a condition its
  arrive does not, and a read after it runs anyway.

Each is checked on a hand-written minimal kernel (`fixtures/segments/segment_ring.ttgir`: a
two-slot ring over segments whose lengths are loaded from an offsets array, plus a per-segment
hand-off) and its one-line mutants, and on the H200-labelled data-dependent mutants, whose
simulation stops at a limit (a loop bound loaded from memory) and which the rules must still
catch. The correct kernels must stay silent.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from cli_support import check_text

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "evals" / "cases"
RING = (Path(__file__).parent / "fixtures" / "segments" / "segment_ring.ttgir").read_text()
NEW_KINDS = {"phase.unpaced_release", "phase.counter_restart", "deadlock.predicate_mismatch", "race.predicated_wait"}
CONSUMER_FULL_WAIT = "          ttng.wait_barrier %fb, %p, %true : !ttg.memdesc<1xi64, #shared, #smem, mutable>\n"
CONSUMER_CARRY = "iter_args(%i = %idx, %p = %ph)"  # default's inner loop (the first one in the file)
HANDOFF_ARRIVE = "        ttng.arrive_barrier %res_full, 1, %true"


def _errors(doc: dict, kind: str) -> list[dict]:
    return [f for f in doc["findings"] if f["kind"] == kind and f["severity"] == "error"]


def _case(name: str) -> str:
    return gzip.decompress((CASES / name / "input.ttgir.gz").read_bytes()).decode()


def _stopped_at_limit(doc: dict) -> bool:
    return any(f["kind"] == "limit.not_judged" for f in doc["findings"])


def test_the_correct_segment_ring_is_clean_and_judged(tmp_path):
    """Both partitions carry (slot, phase) across segments, the consumer waits on `full` before
    every read and the hand-off arrive is unconditional: nothing to report, and the simulation
    (with empty segments among its input points) judges it."""
    doc = check_text(tmp_path, RING)
    assert doc["summary"]["verdict"] == "clean"
    assert not {f["kind"] for f in doc["findings"]} & NEW_KINDS


def test_a_consumer_that_reads_without_waiting_releases_unpaced(tmp_path):
    """With its `full` wait dropped, the reducer waits on nothing the loader signals inside the
    row loop: its releases of `empty` run ahead of the loader's fills, so the loader's acquire
    polls a parity that came back (a hang) or refills a slot being read."""
    assert CONSUMER_FULL_WAIT in RING
    doc = check_text(tmp_path, RING.replace(CONSUMER_FULL_WAIT, ""))
    (f,) = _errors(doc, "phase.unpaced_release")
    assert f["partitions"] == ["default", "partition0"]
    assert f["outcome"].startswith("hang")
    assert "waits on nothing that partition0 signals" in f["message"]


def test_a_wait_once_per_segment_does_not_pace_the_releases_of_its_rows(tmp_path):
    """The reducer still waits on `res_empty` (which the loader arrives on) once per segment;
    that does not pace its row releases: within a segment they can overtake the loader's fills,
    so the rule still fires."""
    text = RING.replace(CONSUMER_FULL_WAIT, "")
    assert "ttng.wait_barrier %res_empty" in text
    assert _errors(check_text(tmp_path, text), "phase.unpaced_release")


def test_a_ring_counter_restarted_per_segment_in_one_partition(tmp_path):
    """The reducer restarts (slot, phase) at 0 for every segment while the loader carries them:
    after a segment whose length is odd the two disagree on the slot. The default launch (every
    segment 16 long, a multiple of twice the depth) hides it from the simulation; the rule does
    not need a trip count."""
    assert RING.count(CONSUMER_CARRY) == 2
    doc = check_text(tmp_path, RING.replace(CONSUMER_CARRY, "iter_args(%i = %c0, %p = %c0)", 1))
    (f,) = _errors(doc, "phase.counter_restart")
    assert f["partitions"] == ["default", "partition0"]
    assert "%full" in f["message"] and "%empty" in f["message"]


def test_both_partitions_restarting_the_ring_agree(tmp_path):
    """Restarting per segment on both sides is a consistent protocol (each segment starts at
    slot 0 on a ring whose phases both sides count the same way): no counter_restart."""
    text = RING.replace(CONSUMER_CARRY, "iter_args(%i = %c0, %p = %c0)", 1)
    text = text.replace(CONSUMER_CARRY, "iter_args(%i = %z, %p = %z)", 1)
    assert not _errors(check_text(tmp_path, text), "phase.counter_restart")


def test_a_handoff_arrive_skipped_on_an_empty_segment(tmp_path):
    """The hand-off arrive runs only for a non-empty segment, the loader waits for it after
    every segment: the first empty segment leaves that wait without its phase (a hang)."""
    assert HANDOFF_ARRIVE in RING
    text = RING.replace(HANDOFF_ARRIVE, "        %nonempty = arith.cmpi sgt, %len, %c0 : i32\n"
                        "        ttng.arrive_barrier %res_full, 1, %nonempty")
    doc = check_text(tmp_path, text)
    (f,) = _errors(doc, "deadlock.predicate_mismatch")
    assert "(offs[s + 1] - offs[s]) > 0" in f["message"]  # as the IR computes it
    assert f["outcome"] == "hang"
    # The input point with an empty first segment hangs on that hand-off: the same cause, so it is
    # this finding's witness, not a second deadlock error beside it.
    assert [g["kind"] for g in doc["findings"] if g["kind"].startswith("deadlock.")] == ["deadlock.predicate_mismatch"]
    assert f["evidence"]["witness"]["blocked"]


def test_a_handoff_arrive_inside_an_scf_if_on_a_nonempty_segment(tmp_path):
    """The same skip written as control flow (`scf.if %nonempty { arrive }`): the arrive runs
    under the if's condition, the wait does not."""
    text = RING.replace(HANDOFF_ARRIVE + " : !ttg.memdesc<1xi64, #shared, #smem, mutable>\n",
                        "        %nonempty = arith.cmpi sgt, %len, %c0 : i32\n        scf.if %nonempty {\n  "
                        + HANDOFF_ARRIVE + " : !ttg.memdesc<1xi64, #shared, #smem, mutable>\n        }\n")
    assert "scf.if %nonempty" in text
    (f,) = _errors(check_text(tmp_path, text), "deadlock.predicate_mismatch")
    assert "(offs[s + 1] - offs[s]) > 0" in f["message"]  # as the IR computes it


def test_a_wait_predicated_on_the_same_condition_is_not_a_mismatch(tmp_path):
    """When the loader computes the same `len > 0` and predicates its wait (and its read and
    release) on it, both sides skip the same segments: no predicate_mismatch."""
    text = RING.replace(HANDOFF_ARRIVE, "        %nonempty = arith.cmpi sgt, %len, %c0 : i32\n"
                        "        ttng.arrive_barrier %res_full, 1, %nonempty")
    text = text.replace("        ttng.wait_barrier %rf0, %rp, %t",
                        "        %nonempty0 = arith.cmpi sgt, %len, %z : i32\n        ttng.wait_barrier %rf0, %rp, %nonempty0")
    doc = check_text(tmp_path, text)
    assert not _errors(doc, "deadlock.predicate_mismatch") and not _errors(doc, "race.predicated_wait")


WRITER_WAIT = "        ttng.wait_barrier %rf0, %rp, %t"
PREDICATED_WRITER_WAIT = "        %nonempty0 = arith.cmpi sgt, %len, %z : i32\n        ttng.wait_barrier %rf0, %rp, %nonempty0"
WRITER_READ = ("        %y = ttg.local_load %res0 : !ttg.memdesc<128xf32, #shared, #smem, mutable> -> "
               "tensor<128xf32, #blocked>\n")


def test_a_wait_predicated_on_a_condition_its_arrive_does_not_share_lets_the_read_pass(tmp_path):
    """The reverse: the reducer hands off every segment (unconditional arrive), the loader waits
    for the hand-off only when its segment is non-empty, but reads the result whatever: on an
    empty segment that read is ordered after nothing. The arrive still completes each phase, so
    the phases stay in step: wrong results, not a hang."""
    assert WRITER_WAIT in RING and WRITER_READ in RING
    doc = check_text(tmp_path, RING.replace(WRITER_WAIT, PREDICATED_WRITER_WAIT))
    (f,) = _errors(doc, "race.predicated_wait")
    assert f["outcome"] == "wrong results" and f["partitions"] == ["partition0", "default"]
    assert "(offs[s + 1] - offs[s]) > 0" in f["message"] and "local_load at line" in f["message"]
    assert not _errors(doc, "deadlock.predicate_mismatch")


def test_a_predicated_wait_with_nothing_read_after_it_is_silent(tmp_path):
    """Without a read after it, a skipped wait only stops pacing: the rule says nothing."""
    text = RING.replace(WRITER_WAIT, PREDICATED_WRITER_WAIT).replace(WRITER_READ, "")
    assert not _errors(check_text(tmp_path, text), "race.predicated_wait")


# -- the H200-labelled data-dependent mutants ---------------------------------------------------
@pytest.mark.parametrize("case, kind, limit", [
    # The reducer restarts its ring per segment (H200: hang under every schedule). Judged since
    # the loader and reducer that share the ring both read `offs` (deadlock._related): the run's
    # hang is a verdict too.
    ("gpu-h200.dd-jagged_norm.restart_ring_L61", "phase.counter_restart", False),
    # The loader restarts it (H200: fault under every schedule, once a hang).
    ("gpu-h200.dd-jagged_norm.restart_ring_L121", "phase.counter_restart", False),
    # The hand-off arrive predicated on seg_len > 0 (H200: hang whenever a segment is empty).
    # The empty-segment points stop at a limit: the arrive is decided by `offs`, which the
    # writer waiting on it never reads (its count comes from S).
    ("gpu-h200.dd-jagged_norm.skip_empty_handoff_L99", "deadlock.predicate_mismatch", True),
    # The writer reads the hand-off slot with no wait (H200: hang under every schedule).
    ("gpu-h200.dd-jagged_norm.drop_handoff_wait_L151", "phase.unpaced_release", False),
    # The grouped GEMM's consumer drops its data wait (H200: hang).
    ("gpu-h200.dd-moe_dw.drop_wait_data_L65", "phase.unpaced_release", False),
])
def test_data_dependent_mutants_get_their_error_at_a_limit(tmp_path, case, kind, limit):
    """Each mutant hung (or faulted) on the H200. Where the simulation stopped at a limit (a
    segment loop whose bound is loaded from memory), the rule that needs no trip count still
    gives the error, so the verdict is a finding, never "not judged" alone."""
    doc = check_text(tmp_path, _case(case))
    assert _errors(doc, kind), [f["kind"] for f in doc["findings"]]
    assert _stopped_at_limit(doc) == limit
    assert doc["summary"]["verdict"] == "findings"


@pytest.mark.parametrize("case", [
    "gpu-h200.dd-jagged_norm.base", "gpu-h200.dd-moe_dw.base",
    # A consumer whose data wait was dropped but that still waits on its producer's other
    # operand barrier in the same iteration: paced; the H200 completed it with wrong values.
    "gpu-h200.gemm_persistent.drop_wait_data_L233",
    # The producer's hand-off wait dropped (H200: ok): the producer is not a releasing consumer.
    "gpu-h200.dd-jagged_norm.drop_handoff_wait_L94",
    # The only arrival dropped: the wait blocks for good (deadlock.no_producer), which is not
    # an unpaced release.
    "gpu-h200.dd-jagged_norm.drop_only_arrival_L99",
])
def test_silent_where_the_gpu_did_not_show_these_hangs(tmp_path, case):
    doc = check_text(tmp_path, _case(case))
    assert not [f for f in doc["findings"] if f["kind"] in NEW_KINDS]


@pytest.mark.parametrize("case", ["gpu-h200.dd-moe_dw.restart_ring_L63", "gpu-h200.dd-moe_dw.restart_ring_L117"])
def test_a_restarted_ring_is_one_finding_with_the_runs_hang_as_its_witness(tmp_path, case):
    """The MoE grouped GEMM with one side's ring counter restarted per tile (H200: hang under
    every launch): the simulation also deadlocks on that ring. One cause, one finding: the
    counter restart (the specific cause), carrying the run's hang as its witness; no second
    hang-kind error beside it."""
    doc = check_text(tmp_path, _case(case))
    hangs = [f for f in doc["findings"] if f["severity"] == "error"
             and (f["kind"].startswith("deadlock.") or f["kind"] == "phase.counter_restart")]
    assert [f["kind"] for f in hangs] == ["phase.counter_restart"]
    (f,) = hangs
    assert f["evidence"]["witness"]["blocked"] and "A simulated schedule reached this hang" in f["message"]
