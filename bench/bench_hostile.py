"""Hostile-input campaign (issue 24): mutants of real IR plus the hostile inputs the issue lists,
each run of `barrier-viz check` measured for exit code, tracebacks, CPU time and peak memory.

    .venv/bin/python bench/bench_hostile.py [--corpus ../shared/corpus] [--mutants 1000]
        [--steps 100000] [--start N] [--json OUT] [--hostile-only]

Runs are forked from one process that has imported the CLI (so a thousand runs do not pay a
thousand interpreter start-ups); each child runs the real console entry point (`cli.main`, with
its resource guards) on one input, and `wait4` gives its CPU time and peak RSS. A forked child
starts with the parent's resident pages, so memory is reported as the growth over the parent
(`baseline`). The contract each run is held to:

* exit 0, 1, 2 or 4 (never 3, never a signal), no `Traceback` on stderr;
* an exit 2 has exactly one `error:` line, and a cap (`(limit for ...`) names its variable;
* CPU time within the step budget plus a stated slack: `--cpu-slack` seconds (default 60: the
  parse, facts and static rules a budget in steps does not count, on a loaded machine);
* peak memory growth at most 20 x the input's size plus `--mem-slack` MB (default 64: the
  interpreter's working set for any kernel), or a one-line cap error.

Mutations (18 kinds) are single edits of real files, chosen by a seeded generator, so a
campaign is reproducible. No assertion: it prints a summary and, with --json, every run.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import random
import re
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tools"))

KINDS = ["line-delete", "line-dup", "line-swap", "char-delete", "char-dup", "char-swap", "truncate", "byte-flip",
         "insert-nul", "invalid-utf8", "big-number", "zero-number", "negative-number", "nest-brackets", "long-loc",
         "repeat-block", "drop-brace", "swap-op"]
_NUMBER = re.compile(rb"(?<![\w#%.])\d+\b")
_SWAPS = [(b"ttng.wait_barrier", b"ttng.arrive_barrier"), (b"ttng.arrive_barrier", b"ttng.wait_barrier"),
          (b"ttng.init_barrier", b"ttng.inval_barrier"), (b"scf.for", b"scf.while"), (b"ttg.warp_yield", b"ttg.warp_return")]


def mutate(data: bytes, kind: str, rng: random.Random) -> bytes:
    lines = data.splitlines(keepends=True)
    i = rng.randrange(len(lines))
    j = rng.randrange(len(lines))
    k = rng.randrange(max(len(data), 1))
    if kind == "line-delete":
        del lines[i]
    elif kind == "line-dup":
        lines.insert(i, lines[i])
    elif kind == "line-swap":
        lines[i], lines[j] = lines[j], lines[i]
    elif kind in ("char-delete", "char-dup", "char-swap", "truncate", "byte-flip", "insert-nul", "invalid-utf8"):
        if kind == "char-delete":
            return data[:k] + data[k + 1:]
        if kind == "char-dup":
            return data[:k + 1] + data[k:]
        if kind == "char-swap":
            m = rng.randrange(len(data))
            a, b = min(k, m), max(k, m)
            return data[:a] + data[b:b + 1] + data[a + 1:b] + data[a:a + 1] + data[b + 1:]
        if kind == "truncate":
            return data[:k]
        if kind == "byte-flip":
            return data[:k] + bytes([data[k] ^ (1 << rng.randrange(7))]) + data[k + 1:]
        if kind == "insert-nul":
            return data[:k] + b"\x00" + data[k:]
        return data[:k] + b"\xff\xfe" + data[k:]
    elif kind in ("big-number", "zero-number", "negative-number"):
        numbers = list(_NUMBER.finditer(data))
        if numbers:
            m = rng.choice(numbers)
            value = {"big-number": rng.choice([1 << 31, 1 << 63, (1 << 128) + 1, 10**9]), "zero-number": 0,
                     "negative-number": -rng.choice([1, 2, 1 << 31])}[kind]
            return data[:m.start()] + str(value).encode() + data[m.end():]
    elif kind == "nest-brackets":
        depth = rng.choice([64, 300, 5000])
        lines[i] = lines[i].rstrip(b"\n") + b" {x = " + b"[" * depth + b"]" * depth + b"}\n"
    elif kind == "long-loc":
        lines.insert(i, b'#locz = loc("' + b"q" * rng.choice([10_000, 300_000, 2_000_000]) + b'")\n')
    elif kind == "repeat-block":
        end = min(len(lines), i + rng.randint(1, 10))
        lines[i:end] = lines[i:end] * rng.choice([2, 50, 2000])
    elif kind == "drop-brace":
        closers = [n for n, line in enumerate(lines) if line.strip() == b"}"]
        if closers:
            del lines[rng.choice(closers)]
    elif kind == "swap-op":
        present = [s for s in _SWAPS if s[0] in data]
        if present:
            a, b = rng.choice(present)
            hits = [m.start() for m in re.finditer(re.escape(a), data)]
            at = rng.choice(hits)
            return data[:at] + b + data[at + len(a):]
    return b"".join(lines)


def real_files(corpus: Path, count: int, max_bytes: int) -> list[Path]:
    files = sorted(p for p in corpus.rglob("*") if p.is_file() and p.suffix in (".ttgir", ".mlir")
                   and 2_000 < p.stat().st_size <= max_bytes)
    rng = random.Random(24)
    rng.shuffle(files)
    return sorted(files[:count])


def hostile_inputs(work: Path, fixture: Path) -> list[dict]:
    """The issue's hostile inputs at their sizes (plus a few more), as run specs."""
    out: list[dict] = []

    def put(name: str, data: bytes, suffix: str = ".mlir") -> Path:
        p = work / f"hostile_{name}{suffix}"
        p.write_bytes(data)
        out.append({"name": name, "kind": "hostile", "path": str(p), "bytes": len(data)})
        return p

    base = fixture.read_bytes()
    depth = 50_000
    put("nested_attr_50k", b'module {\n  tt.func @k() {\n    "t.op"() {x = ' + b"{a = " * depth + b"1" + b"}" * depth
        + b"} : () -> ()\n    tt.return\n  }\n}\n")
    put("nested_type_50k", b"module {\n  tt.func @k(%a: " + b"tensor<" * depth + b"f32" + b">" * depth + b") {\n    tt.return\n  }\n}\n")
    put("num_ctas_2e128", base.replace(b'"ttg.num-ctas" = 1 : i32', b'"ttg.num-ctas" = %d : i64' % ((1 << 128) + 1)), ".ttgir")
    lines = base.splitlines(keepends=True)
    put("loc_10MB", b"".join(lines[:3] + [b'#locq = loc("' + b"L" * (10 << 20) + b'")\n'] + lines[3:]), ".ttgir")
    body = b"".join(b"    %%v%d = arith.constant %d : i32\n" % (n, n) for n in range(1_000_000))
    put("ops_1M", b"module {\n  tt.func @k() {\n" + body + b"    tt.return\n  }\n}\n")
    put("gzip_bomb", _gzip_zeros(2600 << 20), ".ttgir.gz")  # ~2.6 GB of zeros in a few MB
    put("release_order_wide", _wide_release_kernel(400), ".ttgir")
    nested_if = "".join("      scf.if %f {\n" for _ in range(10_000)) + "".join("      }\n" for _ in range(10_000))
    put("nested_if_10k", (b"module {\n  tt.func @k(%f: i1) {\n" + nested_if.encode() + b"    tt.return\n  }\n}\n"))
    put("huge_barrier_alloc", base.replace(b"!ttg.memdesc<1xi64", b"!ttg.memdesc<1000000000xi64"), ".ttgir")
    put("huge_barrier_ring", base.replace(b"!ttg.memdesc<2x1xi64", b"!ttg.memdesc<1000000000x1xi64"), ".ttgir")
    put("huge_loop_bound", base.replace(b"arith.constant 1 : i32", b"arith.constant 2147483647 : i32"), ".ttgir")
    put("empty", b"")
    put("comments_only", b"// nothing here\n" * 100)
    put("random_binary", random.Random(1).randbytes(1 << 20), ".bin")
    put("crlf", base.replace(b"\n", b"\r\n"), ".ttgir")
    put("one_line_8MB", b"module { " + b"%x = arith.constant 1 : i32 " * (8 << 15) + b"}\n")
    out.append({"name": "dev_zero_stdin", "kind": "hostile", "path": "-", "stdin": "/dev/zero", "bytes": 0})
    out.append({"name": "fifo", "kind": "hostile", "path": str(work / "in.fifo"), "fifo": str(fixture), "bytes": len(base)})
    out.append({"name": "process_substitution", "kind": "hostile", "path": str(fixture), "procsub": True, "bytes": len(base)})
    return out


