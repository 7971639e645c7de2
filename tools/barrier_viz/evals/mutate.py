"""The mutation engine: single-point edits of real IR whose effect on synchronization is known.

An eval case is only as good as its truth, and the truth must not come from the tool under test.
Each operator (`mutate_ops`, `mutate_handwritten`, `mutate_cluster`) makes one edit at op level
(it locates the op with the parser, using `Operation.line`, `start_byte`/`end_byte` and its
operands, and edits those bytes), and states *why* the edited kernel hangs, races, or stays
correct, from mbarrier semantics alone:

* an mbarrier phase completes when its pending-arrival count reaches zero and its transaction
  count is zero; `wait(parity P)` returns once the phase of parity P has completed;
* a wait changes no barrier state, but it throttles its partition: without it the partition
  can run ahead and complete two phases of a barrier it arrives on before the other side polls,
  and `wait(parity)` then sees the parity back where it was (parity aliasing). So a dropped wait
  is a race by construction and *may* also hang: its cases expect the race and leave hangs
  unjudged;
* removing every arrival of a barrier that something waits on (with a phase that needs a
  completion) means that phase never completes.

The parser and the barrier facts are used only to *find* edit sites and check an operator's
context (e.g. that an arrive is the only arrival of its barrier); what each mutant expects is
fixed by the operator, never by running `check`. Where the truth is an observation rather than a
derivation (a flipped consumer parity hangs through a merged transaction phase; a duplicated
arrive hangs by skipping a parity), the operator says so and cites the GPU run.
"""

from __future__ import annotations

from typing import Callable, Iterator

from .mutate_cluster import CLUSTER
from .mutate_engine import HANG, Mutant, Source, _original_line, _parses_cleanly
from .mutate_handwritten import HANDWRITTEN
from .mutate_ops import BASIC

__all__ = ["HANG", "OPERATORS", "Mutant", "Source", "mutants"]

# The one table of operators, in the order they run: the generic edits, then the operators for
# hand-written idioms (pre-arrivals, wrap-flipped phase bits, wgmma releases, shared releases),
# then the cluster operators (remote arrivals, multicast masks and bytes, CLC). Each operator
# module builds its table from `mutate_engine` alone; this module is the one place they join.
OPERATORS: dict[str, Callable[[Source], Iterator[Mutant]]] = {**BASIC, **HANDWRITTEN, **CLUSTER}


def mutants(text: str, limit_per_operator: int | dict[str, int] | None = None, operators: list[str] | None = None,
            rotate: int = 0) -> list[Mutant]:
    """Every mutant the operators derive from `text` (at most `limit_per_operator` each, or the
    per-operator limit of a dict, spread over distinct sub-kinds first, starting at sub-kind
    `rotate` so that different kernels exercise different sub-kinds), each re-parsed to make
    sure the edit left valid syntax."""
    src = Source(text)
    out: list[Mutant] = []
    for name, fn in OPERATORS.items():
        if operators and name not in operators:
            continue
        limit = limit_per_operator.get(name) if isinstance(limit_per_operator, dict) else limit_per_operator
        if limit == 0:
            continue
        found = list(fn(src))
        chosen = _spread(found, limit, rotate)
        for m in chosen:
            if _parses_cleanly(m.text):
                m.extra.setdefault("original", _original_line(text, m.line))
                out.append(m)
    return out


def _spread(found: list[Mutant], limit: int | None, rotate: int = 0) -> list[Mutant]:
    """Keep at most `limit`, taking one of each sub-kind (wait_kind, name prefix) first so a
    small budget still covers producers and consumers."""
    if limit is None or len(found) <= limit:
        return found
    groups: dict[str, list[Mutant]] = {}
    for m in found:
        groups.setdefault(m.extra.get("wait_kind", "") + m.name.split("_L")[0], []).append(m)
    order = list(groups.values())
    k = rotate % len(order)
    order = order[k:] + order[:k]
    out: list[Mutant] = []
    while len(out) < limit:
        progressed = False
        for g in order:
            if g and len(out) < limit:
                out.append(g.pop(0))
                progressed = True
        if not progressed:
            break
    return out
