"""Eval cases for input-dependent hangs (issue 13): our input_kernels.py, compiled on the CPU,
each as a known-good case and as a mutant whose peeled wait lost its guard.

Usage (compiler venvs as in generate.py; upstream triton 3.9.0 in /tmp/up39, fbtriton 3.7.4
with Meta AutoWS in /tmp/fbt-inputs):

    python evals/gen/input_cases.py compile --python /tmp/up39/bin/python --compiler triton
    python evals/gen/input_cases.py compile --python /tmp/fbt-inputs/bin/python --compiler fbtriton-metaws
    python evals/gen/input_cases.py cases

`generate.py cases --clean` removes every generated case; run `input_cases.py cases` after it.

The mutations. `unguard_peeled_wait`: the pipeliner peels a loop's first iteration and guards
the peeled wait with "the loop runs at least once" (`arith.cmpi` on the bounds). Dropping that
predicate keeps the kernel correct for every launch where the loop runs, and hangs it where it
does not (the last split of a split-K GEMM, the first query tile of the causal loop, a CTA with
no tile): the waiter polls a phase that no producer iteration will ever complete. The default
launch never shows it (its loops all run); an input point does. `release_under_flag`: a
release in the loop that also holds an `scf.if` on a runtime flag is predicated on that flag,
so the partition that tests the flag releases only when it is set while the acquiring partition
always waits: a hang once the ring wraps with the flag off.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
OUT = HERE / "out_inputs"
CASES = REPO / "evals" / "cases"
COMPILERS = {"triton": {}, "fbtriton-metaws": {"TRITON_USE_META_WS": "1"}}
CAP = 100


def _compile_here(compiler: str, out_dir: Path) -> list[dict]:
    sys.path.insert(0, str(HERE))
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from input_kernels import KERNELS

    out_dir.mkdir(parents=True, exist_ok=True)
    records = []
    for name, (fn, sig, variants) in KERNELS.items():
        constexprs = variants[0]
        full = dict(sig)
        full.update({k: "constexpr" for k in constexprs})
        rec = {"kernel": name, "variant": 0, "constexprs": constexprs, "target": f"cuda:{CAP}", "compiler": compiler,
               "version": triton.__version__, "flags": dict(COMPILERS[compiler]), "num_warps": 4, "num_stages": 3}
        try:
            k = triton.compile(ASTSource(fn, full, constexprs), target=GPUTarget("cuda", CAP, 32),
                               options={"num_warps": 4, "num_stages": 3})
        except Exception as exc:  # a kernel a compiler cannot build is recorded, not fatal
            rec["error"] = " ".join(str(exc).split())[:300]
            records.append(rec)
            print(f"{compiler} {name}: FAILED")
            continue
        path = out_dir / f"{name}_v0_sm{CAP}.ttgir"
        path.write_text(k.asm["ttgir"])
        rec["path"] = str(path.relative_to(REPO))
        records.append(rec)
        print(f"{compiler} {name}: {path.stat().st_size} bytes")
    return records


def cmd_compile(args) -> None:
    if args.inner:
        Path(args.inner).write_text(json.dumps(_compile_here(args.compiler, OUT / args.compiler), indent=1))
        return
    env = dict(os.environ, TRITON_CACHE_DIR=tempfile.mkdtemp(prefix="tcache-inputs-"), **COMPILERS[args.compiler])
    rec_file = Path(tempfile.mkdtemp()) / "records.json"
    subprocess.run([args.python, __file__, "compile", "--compiler", args.compiler, "--inner", str(rec_file)],
                   env=env, check=True)
    manifest = OUT / "manifest.json"
    old = json.loads(manifest.read_text())["kernels"] if manifest.exists() else []
    new = json.loads(rec_file.read_text())
    keep = [r for r in old if r["compiler"] != args.compiler]
    manifest.write_text(json.dumps({"kernels": sorted(keep + new, key=lambda r: (r["compiler"], r["kernel"]))},
                                   indent=1) + "\n")


def unguard_peeled_wait(text: str):
    """The first wait outside every loop, in a partition, whose predicate the launch decides:
    (line, mutated text, predicate formula), or None."""
    sys.path.insert(0, str(REPO / "tools"))
    from barrier_viz.ir.parse import parse_ir
    from barrier_viz.analyses.launch.trip_counts import build_model, render, variables

    ir = parse_ir(text)
    fn = ir.functions()[0]
    model = build_model(fn, {id(o) for o in fn.walk() if o.name == "ttng.wait_barrier"})
    for site in model.sites:
        op = site.op
        if site.kind != "pred" or op.name != "ttng.wait_barrier" or not variables(site.cond):
            continue
        if any(a.name in ("scf.for", "scf.while") for a in op.ancestors()):
            continue
        pos = op.positional
        lines = text.split("\n")
        line = lines[op.line - 1]
        old = f"{pos[0]}, {pos[1]}, {pos[2]}"
        if old not in line:
            continue
        lines[op.line - 1] = line.replace(old, f"{pos[0]}, {pos[1]}", 1)
        return op.line, "\n".join(lines), render(site.cond), line.strip()
    return None


def release_under_flag(text: str):
    """The release (an `arrive_barrier` predicated on a constant true) that sits in the same
    loop body as an `scf.if` on a runtime flag, predicated on that flag instead: the releasing
    partition tests the flag, the acquiring one does not. (line, text, condition, original)."""
    sys.path.insert(0, str(REPO / "tools"))
    from barrier_viz.ir.parse import parse_ir
    from barrier_viz.analyses.launch.trip_counts import build_model, render, variables

    ir = parse_ir(text)
    fn = ir.functions()[0]
    model = build_model(fn, {id(o) for o in fn.walk() if o.name.startswith("ttng.")})
    flags = {a.position for a in model.args if a.flag}
    for site in model.sites:
        if site.kind != "if" or not any(k == "arg" and v in flags for k, v in variables(site.cond)):
            continue
        block = site.op.block
        if block is None or not any(a.name in ("scf.for", "scf.while") for a in site.op.ancestors()):
            continue
        cond = site.op.operands[0]
        for op in block.operations[:block.operations.index(site.op)]:
            pos = op.positional
            if op.name != "ttng.arrive_barrier" or len(pos) < 2:
                continue
            lines = text.split("\n")
            line = lines[op.line - 1]
            old = f"{pos[0]}, 1, {pos[1]}"
            if old not in line or not pos[1].startswith("%true"):
                continue
            lines[op.line - 1] = line.replace(old, f"{pos[0]}, 1, {cond}", 1)
            return op.line, "\n".join(lines), render(site.cond), line.strip()
    return None


def cmd_cases(args) -> None:
    sys.path.insert(0, str(REPO / "tools"))
    from barrier_viz.evals.cases import write_case

    manifest = json.loads((OUT / "manifest.json").read_text())
    for rec in manifest["kernels"]:
        if "path" not in rec:
            continue
        text = (REPO / rec["path"]).read_text()
        base = f"{rec['compiler']}.{rec['kernel']}_v0.sm{CAP}"
        source = {k: rec[k] for k in ("compiler", "version", "target", "flags", "kernel", "constexprs", "num_warps",
                                      "num_stages")}
        write_case(CASES / f"{base}.base", text, findings=[], absent=["deadlock.*", "race.*", "expect.*", "phase.*"],
                   notes="known-good: compiled unmodified from evals/gen/input_kernels.py (a loop whose trip count "
                         "the launch decides); clean at the default launch and at every input point tried.",
                   source=source)
        m = unguard_peeled_wait(text)
        if m is not None:
            line, mutated, cond, original = m
            write_case(CASES / f"{base}.unguard_peeled_wait_L{line}", mutated, findings=[{"kind": "hang"}], absent=[],
                       notes=f"mutation unguard_peeled_wait: the peeled wait at line {line} lost its predicate ({cond}), "
                             "so it waits even when the loop it was peeled from runs no iteration and nothing fills "
                             "the slot: a hang at the launches where the predicate is false, found by an input point.",
                       source=dict(source, mutation={"operator": "unguard_peeled_wait", "line": line,
                                                     "edit": "predicate operand removed", "original": original}))
            print(f"{base}: unguard_peeled_wait_L{line}")
        m = release_under_flag(text)
        if m is not None:
            line, mutated, cond, original = m
            write_case(CASES / f"{base}.release_under_flag_L{line}", mutated, findings=[{"kind": "hang"}], absent=[],
                       notes=f"mutation release_under_flag: the release at line {line} is predicated on the runtime "
                             f"flag ({cond}) while its acquirer waits unconditionally: with the flag off, once the "
                             "ring has wrapped the acquirer waits for a release that never comes (an input point).",
                       source=dict(source, mutation={"operator": "release_under_flag", "line": line,
                                                     "edit": "predicate true replaced by the flag's condition",
                                                     "original": original}))
            print(f"{base}: release_under_flag_L{line}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compile")
    c.add_argument("--python", default=sys.executable)
    c.add_argument("--compiler", choices=sorted(COMPILERS), required=True)
    c.add_argument("--inner", help=argparse.SUPPRESS)
    c.set_defaults(func=cmd_compile)
    k = sub.add_parser("cases")
    k.set_defaults(func=cmd_cases)
    args = ap.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
