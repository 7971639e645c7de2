"""Invalid IR is diagnosed where it is wrong, and never turned into a verdict (issue 14, points
5 and 6), and no command crashes on any bad input (the acceptance sweep, in miniature)."""

from __future__ import annotations

import gzip
import re
from pathlib import Path
from typing import Callable

import pytest

from cli_support import FIXTURE_FILES, FIXTURES, line_of, run_cli

WS_FINAL = FIXTURES / "gemm_ws_persistent.ttgir"
LIT = FIXTURES / "ws_lit_splits.mlir"
WARNING = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): warning: (?P<what>.+)$")
ERROR = re.compile(r"^barrier-viz: error: (?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?P<what>.+)$")


def _lines() -> list[str]:
    return WS_FINAL.read_text().splitlines(keepends=True)


def _write(tmp: Path, name: str, lines: list[str]) -> Path:
    path = tmp / name
    path.write_text("".join(lines))
    return path


def _index(lines: list[str], needle: str) -> int:
    """0-based index of the first non-comment line containing `needle`."""
    return next(i for i, line in enumerate(lines) if needle in line and not line.lstrip().startswith("//"))


# -- SSA problems --------------------------------------------------------------------------------
def undefined_barrier(tmp: Path) -> tuple[Path, int, int, str]:
    """The default partition's first wait names a barrier that nothing defines."""
    lines = _lines()
    k = _index(lines, "ttng.wait_barrier %")
    name = re.search(r"ttng\.wait_barrier (%[\w]+)", lines[k]).group(1)
    lines[k] = lines[k].replace(f"ttng.wait_barrier {name}", "ttng.wait_barrier %ghost_bar", 1)
    return _write(tmp, "undefined_barrier.ttgir", lines), k + 1, lines[k].index("%ghost_bar") + 1, \
        "use of undefined value %ghost_bar"


def use_before_def(tmp: Path) -> tuple[Path, int, int, str]:
    """A barrier slot's `memdesc_index` is moved after the `init_barrier` that uses it."""
    lines = _lines()
    k = _index(lines, "%full_1 = ttg.memdesc_index")
    index_line = lines.pop(k)
    lines.insert(k + 1, index_line)  # now after `ttng.init_barrier %full_1`
    return _write(tmp, "use_before_def.ttgir", lines), k + 1, lines[k].index("%full_1") + 1, \
        f"%full_1 is used before its definition at line {k + 2}"


def duplicate_definition(tmp: Path) -> tuple[Path, int, int, str]:
    """`%empty` is allocated a second time, after a use of the first."""
    lines = _lines()
    k = _index(lines, "%empty = ttg.local_alloc")
    later = _index(lines, "ttng.init_barrier %empty_3")
    lines.insert(later + 1, lines[k])
    return _write(tmp, "duplicate.ttgir", lines), later + 2, lines[k].index("%empty") + 1, \
        f"%empty is defined twice (first at line {k + 1})"


SSA_CASES = [undefined_barrier, use_before_def, duplicate_definition]


@pytest.mark.parametrize("case", SSA_CASES, ids=lambda c: c.__name__)
def test_ssa_problem_is_a_warning_at_its_position(case, tmp_path: Path) -> None:
    path, line, col, what = case(tmp_path)
    run = run_cli("ops", str(path))
    assert run.exit_code == 0, run.stderr
    warnings = [WARNING.match(w) for w in run.stderr.splitlines()]
    assert warnings and all(warnings), run.stderr
    first = warnings[0]
    assert (first["file"], int(first["line"]), int(first["col"])) == (str(path), line, col)
    assert first["what"].startswith(what), first["what"]


@pytest.mark.parametrize("case", SSA_CASES, ids=lambda c: c.__name__)
def test_ssa_problem_is_an_error_with_strict(case, tmp_path: Path) -> None:
    path, line, col, what = case(tmp_path)
    run = run_cli("check", str(path), "--strict")
    assert run.exit_code == 2
    lines = run.stderr.splitlines()
    assert len(lines) == 1
    m = ERROR.match(lines[0])
    assert m and (int(m["line"]), int(m["col"])) == (line, col) and m["what"].startswith(what)


