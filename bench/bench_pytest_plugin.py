"""The overhead of `pytest --barrier-viz` on a compile-heavy test run (issue 25).

Run by hand with an interpreter that has triton (upstream 3.6+, with Gluon) and pytest:

    /work/venvs/<venv>/bin/python bench/bench_pytest_plugin.py [--repeats 3] [--configs 8]

It writes a test module that compiles N warp-specialized kernels through `triton.compile` on the
CPU (the Gluon `chunk_sum` for cuda:90, and `gemm_splitk` / `gemm_persistent_few` of
evals/gen/input_kernels.py for cuda:100 over num_stages x BK configs, as autotuning would), then
runs it as a subprocess without the plugin and with `--barrier-viz`, each with a fresh Triton
cache (every compile is real) and, for the plugin, a fresh result cache (every check is real).
Prints the medians, the ratio (target: at most 1.5x, or checks deferred to session end with their
time stated: the plugin defers them and the summary states the seconds, which are printed here
too) and the number of kernels checked. No assertions: speed is measured here, not in tests.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

MODULE = '''
import os, sys
import pytest
sys.path.insert(0, os.environ["BARRIER_VIZ_GEN"])
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton.experimental.gluon._runtime import GluonASTSource
import input_kernels as ik
import trace_kernels as tk

CONFIGS = [(name, stages, bk) for name in ("gemm_splitk", "gemm_persistent_few") for stages in (2, 3, 4)
           for bk in (32, 64)][: int(os.environ["BENCH_CONFIGS"])]


@pytest.mark.parametrize("name,stages,bk", CONFIGS)
def test_compile_blackwell(name, stages, bk):
    fn, sig, variants = ik.KERNELS[name]
    constexprs = dict(variants[0], BK=bk)
    full = {**sig, **{k: "constexpr" for k in constexprs}}
    triton.compile(ASTSource(fn, full, constexprs), target=GPUTarget("cuda", 100, 32),
                   options={"num_warps": 4, "num_stages": stages})


def test_compile_hopper_gluon():
    sig = {"x_ptr": "*fp32", "out_ptr": "*fp32", "K": "i32", "num_warps": "constexpr"}
    src = GluonASTSource(tk.chunk_sum, sig, {(3,): 4}, attrs={(i,): [["tt.divisibility", 16]] for i in range(3)})
    triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
'''


def run(folder: Path, plugin: bool, configs: int) -> tuple[float, str]:
    work = Path(tempfile.mkdtemp(dir=folder))
    env = dict(os.environ, TRITON_CACHE_DIR=str(work / "triton"), XDG_CACHE_HOME=str(work / "xdg"),
               BARRIER_VIZ_GEN=str(ROOT / "evals" / "gen"), BENCH_CONFIGS=str(configs),
               PYTHONPATH=os.pathsep.join([str(ROOT / "tools"), os.environ.get("PYTHONPATH", "")]),
               PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder / "test_compile_heavy.py")]
    if plugin:
        cmd[3:3] = ["-p", "barrier_viz.adapters.pytest_plugin", "--barrier-viz"]
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=folder)
    elapsed = time.perf_counter() - t
    if proc.returncode not in (0, 1):
        raise SystemExit(f"pytest failed (exit {proc.returncode}): {proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return elapsed, proc.stdout


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--configs", type=int, default=8, help="Blackwell configs compiled (at most 12), plus the Gluon kernel")
    args = ap.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="bv-bench-plugin-"))
    (folder / "test_compile_heavy.py").write_text(MODULE)
    (folder / "pytest.ini").write_text("[pytest]\n")
    plain, with_plugin, deferred = [], [], []
    summary = ""
    for _ in range(args.repeats):
        plain.append(run(folder, False, args.configs)[0])
        secs, out = run(folder, True, args.configs)
        with_plugin.append(secs)
        m = re.search(r"checked at session end in ([\d.]+)s", out)
        deferred.append(float(m.group(1)) if m else float("nan"))
        summary = next((line for line in out.splitlines() if "compile(s):" in line), summary)
    a, b = statistics.median(plain), statistics.median(with_plugin)
    print(f"compile-heavy run ({args.configs + 1} kernel compiles), median of {args.repeats}:")
    print(f"  without the plugin: {a:.1f}s")
    print(f"  with --barrier-viz: {b:.1f}s (of which checks deferred to session end: {statistics.median(deferred):.1f}s)")
    print(f"  ratio: {b / a:.2f}x")
    print(f"  plugin summary: {summary.strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
