"""Input units: what each input form holds, which unit a command analyses, and where lines point.

Every expectation is derived from the fixture text itself (header and split lines are found by
searching), so the tests say what a unit is, not which line numbers a fixture happens to have.
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from barrier_viz.errors import InputError
from barrier_viz.inputs import InputSet, default_unit, load_unit, open_input, select_unit
from cli_support import FIXTURE_FILES, FIXTURES, line_of, run_cli

WS_FINAL = FIXTURES / "gemm_ws_persistent.ttgir"
PRE_PARTITION = FIXTURES / "gemm_pre_partition.mlir"
DUMP = FIXTURES / "copy_ws_dump.txt"
LIT = FIXTURES / "ws_lit_splits.mlir"
GENERIC = FIXTURES / "generic_form.mlir"
AREF = FIXTURES / "aref_gemm.mlir"


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def _marker_lines(path: Path, predicate) -> list[int]:
    return [n for n, line in enumerate(_lines(path), 1) if predicate(line)]


# -- every fixture ---------------------------------------------------------------------------------
@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_every_fixture_unit_parses_without_warnings(path: Path) -> None:
    """The fixtures are the project's own examples: each unit must read cleanly."""
    found = open_input(str(path))
    assert found.units
    for unit in found.units:
        run = run_cli("ops", "--all", str(path), "--unit", str(unit.index), "--format", "json")
        assert run.exit_code == 0, run.stderr
        assert run.stderr == ""
        doc = run.json()
        assert doc["warnings"] == []
        assert doc["ops"], f"unit {unit.index} of {path.name} has no operations"
        # Every op line lies inside the unit's line range in the file.
        assert all(unit.start_line <= op["line"] <= unit.end_line for op in doc["ops"])


@pytest.mark.parametrize(
    ("path", "functions", "flags"),
    [
        (WS_FINAL, ["gemm_ws_persistent"], ["ttgir", "warp_specialize", "async_task_id"]),
        (PRE_PARTITION, ["gemm_pre_partition"], ["ttgir", "async_task_id"]),
        (GENERIC, ["generic_barriers"], ["ttgir", "async_task_id"]),
        (AREF, ["gemm_aref"], ["ttgir", "ttg_partition", "aref"]),
    ],
    ids=lambda v: v.name if isinstance(v, Path) else None,
)
def test_single_unit_files(path: Path, functions: list[str], flags: list[str]) -> None:
    found = open_input(str(path))
    assert found.kind == "file" and not found.compressed
    assert found.total_bytes == path.stat().st_size
    [unit] = found.units
    assert (unit.index, unit.kind, unit.label) == (0, "file", path.name)
    assert (unit.start_line, unit.end_line) == (1, len(_lines(path)))
    assert unit.bytes == path.stat().st_size
    assert unit.functions == functions
    assert unit.flags == flags
    assert unit.text() == path.read_bytes()


def test_dump_snapshots_labels_ranges_and_flags() -> None:
    headers = _marker_lines(DUMP, lambda line: line.startswith("// -----//"))
    assert len(headers) == 3
    found = open_input(str(DUMP))
    assert [u.kind for u in found.units] == ["snapshot"] * 3
    assert [u.label for u in found.units] == [
        "Before TritonGPUCoalesce",
        "WarpSpec After doCodePartition",
        "Before CanonicalizeLLVMIR @copy_ws",  # the operation's symbol is part of the label
    ]
    # A snapshot runs from the line after its header to the line before the next header; the
    # stderr noise before the first header is not a unit.
    ends = [h - 1 for h in headers[1:]] + [len(_lines(DUMP))]
    assert [(u.start_line, u.end_line) for u in found.units] == [(h + 1, e) for h, e in zip(headers, ends)]
    assert [u.flags for u in found.units] == [
        ["ttgir"],
        ["ttgir", "warp_specialize", "async_task_id", "nvws_tokens"],
        ["llvm"],
    ]
    assert all(u.functions == ["copy_ws"] for u in found.units)
    assert found.units[1].text().startswith(b"#blocked")


def test_dump_line_numbers_refer_to_the_file() -> None:
    run = run_cli("ops", str(DUMP), "--unit", "doCodePartition", "--format", "json")
    assert run.exit_code == 0, run.stderr
    ops = {op["name"]: op for op in run.json()["ops"]}
    assert ops["nvws.consumer_wait"]["line"] == line_of(DUMP, "nvws.consumer_wait")
    assert ops["nvws.producer_acquire"]["line"] == line_of(DUMP, "nvws.producer_acquire")