def _gzip_zeros(size: int) -> bytes:
    """`size` zero bytes, gzipped a megabyte at a time: this process never holds them, so its
    high-water mark (which a vforked `bash` reports as its own peak RSS) stays low."""
    out = io.BytesIO()
    chunk = b"\x00" * (1 << 20)
    with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=9) as gz:
        for _ in range(size >> 20):
            gz.write(chunk)
    return out.getvalue()


def _wide_release_kernel(n: int) -> bytes:
    """Many arrives and waits on one barrier, each followed by accesses: the release-order
    rule's arrives x waits x ops shape."""
    bar = "!ttg.memdesc<1xi64, #shared, #smem, mutable>"
    bars = "!ttg.memdesc<1x1xi64, #shared, #smem, mutable>"
    buf = "!ttg.memdesc<128xf32, #shared, #smem, mutable>"
    d = "".join(f"      ttng.wait_barrier %bar, %c0 : {bar}\n      ttg.local_store %t, %buf : tensor<128xf32> -> {buf}\n" for _ in range(n))
    p = "".join(f"      ttng.arrive_barrier %b1, 1 : {bar}\n      %y{i} = ttg.local_load %bb : {buf} -> tensor<128xf32>\n" for i in range(n))
    return f'''#shared = #ttg.swizzled_shared<{{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}}>
#smem = #ttg.shared_memory
module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32}} {{
  tt.func public @k(%t: tensor<128xf32>) {{
    %c0_i32 = arith.constant 0 : i32
    %bars = ttg.local_alloc : () -> {bars}
    %bar = ttg.memdesc_index %bars[%c0_i32] : {bars} -> {bar}
    ttng.init_barrier %bar, 1 : {bar}
    %buf = ttg.local_alloc : () -> {buf}
    ttg.warp_specialize(%bar, %buf) attributes {{requestedRegisters = array<i32: 24>}}
    default {{
      %c0 = arith.constant 0 : i32
{d}      ttg.warp_yield
    }}
    partition0(%b1: {bar}, %bb: {buf}) num_warps(1) {{
{p}      ttg.warp_return
    }} : ({bar}, {buf}) -> ()
    tt.return
  }}
}}
'''.encode()


