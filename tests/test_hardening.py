"""Issue 24: bounded on any input, safe on any disk. One test per defect the issue reproduced,
each failing on 108f7b6: caps that hold (one-line exit 2 naming the variable that raises them),
inputs read once, a cache that cannot change a verdict, a step budget that does not depend on
the machine's load, writes that never follow a symlink or leave a partial file, signals that
leave no worker behind and keep a finished command's exit code."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cli_support import FIXTURES, run_cli
from corpus_units import CORPUS
from test_machine import BAR, kernel, one_barrier

REPO = Path(__file__).resolve().parents[1]
FIXTURE = FIXTURES / "gemm_ws_persistent.ttgir"
ENV = {**os.environ, "PYTHONPATH": str(REPO / "tools") + os.pathsep + os.environ.get("PYTHONPATH", "")}


def one_line_exit_2(r, *needles: str) -> str:
    """The error contract: exit 2, one line on stderr, naming what it must."""
    assert r.exception is None and r.exit_code == 2, (r.exit_code, r.stderr, r.exception)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def cli(*args: str, stdin=None, timeout: float = 120, env=None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "barrier_viz", *args], stdin=stdin, capture_output=True,
                          timeout=timeout, env=env or ENV, **kw)


def hanging_kernel() -> str:
    """A two-partition kernel whose barrier needs two arrivals and gets one: it hangs."""
    return kernel("", "%bar", one_barrier(count=2),
                  f"      %c0 = arith.constant 0 : i32\n      ttng.wait_barrier %bar, %c0 : {BAR}",
                  f"%b1: {BAR}", f"      ttng.arrive_barrier %b1, 1 : {BAR}", BAR)


# -- time and memory: caps ------------------------------------------------------------------------
def test_deep_bracket_nesting_is_a_cap_not_a_quadratic_parse(tmp_path: Path) -> None:
    depth = 3000
    path = tmp_path / "nested.mlir"
    path.write_text('module {\n  tt.func @k() {\n    "test.op"() {x = ' + "{a = " * depth + "1" + "}" * depth
                    + '} : () -> ()\n    tt.return\n  }\n}\n')
    one_line_exit_2(run_cli("ops", str(path)), "nested.mlir:3:", "BARRIER_VIZ_MAX_NESTING")
    ty = tmp_path / "type.mlir"
    ty.write_text("module {\n  tt.func @k(%a: " + "tensor<" * depth + "f32" + ">" * depth + ") {\n    tt.return\n  }\n}\n")
    one_line_exit_2(run_cli("ops", str(ty)), "type.mlir:2:", "BARRIER_VIZ_MAX_NESTING")


def test_a_huge_cta_count_is_refused_before_anything_is_built_per_cta(tmp_path: Path) -> None:
    text = FIXTURE.read_text()
    assert '"ttg.num-ctas" = 1 : i32' in text
    path = tmp_path / "ctas.ttgir"
    path.write_text(text.replace('"ttg.num-ctas" = 1 : i32', f'"ttg.num-ctas" = {2**128 + 1} : i64'))
    one_line_exit_2(run_cli("ops", str(path)), "BARRIER_VIZ_MAX_CTAS", str(2**128 + 1))


def test_a_long_line_is_refused_at_its_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BARRIER_VIZ_MAX_LINE_KB", "16")
    lines = FIXTURE.read_text().splitlines(keepends=True)
    lines.insert(3, '#loc99 = loc("' + "x" * 64_000 + '")\n')
    path = tmp_path / "loc.ttgir"
    path.write_text("".join(lines))
    one_line_exit_2(run_cli("check", str(path)), "loc.ttgir:4:1:", "BARRIER_VIZ_MAX_LINE_KB", "16,384")


def test_too_many_operations_and_too_large_a_unit_are_caps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    body = "".join(f"    %v{i} = arith.constant {i} : i32\n" for i in range(3000))
    path = tmp_path / "ops.mlir"
    path.write_text("module {\n  tt.func @k() {\n" + body + "    tt.return\n  }\n}\n")
    monkeypatch.setenv("BARRIER_VIZ_MAX_OPS", "1000")
    one_line_exit_2(run_cli("ops", str(path)), "BARRIER_VIZ_MAX_OPS", "1,000")
    monkeypatch.delenv("BARRIER_VIZ_MAX_OPS")
    monkeypatch.setenv("BARRIER_VIZ_MAX_UNIT_MB", "1")
    big = tmp_path / "big.mlir"
    big.write_text("module {\n  tt.func @k() {\n" + body * 12 + "    tt.return\n  }\n}\n")
    one_line_exit_2(run_cli("ops", str(big)), "big.mlir:1:1:", "BARRIER_VIZ_MAX_UNIT_MB")


def test_a_huge_barrier_ring_is_a_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A `memdesc<1000000000x1xi64>` barrier ring: the phase samples are per slot (2 x depth + 2
    of them per wait), so `report` ran past 300 s. The slot count is a cap at the allocation."""
    text = FIXTURE.read_text()
    assert "!ttg.memdesc<2x1xi64" in text
    path = tmp_path / "ring.ttgir"
    path.write_text(text.replace("!ttg.memdesc<2x1xi64", "!ttg.memdesc<1000000000x1xi64"))
    line = next(n for n, t in enumerate(text.splitlines(), 1) if "!ttg.memdesc<2x1xi64" in t)
    for command in ("barriers", "phases", "check"):
        one_line_exit_2(run_cli(command, str(path)), f"ring.ttgir:{line}:", "1,000,000,000 slots", "BARRIER_VIZ_MAX_SLOTS")
    monkeypatch.setenv("BARRIER_VIZ_MAX_SLOTS", "1")
    one_line_exit_2(run_cli("barriers", str(FIXTURE)), "2 slots", "BARRIER_VIZ_MAX_SLOTS")
    monkeypatch.setenv("BARRIER_VIZ_MAX_SLOTS", "2")
    assert run_cli("barriers", str(FIXTURE)).exit_code == 0