def test_lit_splits_ignore_check_lines() -> None:
    splits = _marker_lines(LIT, lambda line: line == "// -----")
    assert len(splits) == 2
    found = open_input(str(LIT))
    assert [u.kind for u in found.units] == ["split"] * 3
    assert [u.label for u in found.units] == [
        "split 0 (@producer_consumer)",
        "split 1 (@ping)",
        "split 2 (@helper, @caller)",
    ]
    assert [(u.start_line, u.end_line) for u in found.units] == [
        (1, splits[0] - 1),
        (splits[0] + 1, splits[1] - 1),
        (splits[1] + 1, len(_lines(LIT))),
    ]
    # CHECK lines mention ttg.warp_specialize and barrier ops; only real IR sets flags.
    assert [u.flags for u in found.units] == [["ttgir", "async_task_id"], ["ttgir", "warp_specialize"], ["ttgir"]]

    # Split 1's CHECK lines name wait/arrive/acquire ops that must not be counted.
    first = run_cli("ops", str(LIT), "--unit", "0", "--format", "json").json()["ops"]
    assert not [op for op in first if op["name"].startswith(("ttng.", "nvws."))]
    second = run_cli("ops", str(LIT), "--unit", "1", "--format", "json").json()["ops"]
    names = [op["name"] for op in second]
    assert names.count("ttng.wait_barrier") == 1 and names.count("ttng.arrive_barrier") == 1
    wait = next(op for op in second if op["name"] == "ttng.wait_barrier")
    assert wait["line"] == line_of(LIT, "ttng.wait_barrier %bar_0")


def test_several_modules_in_one_file(tmp_path: Path) -> None:
    """`cat a.mlir b.mlir`: one unit per module; trailing `#locN` aliases stay with their module
    and the next module keeps its leading attribute aliases."""
    both = tmp_path / "both.mlir"
    both.write_bytes(PRE_PARTITION.read_bytes() + AREF.read_bytes())
    found = open_input(str(both))
    first_len = len(_lines(PRE_PARTITION))
    assert [(u.kind, u.label) for u in found.units] == [
        ("module", "module 0 (@gemm_pre_partition)"),
        ("module", "module 1 (@gemm_aref)"),
    ]
    assert [(u.start_line, u.end_line) for u in found.units] == [(1, first_len), (first_len + 1, first_len + len(_lines(AREF)))]
    assert found.units[1].text() == AREF.read_bytes()
    run = run_cli("ops", str(both), "--unit", "1", "--format", "json")
    create = next(op for op in run.json()["ops"] if op["name"] == "nvws.aref.create")
    assert create["line"] == first_len + line_of(AREF, "nvws.aref.create")
    assert create["loc_name"] == "a"  # `#loc2 = loc("a"(#loc))`, defined after the module


def test_functions_and_func_option() -> None:
    run = run_cli("ops", "--all", str(LIT), "--unit", "2", "--func", "caller", "--format", "json")
    assert run.exit_code == 0, run.stderr
    doc = run.json()
    assert doc["input"]["function"] == "caller"
    assert {op["function"] for op in doc["ops"] if op["name"] != "tt.func"} == {"caller"}
    assert "tt.call" in [op["name"] for op in doc["ops"]]
    with_at = run_cli("ops", "--all", str(LIT), "--unit", "2", "--func", "@helper", "--format", "json").json()
    assert "arith.addi" in [op["name"] for op in with_at["ops"]]
    assert "tt.call" not in [op["name"] for op in with_at["ops"]]


# -- selection -------------------------------------------------------------------------------------
def test_select_by_index_label_and_last_ws() -> None:
    found = open_input(str(DUMP))
    assert select_unit(found, "0").label == "Before TritonGPUCoalesce"
    assert select_unit(found, "-1").label == "Before CanonicalizeLLVMIR @copy_ws"
    assert select_unit(found, "doCodePartition").index == 1
    assert select_unit(found, "docodepartition").index == 1  # case-insensitive substring
    assert select_unit(found, "Before TritonGPUCoalesce").index == 0  # exact label
    assert select_unit(found, "last-ws").index == 1
    assert select_unit(found, None).index == 1


