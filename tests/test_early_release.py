"""`race.early_release` (analyses/rules/early_release.py) on a consumer with a peeled last read.

Fixture: hand-written `peeled_last_read.ttgir`, the shape of AutoWS FA backward's `Di` channel
(configs_bwd_persist[0] and [1] of the fork's tutorial at b6180744c): per tile, the consumer
waits, reads and releases the one-slot buffer in every iteration of an inner loop but the last,
then, after the loop, waits for the slot's next fill and reads it once more.
"""

from __future__ import annotations

from pathlib import Path

from barrier_viz.analyses.verdicts import check
from barrier_viz.analysis import Analysis
from barrier_viz.session import select

FIXTURE = Path(__file__).parent / "fixtures" / "peeled_last_read.ttgir"
_PEELED = ("        %y = ttg.local_load %buf_5 : !ttg.memdesc<128xf32, #shared2, #smem, mutable> -> tensor<128xf32, #blocked>\n"
           "        ttng.arrive_barrier %empty_4, 1 : !ttg.memdesc<1xi64, #shared, #smem, mutable>\n")


def _verdicts(path: Path) -> list:
    found = check(Analysis(select(str(path), require_function=True))).findings
    return [f for f in found if f.severity.value in ("error", "warning")]


def test_release_inside_a_finished_loop_is_not_the_peeled_reads_release():
    """The inner loop's arrive releases the inner loop's own reads; the peeled read after the
    loop is released by the arrive after it. Nothing is released early: clean."""
    assert _verdicts(FIXTURE) == []


def test_peeled_read_after_its_own_release_is_still_early(tmp_path):
    """Swap the peeled read and its arrive: the slot is released before it is read, and the
    producer's next refill can land during the read."""
    text = FIXTURE.read_text()
    assert text.count(_PEELED) == 1
    load, arrive = _PEELED.splitlines(keepends=True)
    path = tmp_path / "early.ttgir"
    path.write_text(text.replace(_PEELED, arrive + load))
    lines = path.read_text().splitlines()
    found = _verdicts(path)
    # race.use_after_release sees the same edit from the producer's side (its overwrite).
    assert sorted(f.kind for f in found) == ["race.early_release", "race.use_after_release"]
    (f,) = [f for f in found if f.kind == "race.early_release"]
    assert f.partitions == ["default"]
    assert "ttng.arrive_barrier" in lines[f.evidence["release_line"] - 1]
    assert "%y = ttg.local_load" in lines[f.evidence["read_line"] - 1]
