"""SARIF 2.1.0 for `audit --format sarif`, the format GitHub and GitLab code scanning read.

One result per finding: rule id = the finding kind, level from its severity, the first line as
the region (the other lines as related locations), the stable fingerprint as a partial
fingerprint (so code scanning tracks a finding across unrelated edits), and `baselineState`
when a baseline was given. Units the tool could not check become tool execution notifications,
so they show up in the run without pretending to be findings in the code.
"""

from __future__ import annotations

from typing import Any

from .. import __version__
from ..analyses.model.findings import Kind

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
# One sentence per kind: what the rule says is wrong (analyses/*.py docstrings say how).
RULES: dict[str, tuple[str, str]] = {
    Kind.DEADLOCK_NO_PRODUCER.value: ("error", "A wait on a barrier that no operation ever arrives on: the phase it needs is never produced."),
    Kind.DEADLOCK_PARITY_CADENCE.value: ("error", "Arrivals complete phases at another cadence than the waits poll: some wait awaits a parity that never comes."),
    Kind.DEADLOCK_CYCLE.value: ("error", "Partitions wait on each other in a cycle: each waits for an arrival the other makes only after its own wait."),
    Kind.DEADLOCK_TRIP_COUNT_MISMATCH.value: ("error", "One partition's loop runs no iteration while another waits, outside a loop of that count, for the arrival it would make."),
    Kind.PHASE_UNPACED_RELEASE.value: ("error", "A consumer releases a ring slot while waiting on nothing its producer signals: its releases run ahead of the fills."),
    Kind.PHASE_COUNTER_RESTART.value: ("error", "A ring counter restarts in one partition while its peer partition carries it across: the two disagree on slot and parity."),
    Kind.DEADLOCK_PREDICATE_MISMATCH.value: ("error", "An arrive runs under a condition its partner wait does not share: when it is false, the wait's phase is never produced."),
    Kind.WAIT_REDUNDANT.value: ("info", "A second wait on the same slot and parity: harmless over-synchronization."),
    Kind.PHASE_CONSTANT_IN_LOOP.value: ("error", "A wait inside a loop polls a parity that never changes there, on a barrier not re-initialised in the loop."),
    Kind.RACE_PACKED_TMEM_OVERWRITE.value: ("error", "An MMA overwrites column-packed TMEM that another partition may still read: a back-edge is missing."),
    Kind.RACE_REDUNDANT_ZERO_STORE.value: ("error", "A zero store into an accumulator the MMA initialises anyway (useD=false), racing with its readers."),
    Kind.RACE_MISSING_ACQUIRE.value: ("error", "A producer refills a buffer without waiting for its readers to release it."),
    Kind.RACE_UNSYNCHRONIZED_READ.value: ("error", "A partition reads a TMA-filled buffer without waiting on the barrier the copy signals."),
    Kind.RACE_TMA_STORE_REUSE.value: ("error", "A TMA store's SMEM source is rewritten (or the program exits) before a store wait retires the store."),
    Kind.RACE_PREDICATED_WAIT.value: ("error", "A wait runs under a condition its partner arrive does not; a read after it runs unordered."),
    Kind.TOKEN_NOT_LOOP_CARRIED.value: ("warning", "An NVWS token or aref stage that is not carried through the loop it is used in."),
    Kind.CHANNEL_SAME_PARTITION.value: ("warning", "A wait whose barrier is only arrived on by its own partition: it orders nothing across partitions."),
    Kind.EXPECT_BYTES_MISMATCH.value: ("error", "barrier_expect bytes differ from the bytes the TMA copies on that barrier deliver: the phase never completes exactly."),
    Kind.BUFFER_SINGLE_COPY.value: ("warning", "A buffer with one copy shared by pipelined partitions: producer and consumer serialize."),
}


def _rule(kind: str) -> dict[str, Any]:
    level, text = RULES.get(kind, ("warning", f"barrier-viz finding {kind}."))
    return {
        "id": kind,
        "name": "".join(part.capitalize() for part in kind.replace(".", "_").split("_")),
        "shortDescription": {"text": text},
        "fullDescription": {"text": text},
        "defaultConfiguration": {"level": _LEVEL[level]},
        "properties": {"tags": ["synchronization", kind.split(".")[0]]},
    }


def _location(path: str, line: int) -> dict[str, Any]:
    return {"physicalLocation": {"artifactLocation": {"uri": path.replace("\\", "/")},
                                 "region": {"startLine": max(int(line), 1)}}}


def sarif_document(doc: dict[str, Any]) -> dict[str, Any]:
    """The audit document (`barrier-viz/audit/v1`) as one SARIF run."""
    kinds = sorted({f["kind"] for row in doc["rows"] for f in row.get("findings", [])} | set(RULES))
    index = {k: i for i, k in enumerate(kinds)}
    results: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    with_baseline = doc["options"].get("baseline") is not None
    for row in doc["rows"]:
        for f in row.get("findings", []):
            lines = f["lines"] or [row.get("start_line") or 1]
            result: dict[str, Any] = {
                "ruleId": f["kind"],
                "ruleIndex": index[f["kind"]],
                "level": _LEVEL[f["severity"]],
                "message": {"text": " ".join(f["message"].split())},
                "locations": [_location(row["path"], lines[0])],
                "partialFingerprints": {"barrierVizFingerprint/v1": f["fingerprint"]},
                "properties": {"unit": row.get("unit"), "function": row.get("function"),
                               "partitions": f.get("partitions", []), "barrier": f.get("barrier"), "op": f.get("op")},
            }
            if len(lines) > 1:
                result["relatedLocations"] = [dict(_location(row["path"], ln), id=k) for k, ln in enumerate(lines[1:], 1)]
            if with_baseline:
                result["baselineState"] = "new" if f.get("new", True) else "unchanged"
            results.append(result)
        if row["status"] in ("error", "bound_reached"):
            text = row.get("error") or row.get("note") or row["status"]
            notes.append({"level": "error" if row["status"] == "error" else "warning",
                          "message": {"text": f"{row['path']} [{row.get('unit') or 'file'}]: {' '.join(str(text).split())}"},
                          "locations": [_location(row["path"], row.get("start_line") or 1)]})
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "barrier-viz", "version": __version__, "semanticVersion": __version__,
                            "rules": [_rule(k) for k in kinds]}},
        "results": results,
        "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notes}],
        "columnKind": "unicodeCodePoints",
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
