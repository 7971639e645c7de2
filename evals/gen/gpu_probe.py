"""GPU-observed truth for our own kernels (runs on the H200 device machine; needs only torch,
triton and the standard library, so it runs under the image's python3 as it is).

Extends ../shared/tools/gpu_truth_probe.py from its one GEMM to the kernels of kernels.py, with
a harness per kernel (inputs, grid, reference). Two steps, because the mutants are made on the
development machine by barrier_viz's mutation engine (which needs our parser):

    python3 evals/gen/gpu_probe.py bases $OUT
        compile each Hopper kernel from Python, launch it, check it against torch, and write
        $OUT/bases.json = {name: {"ttgir": ..., "result": ok|wrong|fail, "config": ...}}
    python3 evals/gen/gpu_probe.py run WORK $OUT
        WORK/<name>/*.ttgir (made by gpu_cases.py): compile every file from TTGIR (in parallel,
        CPU only), then launch each alone under a watchdog and write $OUT/results.json =
        {name: {"config": ..., "results": {file: hang|ok|wrong|fail}, "seconds": {...}}}

Labels: hang = launched but no completion within --hang-after seconds (a normal run takes well
under a second); wrong = completed with max abs error over the kernel's tolerance; ok =
completed and correct; fail = did not compile or launch. A killed process frees the GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent

# name -> kernel in kernels.py, constexprs, launch meta. Hopper (cuda:90) warp-specialized.
PROBES: dict[str, dict] = {
    "gemm_tile": {"kernel": "gemm_tile", "constexprs": {"BM": 128, "BN": 128, "BK": 64}, "warps": 4, "stages": 4},
    "gemm_persistent": {"kernel": "gemm_persistent", "warps": 4, "stages": 3,
                        "constexprs": {"BM": 128, "BN": 128, "BK": 64, "GROUP": 8, "NUM_PROGS": 132}},
    "gemm_subtiled": {"kernel": "gemm_subtiled", "warps": 4, "stages": 3,
                      "constexprs": {"BM": 128, "BN": 256, "BK": 64, "NUM_PROGS": 132}},
    "gemm_bias_relu": {"kernel": "gemm_bias_relu", "constexprs": {"BM": 128, "BN": 128, "BK": 64}, "warps": 4,
                       "stages": 3},
    # With num_warps=4 triton 3.6 warp-specializes these and the result is NaN on the H200 (seen
    # 2026-11-30; without warp specialization, or with 8 warps where 3.6 does not specialize, the
    # same kernel is correct). Their mutants still tell hang from completion.
    "attn_fwd": {"kernel": "attn_fwd", "constexprs": {"D": 64, "BM": 128, "BN": 64}, "warps": 4, "stages": 3},
    "attn_fwd_persistent": {"kernel": "attn_fwd_persistent", "warps": 4, "stages": 3,
                            "constexprs": {"D": 64, "BM": 128, "BN": 64, "NUM_PROGS": 132}},
}

CHILD = r'''
import sys, json, math, torch, triton
sys.path.insert(0, sys.argv[4])
import kernels
triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
mode, path, probe = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
ce = probe["constexprs"]; name = probe["kernel"]
torch.manual_seed(0)
dev = "cuda"
if name.startswith("gemm"):
    M = N = K = 1024
    a = torch.randn(M, K, device=dev, dtype=torch.float16)
    b = torch.randn(N, K, device=dev, dtype=torch.float16)
    c = torch.zeros(M, N, device=dev, dtype=torch.float16)
    ref = a.float() @ b.float().T
    args = [a, b, c]
    if name == "gemm_bias_relu":
        bias = torch.randn(N, device=dev, dtype=torch.float32)
        args.append(bias)
        ref = torch.relu(ref + bias)
    args += [M, N, K]
    tiles = (M // ce["BM"]) * (N // ce["BN"])
    grid = (ce["NUM_PROGS"],) if "NUM_PROGS" in ce else (tiles,)
    out, tol = c, 1e-1
else:
    # Persistent: enough (query tile, head) pairs that every program runs several tiles, so each
    # ring slot of the tile loop is reused (with 4 heads, 32 tiles over 132 programs never reuse
    # one, and a mutant that breaks slot reuse completes).
    ZH, N_CTX, D = (132 if "NUM_PROGS" in ce else 4), 1024, ce["D"]
    q, k, v = (torch.randn(ZH * N_CTX, D, device=dev, dtype=torch.float16) for _ in range(3))
    o = torch.zeros_like(q)
    scale = 1.0 / math.sqrt(D)
    s = (q.float().view(ZH, N_CTX, D) @ k.float().view(ZH, N_CTX, D).transpose(1, 2)) * scale
    ref = (torch.softmax(s, -1) @ v.float().view(ZH, N_CTX, D)).reshape(ZH * N_CTX, D)
    args = [q, k, v, o, scale, ZH, N_CTX]
    grid = (ce["NUM_PROGS"],) if "NUM_PROGS" in ce else (N_CTX // ce["BM"], ZH)
    out, tol = o, 2e-2
fn = getattr(kernels, name)
if mode == "src":
    kern = fn[grid](*args, **ce, num_warps=probe["warps"], num_stages=probe["stages"])
    open(path, "w").write(kern.asm["ttgir"])
elif mode == "compile":
    triton.compile(path)
    print("RESULT compiled"); sys.exit(0)
else:
    kern = triton.compile(path)
    g = tuple(grid) + (1,) * (3 - len(grid))
    print("LAUNCH", flush=True)
    kern[g](*args)
torch.cuda.synchronize()
err = (out.float() - ref).abs().max().item()
print("RESULT", "ok" if err < tol else "wrong", err, flush=True)
'''


def _child(tmp: Path) -> Path:
    p = tmp / "probe_child.py"
    p.write_text(CHILD)
    return p


def _run(child: Path, mode: str, path: Path, probe: dict, compile_timeout: float, hang_after: float,
         cache: str, keep: int = 300) -> tuple[str, float, str]:
    """Run one child; the hang clock starts when it prints LAUNCH (compiling is not hanging).
    Returns the label, the seconds and the last `keep` characters of its output."""
    env = dict(os.environ, TRITON_CACHE_DIR=cache)
    t0 = time.time()
    proc = subprocess.Popen([sys.executable, str(child), mode, str(path), json.dumps(probe), str(HERE)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    out: list[str] = []
    launched_at = None
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)

    def drain() -> None:
        while True:
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                return
            if not chunk:
                return
            out.append(chunk.decode(errors="replace"))

    while True:
        drain()
        if launched_at is None and "LAUNCH" in "".join(out):
            launched_at = time.time()
        if proc.poll() is not None:
            drain()
            break
        now = time.time()
        if (launched_at and now - launched_at > hang_after) or (not launched_at and now - t0 > compile_timeout):
            proc.kill()
            proc.wait()
            text = "".join(out)
            return ("hang" if launched_at else "fail"), round(now - t0, 1), text[-keep:]
        time.sleep(0.05)
    text = "".join(out)
    label = "fail"
    for line in text.splitlines():
        if line.startswith("RESULT "):
            label = line.split()[1]
    return label, round(time.time() - t0, 1), text[-keep:]


def cmd_bases(args: argparse.Namespace) -> None:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp())
    child = _child(tmp)
    bundle = {}
    for name, probe in PROBES.items():
        if args.only and name not in args.only:
            continue
        path = tmp / f"{name}.ttgir"
        label, secs, tail = _run(child, "src", path, probe, 300, 60, str(tmp / "cache"))
        text = path.read_text() if path.exists() else ""
        print(f"{name}: {label} {secs}s ws={'ttg.warp_specialize' in text}", flush=True)
        if label != "ok":
            print("   ", tail.replace("\n", " | ")[-300:], flush=True)
        bundle[name] = {"ttgir": text, "result": label, "config": probe}
    import torch
    import triton

    meta = {"triton": triton.__version__, "torch": torch.__version__, "gpu": torch.cuda.get_device_name(0)}
    (out / "bases.json").write_text(json.dumps({"meta": meta, "bases": bundle}))


def cmd_run(args: argparse.Namespace) -> None:
    work, out = Path(args.work), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp())
    child = _child(tmp)
    jobs = []
    for kdir in sorted(p for p in work.iterdir() if p.is_dir() and (not args.kernels or p.name in args.kernels)):
        probe = json.loads((kdir / "probe.json").read_text())
        for f in sorted(kdir.glob("*.ttgir")):
            jobs.append((kdir.name, f, probe))
    cache = str(tmp / "cache")
    # 1. compile everything in parallel (no GPU work), so the serial launches below are quick
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        compiled = list(pool.map(lambda j: _run(child, "compile", j[1], j[2], 300, 1, cache)[0], jobs))
    results: dict[str, dict] = {}
    t_start = time.time()
    name = "results-" + "-".join(args.kernels) + ".json" if args.kernels else "results.json"

    def save() -> None:
        import torch
        import triton

        meta = {"triton": triton.__version__, "torch": torch.__version__, "gpu": torch.cuda.get_device_name(0),
                "hang_after_s": args.hang_after}
        (out / name).write_text(json.dumps({"meta": meta, "kernels": results}, indent=1))

    for (kname, f, probe), c in zip(jobs, compiled):
        entry = results.setdefault(kname, {"config": probe, "results": {}, "seconds": {}})
        if c != "compiled":
            entry["results"][f.name] = "fail"
            print(f"{kname}/{f.name}: fail (compile)", flush=True)
            continue
        if time.time() - t_start > args.budget:
            print(f"{kname}/{f.name}: skipped (budget)", flush=True)
            continue
        label, secs, tail = _run(child, "ir", f, probe, 120, args.hang_after, cache)
        entry["results"][f.name] = label
        entry["seconds"][f.name] = secs
        print(f"{kname}/{f.name}: {label} {secs}s" + (f"  {tail[-160:]!r}" if label == "fail" else ""), flush=True)
        save()  # after every launch: a run cut short by its time limit keeps what it observed
    save()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("bases")
    b.add_argument("out")
    b.add_argument("--only", nargs="*")
    b.set_defaults(func=cmd_bases)
    r = sub.add_parser("run")
    r.add_argument("work")
    r.add_argument("out")
    r.add_argument("--hang-after", type=float, default=8.0)
    r.add_argument("--kernels", nargs="*", help="only these WORK/<name> folders")
    r.add_argument("--jobs", type=int, default=12)
    r.add_argument("--budget", type=float, default=480.0, help="stop launching after this many seconds")
    r.set_defaults(func=cmd_run)
    args = ap.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
