"""The CI surfaces: the composite GitHub Action (`action.yml`, whose audit step is
`scripts/action-audit.sh`), `audit --summary` (the job summary) and the pre-commit hook.

The action's script is run here as the runner would run it, with the INPUT_* variables the
action sets and GITHUB_STEP_SUMMARY / GITHUB_OUTPUT pointing at files: nothing needs the
network (the steps that do, setup-python and the SARIF upload, are GitHub's own actions and
are checked for how they are wired)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from cli_support import run_cli

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "action-audit.sh"
BUGGY = "tests/fixtures/coverage/gemm_while_zero_store.ttgir"  # two error findings
PATHS = "tests/fixtures/coverage\ntests/fixtures/cluster"


def action() -> dict:
    return yaml.safe_load((REPO / "action.yml").read_text())


def run_script(tmp_path: Path, **inputs: str) -> tuple[int, str, dict[str, str], Path]:
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs.txt"
    summary.write_text("earlier step\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_"))}
    env.update({"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(outputs), "XDG_CACHE_HOME": str(tmp_path / "cache"),
                "BARRIER_VIZ": f"{shlex.quote(sys.executable)} -m barrier_viz", "INPUT_JOBS": "1",
                "INPUT_SARIF": str(tmp_path / "out.sarif"),
                "PYTHONPATH": os.pathsep.join(p for p in (str(REPO / "tools"), env.get("PYTHONPATH", "")) if p)})
    env.update({f"INPUT_{k.upper()}": v for k, v in inputs.items()})
    proc = subprocess.run(["bash", str(SCRIPT)], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    published = dict(line.split("=", 1) for line in outputs.read_text().splitlines()) if outputs.exists() else {}
    return proc.returncode, summary.read_text(), published, tmp_path / "out.sarif"


def test_action_is_a_composite_wired_to_its_script_and_the_sarif_upload() -> None:
    a = action()
    assert a["runs"]["using"] == "composite"
    steps = a["runs"]["steps"]
    audit = next(s for s in steps if s.get("id") == "audit")
    assert "scripts/action-audit.sh" in audit["run"] and SCRIPT.is_file()
    upload = next(s for s in steps if "upload-sarif" in s.get("uses", ""))
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["with"]["sarif_file"] == "${{ steps.audit.outputs.sarif }}" and "always()" in upload["if"]
    assert any("pip install" in s.get("run", "") and "github.action_path" in s["run"] for s in steps)
    text = (REPO / "action.yml").read_text()
    for name in set(re.findall(r"inputs\.([a-z-]+)", text)):
        assert name in a["inputs"], name
    for key in ("paths", "baseline", "budget", "jobs", "sarif"):  # every input the script reads is passed
        assert audit["env"][f"INPUT_{key.upper()}"] == "${{ inputs.%s }}" % key
    assert all(s.get("shell") == "bash" for s in steps if "run" in s)


def test_script_audits_writes_sarif_summary_and_outputs(tmp_path: Path) -> None:
    rc, summary, published, sarif = run_script(tmp_path, paths=PATHS)
    assert rc == 1, summary
    assert published == {"exit-code": "1", "sarif": str(sarif)}
    doc = json.loads(sarif.read_text())
    assert doc["version"] == "2.1.0"
    kinds = sorted(r["ruleId"] for r in doc["runs"][0]["results"] if r["level"] == "error")
    assert kinds == ["deadlock.parity_cadence", "race.redundant_zero_store"]
    assert summary.startswith("earlier step\n"), "the summary is appended to, never overwritten"
    assert "## barrier-viz audit: FAIL: 2 new error finding(s)" in summary
    assert "| file | unit | kernel | status | errors | warnings | top finding |" in summary
    assert f"| {BUGGY} |" in summary and "| no_ws |" in summary
    worst = summary.split("### Worst findings", 1)[1]
    assert worst.index("deadlock.parity_cadence") < worst.index("race.redundant_zero_store")
    assert f"`{BUGGY}:19`" in worst and "(new)" in worst


def test_script_with_a_baseline_passes_and_says_baselined(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    baseline = tmp_path / "known.json"
    monkeypatch.chdir(REPO)
    r = run_cli("audit", "tests/fixtures/coverage", "--no-cache", "--jobs", "1", "--write-baseline", str(baseline))
    assert r.exit_code == 1 and baseline.is_file(), r.stderr
    rc, summary, published, _ = run_script(tmp_path, paths="tests/fixtures/coverage", baseline=str(baseline))
    assert rc == 0 and published["exit-code"] == "0"
    assert "## barrier-viz audit: ok: no new error finding" in summary and "(baselined)" in summary


def test_script_without_paths_is_a_usage_error(tmp_path: Path) -> None:
    rc, _, published, _ = run_script(tmp_path, paths="")
    assert rc == 2 and published == {}


def test_pre_commit_hook_audits_ir_files(monkeypatch: pytest.MonkeyPatch) -> None:
    (hook,) = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert hook["language"] == "python" and hook["entry"].startswith("barrier-viz audit")
    files = re.compile(hook["files"])
    for name in ("test/Hopper/ws.mlir", "dump/kernel.ttgir", "k.ttir", "k.ttgir.gz"):
        assert files.search(name), name
    for name in ("setup.py", "kernel.ptx", "README.md", "k.llir"):
        assert not files.search(name), name
    # pre-commit appends the staged file names to the entry.
    monkeypatch.chdir(REPO)
    args = shlex.split(hook["entry"])[1:]
    assert run_cli(*args, BUGGY, "tests/fixtures/gemm_ws_persistent.ttgir").exit_code == 1
    assert run_cli(*args, "tests/fixtures/gemm_ws_persistent.ttgir").exit_code == 0
