"""Time and memory against input size (issue 24): one synthetic warp-specialized kernel at 1x to
256x, each size run through `barrier-viz check` (and `report`) in a fresh process.

    .venv/bin/python bench/bench_size.py [--scales 1,2,4,...,256] [--commands check,report]
        [--steps N] [--json OUT]

The kernel at scale k has 4k producer/consumer handoffs, each its own barrier and buffer: the
producer partition stores buffer i and arrives on barrier i, the consumer waits on it and loads.
Everything grows with k (ops, barriers, buffers, partition length), nothing else changes, so a
super-linear path in parse, facts, static rules, simulation or rendering shows as a ratio above
the size ratio. `wait4` on each run gives its CPU time and peak RSS. Reported per size: bytes,
CPU seconds, peak RSS and the ratios to 1x (time per byte should stay flat). No assertion.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_hostile import wait_measured  # noqa: E402
BAR = "!ttg.memdesc<1xi64, #shared, #smem, mutable>"
BARS = "!ttg.memdesc<1x1xi64, #shared, #smem, mutable>"
BUF = "!ttg.memdesc<128xf32, #shared, #smem, mutable>"


def kernel(handoffs: int) -> bytes:
    """`handoffs` independent store -> arrive -> wait -> load handoffs between two partitions."""
    pro, caps, args, types, prod, cons = [], [], [], [], [], []
    for i in range(handoffs):
        pro.append(f"    %bars{i} = ttg.local_alloc : () -> {BARS}\n"
                   f"    %bar{i} = ttg.memdesc_index %bars{i}[%c0_i32] : {BARS} -> {BAR}\n"
                   f"    ttng.init_barrier %bar{i}, 1 : {BAR}\n"
                   f"    %buf{i} = ttg.local_alloc : () -> {BUF}\n")
        caps += [f"%bar{i}", f"%buf{i}"]
        args += [f"%b{i}: {BAR}", f"%u{i}: {BUF}"]
        types += [BAR, BUF]
        prod.append(f"      ttg.local_store %t, %buf{i} : tensor<128xf32> -> {BUF}\n"
                    f"      ttng.arrive_barrier %bar{i}, 1 : {BAR}\n")
        cons.append(f"      ttng.wait_barrier %b{i}, %c0 : {BAR}\n"
                    f"      %x{i} = ttg.local_load %u{i} : {BUF} -> tensor<128xf32>\n")
    return (f'''#shared = #ttg.swizzled_shared<{{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}}>
#smem = #ttg.shared_memory
module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32}} {{
  tt.func public @k(%t: tensor<128xf32>) {{
    %c0_i32 = arith.constant 0 : i32
{"".join(pro)}    ttg.warp_specialize({", ".join(caps)}) attributes {{requestedRegisters = array<i32: 24>}}
    default {{
{"".join(prod)}      ttg.warp_yield
    }}
    partition0({", ".join(args)}) num_warps(1) {{
      %c0 = arith.constant 0 : i32
{"".join(cons)}      ttg.warp_return
    }} : ({", ".join(types)}) -> ()
    tt.return
  }}
}}
''').encode()


def run(cmd: list[str], steps: int, timeout: float) -> dict:
    env = {**os.environ, "PYTHONPATH": str(HERE.parent / "tools"), "BARRIER_VIZ_SIM_STEPS": str(steps)}
    start = time.monotonic()
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env)
        status, usage, timed_out = wait_measured(p, start, timeout)
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    return {"exit": os.waitstatus_to_exitcode(status), "timeout": timed_out, "wall": round(time.monotonic() - start, 2),
            "cpu": round(usage.ru_utime + usage.ru_stime, 2), "maxrss_mb": round(usage.ru_maxrss / 1024, 1),
            "stderr": stderr.strip().splitlines()[-1:]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scales", default="1,2,4,8,16,32,64,128,256")
    ap.add_argument("--commands", default="check,report")
    ap.add_argument("--steps", type=int, default=500_000, help="BARRIER_VIZ_SIM_STEPS for each run")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bv-size-"))
    rows = []
    base: dict[str, dict] = {}
    print(f"{'command':8s} {'scale':>5s} {'bytes':>9s} {'exit':>4s} {'cpu s':>8s} {'rss MB':>7s} "
          f"{'cpu/1x':>7s} {'rss/1x':>7s} {'cpu per KB (ms)':>15s}")
    for command in args.commands.split(","):
        for k in (int(s) for s in args.scales.split(",")):
            data = kernel(4 * k)
            path = work / f"size_{k}x.ttgir"
            path.write_bytes(data)
            r = run([sys.executable, "-m", "barrier_viz", command, str(path), "--format", "json"], args.steps,
                    args.timeout)
            r.update(command=command, scale=k, bytes=len(data))
            first = base.setdefault(command, r)
            print(f"{command:8s} {k:5d} {len(data):9,d} {r['exit']:4d} {r['cpu']:8.2f} {r['maxrss_mb']:7.1f} "
                  f"{r['cpu'] / max(first['cpu'], 0.01):7.1f} {r['maxrss_mb'] / first['maxrss_mb']:7.2f} "
                  f"{1000 * r['cpu'] / (len(data) / 1024):15.1f}"
                  + (" TIMEOUT" if r["timeout"] else "") + (f"  {r['stderr'][0][:100]}" if r["exit"] >= 2 else ""),
                  flush=True)
            rows.append(r)
            path.unlink()
    if args.json:
        args.json.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "runs": rows}, indent=1))


if __name__ == "__main__":
    main()