def test_a_gzip_bomb_stops_at_the_ratio_cap(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.ttgir.gz"
    bomb.write_bytes(gzip.compress(b"// " + b"a" * (40 << 20) + b"\n", 9))  # 40 MB in ~40 KB
    one_line_exit_2(run_cli("inputs", str(bomb)), "BARRIER_VIZ_MAX", "bomb")
    # the same bomb on stdin, decompressed in memory
    one_line_exit_2(run_cli("inputs", "-", input=bomb.read_bytes()), "<stdin>", "BARRIER_VIZ_MAX_GZIP_RATIO")


def test_dev_zero_on_stdin_is_refused_at_once() -> None:
    with open("/dev/zero", "rb") as zero:
        r = cli("check", "-", stdin=zero, timeout=60)
    assert r.returncode == 2 and r.stderr.decode().count("\n") == 1, r.stderr
    assert "NUL byte" in r.stderr.decode()


def test_a_release_order_rule_costs_each_access_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The rule used to recompute every access of every op after each wait for every arrive
    (arrives x waits x ops): past 120 s on a 436 KB kernel. Now each op's accesses are read once."""
    from barrier_viz.analyses.rules import release_order
    from barrier_viz.analysis import Analysis
    from barrier_viz.session import select

    n = 12
    buf = "!ttg.memdesc<128xf32, #shared, #smem, mutable>"
    prologue = one_barrier() + f"    %buf = ttg.local_alloc : () -> {buf}\n"
    default = "".join(f"      ttng.wait_barrier %bar, %c0 : {BAR}\n      %x{i} = ttg.local_load %buf : {buf} -> tensor<128xf32>\n"
                      for i in range(n))
    part = "".join(f"      ttng.arrive_barrier %b1, 1 : {BAR}\n      %y{i} = ttg.local_load %bb : {buf} -> tensor<128xf32>\n"
                   for i in range(n))
    text = kernel("", "%bar, %buf", prologue, "      %c0 = arith.constant 0 : i32\n" + default,
                  f"%b1: {BAR}, %bb: {buf}", part, f"{BAR}, {buf}")
    path = tmp_path / "k.ttgir"
    path.write_text(text)
    calls = []
    real = release_order._accesses
    monkeypatch.setattr(release_order, "_accesses", lambda *a: calls.append(1) or real(*a))
    a = Analysis(select(str(path), None, None, require_function=True))
    release_order.use_after_release(a)
    ops = sum(1 for _ in a.sel.operations())
    assert len(calls) <= 2 * ops, (len(calls), ops)


def test_the_release_order_rule_is_pairs_not_triples_on_a_wide_barrier(monkeypatch: pytest.MonkeyPatch,
                                                                        tmp_path: Path) -> None:
    """n waits on one barrier, each followed by a store to one buffer, and n arrives, each
    followed by a load of it (the bench's `release_order_wide`). Each store follows every earlier
    wait, so the guarded writes of all waits repeat each store up to n times; scanning the repeats
    made the rule n^3 (83 s at n = 200). Each access is now compared with each distinct write
    once: about n^2 comparisons."""
    from barrier_viz.analyses.rules import release_order
    from barrier_viz.analysis import Analysis
    from barrier_viz.session import select

    n = 24
    buf = "!ttg.memdesc<128xf32, #shared, #smem, mutable>"
    prologue = one_barrier() + f"    %buf = ttg.local_alloc : () -> {buf}\n"
    default = "".join(f"      ttng.wait_barrier %bar, %c0 : {BAR}\n      ttg.local_store %t, %buf : tensor<128xf32> -> {buf}\n"
                      for _ in range(n))
    part = "".join(f"      ttng.arrive_barrier %b1, 1 : {BAR}\n      %y{i} = ttg.local_load %bb : {buf} -> tensor<128xf32>\n"
                   for i in range(n))
    path = tmp_path / "wide.ttgir"
    path.write_text(kernel("%t: tensor<128xf32>", "%bar, %buf", prologue, "      %c0 = arith.constant 0 : i32\n" + default,
                           f"%b1: {BAR}, %bb: {buf}", part, f"{BAR}, {buf}"))
    calls = []
    real = release_order._overlap
    monkeypatch.setattr(release_order, "_overlap", lambda *a: calls.append(1) or real(*a))
    found = release_order.use_after_release(Analysis(select(str(path), None, None, require_function=True)))
    assert len(found) == n  # each load after its own release reads what the next wait's store overwrites
    assert len(calls) <= 2 * n * n, (len(calls), n)


def test_ir_the_mutant_campaign_broke_is_carried_through(tmp_path: Path) -> None:
    """Two exit-3 IndexErrors of the mutant campaign (bench/bench_hostile.py, seed 24): a
    char-delete left `arith.muli %, %c8` (the parser warns and keeps the op, one operand short,
    and the interpreter read the second operand); a negative-number edit left
    `async_task_id = array<i32: -2147483648>` (a negative id indexed the partition types from
    the end). Both are carried through: the muli's value is unknown, the task has no type."""
    short = tmp_path / "short_operands.ttgir"
    short.write_text(kernel("", "%bar", one_barrier(),
                            "      %c0 = arith.constant 0 : i32\n      %c8 = arith.constant 8 : i32\n"
                            "      %band = arith.muli %, %c8 : i32\n"
                            f"      ttng.wait_barrier %bar, %c0 : {BAR}",
                            f"%b1: {BAR}", f"      ttng.arrive_barrier %b1, 1 : {BAR}", BAR))
    r = run_cli("check", str(short), "--format", "json")
    assert r.exception is None and r.exit_code == 0, (r.exit_code, r.stderr, r.exception)
    assert "syntax error" in r.stderr and "Traceback" not in r.stderr
    negative = tmp_path / "negative_task.mlir"
    negative.write_text("module {\n  tt.func @k() {\n"
                        "    %c1 = arith.constant {async_task_id = array<i32: -2147483648, 1>} 1 : i32\n"
                        "    %c2 = arith.constant {async_task_id = array<i32: -1>} 2 : i32\n"
                        "    tt.return\n  }\n}\n")
    for command in ("check", "report"):
        r = run_cli(command, str(negative))
        assert r.exception is None and r.exit_code in (0, 1, 4), (command, r.exit_code, r.stderr, r.exception)


# -- inputs read once ----------------------------------------------------------------------------
def test_a_fifo_is_read_once(tmp_path: Path) -> None:
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "wb") as fh:
            fh.write(FIXTURE.read_bytes())

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        r = cli("ops", str(fifo), "--format", "json", timeout=60)
    except subprocess.TimeoutExpired:
        with open(fifo, "rb"):  # unblock the writer
            pass
        raise
    writer.join(5)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["ops"]


