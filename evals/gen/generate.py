"""Regenerate the eval corpus's compiled kernels: our kernels (kernels.py) compiled on the CPU.

Usage (each compiler lives in its own virtual environment, so the script re-runs itself there):

    python evals/gen/generate.py compile --python /tmp/fbt/bin/python --compiler fbtriton-metaws
    python evals/gen/generate.py compile --python /tmp/fbt/bin/python --compiler fbtriton
    python evals/gen/generate.py compile --python /tmp/up/bin/python  --compiler triton
    python evals/gen/generate.py cases            # base + mutant cases into evals/cases/

`compile` writes evals/gen/out/<compiler>/<kernel>_<variant>_sm<cap>.ttgir and records each in
evals/gen/out/manifest.json (compiler, version, target, flags, constexprs, warps, stages).
`cases` reads the manifest, keeps every compiled kernel that is warp-specialized, and writes one
known-good case per kernel plus the mutants `barrier_viz.evals.mutate` derives from it.
No GPU is needed: triton.compile(ASTSource(...), target=GPUTarget("cuda", cap, 32)) runs the
whole pipeline to cubin on the host (ptxas ships with the wheel).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
OUT = HERE / "out"
MANIFEST = OUT / "manifest.json"
CASES = REPO / "evals" / "cases"

# compiler label -> environment that selects it inside its venv
COMPILERS: dict[str, dict[str, str]] = {
    "fbtriton-metaws": {"TRITON_USE_META_WS": "1"},
    "fbtriton": {"TRITON_USE_META_WS": "0"},
    "triton": {},
}
TARGETS = (100, 90)
# Mutants kept per operator per compiled kernel: enough to cover every operator's sub-kinds
# (producer/consumer waits, more/less bytes) across kernels while keeping the eval to minutes.
PER_OPERATOR = {"drop_only_arrival": 1, "const_phase": 1, "flip_parity": 2, "init_count": 1, "expect_bytes": 1,
                "dup_arrive": 1, "dup_wait": 1, "drop_wait": 2, "zero_store": 1,
                # hand-written idioms (mutate_handwritten): GPU-observed on Gluon kernels instead
                "drop_pre_arrive": 0, "phase_no_flip": 0, "early_release": 0, "init_count_less": 0}
WARPS = {"gemm": 4, "attn": 4}
STAGES = 3


def _compile_here(compiler: str, out_dir: Path, only: list[str] | None) -> list[dict]:
    """Runs inside the compiler's venv: compile every kernel variant for every target."""
    sys.path.insert(0, str(HERE))
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from kernels import KERNELS

    records = []
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, (fn, sig, variants) in KERNELS.items():
        if only and name not in only:
            continue
        for vi, constexprs in enumerate(variants):
            full_sig = dict(sig)
            full_sig.update({k: "constexpr" for k in constexprs})
            for cap in TARGETS:
                stem = f"{name}_v{vi}_sm{cap}"
                rec = {"kernel": name, "variant": vi, "constexprs": constexprs, "target": f"cuda:{cap}",
                       "compiler": compiler, "version": triton.__version__,
                       "flags": {k: v for k, v in COMPILERS[compiler].items()},
                       "num_warps": WARPS[name.split("_")[0]], "num_stages": STAGES}
                try:
                    src = ASTSource(fn, full_sig, constexprs)
                    k = triton.compile(src, target=GPUTarget("cuda", cap, 32),
                                       options={"num_warps": rec["num_warps"], "num_stages": STAGES})
                    text = k.asm["ttgir"]
                except Exception as exc:  # a kernel a compiler cannot build is recorded, not fatal
                    rec["error"] = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
                    print(f"{compiler} {stem}: FAILED {rec['error'][:160]}", flush=True)
                    records.append(rec)
                    continue
                path = out_dir / f"{stem}.ttgir"
                path.write_text(text)
                rec["path"] = str(path.relative_to(REPO))
                rec["warp_specialized"] = "ttg.warp_specialize" in text
                rec["bytes"] = len(text)
                print(f"{compiler} {stem}: {len(text)} bytes ws={rec['warp_specialized']}", flush=True)
                records.append(rec)
    return records


