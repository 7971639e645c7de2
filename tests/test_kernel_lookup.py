"""`--kernel NAME` on every command and `inputs --kernels` (adapters/triton_cache.py), on a
Triton cache that real Triton wrote on the CPU (tests/fixtures/triton_cache: the `.ttgir` and
`.json` of each entry, evals/gen/trace_fixtures.py): two configs of `gemm_splitk` (num_stages 2
and 3, as autotuning makes them), `gemm_persistent_few`, and the Gluon kernels `chunk_sum` and
`chunk_sum_lost_ready`."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from cli_support import FIXTURES, run_cli

CACHE = FIXTURES / "triton_cache"


@pytest.fixture
def triton_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A copy of the cache (mtimes set so the num_stages=3 gemm_splitk is the newest entry) and
    an empty dump folder, with HOME moved away from any real ~/.triton."""
    cache, dump = tmp_path / "cache", tmp_path / "dump"
    shutil.copytree(CACHE, cache)
    dump.mkdir()
    for i, ttgir in enumerate(sorted(cache.rglob("*.ttgir"))):
        stages = json.loads(ttgir.with_suffix(".json").read_text())["num_stages"]
        os.utime(ttgir, (1_000_000 + i + 100 * stages, 1_000_000 + i + 100 * stages))
    monkeypatch.setenv("TRITON_CACHE_DIR", str(cache))
    monkeypatch.setenv("TRITON_DUMP_DIR", str(dump))
    monkeypatch.setenv("HOME", str(tmp_path))
    return cache, dump


def one_line_error(r) -> str:
    assert r.exit_code == 2 and r.exception is None, (r.exit_code, r.exception, r.stdout)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("barrier-viz: error: ")
    return lines[0]


def test_kernel_name_works_on_every_command(triton_dirs):
    for command in ("check", "report", "partitions", "barriers", "buffers", "phases", "graph", "coverage", "ops",
                    "explore"):
        r = run_cli(command, "--kernel", "chunk_sum", "--format", "json")
        assert r.exit_code == 0 and r.exception is None, (command, r.stderr)
        assert r.json()["input"]["path"].endswith("chunk_sum.ttgir"), command
    assert run_cli("inputs", "--kernel", "chunk_sum", "--format", "json").json()["units"][0]["functions"] == ["chunk_sum"]


def test_several_configs_newest_first_and_listed(triton_dirs):
    listing = run_cli("inputs", "--kernels", "gemm_splitk", "--format", "json").json()
    assert [k["config"]["num_stages"] for k in listing["kernels"]] == [3, 2]  # newest first
    assert {k["config"]["target"] for k in listing["kernels"]} == {"cuda:100"}
    assert all(k["config"]["num_ctas"] == 1 and "num_warps" in k["config"] for k in listing["kernels"])
    r = run_cli("check", "--kernel", "gemm_splitk", "--format", "json")
    assert r.exit_code == 0
    newest = listing["kernels"][0]
    assert r.json()["input"]["path"] == newest["ttgir"]
    assert "the newest of 2 entries" in r.stderr and "inputs --kernels gemm_splitk" in r.stderr
    older = listing["kernels"][1]
    picked = run_cli("check", "--kernel", f"gemm_splitk@{older['hash'][:8]}", "--format", "json")
    assert picked.exit_code == 0 and picked.json()["input"]["path"] == older["ttgir"] and not picked.stderr
    everything = run_cli("inputs", "--kernels", "--format", "json").json()["kernels"]
    assert sorted(k["name"] for k in everything) == ["chunk_sum", "chunk_sum_lost_ready", "gemm_persistent_few",
                                                     "gemm_splitk", "gemm_splitk"]
    assert "num_stages=3" in run_cli("inputs", "--kernels", "gemm").stdout


def test_unknown_ambiguous_and_conflicting_names_are_one_line_errors(triton_dirs):
    cache, dump = triton_dirs
    line = one_line_error(run_cli("check", "--kernel", "no_such_kernel"))
    assert "no kernel named 'no_such_kernel'" in line and str(cache) in line and str(dump) in line
    line = one_line_error(run_cli("report", "--kernel", "gemm"))
    assert "ambiguous" in line and "gemm_persistent_few" in line and "gemm_splitk" in line
    # an exact name wins over the longer names that contain it
    assert run_cli("check", "--kernel", "chunk_sum", "--format", "json").json()["input"]["function"] == "chunk_sum"
    assert "hash prefix" in one_line_error(run_cli("check", "--kernel", "gemm_splitk@ffffffff"))
    some = next(CACHE.rglob("chunk_sum.ttgir"))
    assert "not both" in one_line_error(run_cli("check", str(some), "--kernel", "chunk_sum"))
    assert "Missing argument INPUT (or --kernel NAME)" in one_line_error(run_cli("check"))


def test_dump_folder_with_per_config_subfolders(triton_dirs, tmp_path: Path):
    """TRITON_DUMP_DIR holds `<hash>/<kernel>.ttgir` without metadata; tools that keep one folder
    per autotune config nest one level deeper. Both are found."""
    cache, dump = triton_dirs
    shutil.rmtree(cache)
    cache.mkdir()
    src = next(CACHE.rglob("chunk_sum.ttgir"))
    for cfg in ("cfg0", "cfg1"):
        (dump / "HASHA" / cfg).mkdir(parents=True)
        shutil.copy(src, dump / "HASHA" / cfg / "chunk_sum.ttgir")
    listing = run_cli("inputs", "--kernels", "--format", "json").json()["kernels"]
    assert [(k["root"], k["config"]) for k in listing] == [("dump", {}), ("dump", {})]
    assert "(dump: no metadata)" in run_cli("inputs", "--kernels").stdout
    r = run_cli("check", "--kernel", "chunk_sum", "--format", "json")
    assert r.exit_code == 0 and "/HASHA/cfg" in r.json()["input"]["path"]


def test_metadata_fills_what_the_ir_lacks(tmp_path: Path):
    """Triton 3.6 prints no cluster shape in the TTGIR; a cache entry's `.json` gives it (here a
    copy whose metadata says a 2x1x1 cluster). What the IR states always wins."""
    from barrier_viz.session import select

    src = next(CACHE.rglob("chunk_sum.ttgir"))
    entry = tmp_path / "HASH"
    entry.mkdir()
    shutil.copy(src, entry / "chunk_sum.ttgir")
    meta = json.loads(src.with_suffix(".json").read_text())
    (entry / "chunk_sum.json").write_text(json.dumps(dict(meta, cluster_dims=[2, 1, 1], num_ctas=4)))
    module = select(str(entry / "chunk_sum.ttgir")).ir.operations[-1]
    assert module.attr("ttg.cluster-dim-x") == 2 and module.attr("ttg.cluster-dim-y") == 1
    assert module.attr("ttg.num-ctas") == 1  # the IR says 1: the metadata does not override it
    assert module.attr("ttg.num-warps") == 4  # and the metadata's 8 (all partitions' warps) is not used
    assert module.attr("ttg.target") == "cuda:90"
