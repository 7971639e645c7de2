"""The finding kind only a run of a CTA cluster finds: `race.remote_after_exit`
(`remote_exit.py`). Declared here, beside the package that emits it, for the rule registry
(`rules/registry.py`) and `barrier-viz explain`.
"""

from __future__ import annotations

from ..model.findings import Kind, Severity
from ..model.kinds import KindDoc

KIND_DOCS = (
    KindDoc(
        Kind.RACE_REMOTE_AFTER_EXIT,
        "A remote shared-memory access into a CTA of the cluster that may already have exited.",
        "In a completed run of the cluster, finds a remote arrive, copy, store, multicast load or "
        "paired-MMA commit into a peer CTA that no thread of that peer waits for (through any "
        "happens-before chain) before it exits.",
        "Distributed shared memory is valid only while its CTA runs. An access that lands after "
        "the peer exited faults (an unspecified launch failure) or corrupts the CTA that next "
        "occupies that shared memory.",
        "// CTA 1, after the last \"no more tiles\" answer\n"
        "%r = ttng.map_to_remote_buffer %bar_empty, %c0\n"
        "ttng.arrive_barrier %r, 1                 // CTA 0 may already have returned",
        "Make the target CTA wait for that arrival (or sync the cluster) before it exits.",
        (Severity.error, Severity.warning, Severity.info),
        "An error (outcome: wrong results); a warning (`Possible, not judged`) when the access "
        "arrives back to back with a commit the peer did wait for; info when `check` demotes it."),
)
