"""What a finding kind declares, and what a rule declares: the vocabulary of the rule registry.

Why: a kind's name, its severity policy and the words that explain it to a kernel engineer
belong next to the code that raises it (as Ruff's `Violation` docs and Clippy's lint
declarations do), not in a table far from it. Each static rule module declares a `Rule` with
the `KindDoc`s of the kinds it owns; kinds only a run finds are declared in the emitting
package (`sim/kinds.py`, `cluster/kinds.py`), and the stated limits below, here.
`rules/registry.py` collects them all; `barrier-viz explain KIND` prints one.

A kind is declared exactly once, by the module that owns its meaning; other emitters (a run
that sees the same race a static rule names) reuse the kind without redeclaring it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .findings import Finding, Kind, Severity


@dataclass(frozen=True)
class KindDoc:
    """One finding kind, explained: `summary` is one line; `what`, `why` and `example` are
    short paragraphs ("What it does", "Why is this bad?", "Example" of IR, and the `fix` a kernel
    engineer makes); `severities` lists every
    severity a finding of the kind may carry, and `policy` says when which."""

    kind: Kind
    summary: str
    what: str
    why: str
    example: str
    fix: str
    severities: tuple[Severity, ...]
    policy: str

    def as_dict(self) -> dict:
        return {"kind": self.kind.value, "summary": self.summary, "what_it_does": self.what,
                "why_is_this_bad": self.why, "example": self.example, "fix": self.fix,
                "severities": [s.value for s in self.severities], "severity_policy": self.policy}


@dataclass(frozen=True)
class Rule:
    """A static rule: `check(analysis)` returns its findings (`check(analysis, earlier)` when
    `reads_findings`: it explains findings other rules made before it). `docs` are the kinds it
    owns; `kinds` every kind it may emit (its own and ones it shares, such as `model.limit`)."""

    name: str
    module: str
    check: Callable
    docs: tuple[KindDoc, ...]
    also_emits: tuple[Kind, ...] = ()
    reads_findings: bool = False
    kinds: tuple[Kind, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kinds", tuple(d.kind for d in self.docs) + self.also_emits)

    def run(self, analysis, earlier: list[Finding]) -> list[Finding]:
        return self.check(analysis, earlier) if self.reads_findings else self.check(analysis)


# -- stated limits: not verdicts (analyses/model/judgement.py, analyses/verdicts.py) -------------
LIMIT_DOCS = (
    KindDoc(
        Kind.MODEL_LIMIT,
        "Something the model does not cover here: nothing is said either way about it.",
        "Marks a place where a rule or the simulation met IR it does not model (an expect whose "
        "delivering copies cannot be counted, unstructured control flow, packed TMEM in a CTA "
        "cluster...) and names the rule that stopped (`evidence.rule`) and what it would have said.",
        "It is not a defect of the kernel. It is the tool saying where its answer ends, instead of "
        "a silent \"clean\" that nobody checked.",
        "A `barrier_expect` whose bytes come from a copy through a descriptor of unknown shape: "
        "`expect-bytes not checked for barrier_expect at line(s) 88 (...)`.",
        "Nothing to fix in the kernel; the note says what was not checked and why.",
        (Severity.info,), "Always info (outcome `not judged`)."),
    KindDoc(
        Kind.LIMIT_NOT_JUDGED,
        "A hang possibility the simulation could not judge: the verdict is `not judged`.",
        "Reports a schedule or input point that stopped at a limit (a trip count assumed for a "
        "runtime bound, an unmodelled op, an `scf.if` it cannot decide), or that no schedule "
        "finished within its step bound, with the reason and the lines involved.",
        "No hang was ruled out there. Reading \"0 errors\" as clean would be the worst answer; "
        "`check` exits 4 (not judged) instead of 0.",
        "A loop `scf.for %i = %c0 to %K` whose bound is a runtime argument in one partition and a "
        "constant in another.",
        "Fix the launch with `--args K=4096` (or `--pid`, `--load`) so the run can be judged.",
        (Severity.warning,), "Always a warning (outcome `not judged`); it makes the verdict `not judged`."),
    KindDoc(
        Kind.LIMIT_UNRESOLVED_VALUE,
        "A finding that rests on a value the IR does not define soundly, turned into a note.",
        "Replaces a finding whose lines (or whose barrier program) use a value that is undefined, "
        "used before its definition or defined twice; the note keeps what the finding would have "
        "said (`evidence.would_report`).",
        "The analysis resolved that value to nothing or to the wrong definition, so the verdict "
        "says nothing about the kernel. Fix the IR first.",
        "`%bar` used at line 40 but defined at line 52: a deadlock found through that wait becomes "
        "`not judged: the deadlock.no_producer error at lines 40 ... depends on a value ...`.",
        "Fix the IR (every value defined once, before its uses) and rerun.",
        (Severity.info,), "Always info (outcome `not judged`); it makes the verdict `not judged`."),
)
