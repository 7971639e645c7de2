"""`diff A B`: synchronization changes, with barriers matched by what they guard.

Acceptance inputs: every GPU mutant of the corpus against its base (the change named is the
mutated op, and nothing else), a recompile that differs only by renaming and barrier allocation
order (made here from a fixture and from a corpus kernel), and the packed-TMEM code-partition
snapshot with and without its fix (the two back-edges). Corpus tests skip when it is absent.
"""

from __future__ import annotations

import difflib
import random
import re
import sys
from pathlib import Path

import pytest

from barrier_viz.analyses.diff.sync_diff import NO_CHANGE, diff_models
from barrier_viz.analysis import Analysis
from barrier_viz.commands.diff_cmd import sync_model_of
from barrier_viz.session import select

from cli_support import FIXTURES, run_cli

REPO = Path(__file__).resolve().parents[1]
from corpus_units import CORPUS  # noqa: E402 - the one place the corpus is located
GPU = CORPUS / "gpu"
MUTANTS = sorted(p for p in GPU.glob("*/*_L*.ttgir")) if GPU.is_dir() else []
FIXTURE = FIXTURES / "gemm_ws_persistent.ttgir"
FA_CP = CORPUS / "real" / "fb-sm100__attn_fwd__persist_noncausal_hd128__doCodePartition.mlir"
needs = lambda p: pytest.mark.skipif(not p.exists(), reason=f"corpus path {p} not found (set BARRIER_VIZ_CORPUS)")  # noqa: E731
_OP = re.compile(r"^\s*(?:%[\w$.\-#:, %]+=\s*)?([a-z_]+\.[a-z_.0-9]+)")


def _model(path: Path, unit: str | None = None) -> dict:
    return sync_model_of(select(str(path), unit, None, require_function=True))


def _diff(a: Path, b: Path) -> dict:
    return diff_models(_model(a), _model(b))


# -- GPU mutants ---------------------------------------------------------------------------------
def _mutated(base: Path, mutant: Path) -> tuple[int, str, set[int]]:
    """The base line the mutant's name points at, the op written there, and the mutant's lines
    that the textual edit touched (its side of every differing hunk)."""
    line = int(re.search(r"_L(\d+)", mutant.name).group(1))
    a = base.read_text().split("\n")
    b = mutant.read_text().split("\n")
    op = _OP.match(a[line - 1]).group(1)
    touched: set[int] = set()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            touched.update(range(j1 + 1, j2 + 1))
    # A duplicated line is either copy: which one a diff calls inserted is arbitrary.
    for t in list(touched):
        for n in (t - 1, t + 1):
            if 1 <= n <= len(b) and b[n - 1] == b[t - 1]:
                touched.add(n)
    return line, op, touched


@pytest.mark.skipif(not MUTANTS, reason="GPU corpus not found (set BARRIER_VIZ_CORPUS)")
@pytest.mark.parametrize("mutant", MUTANTS, ids=[f"{m.parent.name}/{m.name}" for m in MUTANTS])
def test_gpu_mutant_diff_names_the_mutated_op_and_nothing_else(mutant):
    base = mutant.parent / "base.ttgir"
    line, op, touched = _mutated(base, mutant)
    d = _diff(base, mutant)
    assert not d["unchanged"] and d["changes"], "the edit must show as a synchronization change"
    for c in d["changes"]:
        assert line in c["lines_a"] or touched & set(c["lines_b"]), ("a change that is not the mutated op", c)
    assert any(c["op"] == op for c in d["changes"]), (op, [c["what"] for c in d["changes"]])
    # The op's own change comes first among the changes that name an op.
    first = next(c for c in d["changes"] if c["op"])
    assert first["op"] == op and (line in first["lines_a"] or touched & set(first["lines_b"]))


# -- renaming recompiles ---------------------------------------------------------------------------
_SSA = re.compile(r"%([A-Za-z_$.\-0-9]+)")


def _barrier_blocks(lines: list[str]) -> list[tuple[int, int]]:
    """(start, end) of each barrier array's set-up: its `local_alloc ... x1xi64` line and the
    `memdesc_index` / `init_barrier` lines that follow it directly."""
    blocks = []
    i = 0
    while i < len(lines):
        if "ttg.local_alloc" in lines[i] and "x1xi64" in lines[i]:
            j = i + 1
            while j < len(lines) and ("ttg.memdesc_index" in lines[j] or "ttng.init_barrier" in lines[j]):
                j += 1
            blocks.append((i, j))
            i = j
        else:
            i += 1
    return blocks


