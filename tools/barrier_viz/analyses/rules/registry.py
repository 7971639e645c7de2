"""The rule registry: every static rule in the order `check` runs it, and the doc of every
finding kind (`barrier-viz explain`, the hazards reference and the README's kind list are
checked against it by tests/test_registry.py).

The order of `RULES` is the order of `check`'s findings before it sorts them (and of the
findings `explanations` reads), so it is written out here, never derived from imports. A new
rule: a module in this package with a `RULE = Rule(...)` declaring its kinds' docs, one line in
`RULES` below, one `Kind` in `model/findings.py`. Kinds only a run finds are declared in the
emitting package (`sim/kinds.py`, `launch/kinds.py`, `cluster/kinds.py`); stated limits in `model/kinds.py`.
"""

from __future__ import annotations

from ..cluster import kinds as cluster_kinds
from ..launch import kinds as launch_kinds
from ..model.findings import Finding, Kind
from ..model.kinds import LIMIT_DOCS, KindDoc, Rule
from ..sim import kinds as sim_kinds
from . import (barrier_sanity, constant_phase, coverage_rows, descriptor_reuse, early_release, expect_bytes,
               counter_restart, explanations, predicate_mismatch, redundant_wait, release_order, remote_wait, same_partition,
               tma_channel, tma_store, unpaced_release)

RULES: tuple[Rule, ...] = (
    constant_phase.RULE,
    redundant_wait.RULE,
    expect_bytes.RULE,
    tma_channel.RULE,
    same_partition.RULE,
    early_release.RULE,
    tma_store.RULE,
    remote_wait.RULE,
    coverage_rows.RULE,
    release_order.RULE,
    descriptor_reuse.RULE,
    barrier_sanity.RULE,
    unpaced_release.RULE,
    counter_restart.RULE,
    predicate_mismatch.RULE,
    explanations.RULE,  # last: it explains the findings of the rules before it
)

_DOCS: tuple[KindDoc, ...] = (*(d for r in RULES for d in r.docs), *sim_kinds.KIND_DOCS, *launch_kinds.KIND_DOCS,
                              *cluster_kinds.KIND_DOCS,
                              *LIMIT_DOCS)


def kind_docs() -> dict[str, KindDoc]:
    """Every declared kind's doc, keyed by kind, in `findings.Kind` order."""
    by_kind = {d.kind.value: d for d in _DOCS}
    return {k.value: by_kind[k.value] for k in Kind if k.value in by_kind}


def duplicate_declarations() -> list[str]:
    """Kinds declared more than once (a kind has one owner)."""
    seen: list[str] = [d.kind.value for d in _DOCS]
    return sorted({k for k in seen if seen.count(k) > 1})


def rules_emitting(kind: str) -> list[Rule]:
    return [r for r in RULES if kind in {k.value for k in r.kinds}]


def run_rules(analysis) -> list[Finding]:
    """Every static rule's findings, in registry order."""
    found: list[Finding] = []
    for rule in RULES:
        found += rule.run(analysis, found)
    return found
