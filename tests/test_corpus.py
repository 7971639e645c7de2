"""Acceptance of issue 2 over the shared corpus of real IR (skipped when the corpus is absent).

* `inputs --format json` exits 0 on every file of lit/ and real/, dumps included.
* `ops --all --format json` reads every checked unit (see `corpus_units.checked_units`): it
  exits 0, prints one op per operation the reader built, and the reader recovered from no syntax
  error. Only lit files marked `XFAIL:` and splits that carry `expected-error` may be refused,
  and then only the clean way: exit 2 with a one-line message naming file, line and column.

Most checks call the command functions in-process (the corpus has ~470 units); a CliRunner run
per file and a few true subprocesses make sure the real entry points behave the same.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from barrier_viz.cli import app
from barrier_viz.commands.ops_cmd import ops_document
from barrier_viz.errors import InputError
from barrier_viz.inputs import Unit, load_unit
from barrier_viz.schemas import dump
from barrier_viz.session import Selection

from corpus_units import (
    CORPUS,
    checked_units,
    corpus_files,
    corpus_present,
    expects_errors,
    file_id,
    intentionally_invalid,
    is_dump,
    open_file,
    unit_counts,
)

pytestmark = pytest.mark.skipif(not corpus_present(), reason=f"corpus not found at {CORPUS} (set BARRIER_VIZ_CORPUS)")

FILES = corpus_files()
_ONE_LINE_ERROR = re.compile(r"^barrier-viz: error: .+:\d+:\d+: .+$")


def _runner() -> CliRunner:
    try:
        return CliRunner(mix_stderr=False)  # click < 8.2
    except TypeError:
        return CliRunner()


def _stderr(result) -> str:
    try:
        return result.stderr
    except ValueError:
        return ""


@pytest.mark.parametrize("path", FILES, ids=[file_id(p) for p in FILES] if FILES else None)
def test_inputs_json_lists_every_file(path: Path) -> None:
    result = _runner().invoke(app, ["inputs", str(path), "--format", "json"])
    assert result.exit_code == 0, _stderr(result) or result.output
    doc = json.loads(result.stdout)
    assert doc["schema"] == "barrier-viz/inputs/v1"
    assert doc["units"] and [u["index"] for u in doc["units"]] == list(range(len(doc["units"])))
    assert all(1 <= u["start_line"] <= u["end_line"] for u in doc["units"])


def _check_cli_ops(path: Path, unit: Unit) -> None:
    """`ops --all --format json --unit N` through typer: exit 0, or a clean exit 2 on a file
    that is meant to be refused."""
    result = _runner().invoke(app, ["ops", str(path), "--all", "--format", "json", "--unit", str(unit.index)])
    if result.exit_code == 2:
        assert intentionally_invalid(path) or expects_errors(unit), _stderr(result)
        message = _stderr(result).strip()
        assert "Traceback" not in message and len(message.splitlines()) == 1
        assert _ONE_LINE_ERROR.match(message), message
        return
    assert result.exit_code == 0, _stderr(result) or result.output
    assert json.loads(result.stdout)["input"]["unit_index"] == unit.index


@pytest.mark.parametrize("path", FILES, ids=[file_id(p) for p in FILES] if FILES else None)
def test_ops_all_reads_every_checked_unit(path: Path) -> None:
    inputs = open_file(path)
    units = checked_units(path)
    assert units, "no unit to check"
    if not is_dump(path):
        # Through the CLI first: it parses the last unit, and the loop below reuses that parse
        # from the per-process cache. Dumps are covered by the subprocess tests below, since
        # every CLI call rescans the whole 40 MB log.
        _check_cli_ops(path, units[-1])
    for unit in units:
        where = f"{file_id(path)} unit {unit.index} ({unit.label})"
        try:
            parsed = load_unit(unit)
        except InputError as exc:
            assert intentionally_invalid(path) or expects_errors(unit), f"{where}: {exc}"
            assert exc.line is not None and exc.line >= unit.start_line, f"{where}: {exc} has no position"
            continue
        counts = unit_counts(path, unit, parsed)
        if not (intentionally_invalid(path) or expects_errors(unit)):
            assert counts.warnings == 0, f"{where}: {parsed.warnings[0]}"
        doc = json.loads(dump(ops_document(Selection(inputs, unit, parsed, None), include_all=True, warnings=[])))
        assert doc["schema"] == "barrier-viz/ops/v1"
        assert len(doc["ops"]) == sum(counts.counts.values())
        assert all(unit.start_line <= op["line"] <= unit.end_line for op in doc["ops"]), where


def _subprocess(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "barrier_viz", *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    ("name", "unit"),
    [
        ("real/fb_fa_fwd_persist_dump_sm100.txt.gz", "doCodePartition"),
        ("real/fa_fwd_persist_sm100.ttgir", None),
        ("lit/NVWS/lower_aref.mlir", "0"),
    ],
)
def test_ops_all_subprocess(name: str, unit: str | None) -> None:
    path = CORPUS / name
    if not path.exists():
        pytest.skip(f"{name} not in this corpus")
    args = ["ops", str(path), "--all", "--format", "json"] + (["--unit", unit] if unit else [])
    proc = _subprocess(*args)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    doc = json.loads(proc.stdout)
    names = [op["name"] for op in doc["ops"]]
    assert names[0] == "builtin.module" and "tt.func" in names


def test_invalid_lit_file_fails_cleanly_in_a_subprocess() -> None:
    """An XFAIL lit file that is not MLIR as written: exit 2, one line, no traceback."""
    invalid = [p for p in FILES if not is_dump(p) and intentionally_invalid(p)]
    refused = []
    for path in invalid:
        for unit in open_file(path).units:
            try:
                load_unit(unit)
            except InputError:
                refused.append((path, unit.index))
    if not refused:
        pytest.skip("no refused unit in this corpus")
    path, index = refused[0]
    proc = _subprocess("ops", str(path), "--all", "--format", "json", "--unit", str(index))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert _ONE_LINE_ERROR.match(proc.stderr.strip()), proc.stderr


def _mask_sample() -> list[Path]:
    """Lit files (small, varied syntax) and a few final TTGIR files of each producer."""
    finals = {"fa_fwd_persist_sm100.ttgir", "gemm_ws_sm100.ttgir", "up_gemm_ws_sm100.ttgir"}
    return [p for p in FILES if p.parts[-2] != "real" or p.name in finals]


def test_type_body_mask_changes_no_atom_on_the_corpus() -> None:
    """The lexer blanks `!dialect.type<...>` bodies before tree-sitter reads them (a 2x speed-up
    on long comma lists); atoms and recovered errors must be exactly those of the raw text."""
    from barrier_viz.ir.lexer import lex

    checked = 0
    for path in _mask_sample():
        for unit in open_file(path).units:
            text = unit.text()
            masked_atoms, masked_diags = lex(text)
            raw_atoms, raw_diags = lex(text, mask=False)
            assert masked_atoms == raw_atoms, f"{file_id(path)} unit {unit.index}"
            assert [(d.message, d.line, d.column) for d in masked_diags] == [
                (d.message, d.line, d.column) for d in raw_diags
            ]
            checked += 1
    assert checked > 100
