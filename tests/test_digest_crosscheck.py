"""The digest cross-checked against `check` (issue 23's acceptance): no statement of `report
--format compact` is contradicted by a finding of a separate `check` run, or by its simulation.

The digest is what the skill turns into prose, so each statement it makes is held against the
verdict an engineer would get from `check` on the same input: the headline and counts, every
finding row, the coverage marks (a ✗ is a race: never on a kernel `check` calls clean), the
schedules' outcomes, the launch contract, the input points, and every "drop this wait" claim
(the line it names must be the one `check` confirmed by deleting it in a copy).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cli_support import run_cli
from corpus_units import CORPUS

REPO = Path(__file__).resolve().parent.parent
FIX = Path(__file__).parent / "fixtures" / "coverage"
PROJECT = [FIX / "gemm_while_zero_store.ttgir", FIX / "fa_packed_persistent.ttgir",
           REPO / "evals/gen/out_cluster/fbtriton.tlx_fa_bwd_2cta_v0.sm100.ttgir",
           REPO / "evals/gen/out_cluster/fbtriton.tlx_gemm_2cta_v0.sm100.ttgir"]
FAMILIES = ["tlx/_attn_bwd_mxf8_ws__BM1-128_BN1-128_ES2_DRN64_w8s1_hd128_stage3.ttgir",
            "gluon/attention_kernel__hd128_causal0_float16_N8192.ttgir"]


def _sections(digest: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    key = "head"
    for line in digest.splitlines():
        if line.startswith("## "):
            key = line[3:].split(":")[0].split(" ", 1)[-1] if line[3].isdigit() else line[3:].split(":")[0]
            out[key] = []
        else:
            out.setdefault(key, []).append(line)
    return out


def cross_check(path: Path) -> None:
    r = run_cli("check", str(path), "--format", "json")
    check = json.loads(r.stdout)
    digest = run_cli("report", str(path), "--format", "compact").stdout
    s = check["summary"]
    head = digest.splitlines()[0]
    verdict = "clean (judged)" if s["verdict"] == "clean" else s["verdict"]
    assert f"| {verdict}: {s['errors']} error, {s['warnings']} warning, {s['infos']} info" in head, (head, s)
    sec = _sections(digest)
    rows = [ln for ln in sec["findings"] if re.match(r"(ERROR|WARNING|INFO) ", ln)]
    said = sorted((ln.split()[0].lower(), ln.split()[1]) for ln in rows)
    assert said == sorted((f["severity"], f["kind"]) for f in check["findings"]), path
    # A ✗ coverage row is a race: never on a kernel check judges free of races.
    if not any(f["severity"] == "error" and f["kind"].startswith("race.") for f in check["findings"]):
        assert not [ln for ln in sec["coverage"] if "✗" in ln], path
    # Each schedule's outcome as the simulation had it.
    for run in (check.get("simulation") or {}).get("runs", []):
        assert f"{run['policy']} {run['outcome']}" in digest, (path, run)
    # The launch contract, word for word.
    for a in check.get("contract") or []:
        assert f"{a['statement']} ({a['source']}): {a['why']}" in digest
    # An input point the digest calls completed is named by no finding.
    for p in (check.get("input_points") or {}).get("points", []):
        if p["outcome"] in ("completed", "covered"):
            assert not p["findings"]
            assert not any(f.get("evidence", {}).get("input", {}).get("args") == p["args"] and
                           f["severity"] == "error" for f in check["findings"])
    # A "drop this wait" is the line check deleted in a copy and found changed nothing.
    for ln in rows:
        m = re.search(r"drop L(\d+) \(checked in a copy\)", ln)
        if m:
            line = int(m.group(1))
            claim = next(f for f in check["findings"] if f["evidence"].get("redundant_line") == line)
            assert claim["evidence"]["checked"]["result"] in ("confirmed", "re-aimed")
            assert claim["evidence"]["checked"]["deleted"] == line


@pytest.mark.parametrize("path", PROJECT, ids=lambda p: p.name)
def test_digest_agrees_with_check_on_project_kernels(path):
    cross_check(path)


@pytest.mark.parametrize("name", FAMILIES)
def test_digest_agrees_with_check_on_families_kernels(name):
    path = CORPUS / "families" / name
    if not path.is_file():
        pytest.skip("families corpus absent")
    cross_check(path)