def renamed_recompile(text: str, seed: int = 7) -> str:
    """What a recompile that changes nothing but names and order looks like: the first two
    adjacent barrier arrays of equal set-up length swap places, and every SSA name is replaced
    (a random bijection, so no name keeps its number)."""
    lines = text.split("\n")
    blocks = _barrier_blocks(lines)
    for (s1, e1), (s2, e2) in zip(blocks, blocks[1:]):
        if e1 == s2 and e1 - s1 == e2 - s2:
            lines[s1:e2] = lines[s2:e2] + lines[s1:e1]
            break
    else:
        raise AssertionError("no two adjacent barrier arrays to swap")
    names = sorted(set(_SSA.findall("\n".join(lines))))
    fresh = [f"r{k}" for k in range(len(names))]
    random.Random(seed).shuffle(fresh)
    mapping = dict(zip(names, fresh))
    return _SSA.sub(lambda m: "%" + mapping[m.group(1)], "\n".join(lines))


def _renamed_pair(src: Path, tmp_path: Path) -> Path:
    out = tmp_path / ("renamed_" + src.name)
    out.write_text(renamed_recompile(src.read_text()))
    return out


def test_renamed_recompile_of_fixture_is_no_synchronization_change(tmp_path):
    renamed = _renamed_pair(FIXTURE, tmp_path)
    assert renamed.read_text() != FIXTURE.read_text()
    d = _diff(FIXTURE, renamed)
    assert d["unchanged"], d
    r = run_cli("diff", str(FIXTURE), str(renamed))
    assert r.exit_code == 0, r.stderr
    assert r.stdout.rstrip().endswith(NO_CHANGE)


@needs(GPU / "gemm_ws_sm90_stages4" / "base.ttgir")
def test_renamed_recompile_of_real_kernel_is_no_synchronization_change(tmp_path):
    base = GPU / "gemm_ws_sm90_stages4" / "base.ttgir"
    d = _diff(base, _renamed_pair(base, tmp_path))
    assert d["unchanged"], [c["what"] for c in d["changes"]]


def test_a_real_change_in_a_renamed_recompile_is_still_found(tmp_path):
    """Renaming must not hide a change: the renamed copy with one init count changed differs
    in exactly that init."""
    text = renamed_recompile(FIXTURE.read_text())
    lines = text.split("\n")
    k = next(i for i, x in enumerate(lines) if "ttng.init_barrier" in x)
    lines[k] = re.sub(r", 1 :", ", 2 :", lines[k], count=1)
    out = tmp_path / "renamed_changed.ttgir"
    out.write_text("\n".join(lines))
    d = _diff(FIXTURE, out)
    assert [c["kind"] for c in d["changes"]] == ["barrier.init_count_changed"]
    assert d["changes"][0]["lines_b"] == [k + 1]


# -- packed TMEM: the fix's back-edges -------------------------------------------------------------
@needs(FA_CP)
def test_packed_tmem_fix_diff_is_the_two_back_edges(tmp_path):
    sys.path.insert(0, str(Path(__file__).parent))
    from test_coverage import _fix_acquires, _without_lines

    fix = _fix_acquires(FA_CP)
    without = _without_lines(FA_CP, fix, tmp_path)
    d = _diff(FA_CP, without)
    edges = [c for c in d["changes"] if c["kind"].startswith("edge.")]
    assert [c["kind"] for c in edges] == ["edge.removed", "edge.removed"]
    assert all("backward edge" in c["what"] for c in edges)
    # each removed back-edge is one of the fix's acquires
    assert sorted(next(iter(set(c["lines_a"]) & fix)) for c in edges) == sorted(fix)
    removed = [c for c in d["changes"] if c["kind"] == "use.removed"]
    assert sorted(c["lines_a"][0] for c in removed) == sorted(fix)
    assert {c["op"] for c in removed} == {"nvws.producer_acquire"}
    assert len(d["changes"]) == 4
    assert {f["kind"] for f in d["findings_appeared"]} == {"race.packed_tmem_overwrite"}
    # and the other way round: the fix adds them
    back = _diff(without, FA_CP)
    assert [c["kind"] for c in back["changes"] if c["kind"].startswith("edge.")] == ["edge.added", "edge.added"]


