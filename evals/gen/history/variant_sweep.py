"""Compile the fork's own test parametrization of the two AutoWS kernels whose unmodified output
`check` calls buggy, and check every variant against what the bug's mechanism predicts.

    python evals/gen/history/variant_sweep.py --git-dir FORK.git --python /tmp/fbt-hist/bin/python \
        [--work /tmp/bv-variant-sweep] [--only SUBSTR ...]

The two bugs (tests/test_families_sim.py has the op sequences and the fork's own evidence):

* addmm_kernel_tma_persistent_ws (python/test/unit/language/test_autows_addmm.py at v3.7.4):
  with EPILOGUE_SUBTILE=2 and generate_subtiled_region, WSCodePartition threads each bias
  consumer-release token into the subtiled region as a shared argument, so every subtile
  releases every bias buffer: expect deadlock.parity_cadence + race.early_release exactly
  there; every other variant of the test's grid (BLOCK_M, EPILOGUE_SUBTILE, A/B column-major,
  DATA_PARTITION_FACTOR, generate_subtiled_region) must have no error.
* _attn_fwd_persist / _attn_fwd (python/tutorials/fused-attention-ws-device-tma-hopper-or-
  blackwell.py), Blackwell: with the software-pipelined dot attributes QK(i+1) waits for the
  PV(i) it issues later (the WAR reuse barrier on the QK/P TMEM alias): expect deadlock.cycle;
  without them (_FWD_DOT_ATTRS_NO_SWP) no error. STAGE=3 (causal) does not compile with 3.7.4.

A mismatch (an unexpected error, a missing one, or a traceback) is printed and makes the exit
status 1. Nothing of the fork is kept: sources are read from FORK.git by compile_src.py.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent.parent
ADDMM = "python/test/unit/language/test_autows_addmm.py"
FA = "python/tutorials/fused-attention-ws-device-tma-hopper-or-blackwell.py"
BUGGY_ADDMM = ["deadlock.parity_cadence", "race.early_release"]


def addmm_variants():
    for bm, es, acm, bcm, dpf, gsr in itertools.product([128, 256], [1, 2, 4], [False, True], [False, True],
                                                       [1, 2], [True, False]):
        if dpf != 1 and bm != 256:  # the test skips these
            continue
        sn = 128 // es
        sig = {"a_desc": f"tensordesc<fp16[{f'64, {bm}' if acm else f'{bm}, 64'}]>",
               "b_desc": f"tensordesc<fp16[{'64, 128' if bcm else '128, 64'}]>",
               "c_desc": f"tensordesc<fp16[{bm}, {sn}]>", "bias_desc": f"tensordesc<fp16[{bm}, {sn}]>",
               "M": "i32", "N": "i32", "K": "i32"}
        spec = {"signature": sig, "num_warps": 4, "num_stages": 3, "target": "cuda:100",
                "constexprs": {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8,
                               "EPILOGUE_SUBTILE": es, "NUM_SMS": 148, "FLATTEN": False, "A_COL_MAJOR": acm,
                               "B_COL_MAJOR": bcm, "DATA_PARTITION_FACTOR": dpf},
                "knobs": {"nvidia.use_meta_ws": True}, "options": {"generate_subtiled_region": gsr}}
        name = f"addmm_BM{bm}_ES{es}_Acm{int(acm)}_Bcm{int(bcm)}_DPF{dpf}_gsr{int(gsr)}"
        yield name, ADDMM, "addmm_kernel_tma_persistent_ws", spec, BUGGY_ADDMM if (es == 2 and gsr) else []


def fa_variants():
    for kernel, swp, hd in itertools.product(["_attn_fwd_persist", "_attn_fwd"], [1, 0], [64, 128]):
        ce = {"N_CTX": 4096, "HEAD_DIM": hd, "BLOCK_M": 128, "BLOCK_N": 128, "FP8_OUTPUT": False, "STAGE": 1,
              "warp_specialize": True, "dtype": {"eval": "tl.float16"}, "SUBTILING": False, "VECT_MUL": 0,
              "FADD2_REDUCE": False, "DP_FACTOR": 2,
              "FWD_DOT_ATTRS": {"eval": "_FWD_DOT_ATTRS_SWP" if swp else "_FWD_DOT_ATTRS_NO_SWP"}}
        if kernel == "_attn_fwd_persist":
            ce["OUTER_LOOP"] = True
        sig = {"sm_scale": "fp32", "M": "*fp32", "Z": "i32", "H": "i32", "desc_q": "*fp16", "desc_k": "*fp16",
               "desc_v": "*fp16", "desc_o": "*fp16"}
        spec = {"signature": sig, "constexprs": ce, "num_warps": 4, "num_stages": 2, "target": "cuda:100",
                "knobs": {"nvidia.use_meta_ws": True}, "options": {"maxnreg": 128}}
        yield f"fa{kernel}_swp{swp}_hd{hd}", FA, kernel, spec, ["deadlock.cycle"] if swp else []


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--git-dir", required=True)
    ap.add_argument("--python", required=True, help="interpreter of a venv with fbtriton 3.7.4")
    ap.add_argument("--work", default="/tmp/bv-variant-sweep")
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    bv = str(Path(sys.executable).parent / "barrier-viz")
    mismatches = 0
    for name, path, kernel, spec, want in itertools.chain(addmm_variants(), fa_variants()):
        if args.only and not any(o in name for o in args.only):
            continue
        ttgir, spec_file = work / f"{name}.ttgir", work / f"{name}.json"
        spec_file.write_text(json.dumps(spec))
        if not ttgir.exists():
            r = subprocess.run([args.python, str(HERE / "compile_src.py"), "--git-dir", args.git_dir, "--commit", "v3.7.4",
                                "--path", path, "--kernel", kernel, "--spec", str(spec_file), "--tag", "sweep",
                                "--out", str(ttgir)], capture_output=True, text=True,
                               env=dict(os.environ, TRITON_CACHE_DIR=str(work / "cache")))
            if r.returncode != 0:
                print(f"{name}: compile failed: {(r.stderr.strip().splitlines() or ['?'])[-1][:160]}", flush=True)
                continue
        r = subprocess.run([bv, "check", str(ttgir), "--format", "json"], capture_output=True, text=True)
        if r.returncode not in (0, 1):
            mismatches += 1
            print(f"{name}: MISMATCH exit {r.returncode}: {r.stderr.strip()[-200:]}", flush=True)
            continue
        errors = sorted({f["kind"] for f in json.loads(r.stdout)["findings"] if f["severity"] == "error"})
        ok = errors == sorted(want)
        mismatches += not ok
        print(f"{name}: {'ok' if ok else 'MISMATCH'} errors={errors} expected={sorted(want)}", flush=True)
    print(f"{mismatches} mismatch(es)")
    sys.exit(1 if mismatches else 0)


if __name__ == "__main__":
    main()
