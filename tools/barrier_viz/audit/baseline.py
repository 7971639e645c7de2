"""Baselines: findings already known, by fingerprint, so a CI gate fails only on new ones.

A fingerprint is the finding's kind, the identity of the barrier it concerns (what it guards:
kind, depth, data, who arrives and who waits; `analyses.diff.sync_model`) and the op it is about —
never a line number or an SSA name, which every unrelated edit or recompile moves. It is
scoped by file path (as given on the command line) and function, and counted: a second
identical finding in the same kernel is new.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, Iterable

from ..errors import InputError
from ..safe_io import write_atomic

SCHEMA = "barrier-viz/audit-baseline/v1"


def scoped(path: str, function: str | None, fingerprint: str) -> str:
    return f"{path}::@{function or '-'}::{fingerprint}"


def write_baseline(target: str, entries: Iterable[str]) -> int:
    counts = Counter(entries)
    doc = {"schema": SCHEMA, "fingerprints": [{"fingerprint": k, "count": counts[k]} for k in sorted(counts)]}
    try:
        write_atomic(Path(target).absolute().parent, Path(target).name, json.dumps(doc, indent=1, sort_keys=True) + "\n")
    except OSError as exc:
        raise InputError(target, f"cannot write baseline: {exc}") from None
    return sum(counts.values())


def read_baseline(source: str) -> Counter[str]:
    try:
        doc = json.loads(Path(source).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(source, f"cannot read baseline: {exc}", 1, 1) from None
    except ValueError as exc:
        raise InputError(source, f"baseline is not JSON: {exc}", 1, 1) from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or not isinstance(doc.get("fingerprints"), list):
        raise InputError(source, f"not a barrier-viz baseline (expected schema {SCHEMA}; write one with --write-baseline)", 1, 1)
    out: Counter[str] = Counter()
    for item in doc["fingerprints"]:
        if not isinstance(item, dict) or not isinstance(item.get("fingerprint"), str):
            raise InputError(source, "baseline entry without a fingerprint string", 1, 1)
        out[item["fingerprint"]] += int(item.get("count", 1))
    return out


def mark_new(findings: list[dict[str, Any]], path: str, function: str | None, known: Counter[str]) -> None:
    """Set `new` on each finding: False for as many of a fingerprint as the baseline knows
    (consumed from `known`), True for the rest."""
    for f in findings:
        key = scoped(path, function, f["fingerprint"])
        if known[key] > 0:
            known[key] -= 1
            f["new"] = False
        else:
            f["new"] = True
