"""Run Triton's own C++ MLIR parser; meant for a *side* interpreter that has triton installed.

barrier-viz never imports triton: its oracle test and its parse benchmark start this script under
the interpreter named by BARRIER_VIZ_TRITON_PYTHON (or the current one, when it can import
triton) and read JSON from stdout. It uses only the standard library and triton.

    python triton_side.py counts < request.json   # {"units": [{"id": "...", "path": "..."}]}
        -> {"results": {id: {"ok": true, "counts": {op_name: n}, "signatures": {"name|operands|results": n}}
                             | {"ok": false, "error": "first diagnostic"}}}
    python triton_side.py time PATH --runs N
        -> {"path": PATH, "runs": N, "seconds": [...], "cpu_seconds": [...]}   # read + parse, per run

Counts come from `module.walk`, which visits every operation the C++ parser built, including
ones the printer hides (implicit terminators, the implicit module, `ttg.warp_specialize.partitions`).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile
import time


def _context():
    """A context with every dialect a Triton NVIDIA compile can print."""
    import triton._C.libtriton as libtriton
    from triton._C.libtriton import ir

    ctx = ir.context()
    ir.load_dialects(ctx)
    libtriton.nvidia.load_dialects(ctx)
    return ir, ctx


def _parse_capturing_diagnostics(ir, ctx, path: str):
    """Parse `path`; MLIR prints the reason for a refusal on fd 2, so catch fd 2 in a temp file
    and return its first line as the error instead of letting it reach the caller's terminal."""
    with tempfile.TemporaryFile() as err:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(err.fileno(), 2)
        try:
            return ir.parse_mlir_module(path, ctx), ""
        except Exception as exc:  # noqa: BLE001 - the binding raises RuntimeError on any failure
            os.dup2(saved, 2)
            err.seek(0)
            first = err.read().decode("utf-8", "replace").strip().split("\n")[0]
            return None, first or f"{type(exc).__name__}: {exc}"
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def count_ops(ir, ctx, path: str) -> dict:
    """Per-name operation counts of one file, or the reason the C++ parser refused it."""
    module, error = _parse_capturing_diagnostics(ir, ctx, path)
    if module is None:
        return {"ok": False, "error": error}
    counts: collections.Counter[str] = collections.Counter()
    signatures: collections.Counter[str] = collections.Counter()

    def visit(op) -> None:
        name = op.get_name()
        counts[name] += 1
        signatures[f"{name}|{op.get_num_operands()}|{op.get_num_results()}"] += 1

    module.walk(visit)
    return {"ok": True, "counts": dict(sorted(counts.items())), "signatures": dict(sorted(signatures.items()))}


def cmd_counts() -> None:
    request = json.load(sys.stdin)
    ir, ctx = _context()
    results = {u["id"]: count_ops(ir, ctx, u["path"]) for u in request["units"]}
    json.dump({"results": results}, sys.stdout)


def cmd_time(path: str, runs: int) -> None:
    """Time reading + parsing `path` (the C++ parser reads the file itself) `runs` times."""
    ir, ctx = _context()
    ir.parse_mlir_module(path, ctx)  # warm-up: dialect registration, first-touch costs
    seconds, cpu_seconds = [], []
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        ir.parse_mlir_module(path, ctx)
        seconds.append(time.perf_counter() - t0)
        cpu_seconds.append(time.process_time() - c0)
    json.dump({"path": path, "runs": runs, "seconds": seconds, "cpu_seconds": cpu_seconds}, sys.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("counts")
    t = sub.add_parser("time")
    t.add_argument("path")
    t.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    if args.cmd == "counts":
        cmd_counts()
    else:
        cmd_time(args.path, args.runs)


if __name__ == "__main__":
    main()
