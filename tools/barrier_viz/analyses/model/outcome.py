"""The one headline outcome of a finding: what a user of the kernel would see.

A finding's kind names the mechanism (a missing acquire, a parity cadence); a user acts on the
consequence. Every finding gets one of four outcomes, derived here and nowhere else:

* `hang`: the kernel never completes (a phase that is never produced, a cycle, bytes that never
  land exactly, a friendly schedule that already blocks);
* `wrong results`: the kernel completes, but some access is not ordered after the one it should
  follow (a read before the data lands, an overwrite of a slot still being read); a remote
  access into a CTA that may have exited counts here too (the launch fails, or the access lands
  in whatever CTA occupies that shared memory next: the results cannot be trusted either way);
* `hang or wrong results, depending on timing`: the same defect ends either way depending on
  which partition runs ahead (a constant parity in a loop; a race whose simulated witness
  blocks only under an adversarial schedule);
* `harmless`: an info finding (over-synchronization, a single-copy buffer, an explanation of why
  an unpaired arrive or an unused barrier is fine), or a warning whose access is ordered anyway;
* `hang, or a fault/corruption if the wait passes early`: a hang whose witness shows a wait on
  a barrier the TMA engine completes passing on a phase that was not produced: on the GPU the
  engine then writes into a slot already read and refilled, and the kernel faulted (unspecified
  launch failure) or corrupted data as often as it hung;
* `not judged`: a stated limit (`model.limit`, `limit.unresolved_value`): the IR has something the
  model does not cover there, so the finding says nothing either way about the kernel.

The evidence decides between them where the kind alone cannot: a race carrying a deadlock
witness reads as a hang when the witness's schedule is the favorable one (the friendliest order
already blocks), as timing-dependent when only an adversarial schedule blocks.
"""

from __future__ import annotations

from typing import Any

HANG = "hang"
WRONG = "wrong results"
EITHER = "hang or wrong results, depending on timing"
HARMLESS = "harmless"
NOT_JUDGED = "not judged"
HANG_OR_FAULT = "hang, or a fault/corruption if the wait passes early"
OUTCOMES = (HANG, WRONG, EITHER, HARMLESS, NOT_JUDGED, HANG_OR_FAULT)
SEVERE = (HANG, WRONG, EITHER, HANG_OR_FAULT)  # never an info's outcome (`Finding.settle_outcome`)
_LIMIT_KINDS = {"model.limit", "limit.unresolved_value", "limit.not_judged"}

_HANG_KINDS = {"deadlock.no_producer", "deadlock.parity_cadence", "deadlock.cycle", "deadlock.trip_count_mismatch",
               "expect.bytes_mismatch",
               "wait.remote_barrier"}  # a wait polling a shared::cluster address never sees its phase
_EITHER_KINDS = {"phase.constant_in_loop"}
_WRONG_KINDS = {"race.packed_tmem_overwrite", "race.redundant_zero_store", "race.missing_acquire",
                "race.unsynchronized_read", "token.not_loop_carried",
                "race.remote_after_exit"}  # an access into an exited CTA: a launch failure or a corrupted peer
# Kinds whose consequence the rule that raised them states in the evidence (`consequence`): an
# explanation says whether the access it looks at is ordered by something else.
_EVIDENCE_KINDS = {"channel.same_partition", "arrive.unpaired", "barrier.init_count_invalid",
                   "barrier.count_unreachable", "expect.zero_bytes",
                   "phase.unpaced_release", "phase.counter_restart", "deadlock.predicate_mismatch"}


def outcome_of(kind: str, severity: str, evidence: dict[str, Any] | None) -> str:
    """The headline outcome of one finding (see the module docstring)."""
    evidence = evidence or {}
    if kind in _LIMIT_KINDS or (severity == "info" and evidence.get("not_judged")):
        return NOT_JUDGED  # a stated limit, or a run's verdict taken back (a launch the IR excludes)
    if kind in _EVIDENCE_KINDS and evidence.get("consequence") in OUTCOMES:
        return evidence["consequence"]
    if severity == "info":
        return HARMLESS
    if kind in _HANG_KINDS or kind.startswith("deadlock."):
        # A wait on a TMA-completed barrier passed on a phase that was not produced (deadlock.
        # _early_async): the engine may still write what was read and refilled; the H200
        # faulted on that shape as often as it hung.
        return HANG_OR_FAULT if (_witness(evidence) or {}).get("early_pass") else HANG
    if kind in _EITHER_KINDS:
        return EITHER
    if kind in _WRONG_KINDS:
        if kind == "race.packed_tmem_overwrite" and severity == "warning":
            return EITHER  # ordered today only incidentally, through another channel
        if kind == "race.redundant_zero_store" and severity == "warning":
            return HARMLESS  # the extra store is ordered before the MMA: wasted work, not a race
        witness = _witness(evidence)
        if witness is None:
            return WRONG
        return HANG if witness.get("policy") == "favorable" else EITHER
    return WRONG


def _witness(evidence: dict[str, Any]) -> dict[str, Any] | None:
    """The deadlock witness a race carries (its own, or the twin `check` attached), if any."""
    for w in (evidence, evidence.get("witness")):
        if isinstance(w, dict) and w.get("blocked"):
            return w
    return None
