"""`audit PATH...`: every warp-specialized unit under some paths, as a CI gate.

A tree is built per test from hand-written fixtures (a kernel, a lit file with splits, a dump,
a gzip copy, a file that does not parse, a file without warp specialization, a mutant that
drops an arrive) so each row can be predicted; the corpus tests audit real directories and
validate SARIF against the OASIS 2.1.0 schema shipped in tests/schemas/.
"""

from __future__ import annotations

import gzip
import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from cli_support import FIXTURES, run_cli
from test_diff import renamed_recompile

jsonschema = pytest.importorskip("jsonschema")

REPO = Path(__file__).resolve().parents[1]
from corpus_units import CORPUS  # noqa: E402 - the one place the corpus is located
SARIF_SCHEMA = json.loads((Path(__file__).parent / "schemas" / "sarif-schema-2.1.0.json").read_text())
KERNEL = FIXTURES / "gemm_ws_persistent.ttgir"


def _drop_first_arrive(text: str) -> str:
    lines = text.split("\n")
    k = next(i for i, x in enumerate(lines) if "ttng.arrive_barrier" in x)
    return "\n".join(lines[:k] + lines[k + 1:])


def _truncated_in_region(text: str) -> str:
    """The kernel cut a few lines into its warp_specialize op: a region that never closes."""
    lines = text.split("\n")
    k = next(i for i, x in enumerate(lines) if "ttg.warp_specialize(" in x)
    return "\n".join(lines[: k + 3]) + "\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    (root / "sub" / "deeper").mkdir(parents=True)
    shutil.copy(KERNEL, root / "kernel.ttgir")
    shutil.copy(FIXTURES / "ws_lit_splits.mlir", root / "sub" / "lit.mlir")
    shutil.copy(FIXTURES / "gemm_pre_partition.mlir", root / "sub" / "pre.mlir")
    (root / "sub" / "deeper" / "kernel.ttgir.gz").write_bytes(gzip.compress(KERNEL.read_bytes()))
    (root / "sub" / "deeper" / "dropped.ttgir").write_text(_drop_first_arrive(KERNEL.read_text()))
    (root / "broken.mlir").write_text(_truncated_in_region(KERNEL.read_text()))
    (root / "plain.mlir").write_text("module {\n  tt.func @f() {\n    tt.return\n  }\n}\n")
    (root / "notes.json").write_text("{}")  # not IR by suffix: not a file to audit
    return root


def _audit(*args: str, cache: Path | None = None):
    extra = ["--cache-dir", str(cache)] if cache else ["--no-cache"]
    return run_cli("audit", *args, "--jobs", "1", *extra)


def _json(*args: str, cache: Path | None = None) -> dict:
    r = _audit(*args, "--format", "json", cache=cache)
    assert r.exception is None and r.exit_code in (0, 1), (r.exit_code, r.stderr)
    return r.json()


def test_every_file_is_accounted_for(tree):
    doc = _json(str(tree))
    assert list(doc)[:2] == ["schema", "input"] and doc["schema"] == "barrier-viz/audit/v1"
    files = sorted(str(p) for p in tree.rglob("*") if p.is_file() and p.suffix != ".json")
    assert sorted(doc["input"]["files"]) == files
    assert sorted({r["path"] for r in doc["rows"]}) == files
    by_path = {}
    for r in doc["rows"]:
        by_path.setdefault(Path(r["path"]).name, []).append(r)
    assert [r["status"] for r in by_path["plain.mlir"]] == ["no_ws"]
    broken = by_path["broken.mlir"]
    assert [r["status"] for r in broken] == ["error"]
    assert broken[0]["error"].startswith(str(tree / "broken.mlir") + ":") and "\n" not in broken[0]["error"]
    assert "Traceback" not in json.dumps(doc)
    lit = by_path["lit.mlir"]
    assert len(lit) >= 2 and all(r["unit"].startswith("split ") for r in lit)
    assert {r["status"] for r in by_path["kernel.ttgir"]} == {"ok"}
    assert by_path["kernel.ttgir.gz"][0]["findings"] == by_path["kernel.ttgir"][0]["findings"]
    dropped = by_path["dropped.ttgir"][0]
    assert any(f["severity"] == "error" for f in dropped["findings"])
    assert doc["summary"]["new_errors"] >= 1 and doc["summary"]["files"] == len(files)


