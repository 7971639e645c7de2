"""Both coverage tables of one analysis (`coverage`), their findings (`coverage_findings`), and
the release -> wait chain search the release rules share (`happens_before`). `_Coverage` joins
the concepts of the sibling modules: ordering, TMEM accesses, the packed table, the accumulator
table.
"""

from __future__ import annotations

from ....ir.model import Operation
from ...model.findings import Finding
from .accesses import _TmemAccesses
from .accumulators import _AccumulatorTable, _accumulator_findings
from .ordering import _Ordering
from .packed import _PackedTables, _cluster_limit, _packed_findings
from .rows import Coverage
from .single_copy import single_copy_findings


def coverage(analysis) -> Coverage:
    """Both coverage tables of `analysis` (an `Analysis`)."""
    cov = _Coverage(analysis)
    return Coverage(tuple(cov.packed_tables()), tuple(cov.accumulator_rows()))


def happens_before(analysis, start: Operation, part: str, accept, **kw) -> list | None:
    """The coverage tables' release -> wait chain search (`_Coverage.happens_before`), shared
    with the release rules (release_order): one place decides "ordered through other barriers"."""
    cov = getattr(analysis, "_hb_coverage", None)
    if cov is None or cov.a is not analysis:
        cov = _Coverage(analysis)
        analysis._hb_coverage = cov
    return cov.happens_before(start, part, accept, **kw)


def coverage_findings(analysis) -> list[Finding]:
    """`race.packed_tmem_overwrite`, `race.redundant_zero_store` and `buffer.single_copy`."""
    cov = coverage(analysis)
    packed = [f for t in cov.packed for f in _packed_findings(t)]
    out = _cluster_limit(packed) if analysis.num_ctas > 1 else packed
    out += [f for r in cov.accumulators for f in _accumulator_findings(r)]
    out += single_copy_findings(analysis)
    return out


class _Coverage(_Ordering, _TmemAccesses, _PackedTables, _AccumulatorTable):
    """Both tables of one analysis: the concepts above, sharing the analysis and its traces."""

    def __init__(self, analysis):
        self.a = analysis
        self._traces: dict[tuple[int, str], object] = {}