def cmd_compile(args: argparse.Namespace) -> None:
    """Re-run this script under the compiler's interpreter with its flags, then merge the
    records it prints into the manifest."""
    if args.inner:
        recs = _compile_here(args.compiler, OUT / args.compiler, args.only)
        Path(args.inner).write_text(json.dumps(recs, indent=1))
        return
    env = dict(os.environ)
    env.update(COMPILERS[args.compiler])
    env["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix=f"tcache-{args.compiler}-")
    rec_file = Path(tempfile.mkdtemp()) / "records.json"
    cmd = [args.python, __file__, "compile", "--compiler", args.compiler, "--inner", str(rec_file)]
    if args.only:
        cmd += ["--only", *args.only]
    subprocess.run(cmd, env=env, check=True)
    recs = json.loads(rec_file.read_text())
    manifest = json.loads(MANIFEST.read_text()) if MANIFEST.exists() else {"kernels": []}
    key = lambda r: (r["compiler"], r["kernel"], r["variant"], r["target"])  # noqa: E731
    new = {key(r) for r in recs}
    manifest["kernels"] = [r for r in manifest["kernels"] if key(r) not in new] + recs
    manifest["kernels"].sort(key=key)
    MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n")


def cmd_cases(args: argparse.Namespace) -> None:
    """Write known-good and mutant cases for every warp-specialized compiled kernel."""
    sys.path.insert(0, str(REPO / "tools"))
    from barrier_viz.evals.cases import write_case
    from barrier_viz.evals.mutate import mutants

    manifest = json.loads(MANIFEST.read_text())
    total = 0
    if CASES.exists() and args.clean:
        for old in CASES.iterdir():
            if (old / "expected.yaml").is_file() and old.name.split(".")[0] in COMPILERS and ".dump_" not in old.name:
                for f in old.iterdir():
                    f.unlink()
                old.rmdir()
    for rec in manifest["kernels"]:
        if "path" not in rec:
            continue
        text = (REPO / rec["path"]).read_text()
        base = f"{rec['compiler']}.{rec['kernel']}_v{rec['variant']}.sm{rec['target'].split(':')[1]}"
        source = {k: rec[k] for k in ("compiler", "version", "target", "flags", "kernel", "constexprs",
                                       "num_warps", "num_stages")}
        write_case(CASES / f"{base}.base", text, findings=[], absent=["deadlock.*", "race.*", "expect.*",
                                                                         "phase.*"],
                   notes="known-good: compiled unmodified from evals/gen/kernels.py; the compiler's "
                         "output is assumed correct (the same kernels run correctly on a GPU).",
                   source=source, compress=True)
        total += 1
        if rec["variant"] != 0:
            continue  # other variants are kept as known-good inputs; their mutants would repeat v0's
        for m in mutants(text, limit_per_operator=PER_OPERATOR, rotate=zlib.crc32(base.encode())):
            write_case(CASES / f"{base}.{m.name}", m.text, findings=m.findings, absent=m.absent,
                       notes=f"mutation {m.operator}: {m.why}", source=dict(source, mutation=m.describe()),
                       compress=True)
            total += 1
    print(f"wrote {total} cases under {CASES.relative_to(REPO)}")


# Dump snapshots kept as known-good cases: the warp-specialization pass's internal steps the
# issue names (printed by fbtriton under MLIR_ENABLE_DUMP as "WarpSpec internal IR Dump After:
# <step>") and the late snapshot before partition-warp optimization.
DUMP_STEPS = ("doMemoryPlanner", "doCodePartition", "doTokenLowering")
DUMP_KERNELS = ("gemm_persistent", "gemm_tile", "attn_fwd_persistent")
DUMP_LATE = "Before TritonGPUOptimizePartitionWarps"


def cmd_dumps(args: argparse.Namespace) -> None:
    """Compile with MLIR_ENABLE_DUMP=1 under fbtriton (Meta AutoWS) and keep chosen snapshots."""
    sys.path.insert(0, str(REPO / "tools"))
    from barrier_viz.evals.cases import write_case
    from barrier_viz.inputs import open_input

    script = (
        "import sys\nsys.path.insert(0, %r)\nimport triton\nfrom triton.backends.compiler import GPUTarget\n"
        "from triton.compiler import ASTSource\nfrom kernels import KERNELS\n"
        "fn, sig, variants = KERNELS[sys.argv[1]]\nce = variants[0]; s = dict(sig); s.update({k: 'constexpr' for k in ce})\n"
        "triton.compile(ASTSource(fn, s, ce), target=GPUTarget('cuda', int(sys.argv[2]), 32),"
        " options={'num_warps': %d, 'num_stages': %d})\n" % (str(HERE), 4, STAGES))
    with tempfile.TemporaryDirectory() as tmp:
        runner = Path(tmp) / "dump.py"
        runner.write_text(script)
        for kernel in DUMP_KERNELS:
            for cap in TARGETS:
                env = dict(os.environ, TRITON_USE_META_WS="1", MLIR_ENABLE_DUMP="1",
                           TRITON_CACHE_DIR=tempfile.mkdtemp(dir=tmp))
                dump = Path(tmp) / f"{kernel}_{cap}.txt"
                with open(dump, "wb") as err:
                    rc = subprocess.run([args.python, str(runner), kernel, str(cap)], env=env, stderr=err,
                                        stdout=subprocess.DEVNULL).returncode
                if rc != 0:
                    print(f"{kernel} sm{cap}: compile failed, no snapshots")
                    continue
                units = [u for u in open_input(str(dump)).units if "llvm" not in u.flags]
                chosen = [(step, next((u for u in units if u.label.endswith(step)), None)) for step in DUMP_STEPS]
                chosen.append(("late", next((u for u in units if u.label.startswith(DUMP_LATE)
                                             and "warp_specialize" in u.flags), None)))
                lines = dump.read_text(errors="replace").split("\n")
                for tag, u in chosen:
                    if u is None:
                        continue
                    text = "\n".join(lines[u.start_line - 2:u.end_line]) + "\n"
                    name = f"fbtriton-metaws.{kernel}_v0.sm{cap}.dump_{tag}"
                    write_case(CASES / name, text, findings=[], absent=["deadlock.*", "hang"],
                               notes=f"known-good: MLIR_ENABLE_DUMP snapshot '{u.label}' of the unmodified kernel "
                                     "(fbtriton, TRITON_USE_META_WS=1); intermediate IR of a correct compile has "
                                     "no deadlock.",
                               source={"compiler": "fbtriton-metaws", "version": "3.7.4+fb", "target": f"cuda:{cap}",
                                       "flags": {"TRITON_USE_META_WS": "1", "MLIR_ENABLE_DUMP": "1"},
                                       "kernel": kernel, "snapshot": u.label},
                               compress=True, input_name="input.txt.gz")
                    print(f"{name}: {u.label} ({u.end_line - u.start_line + 2} lines)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compile")
    c.add_argument("--python", default=sys.executable)
    c.add_argument("--compiler", choices=sorted(COMPILERS), required=True)
    c.add_argument("--only", nargs="*")
    c.add_argument("--inner", help=argparse.SUPPRESS)
    c.set_defaults(func=cmd_compile)
    k = sub.add_parser("cases")
    k.add_argument("--clean", action="store_true", help="remove generated cases first")
    k.set_defaults(func=cmd_cases)
    d = sub.add_parser("dumps", help="known-good dump-snapshot cases (fbtriton, Meta AutoWS)")
    d.add_argument("--python", default="/tmp/fbt/bin/python")
    d.set_defaults(func=cmd_dumps)
    args = ap.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
