"""GPU-observed truth for 2-CTA cluster kernels (evals/gen/gluon_cluster_kernels.py, Triton 3.6
CGA form, observed on the H200 twice: evals/gen/gluon_cluster_results.json) and what `check`
says about them.

What a kernel engineer reads from those runs: Triton 3.6 lowers every mbarrier op of a CGA-form
module with 1xi64 barriers CTA-locally (each CTA inits, expects, waits on and arrives at its own
copy; its TMA load completes on its own copy), so each CTA must expect the bytes *it* receives:
half the cluster tile when the rows are split over the CTAs, the whole tile when the tile is
broadcast. Expecting the other amount hung on the GPU either way.

The tool's CGA model does not judge these kernels yet (it places a `[[0]]`-layout barrier in
CTA 0, the fork's leader lowering, and stops with a model.limit): the GPU hangs and faults it
misses are pinned to known_misses with that reason; here we pin that it never gives a verdict
the GPU contradicts (no error on a kernel that ran correctly), and that the per-CTA program the
GPU ran (the module read with each CTA's share of the tile) gets the GPU's verdict from the
one-CTA rules, which is what a fix of the CGA model must reproduce.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
import yaml

from barrier_viz.evals.cases import discover, load_case
from barrier_viz.evals.runner import check_case
from barrier_viz.evals.scoring import score_case

from cli_support import check_text

REPO = Path(__file__).resolve().parent.parent
CASES = REPO / "evals" / "cases"
RESULTS = REPO / "evals" / "gen" / "gluon_cluster_results.json"
PREFIX = "gpu-h200.gluon-cluster-"


def _cases():
    return discover(sorted(CASES.glob(PREFIX + "*")))


def _text(case) -> str:
    return gzip.decompress(case.input.read_bytes()).decode()


def _labels() -> dict[str, str]:
    res = json.loads(RESULTS.read_text())
    return {f"gpu-h200.{k}.{Path(f).stem}": label for k, e in res["kernels"].items() for f, label in e["results"].items()}




def _errors(findings: list[dict]) -> set[str]:
    return {f["kind"] for f in findings if f["severity"] == "error"}


def test_every_observation_is_a_case_with_the_gpu_label():
    """Each file the H200 labelled is a case whose truth is that label, grouped as a cluster case,
    saying it is a 2-CTA Gluon kernel observed on the GPU; the repeat run gave the same labels."""
    labels = _labels()
    cases = {c.name: c for c in _cases()}
    assert set(cases) == set(labels) and len(cases) == 21
    for name, case in cases.items():
        spec = yaml.safe_load((case.input.parent / "expected.yaml").read_text())
        assert case.truth == labels[name] and spec["group"] == "cluster"
        assert spec["source"]["compiler"] == "gluon" and spec["source"]["num_ctas"] == 2
        assert spec["source"]["gpu"].startswith("NVIDIA H200") and "observed on H200" in case.notes
        if case.truth == "hang":
            assert case.findings == [{"kind": "deadlock.*", "cta": "any"}]
    res = json.loads(RESULTS.read_text())["kernels"]["gluon-cluster-copy"]
    assert res["reruns_10_reps"] == res["results"]


def test_the_byte_count_each_cta_receives():
    """On the GPU: split tile, expect the CTA's half -> ok, the whole tile -> hang; broadcast tile,
    expect the whole tile -> ok, half -> hang."""
    labels = _labels()
    assert labels["gpu-h200.gluon-cluster-copy.base"] == "ok"
    assert labels["gpu-h200.gluon-cluster-copy_nolayout.base"] == "ok"
    assert labels["gpu-h200.gluon-cluster-copy_expectfull.base"] == "hang"
    assert labels["gpu-h200.gluon-cluster-copy_bcasttile.base"] == "ok"
    assert labels["gpu-h200.gluon-cluster-copy_bcasttile_expecthalf.base"] == "hang"


def test_no_error_where_the_gpu_ran_correctly():
    """A false verdict on a correct kernel is the worst outcome: every case the H200 ran
    correctly gets no error finding (the bases, whatever their barrier layout, and the repeated
    waits)."""
    ok = [c for c in _cases() if c.truth == "ok"]
    assert len(ok) == 5
    for case in ok:
        reported, err, _ = check_case(case)
        assert err is None and not [r for r in reported if r.severity == "error"], case.name


def test_every_case_gets_the_gpu_verdict():
    """Each GPU observation is scored as the H200 ran it: the broadcast TMA barrier outside a
    two-CTA module marks IR only a CTA-local barrier lowering accepts (Triton 3.6's), so the CGA
    model reads every barrier per CTA (`facts.cga.CgaModule.local_barriers`): no error where it
    ran correctly, a hang-kind error where it hung, an error where it faulted. None of them is
    a known miss any more."""
    config = yaml.safe_load((REPO / "evals" / "config.yaml").read_text())
    assert not {k for k in config["known_misses"] if k.startswith(PREFIX)}
    for case in _cases():
        reported, err, _ = check_case(case)
        assert score_case(case, reported, err).passed, case.name
        errors = [r for r in reported if r.severity == "error"]
        assert bool(errors) == (case.truth != "ok"), (case.name, [r.kind for r in errors])


def _per_cta(text: str, split: bool) -> str:
    """The program one CTA ran under Triton 3.6's CTA-local lowering: a one-CTA module whose tile
    is the CTA's share (the first half of the rows when the CGA layout splits them)."""
    one = text.replace('"ttg.num-ctas" = 2', '"ttg.num-ctas" = 1')
    one = re.sub(r", CGALayout = \[\[[01](, [01])?\]\]", "", one)
    return one.replace("128x64xf16", "64x64xf16") if split else one


@pytest.mark.parametrize("name", ["copy.base", "copy.drop_only_arrival_L44", "copy.flip_parity_release_L65",
                                  "copy.init_count_L24_2", "copy.dup_arrive_L44", "copy_expectfull.base",
                                  "copy_bcasttile.base", "copy_bcasttile_expecthalf.base"])
def test_the_per_cta_program_gets_the_gpu_verdict(tmp_path, name):
    """Read as each CTA's own program, the kernels get the GPU's verdict from the one-CTA rules:
    no error where the H200 ran correctly, an error where it hung or faulted (a deadlock.* for the
    ring mutants; the byte-count ones get expect.bytes_mismatch)."""
    case = load_case(CASES / f"{PREFIX}{name}")
    split = not name.startswith("copy_bcasttile")
    errors = _errors(check_text(tmp_path, _per_cta(_text(case), split))["findings"])
    if case.truth == "ok":
        assert not errors
    elif "expect" in name:
        assert "expect.bytes_mismatch" in errors
    else:
        assert any(k.startswith("deadlock.") for k in errors), errors
