"""Scoring: match reported findings against a case's expectations, then aggregate.

Definitions (so the numbers printed by `eval` mean one thing):

* An expectation matches a reported finding when the kinds match (the group `hang` matches any
  hang kind, `error` any error, a family pattern `race.*` any error of that family) and every other key it gives (barrier, buffer_id, partition, line) matches. An
  expectation of a hang or race kind needs an *error* finding: a warning is not a verdict, unless
  the expectation names its `severity` (a warning whose wording is what the case checks: `says`
  lists text that must appear in the finding's message or suggestion). An
  expectation's `cta` (a rank, or `any`) needs a finding that names the CTA: one of its witness
  threads or partitions is `cta<k>.<partition>`. `deadlock.*` also matches a hang-kind error of
  another family (`expect.bytes_mismatch`) that carries the interpreter's witness: the run that
  deadlocked confirmed it, and the kind names the cause.
* A reported finding is a **true positive** of its kind when it matches an expectation, a
  **false positive** when its kind is listed `absent` for the case, and unjudged otherwise (the
  case says nothing about it). Precision = TP / (TP + FP) over judged findings only.
* **deadlock recall**: over cases that expect a hang, the share where some hang-kind error was
  reported. **false deadlocks**: known-good cases (a hang is listed absent) with a hang-kind
  error. **race recall**: matched / expected over expectations of `race.*` kinds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..analyses.model.findings import HANG_KINDS
from .cases import ERROR_GROUP, HANG_GROUP, Case

STRICT_PREFIXES = ("deadlock.", "race.", "expect.", "phase.")


@dataclass
class Reported:
    """A finding as the scorer sees it, from `check` or parsed from an agent's output."""

    kind: str
    severity: str = "error"
    lines: list[int] = field(default_factory=list)
    partitions: list[str] = field(default_factory=list)
    barrier: str | None = None
    buffer_id: int | None = None
    message: str = ""
    threads: list[str] = field(default_factory=list)  # witness threads (cluster: cta<k>.<partition>)
    suggestion: str = ""
    outcome: str = ""  # `check`'s headline outcome (analyses/model/outcome.py); empty from an agent's text

    @property
    def is_hang(self) -> bool:
        return self.kind in HANG_KINDS and self.severity == "error"


def kind_matches(expected: str, r: Reported) -> bool:
    if expected == HANG_GROUP:
        return r.is_hang
    if expected == ERROR_GROUP:
        return r.severity == "error"
    if expected == "deadlock.*" and r.is_hang and r.threads:
        # A static hang finding (missing bytes, a constant phase) that the interpreter's run
        # confirmed carries its witness: that is the deadlock verdict, named by its cause.
        return True
    if expected.endswith(".*"):  # a family (race.*): any error of it
        return r.kind.startswith(expected[:-1]) and r.severity == "error"
    if r.kind != expected:
        return False
    if expected in HANG_KINDS or expected.startswith("race."):
        return r.severity == "error"
    return True


def expectation_matches(e: dict[str, Any], r: Reported) -> bool:
    if "severity" in e:
        # A stated severity (a warning whose text is the point) replaces the error a verdict needs.
        if r.kind != e["kind"] or r.severity != e["severity"]:
            return False
    elif not kind_matches(e["kind"], r):
        return False
    says = e.get("says") or []
    if any(str(s) not in f"{r.message}\n{r.suggestion}" for s in ([says] if isinstance(says, str) else says)):
        return False
    if "partition" in e and e["partition"] not in r.partitions:
        return False
    if "line" in e and int(e["line"]) not in r.lines:
        return False
    if "buffer_id" in e and r.buffer_id != e["buffer_id"]:
        return False
    if "barrier" in e and (r.barrier is None or str(e["barrier"]) not in r.barrier):
        return False
    if "cta" in e and not names_cta(r, e["cta"]):
        return False
    return True


_CTA_NAME = re.compile(r"\bcta(\d+)\.")


def names_cta(r: Reported, cta: int | str) -> bool:
    """Whether the finding names CTA `cta` (`any`: some CTA) in a witness thread or partition,
    or, for findings with no structured witness, in its message."""
    names = [*r.threads, *r.partitions] or [r.message]
    ranks = {int(m.group(1)) for n in names for m in _CTA_NAME.finditer(n)}
    return bool(ranks) if str(cta) == "any" else int(cta) in ranks


def absent_matches(pattern: str, r: Reported) -> bool:
    """Whether `r` is a finding the case says must not be reported. For the verdict families
    (deadlock., race., expect., phase.) only an error is a verdict: their warnings are the
    rules' own "this pattern, but ordered / not reused" downgrades, not claims of a bug."""
    if pattern == HANG_GROUP:
        return r.is_hang
    if r.kind.startswith(STRICT_PREFIXES) and r.severity != "error":
        return False
    if pattern.endswith(".*"):
        return r.kind.startswith(pattern[:-1])
    return r.kind == pattern


@dataclass
class CaseScore:
    """One case's outcome."""

    case: Case
    reported: list[Reported]
    matched: list[dict] = field(default_factory=list)
    missed: list[dict] = field(default_factory=list)
    false: list[tuple[str, Reported]] = field(default_factory=list)  # (absent pattern, finding)
    true_findings: list[Reported] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.error is None and not self.missed and not self.false

    @property
    def hang_reported(self) -> bool:
        return any(r.is_hang for r in self.reported)


