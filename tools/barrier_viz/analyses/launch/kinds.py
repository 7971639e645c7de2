"""The finding kind only a run read against the kernel's loops finds: `deadlock.trip_count_mismatch`
(`trip_mismatch.py`). Declared here, beside the package that emits it, for the rule registry
(`rules/registry.py`) and `barrier-viz explain`.
"""

from __future__ import annotations

from ..model.findings import Kind, Severity
from ..model.kinds import KindDoc
from ..sim.kinds import POLICY

KIND_DOCS = (
    KindDoc(
        Kind.DEADLOCK_TRIP_COUNT_MISMATCH,
        "A loop runs no iteration while another partition waits for the arrival it would make.",
        "Finds a blocked schedule in which a partition waits, outside any loop of the producer's "
        "count (a peeled first iteration, an unconditional wait), for an arrival whose only source "
        "is a loop of another partition that ran no iteration at that launch (an empty split-K "
        "split, a persistent program without a tile). With the launch values, it prints the set of "
        "argument values that hang and those that complete, from the trip-count model.",
        "The partitions disagree on how often a barrier is used: the consumer's peeled wait needs a "
        "phase that only the producer's loop body produces, and at this launch the loop is empty. "
        "The kernel hangs at every launch in the hang set, whatever the timing.",
        "// producer: for k in [start, end): wait empty; expect full; tma load\n"
        "// consumer: wait full[0] (peeled k = start, unconditional); for k in [start + 1, end): ...\n"
        "// end == start on the last split: the producer's loop runs no iteration",
        "Make the partitions agree on the loop bounds: guard the peeled step (and what follows it) "
        "with the loop's own condition, `if end > start`, or skip empty tiles in every partition.",
        (Severity.error, Severity.warning, Severity.info), POLICY),
)
