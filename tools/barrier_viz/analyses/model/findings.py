"""Findings: what `check` reports, one model shared by the CLI, the report and the agent.

Kinds and severities follow architecture.md §4. A finding always carries the IR lines involved
and the evidence behind it, so a reader can verify it without trusting the tool.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Severity(str, Enum):
    error = "error"
    warning = "warning"
    info = "info"


class Kind(str, Enum):
    DEADLOCK_NO_PRODUCER = "deadlock.no_producer"
    DEADLOCK_PARITY_CADENCE = "deadlock.parity_cadence"
    DEADLOCK_CYCLE = "deadlock.cycle"
    DEADLOCK_PREDICATE_MISMATCH = "deadlock.predicate_mismatch"
    DEADLOCK_TRIP_COUNT_MISMATCH = "deadlock.trip_count_mismatch"
    WAIT_REDUNDANT = "wait.redundant"
    PHASE_CONSTANT_IN_LOOP = "phase.constant_in_loop"
    PHASE_UNPACED_RELEASE = "phase.unpaced_release"
    PHASE_COUNTER_RESTART = "phase.counter_restart"
    RACE_PACKED_TMEM_OVERWRITE = "race.packed_tmem_overwrite"
    RACE_REDUNDANT_ZERO_STORE = "race.redundant_zero_store"
    RACE_MISSING_ACQUIRE = "race.missing_acquire"
    RACE_UNSYNCHRONIZED_READ = "race.unsynchronized_read"
    RACE_EARLY_RELEASE = "race.early_release"
    RACE_USE_AFTER_RELEASE = "race.use_after_release"
    RACE_TENSORMAP_REWRITE = "race.tensormap_rewrite"
    RACE_REMOTE_AFTER_EXIT = "race.remote_after_exit"
    RACE_TMA_STORE_REUSE = "race.tma_store_reuse"
    RACE_PREDICATED_WAIT = "race.predicated_wait"
    WAIT_REMOTE_BARRIER = "wait.remote_barrier"
    TOKEN_NOT_LOOP_CARRIED = "token.not_loop_carried"
    CHANNEL_SAME_PARTITION = "channel.same_partition"
    EXPECT_BYTES_MISMATCH = "expect.bytes_mismatch"
    BUFFER_SINGLE_COPY = "buffer.single_copy"
    ARRIVE_UNPAIRED = "arrive.unpaired"
    BARRIER_UNUSED = "barrier.unused"
    BARRIER_INIT_COUNT_INVALID = "barrier.init_count_invalid"
    BARRIER_COUNT_UNREACHABLE = "barrier.count_unreachable"
    EXPECT_ZERO_BYTES = "expect.zero_bytes"
    # Not a verdict: a finding that would rest on a value the IR does not define soundly.
    LIMIT_UNRESOLVED_VALUE = "limit.unresolved_value"
    # Not a verdict: a hang possibility the simulation could not judge (analyses/model/judgement.py).
    LIMIT_NOT_JUDGED = "limit.not_judged"
    MODEL_LIMIT = "model.limit"


HANG_KINDS = frozenset(
    {
        Kind.DEADLOCK_NO_PRODUCER.value,
        Kind.DEADLOCK_PARITY_CADENCE.value,
        Kind.DEADLOCK_CYCLE.value,
        Kind.DEADLOCK_PREDICATE_MISMATCH.value,
        Kind.DEADLOCK_TRIP_COUNT_MISMATCH.value,
        Kind.EXPECT_BYTES_MISMATCH.value,
        Kind.PHASE_CONSTANT_IN_LOOP.value,
        Kind.PHASE_UNPACED_RELEASE.value,
        Kind.PHASE_COUNTER_RESTART.value,
    }
)


class Finding(BaseModel):
    """One verdict with its evidence."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    severity: Severity
    outcome: str = Field("", description="hang | wrong results | hang or wrong results, depending on timing | harmless")
    message: str
    partitions: list[str] = Field(default_factory=list)
    barrier: str | None = None
    buffer_id: int | None = None
    lines: list[int] = Field(default_factory=list)
    evidence: dict[str, Any] = Field(default_factory=dict)
    suggestion: str | None = None

    def settle_outcome(self) -> "Finding":
        """Derive `outcome` from the kind, severity and evidence (analyses/model/outcome.py); called
        when the finding is made and again when `check` attaches a witness to it."""
        from .outcome import SEVERE, outcome_of

        self.outcome = outcome_of(self.kind, self.severity.value, self.evidence)
        if self.severity is Severity.info and self.outcome in SEVERE:
            # Severity follows outcome: a rule that explains a hang or a wrong result in an info
            # (`arrive.unpaired` whose consequence is a hang) reports a warning at least.
            self.severity = Severity.warning
            self.outcome = outcome_of(self.kind, self.severity.value, self.evidence)
        return self

    def sort_key(self) -> tuple:
        order = {"error": 0, "warning": 1, "info": 2}
        return (order[self.severity.value], min(self.lines) if self.lines else 0, self.kind)


def finding(kind: Kind, severity: Severity, message: str, **kw: Any) -> Finding:
    lines = sorted(set(kw.pop("lines", []) or []))
    partitions = list(dict.fromkeys(kw.pop("partitions", []) or []))
    made = Finding(kind=kind.value, severity=severity, message=message, lines=lines, partitions=partitions, **kw)
    return made.settle_outcome()