def test_exact_label_wins_over_substring(tmp_path: Path) -> None:
    shutil.copy(WS_FINAL, tmp_path / "k.ttgir")
    with gzip.open(tmp_path / "k.ttgir.gz", "wb") as fh:
        fh.write(WS_FINAL.read_bytes())
    found = open_input(str(tmp_path))
    assert [u.label for u in found.units] == ["k.ttgir", "k.ttgir.gz"]
    assert select_unit(found, "k.ttgir").label == "k.ttgir"  # also a substring of the .gz label
    assert select_unit(found, ".gz").label == "k.ttgir.gz"


def test_ambiguous_and_unknown_selectors() -> None:
    found = open_input(str(DUMP))
    with pytest.raises(InputError) as exc:
        select_unit(found, "Before")
    assert "ambiguous" in exc.value.message
    assert "0: Before TritonGPUCoalesce" in exc.value.message
    assert "2: Before CanonicalizeLLVMIR @copy_ws" in exc.value.message
    with pytest.raises(InputError, match="no such unit"):
        select_unit(found, "3")
    with pytest.raises(InputError, match="matches no unit"):
        select_unit(found, "doTokenLowering")
    lit = open_input(str(LIT))
    without_ws = InputSet(lit.display, lit.kind, lit.units[2:], 0)  # split 3 only: no partitions
    with pytest.raises(InputError, match="no unit has warp specialization"):
        select_unit(without_ws, "last-ws")


def _dump_text(*snapshots: tuple[str, str]) -> str:
    return "".join(f"// -----// IR Dump Before {name}: {name.lower()} ('builtin.module' operation) //----- //\n{body}\n" for name, body in snapshots)


def test_default_prefers_last_ttgir_with_ws_and_never_llvm(tmp_path: Path) -> None:
    ttgir_ws = "module {\n  tt.func @k() {\n    ttg.warp_specialize() default {\n      ttg.warp_yield\n    } : () -> ()\n    tt.return\n  }\n}\n"
    ttgir_tasks = "module {\n  tt.func @k() {\n    %c = arith.constant {async_task_id = array<i32: 1>} 0 : i32\n    tt.return\n  }\n}\n"
    llvm_ws = "module {\n  llvm.func @k() {\n    ttg.warp_specialize() default {\n      ttg.warp_yield\n    } : () -> ()\n    llvm.return\n  }\n}\n"
    dump = tmp_path / "dump.txt"
    dump.write_text(_dump_text(("A", ttgir_ws), ("B", ttgir_tasks), ("C", llvm_ws), ("D", ttgir_tasks.replace("async_task_id", "other"))))
    found = open_input(str(dump))
    assert [u.flags for u in found.units] == [
        ["ttgir", "warp_specialize"],
        ["ttgir", "async_task_id"],
        ["warp_specialize", "llvm"],
        ["ttgir"],
    ]
    assert default_unit(found.units).label == "Before B"  # last TTGIR with ws; LLVM skipped
    assert select_unit(found, "last-ws").label == "Before B"


def test_default_without_ws_is_the_first_unit(tmp_path: Path) -> None:
    lit = tmp_path / "plain.mlir"
    body = "module {\n  tt.func @f() {\n    tt.return\n  }\n}\n"
    lit.write_text(f"// RUN: triton-opt %s -split-input-file | FileCheck %s\n{body}// -----\n{body}")
    found = open_input(str(lit))
    assert len(found.units) == 2
    assert default_unit(found.units).index == 0


# -- input forms -----------------------------------------------------------------------------------
def test_stdin_gives_the_same_units_as_the_file() -> None:
    data = DUMP.read_bytes()
    found = open_input("-", stdin=lambda: data)
    assert found.kind == "stdin" and found.display == "<stdin>"
    on_disk = open_input(str(DUMP))
    assert [(u.label, u.start_line, u.end_line, u.flags) for u in found.units] == [
        (u.label, u.start_line, u.end_line, u.flags) for u in on_disk.units
    ]
    run = run_cli("ops", "-", "--unit", "doCodePartition", "--format", "json", input=data)
    assert run.exit_code == 0, run.stderr
    doc = run.json()
    assert doc["input"]["path"] == "<stdin>"
    assert [op["line"] for op in doc["ops"]] == [
        op["line"] for op in run_cli("ops", str(DUMP), "--unit", "doCodePartition", "--format", "json").json()["ops"]
    ]