@pytest.mark.parametrize("case", [undefined_barrier, use_before_def], ids=lambda c: c.__name__)
def test_no_verdict_rests_on_an_unresolved_value(case, tmp_path: Path) -> None:
    """Before: `check` reported a race (undefined barrier) or a deadlock (use before definition)
    that the kernel does not have. Now each such finding is a limit, and nothing is an error."""
    path, line, _, _ = case(tmp_path)
    doc = run_cli("check", str(path), "--format", "json").json()
    assert doc["summary"]["errors"] == 0, [f["kind"] for f in doc["findings"]]
    limits = [f for f in doc["findings"] if f["kind"] == "limit.unresolved_value"]
    assert limits and all(f["severity"] == "info" for f in limits)
    for f in limits:
        assert f["evidence"]["ssa_problems"][0]["line"] == line
        assert f["evidence"]["would_report"]["severity"] in ("error", "warning")
    text = run_cli("check", str(path)).stdout
    assert "not judged: the " in text
    assert doc["summary"]["verdict"] == "not judged" and text.split("\n")[1].startswith("not judged: a ")
    explore = run_cli("explore", str(path), "--timeout", "5", "--format", "json")
    assert explore.exit_code == 0 and not [f for f in explore.json()["findings"] if f["severity"] == "error"]


def test_the_unmutated_kernel_still_has_no_limit() -> None:
    doc = run_cli("check", str(WS_FINAL), "--format", "json").json()
    assert not [f for f in doc["findings"] if f["kind"] == "limit.unresolved_value"]


REUSED_NAMES = """\
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func @a(%arg0: i32) {
    %x = arith.constant 0 : i32
    %bar = ttg.local_alloc : () -> !ttg.memdesc<1xi64, #shared, #smem, mutable>
    ttng.init_barrier %bar, 1 : !ttg.memdesc<1xi64, #shared, #smem, mutable>
    ttg.warp_specialize(%bar, %arg0)
    default {
      %y = arith.addi %x, %arg0 : i32
      ttg.warp_yield
    }
    partition0(%arg1: !ttg.memdesc<1xi64, #shared, #smem, mutable>, %arg2: i32) num_warps(1) {
      %x = arith.constant 1 : i32
      %y = arith.addi %x, %arg2 : i32
      ttng.arrive_barrier %arg1, 1 : !ttg.memdesc<1xi64, #shared, #smem, mutable>
      ttg.warp_return
    }
    partition1(%arg1: !ttg.memdesc<1xi64, #shared, #smem, mutable>, %arg2: i32) num_warps(1) {
      %x = arith.constant 2 : i32
      %c0 = arith.constant 0 : i32
      ttng.wait_barrier %arg1, %c0 : !ttg.memdesc<1xi64, #shared, #smem, mutable>
      ttg.warp_return
    } : (!ttg.memdesc<1xi64, #shared, #smem, mutable>, i32) -> ()
    %s = "tt.reduce"(%x) <{axis = 0 : i32}> ({
    ^bb0(%arg0: i32, %arg3: i32):
      %m = arith.maxsi %arg0, %arg3 : i32
      tt.reduce.return %m : i32
    }) : (i32) -> i32
    tt.return
  }
  tt.func @b(%arg0: i32) {
    %x = arith.constant 3 : i32
    tt.return
  }
}
"""


def test_valid_scoping_gets_no_warning(tmp_path: Path) -> None:
    """Partitions reuse names (isolated from above), a combiner's block argument shadows the
    function's `%arg0`, and two functions each have their own `%x`: all valid, no warning."""
    path = tmp_path / "scopes.ttgir"
    path.write_text(REUSED_NAMES)
    run = run_cli("ops", "--all", str(path))
    assert run.exit_code == 0 and run.stderr == ""


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=lambda p: p.name)
def test_fixtures_have_no_ssa_warnings(fixture: Path) -> None:
    units = run_cli("inputs", str(fixture), "--format", "json").json()["units"]
    for u in units:
        run = run_cli("ops", str(fixture), "--unit", str(u["index"]))
        assert run.exit_code == 0 and run.stderr == "", (u["label"], run.stderr)


# -- positions after a recovered syntax error ----------------------------------------------------
def _inserted(tmp: Path, text: str, before: str = "%c2_i64 = arith.constant") -> tuple[Path, int, int]:
    """The fixture with `text` inserted as a line of its own (indented like its neighbours)."""
    lines = _lines()
    k = _index(lines, before)
    indent = lines[k][: len(lines[k]) - len(lines[k].lstrip())]
    lines.insert(k, indent + text + "\n")
    return _write(tmp, "junk.ttgir", lines), k + 1, len(indent) + 1


POSITIONED = [
    ("xyz(", "warning", r"'\(' is never closed \(missing '\)'\)"),
    ("%z = tt.junk %a [%b", "warning", r"'\[' is never closed"),
    ("%z = ", "warning", r"missing custom op name"),
    ('%z = "quoted', "error", r"unterminated string literal"),
    ("tt.junk {", "error", r"the region opened here is not closed"),
    ("}", "error", r"unbalanced '\}': this one closes the region opened at line \d+"),
    ("@@@@", "warning", r"syntax error near '@@@@'"),
    ("<<<", "error", r"unexpected '<' at the start of a line; the operation after it has no name"),
    ("%z = arith.constant 1 : tensor<4xi32, #blocked", "error", r"'<' is never closed"),
    ("%q = arith.constant 1 : i32 {{", "error", r"syntax error near '\{', and the region braces do not balance"),
]


