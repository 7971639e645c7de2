"""The interpreter's extension interface (analyses/sim/extension.py): the CTA-cluster model plugs
into the core through it, the core never imports the cluster package, and the extension is in
place whichever module a process imports first."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import barrier_viz
from barrier_viz.analyses.sim.extension import Extension, installed
from barrier_viz.analyses.sim.machine import Machine, Params, SimulationError
from barrier_viz.analyses.sim.registry import HANDLERS, register
from barrier_viz.analyses.sim.schedule import run

from test_cluster_sim import _fn, module, rendezvous

SIM = Path(barrier_viz.__file__).parent / "analyses" / "sim"


def test_sim_never_imports_the_cluster_package():
    """Every import in sim/, function-local ones included, stays out of analyses.cluster: the
    cluster model reaches the core only through the extension it installs."""
    offenders = []
    for path in sorted(SIM.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            if any(n == "cluster" or n.startswith("cluster.") or ".cluster" in n and "facts.cluster" not in n
                   for n in names):
                offenders.append(f"{path.relative_to(SIM)}:{node.lineno}")
    assert offenders == []


def test_a_process_that_imports_only_the_scheduler_runs_clusters():
    """The cluster extension is installed by `barrier_viz.analyses` itself, so a fresh process
    (an audit worker, a test) that imports nothing but `sim.schedule` runs a 2-CTA rendezvous
    through remote arrives to the end, as the CLI does."""
    code = ("from barrier_viz.analyses.sim.schedule import run\n"
            "from barrier_viz.ir.parse import parse_ir\n"
            "import sys\n"
            "fn = next(op for op in parse_ir(sys.stdin.read()).walk() if op.name == 'tt.func')\n"
            "print(run(fn, policy='favorable').outcome)\n")
    out = subprocess.run([sys.executable, "-c", code], input=module(rendezvous()), capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "completed"
    assert type(installed()).__name__ == "ClusterExtension"
    assert "ttng.map_to_remote_buffer" in HANDLERS


def test_without_the_extension_a_cluster_is_a_stated_limit_not_one_cta():
    """The core's defaults are one CTA's: a kernel launched as a 2-CTA cluster is then not
    simulated (with the reason), never run as if it were one CTA (its remote arrive would be
    missing, a false deadlock)."""
    machine = Machine(_fn(module(rendezvous())), Params())
    machine.ext = Extension()
    with pytest.raises(SimulationError, match="cluster of 2 CTAs"):
        machine.start()
    assert run(_fn(module(rendezvous())), policy="favorable").outcome == "completed"


def test_a_second_handler_for_an_op_is_refused():
    """Which handler runs an op must not depend on import order: registering a different one
    for a name that has one is an error; registering the same one again is not."""
    handler = HANDLERS["ttng.wait_barrier"]
    register("ttng.wait_barrier", handler)
    with pytest.raises(ValueError, match="two interpreter handlers for ttng.wait_barrier"):
        register("ttng.wait_barrier", lambda *args: None)
    assert HANDLERS["ttng.wait_barrier"] is handler
