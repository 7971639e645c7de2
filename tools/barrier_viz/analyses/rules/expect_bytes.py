"""`expect.bytes_mismatch`: `barrier_expect` bytes differ from what the copies on that barrier
deliver, so the transaction count never returns to zero exactly and the phase never completes.

Counted per CTA of a cluster (a multicast copy lands in every destination CTA's copy of the
barrier); expects whose delivering ops cannot be counted get one `model.limit` note instead.
"""

from __future__ import annotations

from ..model.findings import Finding, Kind, Severity, finding
from ..model.kinds import KindDoc, Rule


def expect_mismatches(analysis) -> list[Finding]:
    """`expect.bytes_mismatch` per expect whose bytes are counted, per CTA of the cluster; one
    `model.limit` note for the expects whose delivering ops could not be counted."""
    out: list[Finding] = []
    limits = []
    for check in analysis.buffers.expects:
        if check.status == "unknown" and check.reason is not None and (check.declared or 0) > 0:
            limits.append(check)
        if check.status != "mismatched":
            continue
        lines = [check.line] + [c.line for c in check.copies]
        name = check.barrier.name if check.barrier else None
        ctas = check.mismatched_ctas
        where = "" if check.per_cta is None or len(check.per_cta) == 1 else \
            f" in CTA {', '.join(map(str, ctas))} of the {len(check.per_cta)}-CTA cluster (per CTA: {list(check.per_cta)})"
        if check.expected_per_cta is not None and ctas:
            where = (f" to the copy of the barrier in CTA {ctas[0]}, which expects {check.expects(ctas[0])} (the declared "
                     f"bytes once per CTA sharing it; received per CTA's copy: {list(check.per_cta)}, expected: "
                     f"{list(check.expected_per_cta)})")
        out.append(finding(
            Kind.EXPECT_BYTES_MISMATCH, Severity.error,
            f"barrier_expect at line {check.line} declares {check.declared} bytes but the ops that complete "
            f"transaction bytes on it (TMA loads, CLC responses, remote copies) deliver {check.delivered}{where}: "
            "the transaction count never returns to zero exactly, so the phase never completes.",
            lines=lines, partitions=list(check.partitions), barrier=name,
            evidence={"declared": check.declared, "delivered": check.delivered,
                      "per_cta": list(check.per_cta) if check.per_cta is not None else None,
                      "copies": [{"line": c.line, "bytes": c.bytes, "buffer": c.member} for c in check.copies]},
            suggestion="Set the expect size to the sum of the bytes of every copy signalling this barrier."))
        if check.expected_per_cta is not None:
            out[-1].evidence["expected_per_cta"] = list(check.expected_per_cta)
    if limits:
        by_reason: dict[str, list[int]] = {}
        for c in limits:
            by_reason.setdefault(c.reason or "", []).append(c.line)
        out.append(finding(
            Kind.MODEL_LIMIT, Severity.info,
            "expect-bytes not checked for barrier_expect at line(s) "
            + "; ".join(f"{', '.join(map(str, lines))} ({reason})" for reason, lines in by_reason.items()) + ".",
            lines=[c.line for c in limits], evidence={"rule": Kind.EXPECT_BYTES_MISMATCH.value,
                                                     "expects": [{"line": c.line, "reason": c.reason} for c in limits]}))
    return out


RULE = Rule("expect_bytes", __name__, expect_mismatches, also_emits=(Kind.MODEL_LIMIT,), docs=(KindDoc(
    Kind.EXPECT_BYTES_MISMATCH,
    "barrier_expect declares other bytes than the copies on that barrier deliver.",
    "Compares the bytes of each `barrier_expect` with the bytes the TMA copies (CLC responses, "
    "remote copies) that complete transactions on the same barrier deliver, per CTA of a cluster.",
    "The barrier's phase completes when its transaction count returns to zero. Too many expected "
    "bytes and it never does (a hang); too few and the wait passes before every copy has landed "
    "(a read of a half-filled tile).",
    "ttng.barrier_expect %full, 16384          // but the two copies below bring 2 x 16384 bytes\n"
    "ttng.async_tma_copy_global_to_local %descA ... %a, %full\n"
    "ttng.async_tma_copy_global_to_local %descB ... %b, %full",
    "Expect the sum of the bytes of every copy that signals the barrier (32768).",
    (Severity.error,),
    "Always an error (outcome: hang); a run that hangs on it attaches its schedule as the witness. "
    "Expects whose copies cannot be counted get a `model.limit` note instead."),))
