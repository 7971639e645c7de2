"""Compile the Gluon kernels of gluon_kernels.py to TTGIR on this machine (no GPU needed).

    python evals/gen/gluon_compile.py OUT.json [--python /tmp/gpuh/up/bin/python]

runs, under an interpreter with upstream triton (3.6 on the H200), `triton.compile` of each
kernel of PROBES (gluon_kernels.py and the 2-CTA cluster ones of gluon_cluster_kernels.py) for cuda:90 (through PTX, so a kernel that does not lower fails here, not on the
device) and writes OUT.json in the bases format of gpu_cases.py (`{"meta", "bases": {name:
{"ttgir", "result": "compiled", "config"}}}`). The mutants are derived from this TTGIR; the device
run (gluon_probe.py run) compiles the same text and observes the unmodified file first.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
import gluon_kernels as gk
import gluon_cluster_kernels as gc


def desc(shape, cga_layout=None):
    layout = gl.NVMMASharedLayout.get_default_for(shape, gl.float16, cga_layout=cga_layout)
    return f"tensordesc<fp16[{shape[0]}, {shape[1]}],{layout!r}>"


CE = {"constexpr": "constexpr"}
bases = {}
only = set(sys.argv[2:])
for name, probe in {**gk.PROBES, **gc.PROBES}.items():
    if only and name not in only:
        continue
    ce = probe["constexprs"]
    bm, bk = ce["BM"], ce.get("BK", ce.get("BC"))
    consts = {"STAGES": ce["STAGES"], "WS_LIST": gk.ws_list_api(), "num_warps": probe["warps"]}
    if probe["kernel"] == "cga_copy":
        d = desc([bm, bk], gc.tile_cga(probe))
        sig = {"x_desc": d, "o_desc": d, "NC": "i32"}
        consts.update(BAR_CGA=ce["BAR_CGA"], EXPECT_FULL=ce["EXPECT_FULL"])
    elif probe["kernel"] == "gemm_ws":
        sig = {"a_desc": desc([bm, bk]), "b_desc": desc([bk, ce["BN"]]), "c_desc": desc([bm, ce["BN"]]),
               "M": "i32", "N": "i32", "K": "i32"}
    elif probe["kernel"] == "gemm_2c":
        hm = bm // 2
        sig = {"a_desc": desc([hm, bk]), "b_desc": desc([bk, ce["BN"]]), "c_desc": desc([hm, ce["BN"]]),
               "N": "i32", "K": "i32"}
    else:
        sig = {"x_desc": desc([bm, bk]), "sum_ptr": "*fp32", "max_ptr": "*fp32", "NC": "i32"}
    fn = getattr(gc if probe["kernel"] == "cga_copy" else gk, probe["kernel"])
    sig.update({k: "constexpr" for k in consts})
    src = GluonASTSource(fn, sig, {(fn.arg_names.index(k),): v for k, v in consts.items()})
    k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": probe["warps"], "num_ctas": probe.get("ctas", 1)})
    bases[name] = {"ttgir": k.asm["ttgir"], "result": "compiled", "config": probe}
    print(name, "compiled", len(k.asm["ttgir"]), file=sys.stderr)
print(json.dumps({"meta": {"triton": triton.__version__, "compiled_on": "cpu", "target": "cuda:90"},
                  "bases": bases}))
'''


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--python", default=sys.executable, help="an interpreter with upstream triton")
    ap.add_argument("--only", nargs="*", default=[], help="only these PROBES names")
    args = ap.parse_args()
    res = subprocess.run([args.python, "-c", CHILD, str(HERE), *args.only], capture_output=True, text=True)
    sys.stderr.write(res.stderr[-3000:])
    if res.returncode != 0:
        sys.exit(res.returncode)
    Path(args.out).write_text(res.stdout)


if __name__ == "__main__":
    main()