# -- the command -----------------------------------------------------------------------------------
def test_diff_formats_and_exit_codes(tmp_path):
    changed = tmp_path / "changed.ttgir"
    text = FIXTURE.read_text().split("\n")
    k = next(i for i, x in enumerate(text) if "ttng.init_barrier" in x)
    text[k] = text[k].replace(", 1 :", ", 3 :", 1)
    changed.write_text("\n".join(text))
    r = run_cli("diff", str(FIXTURE), str(changed))
    assert r.exit_code == 1 and "barrier.init_count_changed" in r.stdout and f"A:{k + 1} B:{k + 1}" in r.stdout
    j = run_cli("diff", str(FIXTURE), str(changed), "--format", "json")
    doc = j.json()
    assert list(doc)[:2] == ["schema", "input"] and doc["schema"] == "barrier-viz/diff/v1"
    assert doc["summary"]["changes"] == 1 and doc["changes"][0]["a"] == 1 and doc["changes"][0]["b"] == 3
    md = run_cli("diff", str(FIXTURE), str(changed), "--format", "md")
    assert md.stdout.startswith("# Synchronization diff") and "| ~ | `barrier.init_count_changed` |" in md.stdout
    # deterministic
    assert run_cli("diff", str(FIXTURE), str(changed), "--format", "json").stdout == j.stdout


def test_diff_two_units_of_one_file():
    lit = FIXTURES / "ws_lit_splits.mlir"
    same = run_cli("diff", str(lit), "--unit-a", "0", "--unit-b", "0")
    assert same.exit_code == 0 and NO_CHANGE in same.stdout


def test_diff_bad_usage_is_one_line_exit_2(tmp_path):
    r = run_cli("diff", str(FIXTURE))
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "--unit-b" in r.stderr
    r = run_cli("diff", str(FIXTURE), str(tmp_path / "missing.ttgir"))
    assert r.exit_code == 2 and r.stderr.startswith("barrier-viz: error: ") and "no such file" in r.stderr


def test_sync_model_uses_one_analysis():
    a = Analysis(select(str(FIXTURE), None, None, require_function=True))
    from barrier_viz.analyses.diff.sync_model import build_sync_model

    m = build_sync_model(a)
    assert m["barriers"] and all(b["identity"] for b in m["barriers"])
    assert len({b["identity"] for b in m["barriers"]}) == len(m["barriers"])


EVAL_CP = REPO / "evals" / "cases" / "fbtriton-metaws.attn_fwd_persistent_v0.sm100.dump_doCodePartition" / "input.txt.gz"


def test_eval_code_partition_snapshot_back_edge_removal_is_named(tmp_path):
    """The eval snapshot's packed-TMEM rows ordered by a back-edge: deleting the writer's wait
    of each such edge shows as that wait removed and that backward edge removed."""
    import gzip

    from barrier_viz.analyses.structure.coverage import coverage

    snap = tmp_path / "snapshot.mlir"
    snap.write_bytes(gzip.decompress(EVAL_CP.read_bytes()))
    cov = coverage(Analysis(select(str(snap), None, None, require_function=True)))
    waits = {r.evidence[0] for t in cov.packed for r in t.rows
             if not r.owner and r.status == "ordered" and "backward edge" in r.reason}
    assert waits
    lines = snap.read_text().split("\n")
    without = tmp_path / "without.mlir"
    without.write_text("\n".join(x for i, x in enumerate(lines, 1) if i not in waits))
    d = _diff(snap, without)
    removed = [c for c in d["changes"] if c["kind"] == "use.removed"]
    edges = [c for c in d["changes"] if c["kind"].startswith("edge.")]
    assert sorted(c["lines_a"][0] for c in removed) == sorted(waits)
    assert len(edges) == len(waits) and all(c["kind"] == "edge.removed" and "backward edge" in c["what"] for c in edges)
    assert all(set(c["lines_a"]) & waits for c in edges)