@pytest.mark.parametrize(("junk", "severity", "what"), POSITIONED, ids=[j for j, _, _ in POSITIONED])
def test_recovered_error_is_reported_on_the_junk_line(junk: str, severity: str, what: str, tmp_path: Path) -> None:
    path, line, indent_col = _inserted(tmp_path, junk)
    run = run_cli("ops", str(path))
    first = run.stderr.splitlines()[0]
    m = (WARNING if severity == "warning" else ERROR).match(first)
    assert m, run.stderr
    assert int(m["line"]) == line, run.stderr
    assert int(m["col"]) >= indent_col
    assert re.search(what, m["what"]), m["what"]
    if severity == "warning":
        # The recovery swallowed definitions: their echo is not printed as SSA warnings.
        assert not re.search(r"undefined value|defined twice|before its definition", run.stderr)


def test_line_continuation_is_named_at_the_backslash(tmp_path: Path) -> None:
    path = tmp_path / "continued.mlir"
    path.write_text("#blocked = #ttg.blocked<{sizePerThread = [1, 4],  \\\n"
                    "    threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>\n"
                    "module {\n  tt.func @f() {\n    tt.return\n  }\n}\n")
    run = run_cli("ops", str(path))
    assert run.exit_code == 2
    m = ERROR.match(run.stderr.strip())
    assert m and (int(m["line"]), int(m["col"])) == (1, 51)
    assert m["what"].startswith("line continuation is not MLIR")
    # A backslash in a string or a comment is not a continuation.
    ok = tmp_path / "ok.mlir"
    ok.write_text('// a comment ending in \\\nmodule {\n  tt.func @f() attributes {note = "a\\\\"} {\n    tt.return\n  }\n}\n')
    assert run_cli("ops", str(ok)).exit_code == 0


def test_input_cut_inside_an_attribute_alias_is_truncated_ir(tmp_path: Path) -> None:
    """A file cut off in its alias header (a partial copy, a dump interrupted early) is truncated
    IR: exit 2 at the bracket left open, not an empty report."""
    path = tmp_path / "cut.ttgir"
    path.write_text("#loc = loc(\"k.py\":1:0)\n#shared = #ttg.swizzled_shared<{vec = 1, order = ")
    run = run_cli("check", str(path))
    assert run.exit_code == 2
    m = ERROR.match(run.stderr.strip())
    assert m and (int(m["line"]), int(m["col"])) == (2, 31)
    assert m["what"].startswith("unexpected end of input")
    # An alias whose brackets close, with `->` inside (an affine map), is fine.
    ok = tmp_path / "ok.mlir"
    ok.write_text("#map = affine_map<(d0) -> (d0)>\nmodule {\n  tt.func @f() {\n    tt.return\n  }\n}\n")
    assert run_cli("ops", str(ok)).exit_code == 0


# -- no input crashes any command ----------------------------------------------------------------
def _text(name: str, text: str | bytes) -> Callable[[Path], list[str]]:
    def make(tmp: Path) -> list[str]:
        p = tmp / name
        p.write_bytes(text.encode() if isinstance(text, str) else text)
        return [str(p)]
    return make


def _junk(junk: str) -> Callable[[Path], list[str]]:
    return lambda tmp: [str(_inserted(tmp, junk)[0])]


def _ssa(case) -> Callable[[Path], list[str]]:
    return lambda tmp: [str(case(tmp)[0])]


def _mutated(fn: Callable[[list[str]], list[str]], name: str = "mutated.ttgir") -> Callable[[Path], list[str]]:
    return lambda tmp: [str(_write(tmp, name, fn(_lines())))]


def _dir_of(files: dict[str, bytes]) -> Callable[[Path], list[str]]:
    def make(tmp: Path) -> list[str]:
        d = tmp / "dir"
        d.mkdir()
        for name, data in files.items():
            (d / name).write_bytes(data)
        return [str(d)]
    return make


