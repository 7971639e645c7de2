"""tritonparse traces WITH launches of trace_kernels.chunk_sum on the H200 (issue 25).

Device side; needs torch, triton (>= 3.6, with Gluon), tritonparse and the standard library:

    python3 trace_probe.py OUT [--hang-after S] [--launches 4096,0] [--compression gzip]

One child process (gpu_probe.py's watchdog `_run`: the hang clock starts when the child prints
LAUNCH, after the JIT compile) turns on tritonparse's structured logging with launch tracing,
compiles `chunk_sum`, then launches it twice on a 4-program grid: K = 4096 (every program sums
its 4096 elements; checked against torch) and then K = 0 (the loader's loop is empty and the
consumer's peeled wait on slot 0 never completes). The second launch must hang: the watchdog
kills the child, and the trace keeps both launch events, because tritonparse writes each event
when the launch is entered and flushes it. OUT/ gets the trace (`*.ndjson`, as tritonparse named
it) and `probe.json`: the outcome of each launch as the child reported it and the watchdog saw.
`--compression gzip` has tritonparse write its gzip form (gzip members, `*.bin.ndjson`), and
`--launches` chooses the K of each launch (in order).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from gpu_probe import _run  # noqa: E402  (the watchdog; plain module next to this one)

CHILD = r'''
import sys, json
mode, trace_dir, probe, here = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
import tritonparse.structured_logging as tp
tp.init(trace_dir, enable_trace_launch=True, compression=probe.get("compression"))
import torch
sys.path.insert(0, here)
import trace_kernels as tk
grid = (probe["programs"],)
x = torch.randn(probe["programs"] * max(probe["launches"]) + 1, device="cuda", dtype=torch.float32)
out = torch.empty(probe["programs"], device="cuda", dtype=torch.float32)
tk.chunk_sum.warmup(x, out, probe["launches"][0], grid=grid, num_warps=4)  # the compile, before the clock
print("LAUNCH", flush=True)
for K in probe["launches"]:
    out.fill_(float("nan"))
    print("START K=%d" % K, flush=True)
    tk.chunk_sum[grid](x, out, K, num_warps=4)
    torch.cuda.synchronize()
    ref = x[: probe["programs"] * K].view(probe["programs"], K).sum(1) if K else torch.zeros_like(out)
    err = (out - ref).abs().max().item()
    print("DONE K=%d %s %g" % (K, "ok" if err < 1e-2 else "wrong", err), flush=True)
print("RESULT ok", flush=True)
'''


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--hang-after", type=float, default=20.0, help="seconds after LAUNCH before a hang is declared")
    ap.add_argument("--launches", default="4096,0", help="K of each launch, in order")
    ap.add_argument("--compression", default=None, help="tritonparse's trace compression (none, gzip)")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp())
    child = tmp / "trace_child.py"
    child.write_text(CHILD)
    probe = {"programs": 4, "launches": [int(k) for k in args.launches.split(",")], "compression": args.compression}
    trace_dir = tmp / "trace"
    label, secs, tail = _run(child, "trace", trace_dir, probe, 300, args.hang_after, str(tmp / "cache"), keep=4000)
    print(f"chunk_sum: {label} {secs}s\n{tail}", flush=True)
    outcomes = {}
    for K in probe["launches"]:
        done = [line for line in tail.splitlines() if line.startswith(f"DONE K={K} ")]
        started = any(line == f"START K={K}" for line in tail.splitlines())
        outcomes[str(K)] = done[0].split()[2] if done else ("hang" if started and label == "hang" else "not run")
    import torch
    import triton

    meta = {"triton": triton.__version__, "torch": torch.__version__, "gpu": torch.cuda.get_device_name(0),
            "watchdog": label, "seconds": secs, "hang_after": args.hang_after}
    (out / "probe.json").write_text(json.dumps({"meta": meta, "probe": probe, "outcomes": outcomes}, indent=1))
    for f in sorted(p for p in trace_dir.rglob("*") if p.is_file() and ".ndjson" in p.name):
        shutil.copy(f, out / f.name)
        print("trace:", f.name, f.stat().st_size, flush=True)


if __name__ == "__main__":
    main()