def test_process_substitution_and_dev_stdin_read_valid_ir() -> None:
    cmd = f'{sys.executable} -m barrier_viz ops <(cat {FIXTURE}) --format json'
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, timeout=60, env=ENV)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["ops"]
    r = subprocess.run(["bash", "-c", f"cat {FIXTURE} | {sys.executable} -m barrier_viz ops /dev/stdin --format json"],
                       capture_output=True, timeout=60, env=ENV)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["ops"]


def test_a_device_is_refused() -> None:
    r = run_cli("ops", "/dev/null")
    one_line_exit_2(r, "/dev/null", "character device")


# -- the audit cache ------------------------------------------------------------------------------
def _audit(tmp_path: Path, *extra: str, env: dict | None = None):
    src = tmp_path / "tree" / "k.ttgir"
    if not src.exists():
        src.parent.mkdir(parents=True)
        src.write_text(hanging_kernel())
    return run_cli("audit", str(src.parent), "--format", "json", "--jobs", "1", "--cache-dir", str(tmp_path / "cache"), *extra)


def _entries(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache").rglob("*.json"))


@pytest.mark.parametrize("planted", ["[]", "{}", '{"status": "ok"}', "not json"])
def test_a_cache_entry_of_the_wrong_shape_is_a_miss(tmp_path: Path, planted: str) -> None:
    first = _audit(tmp_path)
    assert first.exit_code == 1, first.stderr
    (entry,) = _entries(tmp_path)
    entry.write_text(planted)
    again = _audit(tmp_path)
    assert again.exception is None and again.exit_code == 1, (again.exit_code, again.stderr)
    assert again.stdout == first.stdout


def _empty_findings(entry: Path, *, recompute_digest: bool) -> None:
    doc = json.loads(entry.read_text())
    result = doc.get("result", doc)
    for k in result["kernels"]:
        k["findings"] = []
    if recompute_digest and "digest" in doc:  # what a forger with the source code can do
        payload = (doc["key"] + "\n" + json.dumps(result, sort_keys=True, separators=(",", ":"), ensure_ascii=True)).encode()
        doc["digest"] = hashlib.sha256(payload).hexdigest()
    entry.write_text(json.dumps(doc))


def test_an_entry_whose_findings_were_emptied_is_not_trusted(tmp_path: Path) -> None:
    first = _audit(tmp_path)
    assert first.exit_code == 1
    (entry,) = _entries(tmp_path)
    _empty_findings(entry, recompute_digest=False)
    again = _audit(tmp_path)
    assert again.exit_code == 1, "the gate must not pass a hanging kernel on a tampered entry"
    assert again.stdout == first.stdout


def test_a_signed_cache_ignores_unsigned_and_forged_entries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _audit(tmp_path)  # unsigned entry, written without a key
    assert first.exit_code == 1
    (entry,) = _entries(tmp_path)
    _empty_findings(entry, recompute_digest=True)  # a forged entry with a valid digest
    monkeypatch.setenv("BARRIER_VIZ_CACHE_KEY", "ci-secret")
    signed = _audit(tmp_path)
    assert signed.exit_code == 1 and signed.stdout == first.stdout
    doc = json.loads(entry.read_text())
    assert doc["signature"]
    hit = _audit(tmp_path)  # a signed entry with the right key is used
    assert hit.exit_code == 1 and hit.stdout == first.stdout
    _empty_findings(entry, recompute_digest=True)  # forged again: digest fine, signature not
    forged = _audit(tmp_path)
    assert forged.exit_code == 1 and forged.stdout == first.stdout


# -- deterministic verdicts -----------------------------------------------------------------------
_SLOW_MACHINE = """
import sys, time
_t = [0.0]
def slow():  # a machine 1000x slower (or that loaded): every read of the clock, 50 ms more
    _t[0] += 0.05
    return _t[0]
time.process_time = slow
time.perf_counter = slow
sys.argv = ["barrier-viz", *sys.argv[1:]]
from barrier_viz.cli import app
app()
"""


def test_a_loaded_machine_gets_the_same_audit_verdicts(tmp_path: Path) -> None:
    """The audit budget used to be CPU time: on a loaded CI runner it cut the simulation of a
    GPU-observed hanging mutant and the gate passed it. Steps do not depend on the clock."""
    paths = [tmp_path / "k.ttgir"]
    paths[0].write_text(hanging_kernel())
    mutant = CORPUS / "gpu" / "gemm_ws_sm90_stages4" / "flip_phase_consumer_L253.ttgir"
    if mutant.is_file():
        paths.append(mutant)
    args = ["audit", *map(str, paths), "--format", "json", "--no-cache", "--jobs", "1"]
    normal = subprocess.run([sys.executable, "-m", "barrier_viz", *args], capture_output=True, env=ENV, timeout=600)
    slow = subprocess.run([sys.executable, "-c", _SLOW_MACHINE, *args], capture_output=True, env=ENV, timeout=600)
    assert normal.returncode == 1, normal.stderr
    assert slow.returncode == 1, slow.stderr
    assert slow.stdout == normal.stdout
    rows = json.loads(normal.stdout)["rows"]
    assert all(any(f["severity"] == "error" for f in r["findings"]) for r in rows), rows


# -- safe writes --------------------------------------------------------------------------------
def test_report_out_never_writes_through_a_planted_symlink(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.md").symlink_to(victim)
    (out / "status.json").symlink_to(victim)
    r = run_cli("report", str(FIXTURE), "--out", str(out), "--no-simulate")
    assert r.exit_code == 0, r.stderr
    assert victim.read_text() == "precious"
    assert not (out / "report.md").is_symlink() and (out / "report.md").read_text().startswith("#")


def test_skill_install_force_never_writes_through_planted_links(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from barrier_viz.commands.skill_cmd import MANIFEST, SKILL_NAME

    monkeypatch.chdir(tmp_path)
    assert run_cli("skill", "install").exit_code == 0
    target = tmp_path / ".claude" / "skills" / SKILL_NAME
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.rmtree(target / "reference")
    (target / "reference").symlink_to(outside, target_is_directory=True)
    r = run_cli("skill", "install", "--force")
    assert list(outside.iterdir()) == [], "files landed outside the skill folder"
    one_line_exit_2(r, "symbolic link")
    # a planted manifest link: neither read as a list of files to remove, nor written through
    (target / "reference").unlink()
    decoy = outside / "decoy.txt"
    decoy.write_text("keep me")
    (target / MANIFEST).unlink()
    (target / MANIFEST).symlink_to(decoy)
    r = run_cli("skill", "install", "--force")
    assert r.exit_code == 0, r.stderr
    assert decoy.read_text() == "keep me"
    assert not (target / MANIFEST).is_symlink()


def test_out_folder_is_not_created_when_nothing_is_written(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ttgir"
    bad.write_text("module {\n  tt.func @k() {\n")
    out = tmp_path / "never"
    r = run_cli("report", str(bad), "--out", str(out))
    assert r.exit_code == 2
    assert not out.exists()


def _fsize_limited(limit: int):
    def pre() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return pre


def test_a_full_disk_leaves_no_partial_report_and_no_temp_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = cli("report", str(FIXTURE), "--out", str(out), "--no-simulate", preexec_fn=_fsize_limited(4096))
    assert r.returncode == 2 and r.stderr.decode().count("\n") == 1, r.stderr
    left = sorted(p.name for p in out.iterdir()) if out.exists() else []
    assert "report.md" not in left and not [n for n in left if n.endswith(".tmp")], left
    cache = tmp_path / "cache"
    r = cli("audit", str(FIXTURE), "--no-simulate", "--cache-dir", str(cache), preexec_fn=_fsize_limited(100))
    assert r.returncode in (0, 1), r.stderr
    assert not list(cache.rglob("*.tmp")) and not [p for p in cache.rglob("*.json") if p.stat().st_size == 0]


# -- signals ------------------------------------------------------------------------------------
def _children(pid: int) -> list[int]:
    try:
        out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    except FileNotFoundError:
        pytest.skip("pgrep not available")
    return [int(x) for x in out.split()]


def test_sigterm_to_a_parallel_audit_leaves_no_worker(tmp_path: Path) -> None:
    loops = ("      %n = arith.constant 1000000000 : i32\n      %one = arith.constant 1 : i32\n"
             "      scf.for %i = %c0 to %n step %one : i32 {\n        %x = arith.addi %i, %one : i32\n      }\n")
    text = kernel("", "%bar", one_barrier(), "      %c0 = arith.constant 0 : i32\n" + loops +
                  f"      ttng.wait_barrier %bar, %c0 : {BAR}", f"%b1: {BAR}", f"      ttng.arrive_barrier %b1, 1 : {BAR}", BAR)
    for i in range(4):
        (tmp_path / f"k{i}.ttgir").write_text(text.replace("@k(", f"@k{i}("))
    env = {**ENV, "BARRIER_VIZ_SIM_STEPS": str(10**12)}
    proc = subprocess.Popen([sys.executable, "-m", "barrier_viz", "audit", str(tmp_path), "--no-cache", "--jobs", "2",
                             "--budget", "0"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    workers: list[int] = []
    while time.monotonic() < deadline and len(workers) < 2:
        time.sleep(0.5)
        workers = _children(proc.pid)
    assert len(workers) >= 2, "the audit never started its workers"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM and err.decode().count("\n") == 1, err
    time.sleep(1)
    alive = [w for w in workers if Path(f"/proc/{w}").exists() and "Z" not in Path(f"/proc/{w}/stat").read_text().split()[2]]
    assert not alive, f"workers left running: {alive}"


_LATE_SIGINT = """
import os, signal, sys
real_exit = sys.exit
def exit_after_sigint(code=0):
    os.kill(os.getpid(), signal.SIGINT)  # the user presses Ctrl-C as the command finishes
    real_exit(code)
sys.exit = exit_after_sigint
sys.argv = ["barrier-viz", *sys.argv[1:]]
from barrier_viz.cli import main
main()
"""


def test_a_sigint_after_the_output_keeps_the_exit_code(tmp_path: Path) -> None:
    path = tmp_path / "k.ttgir"
    path.write_text(hanging_kernel())
    r = subprocess.run([sys.executable, "-c", _LATE_SIGINT, "check", str(path), "--format", "json"], capture_output=True,
                       env=ENV, timeout=120)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert json.loads(r.stdout)["summary"]["errors"] >= 1 and b"Traceback" not in r.stderr


# -- the fuzz test: hostile edits of real IR shapes, every run bounded ---------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from test_cli_errors import _EDITS, _FIXTURE_BYTES, _mutate  # noqa: E402

_HUGE = [0, -1, 3, 1 << 20, 1 << 31, 1 << 63, (1 << 128) + 1]
_HOSTILE = st.lists(
    st.tuples(st.sampled_from(["big-number", "nest", "long-line", "repeat-lines"]), st.integers(0, 1 << 20),
              st.integers(0, 1 << 20)),
    min_size=1, max_size=4)


def _hostile(data: bytes, edits: list[tuple[str, int, int]]) -> bytes:
    import re

    for kind, a, b in edits:
        lines = data.splitlines(keepends=True) or [b""]
        i = a % len(lines)
        if kind == "big-number":
            numbers = list(re.finditer(rb"(?<![\w#%])\d+\b", data))
            if numbers:
                m = numbers[a % len(numbers)]
                data = data[:m.start()] + str(_HUGE[b % len(_HUGE)]).encode() + data[m.end():]
            continue
        if kind == "nest":
            depth = 50 + b % 2000
            lines[i] = lines[i].rstrip(b"\n") + b" {x = " + b"[" * depth + b"]" * depth + b"}\n"
        elif kind == "long-line":
            lines.insert(i, b'#locx = loc("' + b"z" * (1000 + b % 20_000) + b'")\n')
        else:
            j = min(len(lines), i + 1 + b % 8)
            lines[i:j] = lines[i:j] * (2 + b % 200)
        data = b"".join(lines)
    return data


@settings(max_examples=40, deadline=None, derandomize=bool(os.environ.get("CI")),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.sampled_from(_FIXTURE_BYTES), _EDITS, _HOSTILE)
def test_hostile_edits_of_real_ir_stay_within_the_contract(monkeypatch: pytest.MonkeyPatch, data: bytes, edits,
                                                           hostile) -> None:
    """Every run of `check` (simulation included) on a hostile edit: exit 0, 1 or 2, never a
    crash; an exit 2 is one line, and a cap names the variable that raises it."""
    monkeypatch.setenv("BARRIER_VIZ_SIM_STEPS", "20000")
    monkeypatch.setenv("BARRIER_VIZ_MAX_LINE_KB", "8")
    run = run_cli("check", "-", "--format", "json", input=_hostile(_mutate(data, edits), hostile))
    assert run.exception is None, f"crashed: {run.exception!r}"
    assert run.exit_code in (0, 1, 2, 4), (run.exit_code, run.stderr)
    assert "Traceback" not in run.stderr
    if run.exit_code == 2:
        line = run.stderr.strip().splitlines()[-1]
        assert len([x for x in run.stderr.splitlines() if "error:" in x]) == 1, run.stderr
        if "(limit for" in line:
            assert "set BARRIER_VIZ_" in line, line