_FIX = WS_FINAL.read_bytes()
BAD_INPUTS: dict[str, Callable[[Path], list[str]]] = {
    "empty": _text("empty.ttgir", b""),
    "blank": _text("blank.ttgir", "\n\n   \n"),
    "binary": _text("bin.ttgir", b"\x7fELF\x02\x01\x00\x00" * 8),
    "non_utf8": _text("latin1.ttgir", "module {\n  // caf\xe9\n}\n".encode("latin-1")),
    "truncated": _mutated(lambda ls: ls[: _index(ls, "ttng.tc_gen5_mma")]),
    "truncated_mid_line": _mutated(lambda ls: ls[:40] + [ls[40][: len(ls[40]) // 2]]),
    "extra_close": _mutated(lambda ls: ls + ["}\n"]),
    "missing_close": _mutated(lambda ls: ls[:-1]),
    "only_comments": _text("c.mlir", "// RUN: x\n// CHECK: ttng.wait_barrier\n"),
    "prose": _text("notes.txt", "Look at the wait in partition1.\nThe phase flips twice.\n"),
    "notes_folder": _dir_of({"a.txt": b"todo: read the IR\n", "b.md": b"# notes\n"}),
    "folder_without_ir": _dir_of({"k.json": b"{}", "k.llir": b"define void @k() {\n ret void\n}\n"}),
    "folder_with_binary_ir": _dir_of({"k.ttgir": b"\x00\x01\x02"}),
    "corrupt_gzip": _text("cut.ttgir.gz", gzip.compress(_FIX)[:200]),
    "gzip_of_junk": _text("junk.ttgir.gz", gzip.compress(b"\x00junk\xff")),
    "nonexistent": lambda tmp: [str(tmp / "no" / "such.ttgir")],
    "unknown_unit": lambda tmp: [str(LIT), "--unit", "nosuchlabel"],
    "unit_out_of_range": lambda tmp: [str(LIT), "--unit", "99"],
    "unknown_func": lambda tmp: [str(WS_FINAL), "--func", "nosuch"],
    "junk_op": _junk("!!junk op here ??? 12"),
    "unclosed_paren": _junk("xyz("),
    "unterminated_string": _junk('%z = "quoted'),
    "stray_region": _junk("tt.junk {"),
    "stray_close": _junk("}"),
    "dangling_result": _junk("%z = "),
    "bad_type": _junk("%z = arith.constant 1 : tensor<4xi32, #blocked"),
    "duplicate_definition": _ssa(duplicate_definition),
    "use_before_definition": _ssa(use_before_def),
    "undefined_barrier": _ssa(undefined_barrier),
    "line_continuation": _text("cont.mlir", "#a = #ttg.blocked<{order = [0]}>  \\\nmodule {\n}\n"),
    "empty_module": _text("m.mlir", "module {\n}\n"),
    "function_without_body_ops": _text("f.mlir", "module {\n  tt.func @f() {\n    tt.return\n  }\n}\n"),
    "llvm_only": _text("l.mlir", "module {\n  llvm.func @f() {\n    llvm.return\n  }\n}\n"),
    "crlf": _text("crlf.ttgir", _FIX.replace(b"\n", b"\r\n")),
    "bom": _text("bom.ttgir", b"\xef\xbb\xbf" + _FIX),
    "lit_expected_error": _text("e.mlir", "// expected-error @below {{bad}}\nmodule {\n  tt.func @f( {\n}\n"),
    "random_bytes": _text("r.ttgir", bytes((i * 7919 + 13) % 256 for i in range(600))),
}
COMMANDS = ["inputs", "ops", "ops --all", "partitions", "buffers", "barriers", "graph", "phases", "coverage",
            "check", "report", "explore --timeout 2"]


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_no_command_crashes_on_a_bad_input(name: str, tmp_path: Path) -> None:
    args = BAD_INPUTS[name](tmp_path)
    for command in COMMANDS:
        head, *opts = command.split()
        argv = [head, args[0], *opts] + ([] if head == "inputs" else args[1:])
        if head == "inputs" and len(args) > 1:
            continue  # inputs takes no --unit / --func
        run = run_cli(*argv)
        where = f"{name}: barrier-viz {' '.join(argv)}"
        assert run.exception is None, f"{where}: {run.exception!r}"
        # 4: check judged nothing it would report as an error, but not everything (a verdict
        # resting on an unsoundly defined value is `not judged`)
        codes = (0, 1, 2, 4) if head == "check" else (0, 1, 2)
        assert run.exit_code in codes, f"{where}: exit {run.exit_code}: {run.stderr}"
        assert "Traceback" not in run.stderr + run.stdout, where
        if run.exit_code == 2:
            lines = run.stderr.splitlines()
            assert lines and ERROR.match(lines[-1]) or re.match(r"^barrier-viz: error: \S", lines[-1]), where
            assert all(WARNING.match(line) for line in lines[:-1]), where


def test_bad_inputs_are_many() -> None:
    assert len(BAD_INPUTS) >= 30
