"""The finding kinds only a run of the interpreter finds: deadlocks (`deadlock.py` classifies a
run in which every live partition is blocked). Declared here, beside the package that emits
them, for the rule registry (`rules/registry.py`) and `barrier-viz explain`; the races a run's
happens-before check finds reuse the kinds the static rules declare.
"""

from __future__ import annotations

from ..model.findings import Kind, Severity
from ..model.kinds import KindDoc

POLICY = ("An error (outcome: hang; `hang, or a fault/corruption if the wait passes early` when a wait on a "
           "TMA-completed barrier passed on a phase nobody produced); a warning when it hangs only at sizes "
           "that give no program a tile of work (an input point); info when the simulated launch is one the "
           "IR excludes (a stated `Not a verdict`).")

KIND_DOCS = (
    KindDoc(
        Kind.DEADLOCK_NO_PRODUCER,
        "A wait on a barrier that no operation ever arrives on.",
        "Runs the partitions' barrier programs and finds a schedule in which every live partition "
        "is blocked, one of them on a barrier that nothing arrives on at all (or on the path that "
        "run took, e.g. an arrive skipped by an empty loop). The finding carries that schedule.",
        "The phase the wait needs is never produced, so the partition waits forever and the kernel "
        "hangs (usually a dropped or misplaced arrive, or an arrive on another slot).",
        "ttng.wait_barrier %ready, %ph             // default partition\n"
        "// no partition ever arrives on %ready (the loader's arrive was dropped)",
        "Arrive on the barrier where the data it announces is ready.",
        (Severity.error, Severity.warning, Severity.info), POLICY),
    KindDoc(
        Kind.DEADLOCK_PARITY_CADENCE,
        "Arrivals complete phases at another rate than the waits poll.",
        "Finds a blocked schedule in which arrivals on the awaited barrier exist, but complete its "
        "phases too slowly (an init count the arrivals never reach, expected bytes that never land "
        "exactly) or too fast (two completions between polls).",
        "A wait sees only the parity of the current phase. Too few arrivals and the phase never "
        "completes; too many and the parity comes back to the old value between two polls, so the "
        "waiter misses its phase: the kernel hangs.",
        "ttng.init_barrier %full, 2                // but one arrival per phase\n"
        "ttng.arrive_barrier %full, 1",
        "Initialise with the number of arrivals each phase gets.",
        (Severity.error, Severity.warning, Severity.info), POLICY),
    KindDoc(
        Kind.DEADLOCK_CYCLE,
        "Partitions wait on each other in a cycle.",
        "Finds a blocked schedule in which the arrival each wait needs is ordered, through other "
        "partitions' waits, after the wait itself.",
        "Each partition waits for an arrival the other makes only after its own wait: none can "
        "move, the kernel hangs (often a wait placed before the arrive it should follow, or "
        "phases that start on the wrong side).",
        "// producer                          // consumer\n"
        "wait_barrier %empty, %ph             wait_barrier %full, %ph\n"
        "arrive ... %full                     arrive_barrier %empty",
        "Start the producer's empty-wait on the pre-inverted parity so the first fill can proceed.",
        (Severity.error, Severity.warning, Severity.info), POLICY),
)