def test_exit_code_is_the_gate(tree):
    assert _audit(str(tree)).exit_code == 1  # the dropped arrive is an error
    assert _audit(str(tree / "kernel.ttgir")).exit_code == 0
    bad = run_cli("audit", str(tree), "--jobs", "0", "--no-cache")
    assert bad.exit_code == 2 and bad.stderr.startswith("barrier-viz: error: ") and bad.stderr.count("\n") == 1


def test_text_table_and_summary(tree):
    r = _audit(str(tree))
    assert r.exception is None
    head = r.stdout.splitlines()[0].split()
    assert head[:3] == ["file", "unit", "kernel"] and "top" in head
    assert "result: FAIL (new error findings)" in r.stdout
    assert "deadlock." in r.stdout or "race." in r.stdout
    assert r.stderr == ""  # no progress bar when not on a terminal


def test_output_is_deterministic_and_cached(tree, tmp_path):
    cache = tmp_path / "cache"
    first = _audit(str(tree), "--format", "json", cache=cache)
    second = _audit(str(tree), "--format", "json", cache=cache)
    assert first.stdout == second.stdout
    assert any(cache.rglob("*.json"))
    assert _audit(str(tree), "--format", "json").stdout == first.stdout  # --no-cache: same answer
    text = _audit(str(tree), cache=cache).stdout
    assert "cached" in text and " 0 checked" in text


def test_cache_dir_defaults_under_xdg(tree, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    r = run_cli("audit", str(tree / "kernel.ttgir"), "--jobs", "1")
    assert r.exit_code == 0
    assert list((tmp_path / "xdg" / "barrier-viz" / "audit").rglob("*.json"))


def test_stdin_list_of_paths(tree):
    listing = f"{tree / 'kernel.ttgir'}\n# a comment\n\n{tree / 'plain.mlir'}\n".encode()
    r = run_cli("audit", "-", "--format", "json", "--no-cache", "--jobs", "1", input=listing)
    assert r.exit_code == 0, r.stderr
    assert r.json()["input"]["files"] == [str(tree / "kernel.ttgir"), str(tree / "plain.mlir")]


def test_parallel_jobs_give_the_same_document(tree):
    one = _audit(str(tree), "--format", "json").stdout
    two = run_cli("audit", str(tree), "--format", "json", "--no-cache", "--jobs", "2").stdout
    assert one == two


def test_budget_overrun_is_reported_not_dropped(tree):
    doc = _json(str(tree / "kernel.ttgir"), str(tree / "sub" / "deeper" / "dropped.ttgir"), "--budget", "1")
    rows = [r for r in doc["rows"] if r["status"] != "no_ws"]
    assert len(rows) == 2 and all(r["status"] == "bound_reached" and r["note"] for r in rows)
    assert doc["summary"]["bound_reached"] == 2


def test_baseline_suppresses_known_findings_by_fingerprint(tree, tmp_path):
    base = tmp_path / "baseline.json"
    r = _audit(str(tree), "--write-baseline", str(base))
    assert r.exit_code == 1 and base.is_file()
    known = json.loads(base.read_text())
    assert known["schema"] == "barrier-viz/audit-baseline/v1"
    assert known["fingerprints"] and not any("%" in fp["fingerprint"] for fp in known["fingerprints"])  # no SSA names
    again = _audit(str(tree), "--baseline", str(base), "--format", "json")
    assert again.exit_code == 0, again.stdout
    doc = again.json()
    assert doc["summary"]["new_errors"] == 0 and doc["summary"]["baselined"] == doc["summary"]["errors"] + \
        doc["summary"]["warnings"] + doc["summary"]["infos"]
    # A recompile that renames everything and swaps barrier arrays keeps its fingerprints.
    dropped = tree / "sub" / "deeper" / "dropped.ttgir"
    dropped.write_text(renamed_recompile(dropped.read_text()))
    assert _audit(str(tree), "--baseline", str(base)).exit_code == 0
    # A new error elsewhere fails the gate.
    (tree / "new.ttgir").write_text(_drop_first_arrive(KERNEL.read_text()))
    assert _audit(str(tree), "--baseline", str(base)).exit_code == 1


def test_bad_baseline_is_usage_error(tree, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    r = _audit(str(tree), "--baseline", str(bad))
    assert r.exit_code == 2 and "not a barrier-viz baseline" in r.stderr and r.stderr.count("\n") == 1


def _sarif(*args: str) -> dict:
    r = _audit(*args, "--format", "sarif")
    assert r.exception is None
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, SARIF_SCHEMA)
    return doc


def test_sarif_validates_and_has_one_result_per_finding(tree):
    audit = _json(str(tree))
    doc = _sarif(str(tree))
    run = doc["runs"][0]
    findings = [(r["path"], f) for r in audit["rows"] for f in r["findings"]]
    assert len(run["results"]) == len(findings)
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    for res, (path, f) in zip(run["results"], findings):
        assert res["ruleId"] == f["kind"] and rules[res["ruleIndex"]] == f["kind"]
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"] == path and loc["region"]["startLine"] == f["lines"][0]
        assert res["partialFingerprints"]["barrierVizFingerprint/v1"] == f["fingerprint"]
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert any("broken.mlir" in n["message"]["text"] for n in notes)


def test_sarif_with_baseline_states(tree, tmp_path):
    base = tmp_path / "b.json"
    _audit(str(tree), "--write-baseline", str(base))
    (tree / "new.ttgir").write_text(_drop_first_arrive(KERNEL.read_text()))
    doc = _sarif(str(tree), "--baseline", str(base))
    states = {(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], r["baselineState"]) for r in doc["runs"][0]["results"]}
    assert (str(tree / "new.ttgir"), "new") in states and any(s == "unchanged" for _, s in states)


