"""GPU-observed truth for the data-dependent Gluon kernels of dd_kernels.py (device side, H200).

Needs only torch, triton (3.6 with Gluon) and the standard library. Like gluon_probe.py (whose
override mechanism it shares: the kernel's own JIT entry with the compiler option `ir_override`
pointing at the mutant's TTGIR, a digest of the compiled TTGIR to prove the swap happened), but
each file is launched once per launch schedule of dd_kernels.SCHEDULES (empty segments first /
middle / last, odd numbers of segments per program, lengths that are not multiples of the ring
depth), each launch in a fresh process under the watchdog of gpu_probe._run:

    python3 dd_probe.py run WORK $OUT [--hang-after S] [--parallel N] [--budget S]
        1. every schedule of every kernel from Python (no override), checked against torch;
        2. every WORK/<name>/*.ttgir compiled in parallel, each into its own cache;
        3. every (file, schedule) launched in a fresh process, N at a time (a hung kernel holds
           a few SMs of the GPU; the others time-share it), labelled ok / wrong / hang / fault.
        Writes $OUT/dd_results.json after every launch.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from gpu_probe import _run  # noqa: E402  (the watchdog)

CHILD = r'''
import sys, json, hashlib
mode, path, probe, here = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
import torch, triton
sys.path.insert(0, here)
import dd_kernels as dk
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

ce, name = probe["constexprs"], probe["kernel"]
sched = dk.SCHEDULES[name][probe["schedule"]]
torch.manual_seed(0)
ws = dk.ws_list_api()
lay = lambda shape: gl.NVMMASharedLayout.get_default_for(shape, gl.float16)
if name == "jagged_norm":
    x, offs, ref = dk.jagged_inputs(torch, sched, ce["D"])
    out = torch.empty(len(sched["lens"]), ce["D"], device="cuda", dtype=torch.float32)
    x_d = TensorDescriptor.from_tensor(x, [ce["BR"], ce["D"]], lay([ce["BR"], ce["D"]]))
    fn, args, grid = dk.jagged_norm, [x_d, offs, out, len(sched["lens"]), ce["STAGES"], ws], (sched["nprog"],)
    tol = 1e-3
else:
    H, N = probe["size"]["H"], probe["size"]["N"]
    x, dy, goffs, st, ntiles, ref = dk.moe_inputs(torch, sched, H, N, ce["BM"], ce["BN"])
    out = torch.empty(len(sched["sizes"]) * H, N, device="cuda", dtype=torch.float16)
    x_d = TensorDescriptor.from_tensor(x, [ce["BK"], ce["BM"]], lay([ce["BK"], ce["BM"]]))
    dy_d = TensorDescriptor.from_tensor(dy, [ce["BK"], ce["BN"]], lay([ce["BK"], ce["BN"]]))
    o_d = TensorDescriptor.from_tensor(out, [ce["BM"], ce["BN"]], lay([ce["BM"], ce["BN"]]))
    fn, args, grid = dk.moe_dw, [x_d, dy_d, o_d, st, ntiles, goffs, H, ce["STAGES"], ws], (sched["nprog"],)
    tol = 1e-2
meta = dict(num_warps=probe["warps"])
if mode != "src":
    meta["ir_override"] = path
kern = fn.warmup(*args, grid=grid, **meta)
print("TTGIR", hashlib.sha256(kern.asm["ttgir"].encode()).hexdigest()[:16], flush=True)
if mode == "compile":
    print("RESULT compiled", flush=True); sys.exit(0)
if mode == "src" and path != "-":
    open(path, "w").write(kern.asm["ttgir"])
worst = 0.0
print("LAUNCH", flush=True)
for _ in range(int(probe.get("reps", 2))):
    out.fill_(float("nan"))  # poison: an unwritten element fails the check
    fn[grid](*args, **meta)
    torch.cuda.synchronize()
    e = ((out.float() - ref).abs().max() / ref.abs().max().clamp_min(1e-6)).item()
    worst = max(worst, e if e == e else float("inf"))
print("RESULT", "ok" if worst < tol else "wrong", worst, flush=True)
'''


def _digest(tail: str) -> str | None:
    return next((ln.split()[1] for ln in tail.splitlines() if ln.startswith("TTGIR ")), None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cmd", choices=["run"])
    ap.add_argument("work")
    ap.add_argument("out")
    ap.add_argument("--hang-after", type=float, default=8.0)
    ap.add_argument("--parallel", type=int, default=6)
    ap.add_argument("--jobs", type=int, default=14)
    ap.add_argument("--budget", type=float, default=500.0, help="stop launching after this many seconds")
    ap.add_argument("--only", nargs="*", help="only these mutant stems (and the bases)")
    ap.add_argument("--reps", type=int, default=2, help="kernel launches per process (one label per process)")
    ap.add_argument("--name", default="dd_results.json")
    args = ap.parse_args()
    from dd_schedules import SCHEDULES

    work, out = Path(args.work), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp())
    child = tmp / "dd_child.py"
    child.write_text(CHILD)
    t_start = time.time()
    lock = threading.Lock()
    results: dict[str, dict] = {}
    import torch
    import triton

    meta = {"triton": triton.__version__, "torch": torch.__version__, "gpu": torch.cuda.get_device_name(0),
            "hang_after_s": args.hang_after, "parallel": args.parallel, "reps_per_process": args.reps,
            "runner": "dd_probe.py (TTGIR override, one fresh process per launch)"}

    def save() -> None:
        with lock:
            meta["elapsed_s"] = round(time.time() - t_start, 1)
            (out / args.name).write_text(json.dumps({"meta": meta, "kernels": results}, indent=1))

    kdirs = sorted(p for p in work.iterdir() if p.is_dir())
    probes = {k.name: json.loads((k / "probe.json").read_text()) for k in kdirs}
    # 1. the kernels from Python under every schedule
    src_jobs = [(k, s) for k in probes for s in SCHEDULES[probes[k]["kernel"]]]

    def src(job):
        k, s = job
        return _run(child, "src", Path(tmp / f"{k}.{s}.ttgir"), {**probes[k], "schedule": s}, 300, args.hang_after,
                    str(tmp / "src" / k), keep=2000)

    with ThreadPoolExecutor(max_workers=args.parallel) as pool:
        for (k, s), (label, secs, tail) in zip(src_jobs, pool.map(src, src_jobs)):
            entry = results.setdefault(k, {"config": probes[k], "python": {}, "launches": {}, "seconds": {}})
            entry["python"][s] = label
            print(f"{k} python/{s}: {label} {secs}s" + ("" if label == "ok" else f" {tail[-1500:]!r}"), flush=True)
    for k in probes:
        f = tmp / f"{k}.even.ttgir"
        if f.exists():
            results[k]["python_ttgir_digest"] = hashlib.sha256(f.read_bytes()).hexdigest()[:16]
    save()
    # 2. compile every file once (cache per file), in parallel
    files = [(k.name, f) for k in kdirs for f in sorted(k.glob("*.ttgir"), key=lambda f: (f.name != "base.ttgir", f.name))
             if not args.only or f.stem in args.only or f.name == "base.ttgir"]

    def comp(job):
        k, f = job
        return _run(child, "compile", f, {**probes[k], "schedule": "even"}, 300, 1, str(tmp / "cache" / k / f.stem),
                    keep=1500)

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        compiled = dict(zip(files, pool.map(comp, files)))
    base_digest = {k: _digest(compiled[(k, f)][2]) for k, f in files if f.name == "base.ttgir"}
    launches = []
    for (k, f), (label, _, tail) in compiled.items():
        entry = results[k]
        if label != "compiled":
            entry["launches"][f.name] = {s: "fail" for s in SCHEDULES[probes[k]["kernel"]]}
            entry.setdefault("errors", {})[f.name] = "compile: " + tail[-300:]
            continue
        if f.name != "base.ttgir" and _digest(tail) == base_digest.get(k):
            entry["launches"][f.name] = {s: "fail" for s in SCHEDULES[probes[k]["kernel"]]}
            entry.setdefault("errors", {})[f.name] = "compiled TTGIR equals the base's: override not applied"
            continue
        entry["launches"][f.name] = {}
        entry["seconds"][f.name] = {}
        launches += [(k, f, s) for s in SCHEDULES[probes[k]["kernel"]]]
    print(f"compiled {len(files)} files in {time.time() - t_start:.0f}s; {len(launches)} launches", flush=True)
    save()

    # 3. launches (bases first, then mutants), N at a time
    def launch(job):
        k, f, s = job
        if time.time() - t_start > args.budget:
            return job, ("skipped", 0.0, "")
        return job, _run(child, "ir", f, {**probes[k], "schedule": s, "reps": args.reps}, 120, args.hang_after,
                         str(tmp / "cache" / k / f.stem), keep=3000)

    with ThreadPoolExecutor(max_workers=args.parallel) as pool:
        for fut in as_completed([pool.submit(launch, j) for j in launches]):
            (k, f, s), (label, secs, tail) = fut.result()
            if label == "fail" and "LAUNCH" in tail:
                label = "fault"
            with lock:
                results[k]["launches"][f.name][s] = label
                results[k]["seconds"][f.name][s] = secs
                if label in ("fault", "fail"):
                    lines = tail.splitlines()
                    err = [ln for ln in lines if "CUDA error:" in ln] or [ln for ln in lines if "Error" in ln]
                    results[k].setdefault("errors", {})[f.name] = (err[0] if err else tail[-300:]).strip()[:300]
            print(f"{k}/{f.name}/{s}: {label} {secs}s", flush=True)
            save()
    save()


if __name__ == "__main__":
    main()
