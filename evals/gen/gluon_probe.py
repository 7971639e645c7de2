"""GPU-observed truth for our hand-written Gluon kernels (gluon_kernels.py) on the H200.

Device side; needs only torch, triton (>= 3.5, with Gluon) and the standard library. Same two
steps and labels as gpu_probe.py (whose watchdog `_run` it reuses):

    python3 gluon_probe.py bases $OUT
        launch each kernel of PROBES from Python, check it against torch, write
        $OUT/bases.json = {"meta": ..., "bases": {name: {"ttgir", "result", "config"}}}, and
        re-run each base through the override path (the round trip every mutant takes)
    python3 gluon_probe.py run WORK $OUT [--hang-after S] [--kernels ...] [--budget S]
        WORK/<name>/*.ttgir (made by gpu_cases.py mutants): compile each file in parallel, then
        launch each alone under the watchdog; $OUT/results*.json as gpu_probe.py writes it

Why an override rather than `triton.compile(file.ttgir)`: a Gluon kernel takes host-side TMA
descriptors, and a kernel compiled straight from a .ttgir file gets a launcher built from the
IR's argument types, which does not expand a `!tt.tensordesc` argument. So the child launches
the kernel through its normal JIT entry point (same launcher, same arguments), with the
compiler option `ir_override` set to the mutant's file: the Python front end builds the TTGIR,
the compiler swaps in the file's, and the rest of the pipeline (LLVM, PTX, cubin) compiles the
mutant. Each file has its own cache directory, and the child prints a
digest of the TTGIR actually compiled, so a mutant that compiled to the base's TTGIR (the hook
did not apply) is reported as `fail`, never as an observation.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from gpu_probe import _run  # noqa: E402  (the watchdog; plain module next to this one)
from gluon_cluster_kernels import PROBES as CLUSTER_PROBES  # noqa: E402
from gluon_kernels import PROBES  # noqa: E402

PROBES = {**PROBES, **CLUSTER_PROBES}

CHILD = r'''
import sys, json, os, hashlib
mode, path, probe, here = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
import torch, triton
sys.path.insert(0, here)
import gluon_kernels as gk
import gluon_cluster_kernels as gc
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

ce, size, name = probe["constexprs"], probe["size"], probe["kernel"]
torch.manual_seed(0)
dev = "cuda"
ws = gk.ws_list_api()
f16 = gl.float16
lay = lambda shape, cga=None: gl.NVMMASharedLayout.get_default_for(shape, f16, cga_layout=cga)
if name == "cga_copy":
    # a 2-CTA cluster per 128-row block: the grid counts clusters (program_id is the cluster's)
    M, NC = size["M"], size["NC"]
    x = torch.randn(M, NC, device=dev, dtype=torch.float16)
    o = torch.empty(M, NC, device=dev, dtype=torch.float16)
    x_d = TensorDescriptor.from_tensor(x, [ce["BM"], ce["BC"]], lay([ce["BM"], ce["BC"]], gc.tile_cga(probe)))
    o_d = TensorDescriptor.from_tensor(o, [ce["BM"], ce["BC"]], lay([ce["BM"], ce["BC"]], gc.tile_cga(probe)))
    grid = (M // ce["BM"],)
    fn, args = gc.cga_copy, [x_d, o_d, NC, ce["STAGES"], ce["BAR_CGA"], ce["EXPECT_FULL"], ws]
    outs, refs, tol = [o], [x.float()], 1e-6
elif name in ("gemm_ws", "gemm_2c"):
    M, N, K = size["M"], size["N"], size["K"]
    a = torch.randn(M, K, device=dev, dtype=torch.float16)
    b = torch.randn(K, N, device=dev, dtype=torch.float16)
    c = torch.empty(M, N, device=dev, dtype=torch.float16)
    ref = a.float() @ b.float()
    BM, BN, BK = ce["BM"], ce["BN"], ce["BK"]
    HM = BM if name == "gemm_ws" else BM // 2
    a_d = TensorDescriptor.from_tensor(a, [HM, BK], lay([HM, BK]))
    b_d = TensorDescriptor.from_tensor(b, [BK, BN], lay([BK, BN]))
    c_d = TensorDescriptor.from_tensor(c, [HM, BN], lay([HM, BN]))
    tiles = (M // BM) * (N // BN)
    if name == "gemm_ws":
        grid = (min(132, tiles),)
        fn, args = gk.gemm_ws, [a_d, b_d, c_d, M, N, K, ce["STAGES"], ws]
    else:
        grid = (tiles,)
        fn, args = gk.gemm_2c, [a_d, b_d, c_d, N, K, ce["STAGES"], ws]
    outs, refs, tol = [c], [ref], 1e-2
else:
    M, NC = size["M"], size["NC"]
    x = torch.randn(M, NC, device=dev, dtype=torch.float16)
    s = torch.empty(M, device=dev, dtype=torch.float32)
    mx = torch.empty(M, device=dev, dtype=torch.float32)
    x_d = TensorDescriptor.from_tensor(x, [ce["BM"], ce["BC"]], lay([ce["BM"], ce["BC"]]))
    grid = (M // ce["BM"],)
    fn, args = gk.rowstats, [x_d, s, mx, NC, ce["STAGES"], ws]
    outs, refs, tol = [s, mx], [x.float().sum(1), x.float().amax(1)], 1e-3
meta = dict(num_warps=probe["warps"], num_ctas=probe.get("ctas", 1))
if mode != "src":
    meta["ir_override"] = path  # the compiler swaps this file in for the TTGIR it built

def check():
    worst = 0.0
    for o, r in zip(outs, refs):
        e = ((o.float() - r).abs().max() / r.abs().max()).item()
        worst = max(worst, e if e == e else float("inf"))
    return worst

if mode in ("compile", "ir"):
    kern = fn.warmup(*args, grid=grid, **meta)
    digest = hashlib.sha256(kern.asm["ttgir"].encode()).hexdigest()[:16]
    print("TTGIR", digest, flush=True)
    if mode == "compile":
        print("RESULT compiled", flush=True); sys.exit(0)
reps = int(probe.get("reps", 3))
worst = 0.0
print("LAUNCH", flush=True)
for _ in range(reps):
    for o in outs:
        o.fill_(float("nan"))  # poison: an unwritten element fails the check
    kern = fn[grid](*args, **meta)
    torch.cuda.synchronize()
    worst = max(worst, check())
if mode == "src":
    open(path, "w").write(kern.asm["ttgir"])
print("RESULT", "ok" if worst < tol else "wrong", worst, flush=True)
'''


def _child(tmp: Path) -> Path:
    p = tmp / "gluon_child.py"
    p.write_text(CHILD)
    return p


def _digest(tail: str) -> str | None:
    for line in tail.splitlines():
        if line.startswith("TTGIR "):
            return line.split()[1]
    return None


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
        label, secs, tail = _run(child, "src", path, probe, 300, 60, str(tmp / "cache" / name), keep=3000)
        text = path.read_text() if path.exists() else ""
        print(f"{name}: {label} {secs}s ws={'ttg.warp_specialize' in text}", flush=True)
        if label != "ok":
            print("   ", tail.replace("\n", " | ")[-3000:], flush=True)
        entry = {"ttgir": text, "result": label, "config": probe}
        if text:
            # The round trip every mutant takes: the same TTGIR through the override hook.
            rt, rsecs, rtail = _run(child, "ir", path, probe, 300, 60, str(tmp / "rt" / name), keep=3000)
            entry["roundtrip"] = rt
            entry["roundtrip_digest"] = _digest(rtail)
            print(f"{name}: roundtrip {rt} {rsecs}s digest={entry['roundtrip_digest']}", flush=True)
            if rt != "ok":
                print("   ", rtail.replace("\n", " | ")[-3000:], flush=True)
        bundle[name] = entry
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
        files = sorted(kdir.glob("*.ttgir"), key=lambda f: (f.name != "base.ttgir", f.name))
        if args.only:
            files = [f for f in files if f.stem in args.only or f.name == "base.ttgir"]
        for f in files:
            jobs.append((kdir.name, f, probe, str(tmp / "cache" / kdir.name / f.stem)))
    # 1. compile everything in parallel (no launch), each file into its own cache
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        compiled = list(pool.map(lambda j: _run(child, "compile", j[1], j[2], 300, 1, j[3], keep=1500), jobs))
    base_digest = {k: c[2] and _digest(c[2]) for (k, f, _, _), c in zip(jobs, compiled) if f.name == "base.ttgir"}
    results: dict[str, dict] = {}
    t_start = time.time()
    name = "results-" + "-".join(args.kernels) + ".json" if args.kernels else "results.json"

    def save() -> None:
        import torch
        import triton

        meta = {"triton": triton.__version__, "torch": torch.__version__, "gpu": torch.cuda.get_device_name(0),
                "hang_after_s": args.hang_after, "runner": "gluon_probe.py (TTGIR override)"}
        (out / name).write_text(json.dumps({"meta": meta, "kernels": results}, indent=1))

    for (kname, f, probe, cache), (c, _, ctail) in zip(jobs, compiled):
        entry = results.setdefault(kname, {"config": probe, "results": {}, "seconds": {}})
        if c != "compiled":
            entry["results"][f.name] = "fail"
            print(f"{kname}/{f.name}: fail (compile) {ctail[-300:]!r}", flush=True)
            continue
        if f.name != "base.ttgir" and _digest(ctail) == base_digest.get(kname):
            entry["results"][f.name] = "fail"
            print(f"{kname}/{f.name}: fail (compiled TTGIR equals the base's: override not applied)", flush=True)
            continue
        if f.name != "base.ttgir" and entry["results"].get("base.ttgir") != "ok":
            print(f"{kname}/{f.name}: skipped (the base did not run correctly)", flush=True)
            continue
        if time.time() - t_start > args.budget:
            print(f"{kname}/{f.name}: skipped (budget)", flush=True)
            continue
        label, secs, tail = _run(child, "ir", f, probe, 120, args.hang_after, cache, keep=4000)
        if label == "fail" and "LAUNCH" in tail:
            label = "fault"
        entry["results"][f.name] = label
        entry["seconds"][f.name] = secs
        if label == "fault":
            # A launch that ended in a CUDA error (a fault: e.g. the CTA exited with a TMA copy
            # still in flight) is kept with its error line, apart from hang / ok / wrong.
            err = [ln for ln in tail.splitlines() if "CUDA error" in ln]
            entry.setdefault("errors", {})[f.name] = (err[0] if err else tail[-300:]).strip()[:300]
        print(f"{kname}/{f.name}: {label} {secs}s" + (f"  {entry.get('errors', {}).get(f.name) or tail[-200:]!r}"
                                                      if label in ("fail", "fault", "wrong") else ""), flush=True)
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
    r.add_argument("--hang-after", type=float, default=5.0)
    r.add_argument("--kernels", nargs="*", help="only these WORK/<name> folders")
    r.add_argument("--only", nargs="*", help="only these mutant stems (and the base)")
    r.add_argument("--jobs", type=int, default=12)
    r.add_argument("--budget", type=float, default=480.0, help="stop launching after this many seconds")
    r.set_defaults(func=cmd_run)
    args = ap.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
