"""The compilation listener, the pytest plugin and the Python API (adapters/listener.py,
adapters/pytest_plugin.py, api.py).

Without Triton: the listener is fed what Triton hands it (metadata and the paths of the stage
files) for kernels real Triton compiled on the CPU (tests/fixtures/triton_cache), and the plugin's
session-end steps run on them. With Triton (skipped when it is not importable): a real test module
(tests/fixtures/pytest_plugin/ws_kernels_module.py) runs under `pytest --barrier-viz` in a fresh
process, compiling a Hopper Gluon kernel and a Blackwell auto-WS kernel twice each, with a
listener installed before the plugin (as tritonparse would be) and, on demand, a bad kernel.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from cli_support import FIXTURES

from barrier_viz.adapters import listener as L
from barrier_viz.adapters import pytest_plugin as P

CACHE = FIXTURES / "triton_cache"
REPO = Path(__file__).resolve().parent.parent


def compile_event(kernel: str, which: int = 0) -> dict:
    """What Triton passes its listener for one cached kernel: metadata and the stage files."""
    ttgir = sorted(CACHE.rglob(f"{kernel}.ttgir"))[which]
    meta = json.loads(ttgir.with_suffix(".json").read_text())
    return {"src": None, "metadata": meta, "metadata_group": {ttgir.name: str(ttgir),
                                                              ttgir.with_suffix(".json").name: str(ttgir.with_suffix(".json"))},
            "times": None, "cache_hit": False}


def test_listener_chains_to_the_previous_one_and_keeps_each_kernel_once(tmp_path: Path):
    calls = []
    knobs = SimpleNamespace(compilation=SimpleNamespace(listener=lambda **kw: calls.append(kw["metadata"]["name"])))
    previous = knobs.compilation.listener
    collector = L.install(knobs)
    assert knobs.compilation.listener is collector and collector.previous is previous
    for kernel in ("chunk_sum", "chunk_sum", "gemm_splitk", "chunk_sum_lost_ready"):
        knobs.compilation.listener(**compile_event(kernel))
    # a compile without warp specialization (gemm_splitk's TTIR standing in for a plain TTGIR)
    trace = (FIXTURES / "traces" / "cpu_compile.ndjson").read_text().splitlines()
    ttir = json.loads(trace[2])["payload"]["file_content"]["gemm_splitk.ttir"]
    plain = tmp_path / "plain.ttgir"
    plain.write_text(ttir)
    knobs.compilation.listener(src=None, metadata={"name": "plain"}, metadata_group={"plain.ttgir": str(plain)},
                               times=None, cache_hit=True)
    assert calls == ["chunk_sum", "chunk_sum", "gemm_splitk", "chunk_sum_lost_ready", "plain"]  # all passed on
    assert collector.compiles == 5 and collector.not_ws == 1
    kept = {k.name: k.compiles for k in collector.kernels.values()}
    assert kept == {"chunk_sum": 2, "gemm_splitk": 1, "chunk_sum_lost_ready": 1}
    assert L.uninstall(knobs, collector) and knobs.compilation.listener is previous


def test_a_failing_collect_never_breaks_the_compile():
    calls = []
    collector = L.Collector(previous=lambda **kw: calls.append(1))
    collector(src=None, metadata={"name": "k"}, metadata_group={"k.ttgir": "/nonexistent/k.ttgir"}, times=None,
              cache_hit=False)
    assert calls == [1] and collector.failures and "FileNotFoundError" in collector.failures[0]


def session_end(tmp_path: Path, kernels: list[str], baseline: str | None = None) -> dict:
    collector = L.Collector()
    for k in kernels:
        collector(**compile_event(k))
    names = P.save_kernels(collector, tmp_path / "kernels")
    return P.check_saved(tmp_path / "kernels", names, budget=500_000, baseline=baseline)


def test_session_end_finds_the_bad_kernel_and_a_baseline_silences_it(tmp_path: Path):
    doc = session_end(tmp_path, ["chunk_sum", "gemm_splitk", "chunk_sum_lost_ready"])
    assert sorted(r["path"] for r in doc["rows"]) == ["chunk_sum.w8s3c1.ttgir", "chunk_sum_lost_ready.w8s3c1.ttgir",
                                                      "gemm_splitk.w8s2c1.ttgir"]
    bad = P.failing(doc, "error")
    assert [(f["path"], f["kind"]) for f in bad] == [("chunk_sum_lost_ready.w8s3c1.ttgir", "deadlock.no_producer")]
    from barrier_viz.commands.audit_cmd import render_output, save_baseline

    with P._cwd(tmp_path / "kernels"):
        save_baseline(doc, str(tmp_path / "baseline.json"))
    again = session_end(tmp_path / "second", ["chunk_sum_lost_ready"], baseline=str(tmp_path / "baseline.json"))
    assert P.failing(again, "error") == [] and again["summary"]["baselined"] == 1
    junit = render_output(doc, "junit")
    assert "chunk_sum_lost_ready.w8s3c1.ttgir" in junit and "<failure" in junit
    sarif = json.loads(render_output(doc, "sarif"))
    assert sarif["runs"][0]["results"][0]["ruleId"] == "deadlock.no_producer"


def test_api_check_ttgir_and_check_compiled():
    import barrier_viz

    text = next(CACHE.rglob("chunk_sum.ttgir")).read_text()
    clean = barrier_viz.check_ttgir(text)
    assert clean.verdict == "clean" and clean.ok and clean.document["schema"] == "barrier-viz/check/v1"
    hang = barrier_viz.check_ttgir(text, args={"K": 0}, grid=(4,))
    assert hang.verdict == "findings" and hang.errors == 1 and hang.findings[0]["outcome"] == "hang"
    meta = json.loads(next(CACHE.rglob("chunk_sum_lost_ready.json")).read_text())
    compiled = SimpleNamespace(asm={"ttgir": next(CACHE.rglob("chunk_sum_lost_ready.ttgir")).read_text()},
                               metadata=SimpleNamespace(_asdict=lambda: meta))
    bad = barrier_viz.check_compiled(compiled)
    assert not bad.ok and bad.document["input"]["path"] == "chunk_sum_lost_ready.ttgir"
    trace = (FIXTURES / "traces" / "cpu_compile.ndjson").read_text().splitlines()
    ttir = json.loads(trace[2])["payload"]["file_content"]["gemm_splitk.ttir"]
    plain = barrier_viz.check_ttgir(ttir)
    assert plain.verdict == "not judged" and "no warp specialization" in plain.reason and not plain.ok
    with pytest.raises(TypeError):
        barrier_viz.check_compiled(object())


# -- a real test run (needs triton with Gluon; skipped without) -------------------------------
def _run_module(tmp_path: Path, *extra: str, inject: bool = False) -> subprocess.CompletedProcess:
    shutil.copy(FIXTURES / "pytest_plugin" / "ws_kernels_module.py", tmp_path / "test_ws_kernels.py")
    shutil.copy(FIXTURES / "pytest_plugin" / "conftest_module.py", tmp_path / "conftest.py")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "tools"), os.environ.get("PYTHONPATH", "")]),
               PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",  # only `-p`: an installed entry point would register it twice
               BARRIER_VIZ_GEN=str(REPO / "evals" / "gen"), TRITON_CACHE_DIR=str(tmp_path / "triton-cache"),
               BARRIER_VIZ_INJECT_BAD="1" if inject else "0")
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "barrier_viz.adapters.pytest_plugin",
                           "-p", "no:cacheprovider", "--barrier-viz", *extra], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)


def test_real_run_reports_each_ws_kernel_once_and_fails_on_a_bad_one(tmp_path: Path):
    pytest.importorskip("triton.experimental.gluon")
    (tmp_path / "good").mkdir()
    good = _run_module(tmp_path / "good", "--barrier-viz-junit", "bv.xml", "--barrier-viz-sarif", "bv.sarif")
    assert good.returncode == 0, good.stdout[-3000:]
    assert "6 compile(s): 6 warp-specialized (2 distinct, each checked once)" in good.stdout
    assert "4 passed, 1 skipped" in good.stdout  # incl. the API's and the pre-installed listener's tests
    assert "<testsuite" in (tmp_path / "good" / "bv.xml").read_text()
    assert json.loads((tmp_path / "good" / "bv.sarif").read_text())["version"] == "2.1.0"
    (tmp_path / "bad").mkdir()
    bad = _run_module(tmp_path / "bad", "--barrier-viz-write-baseline", "known.json", inject=True)
    assert bad.returncode == 1, bad.stdout[-3000:]
    assert "5 passed" in bad.stdout and "(3 distinct, each checked once)" in bad.stdout
    assert "chunk_sum_lost_ready.w8s3c1.ttgir:" in bad.stdout and "deadlock.no_producer" in bad.stdout
    assert "result: FAIL (1 new finding(s) at level error)" in bad.stdout
    shutil.copy(tmp_path / "bad" / "known.json", tmp_path / "known.json")
    (tmp_path / "again").mkdir()
    known = _run_module(tmp_path / "again", "--barrier-viz-baseline", str(tmp_path / "known.json"), inject=True)
    assert known.returncode == 0 and "1 baselined" in known.stdout, known.stdout[-3000:]


def test_plugin_without_triton_says_so(tmp_path: Path):
    try:
        import triton  # noqa: F401
        pytest.skip("triton is importable here")
    except ImportError:
        pass
    (tmp_path / "test_nothing.py").write_text("def test_one():\n    pass\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "tools"), os.environ.get("PYTHONPATH", "")]),
               PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "barrier_viz.adapters.pytest_plugin", "-p",
                        "no:cacheprovider", "--barrier-viz"], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and "triton is not importable" in r.stdout and "1 passed" in r.stdout
    off = subprocess.run([sys.executable, "-m", "pytest", "-p", "barrier_viz.adapters.pytest_plugin", "-p",
                          "no:cacheprovider"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert off.returncode == 0 and "barrier-viz" not in off.stdout  # off by default
