"""Fixtures of issue 25 made on this CPU: a compile-only tritonparse trace and a Triton cache.

    /work/venvs/<venv>/bin/python evals/gen/trace_fixtures.py tests/fixtures

needs triton (upstream 3.6, as on the H200), tritonparse and torch (tritonparse imports it) in
that interpreter. With tritonparse's structured logging on and `TRITON_CACHE_DIR` pointing at a
fresh folder, it compiles through `triton.compile` with explicit targets (no GPU needed):

* `trace_kernels.chunk_sum` (Gluon, hand-written warp specialization) for cuda:90, and
  `chunk_sum_lost_ready`, whose loader arrives on barriers nobody waits on (it hangs);
* `input_kernels.gemm_splitk` (tl.range(..., warp_specialize=True)) for cuda:100, twice
  (num_stages 2 and 3: two cache entries of one kernel, as autotuning makes them);
* `input_kernels.gemm_persistent_few` for cuda:100 (a second name starting with `gemm`).

Then it writes
* `traces/cpu_compile.ndjson`: the trace as tritonparse wrote it, trimmed: each compilation
  event keeps only the `.ttgir`, `.ttir` and `.json` entries of `payload.file_content` (LLVM IR
  and PTX are most of the bytes and barrier-viz reads only the TTGIR); everything else, event
  order and line structure included, is tritonparse's output.
* `triton_cache/<hash>/`: the cache Triton wrote, trimmed to each entry's `<kernel>.ttgir` and
  `<kernel>.json` (the metadata `--kernel` reads); the `.cubin`, `.ptx`, `.llir`, `.ttir`,
  `.source` and `__grp__` files are left out for size.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
KEEP_STAGES = (".ttgir", ".ttir", ".json")


def main() -> None:
    out = Path(sys.argv[1])
    tmp = Path(tempfile.mkdtemp())
    os.environ["TRITON_CACHE_DIR"] = str(tmp / "cache")
    sys.path.insert(0, str(HERE))
    import tritonparse.structured_logging as tp

    tp.init(str(tmp / "trace"))
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.experimental.gluon._runtime import GluonASTSource

    import input_kernels as ik
    import trace_kernels as tk

    sig = {"x_ptr": "*fp32", "out_ptr": "*fp32", "K": "i32", "num_warps": "constexpr"}
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(3)}
    for fn in (tk.chunk_sum, tk.chunk_sum_lost_ready):
        triton.compile(GluonASTSource(fn, sig, {(fn.arg_names.index("num_warps"),): 4}, attrs=attrs),
                       target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
    for name, stages in (("gemm_splitk", 2), ("gemm_splitk", 3), ("gemm_persistent_few", 3)):
        kfn, ksig, variants = ik.KERNELS[name]
        constexprs = variants[0]
        full = {**ksig, **{k: "constexpr" for k in constexprs}}
        triton.compile(ASTSource(kfn, full, constexprs), target=GPUTarget("cuda", 100, 32),
                       options={"num_warps": 4, "num_stages": stages})
    tp.clear_logging_config() if hasattr(tp, "clear_logging_config") else None

    traces = sorted((tmp / "trace").rglob("*.ndjson"))
    assert traces, "tritonparse wrote no trace"
    (out / "traces").mkdir(parents=True, exist_ok=True)
    lines = []
    for raw in traces[0].read_text().splitlines():
        event = json.loads(raw)
        files = (event.get("payload") or {}).get("file_content")
        if isinstance(files, dict):
            event["payload"]["file_content"] = {k: v for k, v in files.items() if k.endswith(KEEP_STAGES)}
        lines.append(json.dumps(event))
    (out / "traces" / "cpu_compile.ndjson").write_text("\n".join(lines) + "\n")

    cache_out = out / "triton_cache"
    shutil.rmtree(cache_out, ignore_errors=True)
    for f in sorted((tmp / "cache").rglob("*")):
        if f.is_file() and f.suffix in (".ttgir", ".json") and not f.name.startswith("__grp__"):
            dest = cache_out / f.relative_to(tmp / "cache")
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(f, dest)
    print(f"trace: {len(lines)} events; cache: {sum(1 for _ in cache_out.rglob('*.ttgir'))} kernels", file=sys.stderr)


if __name__ == "__main__":
    main()