def test_gzip_file_and_gzip_on_stdin(tmp_path: Path) -> None:
    """The .gz copy is made here, not committed: the fixture itself stays readable."""
    gz = tmp_path / "copy_ws_dump.txt.gz"
    gz.write_bytes(gzip.compress(DUMP.read_bytes()))
    found = open_input(str(gz))
    assert found.compressed and found.total_bytes == gz.stat().st_size
    plain = open_input(str(DUMP))
    assert [(u.label, u.start_line, u.end_line, u.bytes) for u in found.units] == [
        (u.label, u.start_line, u.end_line, u.bytes) for u in plain.units
    ]
    assert load_unit(found.units[1]).functions()[0].line == load_unit(plain.units[1]).functions()[0].line
    run = run_cli("inputs", "-", "--format", "json", input=gz.read_bytes())
    assert run.exit_code == 0, run.stderr
    assert [u["label"] for u in run.json()["units"]] == [u.label for u in plain.units]


def test_triton_dump_directory_defaults_to_ttgir(tmp_path: Path) -> None:
    """A ~/.triton/dump/<hash>/ folder: .ttir and .ttgir are units, .llir/.json are not MLIR."""
    (tmp_path / "gemm.json").write_text('{"name": "gemm_ws_persistent", "num_warps": 4}\n')
    (tmp_path / "gemm.llir").write_text("; ModuleID = 'LLVMDialectModule'\ndefine void @gemm() {\n  ret void\n}\n")
    shutil.copy(WS_FINAL, tmp_path / "gemm.ttgir")
    # The .ttir sorts last and carries task ids, yet the .ttgir is what a user means.
    shutil.copy(PRE_PARTITION, tmp_path / "gemm.ttir")
    found = open_input(str(tmp_path))
    assert found.kind == "directory"
    assert [u.label for u in found.units] == ["gemm.ttgir", "gemm.ttir"]
    assert [Path(u.path).name for u in found.units] == ["gemm.ttgir", "gemm.ttir"]
    assert default_unit(found.units).label == "gemm.ttgir"
    doc = run_cli("inputs", str(tmp_path), "--format", "json").json()
    assert [u["default"] for u in doc["units"]] == [True, False]
    ops = run_cli("ops", str(tmp_path), "--format", "json").json()
    assert ops["input"]["unit"] == "gemm.ttgir"


def test_directory_skips_unreadable_files(tmp_path: Path) -> None:
    shutil.copy(WS_FINAL, tmp_path / "a.ttgir")
    (tmp_path / "b.txt").write_bytes(b"\x00\x01binary log")
    found = open_input(str(tmp_path))
    assert [u.label for u in found.units] == ["a.ttgir"]


def test_parsed_units_are_cached() -> None:
    unit = open_input(str(WS_FINAL)).units[0]
    assert load_unit(unit) is load_unit(open_input(str(WS_FINAL)).units[0])


# Ops the MLIR printer does not write, so `ops --all` cannot list them.
_HIDDEN_OPS = {"ttg.warp_specialize.partitions", "scf.yield"}


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_fixtures_are_valid_for_tritons_own_parser(path: Path, tmp_path: Path) -> None:
    """The fixtures are hand-written; Triton's C++ parser (with its verifiers) is the judge of
    their syntax, and its per-name op counts must equal ours. Skipped without a triton wheel
    (install the `gen` extra)."""
    libtriton = pytest.importorskip("triton._C.libtriton")
    import collections

    for unit in open_input(str(path)).units:
        unit_file = tmp_path / f"unit{unit.index}.mlir"
        unit_file.write_bytes(unit.text())
        ctx = libtriton.ir.context()
        libtriton.ir.load_dialects(ctx)
        if hasattr(libtriton, "nvidia"):  # ttng/nvws dialects live in the NVIDIA backend
            libtriton.nvidia.load_dialects(ctx)
        module = libtriton.ir.parse_mlir_module(str(unit_file), ctx)
        theirs: collections.Counter[str] = collections.Counter()
        module.walk(lambda op: theirs.update([op.get_name()]))
        ours = collections.Counter(op.name for op in load_unit(unit).walk())
        differ = {name for name in theirs.keys() | ours.keys() if theirs[name] != ours[name]}
        assert differ <= _HIDDEN_OPS, (unit.label, {n: (theirs[n], ours[n]) for n in differ})
