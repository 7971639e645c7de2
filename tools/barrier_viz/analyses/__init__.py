"""The analyses: what barrier-viz concludes about a kernel, by concept (one package each).

model < program < symbolic < sim < cluster < launch < structure < rules < verdicts < diff: a
package imports only the packages before it (plus ir/, facts/, analysis.py, render/words.py,
limits.py, errors.py).

Importing this package installs the CTA-cluster extension into the interpreter
(`cluster.extension.install`): every path that runs the interpreter (check, report, explore,
the audit workers in their own processes, eval, the input points, the API, the pytest plugin,
a test that imports `sim.schedule` alone) imports a module of this package, and Python runs this
file first, so the extension is in place before any run whichever module was imported first.
The interpreter (`sim/`) never imports `cluster/`; this is the one place the two meet.
"""

from .cluster.extension import install as _install_cluster

_install_cluster()
