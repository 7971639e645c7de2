"""Analyses: everything the tool concludes from the facts of one unit, in packages by concept.

Each package's `__init__` says what it owns and what it may import. The layering (a package may
import only the packages before it, plus `ir/`, `facts/`, `analysis.py`, `render/words.py`,
`limits.py` and `errors.py`):

    model < program < symbolic < sim < cluster < launch < structure < rules < verdicts < diff

* `model` — what a verdict is (Finding, Kind, Severity, outcome; clean / findings / not judged);
* `program` — program-order facts (which iterations an op runs, values loaded from memory);
* `symbolic` — slot and phase formulas of loop counters;
* `sim` — the interpreter, schedules, happens-before, deadlock classification, explore;
* `cluster` — the CTA-cluster extension of the interpreter;
* `launch` — trip counts, input points, launch conditions;
* `structure` — report sections 2-4: dependency graph, index/phase analysis, coverage tables,
  and the documents the renderers read;
* `rules` — the static rules;
* `verdicts` — `check`: every rule plus the simulation verdicts;
* `diff` — `barrier-viz diff` and the audit cache's model of a unit.

`tests/test_architecture.py` keeps the import graph of `tools/` free of circles.

Importing this package installs the CTA-cluster extension into the interpreter
(`cluster.extension.install`): every path that runs the interpreter (check, report, explore,
the audit workers in their own processes, eval, the input points, the API, the pytest plugin,
a test that imports `sim.schedule` alone) imports a module of this package, and Python runs this
file first, so the extension is in place before any run whichever module was imported first.
The interpreter (`sim/`) never imports `cluster/`; this is the one place the two meet.
"""

from .cluster.extension import install as _install_cluster

_install_cluster()