def test_junit_one_case_per_kernel(tree):
    audit = _json(str(tree))
    r = _audit(str(tree), "--format", "junit")
    root = ET.fromstring(r.stdout)
    cases = root.findall("./testsuite/testcase")
    checked = [row for row in audit["rows"] if row["status"] != "no_ws"]
    assert len(cases) == len(checked) == int(root.get("tests"))
    failing = [row for row in checked if row["status"] != "error" and any(f["severity"] == "error" for f in row["findings"])]
    assert int(root.get("failures")) == len(failing) >= 1
    assert int(root.get("errors")) == sum(1 for row in checked if row["status"] == "error") >= 1
    junitparser = pytest.importorskip("junitparser")
    xml = junitparser.JUnitXml.fromstring(r.stdout)
    assert sum(s.tests for s in xml) == len(cases)
    assert sum(s.failures for s in xml) == len(failing)


def test_output_file(tree, tmp_path):
    out = tmp_path / "audit.sarif"
    r = _audit(str(tree), "--format", "sarif", "--output", str(out))
    assert r.stdout == "" and f"wrote {out}" in r.stderr
    jsonschema.validate(json.loads(out.read_text()), SARIF_SCHEMA)


# -- corpus --------------------------------------------------------------------------------------
@pytest.mark.skipif(not (CORPUS / "gpu").is_dir(), reason="corpus not found (set BARRIER_VIZ_CORPUS)")
def test_corpus_gpu_and_nvws_lit(tmp_path):
    paths = [str(CORPUS / "gpu"), str(CORPUS / "lit" / "NVWS")]
    r = run_cli("audit", *paths, "--format", "sarif", "--no-cache", "--jobs", "2")
    assert r.exception is None and r.exit_code in (0, 1), r.stderr
    jsonschema.validate(json.loads(r.stdout), SARIF_SCHEMA)
    doc = run_cli("audit", *paths, "--format", "json", "--no-cache", "--jobs", "2").json()
    files = sorted(str(p) for d in paths for p in Path(d).rglob("*") if p.is_file() and p.suffix != ".json")
    assert sorted({row["path"] for row in doc["rows"]}) == files
    assert not any("internal error" in (row.get("error") or "") for row in doc["rows"])
    # every hanging GPU mutant with warp specialization fails the gate
    truth = json.loads((CORPUS / "gpu" / "gemm_ws_sm90_stages4" / "truth.json").read_text())["results"]
    for row in doc["rows"]:
        name = Path(row["path"]).name
        if "gemm_ws_sm90_stages4" in row["path"] and truth.get(name) == "hang":
            assert any(f["severity"] == "error" for f in row["findings"]), name