def run_one(spec: dict, work: Path, steps: int, timeout: float) -> dict:
    """Fork, run `barrier-viz check` on the spec's input in the child, and measure it."""
    out_path, err_path = work / "stdout", work / "stderr"
    args = ["barrier-viz", "check", spec["path"], "--format", "json"]
    if spec.get("procsub"):
        return _run_shell(spec, steps, timeout)
    writer = None
    if spec.get("fifo"):
        fifo = Path(spec["path"])
        if fifo.exists():
            fifo.unlink()
        os.mkfifo(fifo)

        def feed() -> None:
            try:
                with open(fifo, "wb") as fh:
                    fh.write(Path(spec["fifo"]).read_bytes())
            except OSError:
                pass
        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: the real console entry point
        try:
            os.environ["BARRIER_VIZ_SIM_STEPS"] = str(steps)
            fd_in = os.open(spec.get("stdin", "/dev/null"), os.O_RDONLY)
            os.dup2(fd_in, 0)
            os.dup2(os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 1)
            os.dup2(os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
            sys.stdin = open(0, "r", closefd=False)
            sys.stdout = open(1, "w", closefd=False)
            sys.stderr = open(2, "w", closefd=False)
            sys.argv = args
            from barrier_viz.cli import main
            try:
                main()
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        except BaseException:  # noqa: BLE001
            import traceback
            traceback.print_exc()
            sys.stderr.flush()
            os._exit(99)
    status = None
    while status is None:
        done, st, usage = os.wait4(pid, os.WNOHANG)
        if done:
            status = st
            break
        if time.monotonic() - start > timeout:
            os.kill(pid, signal.SIGKILL)
            _, st, usage = os.wait4(pid, 0)
            status = -1
            break
        time.sleep(0.02)
    wall = time.monotonic() - start
    if writer is not None:
        try:  # unblock a writer whose reader never came
            fd = os.open(spec["path"], os.O_RDONLY | os.O_NONBLOCK)
            os.close(fd)
        except OSError:
            pass
        writer.join(2)
    code = -1 if status == -1 else (os.waitstatus_to_exitcode(status))
    stderr = err_path.read_text(errors="replace")
    return {"exit": code, "wall": round(wall, 3), "cpu": round(usage.ru_utime + usage.ru_stime, 3),
            "maxrss_mb": round(usage.ru_maxrss / 1024, 1), "stderr": stderr[-2000:], "timeout": status == -1}


def wait_measured(p: subprocess.Popen, start: float, timeout: float):
    """(wait status, rusage, timed out) of `p` and the children it waited for, killed past
    `timeout` wall seconds from `start`."""
    while True:
        done, status, usage = os.wait4(p.pid, os.WNOHANG)
        if done:
            return status, usage, False
        if time.monotonic() - start > timeout:
            p.kill()
            _, status, usage = os.wait4(p.pid, 0)
            return status, usage, True
        time.sleep(0.02)


def _run_shell(spec: dict, steps: int, timeout: float) -> dict:
    """`check <(cat FILE)` through bash. `wait4` on bash's pid gives the usage of bash and the
    `barrier-viz` it waited for (RUSAGE_CHILDREN would be the largest of every run so far)."""
    cmd = f"{sys.executable} -m barrier_viz check <(cat {spec['path']}) --format json"
    env = {**os.environ, "BARRIER_VIZ_SIM_STEPS": str(steps), "PYTHONPATH": str(HERE.parent / "tools")}
    start = time.monotonic()
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen(["bash", "-c", cmd], stdout=subprocess.DEVNULL, stderr=err, env=env)
        status, usage, to = wait_measured(p, start, timeout)
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    return {"exit": -1 if to else p.returncode, "wall": round(time.monotonic() - start, 3),
            "cpu": round(usage.ru_utime + usage.ru_stime, 3), "maxrss_mb": round(usage.ru_maxrss / 1024, 1),
            "stderr": stderr[-2000:], "timeout": to, "own_process": True}


def judge(spec: dict, r: dict, baseline_mb: float, cpu_slack: float, mem_slack_mb: float) -> list[str]:
    """The contract violations of one run (empty when it holds)."""
    bad = []
    if r["timeout"]:
        bad.append("timeout")
    if r["exit"] not in (0, 1, 2, 4):  # 4: not judged (the model did not reach), a stated verdict
        bad.append(f"exit {r['exit']}")
    if "Traceback" in r["stderr"]:
        bad.append("traceback")
    errors = [line for line in r["stderr"].splitlines() if "error:" in line]
    if r["exit"] == 2 and len(errors) != 1:
        bad.append("exit 2 without exactly one error line")
    capped = r["exit"] == 2 and errors and "(limit for" in errors[-1]
    if capped and "set BARRIER_VIZ_" not in errors[-1]:
        bad.append("cap without its variable")
    if r["cpu"] > cpu_slack:
        bad.append(f"cpu {r['cpu']}s")
    growth = r["maxrss_mb"] - (0 if r.get("own_process") else baseline_mb)
    allowed = 20 * spec["bytes"] / 2**20 + mem_slack_mb
    r["growth_mb"] = round(growth, 1)
    if growth > allowed and not capped:
        bad.append(f"memory +{growth:.0f} MB > {allowed:.0f} MB")
    return bad


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=HERE.parent.parent / "shared" / "corpus")
    ap.add_argument("--mutants", type=int, default=1000)
    ap.add_argument("--files", type=int, default=44)
    ap.add_argument("--max-file-bytes", type=int, default=120_000)
    ap.add_argument("--steps", type=int, default=100_000, help="BARRIER_VIZ_SIM_STEPS for each run")
    ap.add_argument("--timeout", type=float, default=300.0, help="wall seconds before a run is killed (a hang)")
    ap.add_argument("--cpu-slack", type=float, default=60.0)
    ap.add_argument("--mem-slack", type=float, default=64.0)
    ap.add_argument("--seed", type=int, default=24)
    ap.add_argument("--hostile-only", action="store_true")
    ap.add_argument("--start", type=int, default=0, help="run mutants from this index on (resume a campaign)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    import barrier_viz.cli  # noqa: F401 - imported once; every run forks from here
    from barrier_viz.analysis import Analysis  # noqa: F401
    from barrier_viz.analyses import verdicts  # noqa: F401

    baseline_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    work = Path(tempfile.mkdtemp(prefix="bv-hostile-"))
    fixture = HERE.parent / "tests" / "fixtures" / "gemm_ws_persistent.ttgir"
    specs = hostile_inputs(work, fixture)
    if not args.hostile_only:
        files = real_files(args.corpus, args.files, args.max_file_bytes)
        rng = random.Random(args.seed)
        for n in range(args.mutants):
            src = files[n % len(files)]
            kind = KINDS[(n // len(files)) % len(KINDS)] if n < len(files) * len(KINDS) else rng.choice(KINDS)
            data = mutate(src.read_bytes(), kind, rng)  # every mutant drawn, so --start keeps the seeded sequence
            if n < args.start:
                continue
            p = work / f"m{n:04d}{src.suffix}"
            p.write_bytes(data)
            specs.append({"name": f"{src.name}:{kind}", "kind": kind, "path": str(p), "bytes": len(data)})
    print(f"{len(specs)} runs ({sum(s['kind'] != 'hostile' for s in specs)} mutants), steps={args.steps}, "
          f"baseline RSS {baseline_mb:.0f} MB, work dir {work}", flush=True)
    results = []
    t0 = time.monotonic()
    for n, spec in enumerate(specs):
        r = run_one(spec, work, args.steps, args.timeout)
        r["violations"] = judge(spec, r, baseline_mb, args.cpu_slack, args.mem_slack)
        results.append({**spec, **r})
        if spec["kind"] == "hostile" or r["violations"]:
            first = (r["stderr"].strip().splitlines() or [""])[-1][:150]
            print(f"{spec['name']:28s} exit {r['exit']:3d} cpu {r['cpu']:7.2f}s rss +{r['growth_mb']:7.1f} MB "
                  f"{'VIOLATION ' + '; '.join(r['violations']) if r['violations'] else 'ok'} | {first}", flush=True)
        Path(spec["path"]).unlink(missing_ok=True) if spec["path"].startswith(str(work)) else None
        if n % 100 == 99:
            print(f"... {n + 1} runs, {time.monotonic() - t0:.0f} s", flush=True)
    exits: dict[int, int] = {}
    for r in results:
        exits[r["exit"]] = exits.get(r["exit"], 0) + 1
    viol = [r for r in results if r["violations"]]
    caps = sum(1 for r in results if r["exit"] == 2 and "(limit for" in r["stderr"])
    print(f"\n{len(results)} runs in {time.monotonic() - t0:.0f} s: exits {dict(sorted(exits.items()))}; "
          f"{sum('traceback' in r['violations'] for r in results)} tracebacks; {exits.get(3, 0)} exit-3s; {caps} cap errors; "
          f"max cpu {max(r['cpu'] for r in results):.2f} s (slack {args.cpu_slack:g} s); "
          f"max memory growth {max(r['growth_mb'] for r in results):.0f} MB; {len(viol)} contract violation(s)")
    if args.json:
        args.json.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "baseline_mb": baseline_mb,
                                         "runs": results}, indent=1))


if __name__ == "__main__":
    main()