def score_case(case: Case, reported: list[Reported], error: str | None = None, seconds: float = 0.0) -> CaseScore:
    s = CaseScore(case, reported, error=error, seconds=seconds)
    for e in case.findings:
        hit = [r for r in reported if expectation_matches(e, r)]
        (s.matched if hit else s.missed).append(e)
        for r in hit:
            if r not in s.true_findings:
                s.true_findings.append(r)
    for r in reported:
        for pattern in case.absent:
            if absent_matches(pattern, r):
                s.false.append((pattern, r))
                break
    return s


def summarize(scores: list[CaseScore]) -> dict[str, Any]:
    """The `summary` object of the eval document."""
    per: dict[str, dict[str, int]] = {}

    def row(kind: str) -> dict[str, int]:
        return per.setdefault(kind, {"expected": 0, "matched": 0, "tp": 0, "fp": 0})

    for s in scores:
        for e in s.case.findings:
            r = row(e["kind"])
            r["expected"] += 1
            r["matched"] += e in s.matched
        labels = {e["kind"] for e in s.case.findings}
        for f in s.true_findings:
            row(f.kind)["tp"] += 1
            if HANG_GROUP in labels and f.is_hang:
                row(HANG_GROUP)["tp"] += 1
        for pattern, f in s.false:
            row(f.kind)["fp"] += 1
            if f.is_hang:
                row(HANG_GROUP)["fp"] += 1
    per_kind = {}
    for kind in sorted(per):
        r = per[kind]
        judged = r["tp"] + r["fp"]
        per_kind[kind] = {
            "recall": round(r["matched"] / r["expected"], 4) if r["expected"] else None,
            "precision": round(r["tp"] / judged, 4) if judged else None,
            "support": r["expected"],
            "false_positives": r["fp"],
        }
    out = _rates(scores)
    out["per_kind"] = per_kind
    groups = sorted({s.case.group for s in scores if s.case.group})
    if groups:
        out["per_group"] = {g: _group_summary([s for s in scores if s.case.group == g]) for g in groups}
    return out


def _group_summary(scores: list[CaseScore]) -> dict[str, Any]:
    """One group's rates (e.g. the cluster cases) and, per mutation operator (`base` for an
    unmodified kernel), how many of its cases passed."""
    out = _rates(scores)
    # Hang cases whose every hang expectation matched: the deadlock was found *and* named the CTA.
    hangs = [s for s in scores if s.case.expects_deadlock]
    out["deadlock_found_in_cta"] = sum(
        all(e in s.matched for e in s.case.findings if "cta" in e or e["kind"].startswith("deadlock.")) for s in hangs)
    ops: dict[str, list[int]] = {}
    for s in scores:
        op = (s.case.source.get("mutation") or {}).get("operator", "base")
        row = ops.setdefault(op, [0, 0])
        row[0] += s.passed
        row[1] += 1
    out["operators"] = {op: {"passed": p, "cases": n} for op, (p, n) in sorted(ops.items())}
    return out


def _rates(scores: list[CaseScore]) -> dict[str, Any]:
    dl = [s for s in scores if s.case.expects_deadlock]
    good = [s for s in scores if s.case.known_good]
    race_exp = [(s, e) for s in scores for e in s.case.findings
                if e["kind"].startswith("race.") and e.get("severity", "error") == "error"]
    return {
        "cases": len(scores),
        "passed": sum(s.passed for s in scores),
        "errors": sum(s.error is not None for s in scores),
        "deadlock_cases": len(dl),
        "deadlock_recall": round(sum(s.hang_reported for s in dl) / len(dl), 4) if dl else None,
        "known_good_cases": len(good),
        "false_deadlocks": sum(s.hang_reported for s in good),
        # GPU runs that completed (ok or wrong result) yet were called a hang: a timing-dependent
        # hang the run did not hit, or a false verdict; each is listed among the misses.
        "observed_completions_flagged": sum(s.hang_reported for s in scores if s.case.truth in ("ok", "wrong")),
        "race_expectations": len(race_exp),
        "race_recall": round(sum(e in s.matched for s, e in race_exp) / len(race_exp), 4) if race_exp else None,
    }


def unmeasured_thresholds(summary: dict[str, Any], thresholds: dict[str, Any]) -> list[str]:
    """Thresholds the summary has no value for (a recall over zero cases): neither met nor missed."""
    return [k for k in thresholds if k != "min_cases" and summary.get(k[4:] if k.startswith("max_") else k) is None]


def check_thresholds(summary: dict[str, Any], thresholds: dict[str, Any]) -> list[str]:
    """Every threshold the summary misses, one sentence each (empty when all hold)."""
    out = []
    for key, limit in thresholds.items():
        if key == "min_cases":
            if summary["cases"] < limit:
                out.append(f"cases {summary['cases']} < min_cases {limit}")
            continue
        if key.startswith("max_") or key == "false_deadlocks":
            name = key[4:] if key.startswith("max_") else key
            value = summary.get(name)
            if value is not None and value > limit:
                out.append(f"{name} {value} > {limit}")
            continue
        value = summary.get(key)
        if value is not None and value < limit:
            out.append(f"{key} {value} < {limit}")
    return out
