"""Compile kernels of the issue-11 families beyond the shared set, then `check` each one.

    python evals/gen/families_more.py compile --git-dir FORK.git --out /tmp/fam-more [--only SUB]
    python evals/gen/families_more.py check /tmp/fam-more [--only SUB] [--explore N]

The shared corpus (`../shared/corpus/families/`) holds one or two configurations per tutorial
kernel. The acceptance of issue 11 asks that `check` stays free of false verdicts on *other*
configurations and kernels of the same families too, so this script recompiles a second set
(CONFIGS below: mostly entries of the tutorials' own autotune lists / heuristics / pytest
parametrizations, each with the reason it was picked) and prints per file the error and warning
findings. Nothing it compiles is kept in this project: the sources are the fork's tutorials,
read with `git show` from a bare clone of facebookexperimental/triton, and the TTGIR goes to
`--out` (with a `manifest.json` saying how each file was built).

Compilers (CPU only, no GPU; torch and the driver are stood in for as in
`history/compile_src.py`):
- `fbtriton`: the released fbtriton 3.7.4 (`--fbt-python`, default /tmp/fbt-hist/bin/python) on
  the fork's sources at tag v3.7.4: TLX tutorials and Meta AutoWS (`nvidia.use_meta_ws`).
- `triton39`: upstream triton 3.9.0 (`--up-python`, default /tmp/up39/bin/python) on the Gluon
  tutorials/examples of the fork's nightly 34e051e58 (fbtriton 3.7.4 predates their Gluon API),
  the compiler the shared Gluon files were built with.

`check` runs `barrier-viz check --format json` (exit 0 clean, 1 with an error finding) and prints
one line per file: errors, warnings, the finding kinds, seconds, and `NOT JUDGED (why)` where a
simulation run or input point ended in `limit`; `--explore N` also runs
`explore --timeout 5` on every N-th file.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TAG = "v3.7.4"
NIGHTLY = "34e051e58cdf293214ede2409c2be920d9cf6df2"


def td(dtype: str, shape: list[int]) -> str:
    """A host TensorDescriptor argument of a TLX/AutoWS kernel (block shape after the pre_hook)."""
    return f"tensordesc<{dtype}[{', '.join(map(str, shape))}]>"


def gd(dtype: str, shape: list[int], layout: str | None = None) -> dict:
    """A Gluon TensorDescriptor: the layout is an expression evaluated in the tutorial's module
    (default: `gl.NVMMASharedLayout.get_default_for(shape, dtype)`, what the tutorials pass)."""
    return {"gdesc": [dtype, shape, layout]}


FA_SIG = lambda bq, bkv, hd=128, dt="fp16", bo=None: {  # noqa: E731
    "sm_scale": "fp32", "M": "*fp32", "Z": "i32", "H": "i32", "desc_q": td(dt, [bq, hd]),
    "desc_k": td(dt, [bkv, hd]), "desc_v": td(dt, [bkv, hd]), "desc_o": td(dt, [bo or bq, hd]), "N_CTX": "i32"}
HOPPER = {"target": "cuda:90"}
# Tutorial 09 opens a cuBLAS handle on the device at import time (for its benchmark): host-only.
NO_CUBLAS = [{"replace": "device_blas = nvidia.cublas.CublasLt(device_workspace)", "with": "device_blas = None"}]
TLX = "third_party/tlx/tutorials/"


def _bw_gemm_ws(bm, bn, bk, g, s, t, m, es, nc, sk, il, uwb=False):
    """blackwell_gemm_ws.py: descriptors as matmul_tma_set_block_size_hook sets them."""
    return {
        "signature": {"a_desc": td("fp16", [bm // m, bk]), "b_desc": td("fp16", [bk, bn // nc]),
                      "c_desc": td("fp16", [bm // m, bn // es]), "workspace_desc": td("fp16", [bm // m, bn // es]),
                      "M": "i32", "N": "i32", "K": "i32"},
        "constexprs": {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "GROUP_SIZE_M": g,
                       "NUM_SMEM_BUFFERS": s, "NUM_TMEM_BUFFERS": t, "NUM_MMA_GROUPS": m, "EPILOGUE_SUBTILE": es,
                       "NUM_CTAS": nc, "SPLIT_K": sk, "INTERLEAVE_EPILOGUE": il, "NUM_SMS": 148,
                       "USE_WARP_BARRIER": uwb},
        "num_warps": 4, "num_stages": 1, **({"ctas_per_cga": [nc, 1, 1]} if nc > 1 else {})}


def _tlx_fa_bwd(bm1, nc, es, uwb, stage, nbq):
    """blackwell_fa_ws_pipelined_persistent.py _attn_bwd_ws (configs_bwd_1cta / configs_bwd_2cta),
    descriptors as _bwd_host_descriptor_pre_hook_tlx sets them (HEAD_DIM 128, fp16)."""
    hd, bn1 = 128, 128
    dq_cols = hd // es if nc > 1 else 32
    return {
        "signature": {
            "desc_q": td("fp16", [1, 1, bm1, hd // nc]), "desc_k": td("fp16", [1, 1, bn1, hd]),
            "desc_v": td("fp16", [1, 1, bn1, hd]), "sm_scale": "fp32",
            "desc_do": td("fp16", [1, 1, bm1, hd // nc]), "desc_dq": td("fp32", [1, 1, bm1, dq_cols]),
            "desc_dk": td("fp16", [1, 1, bn1, 64]), "desc_dv": td("fp16", [1, 1, bn1, 64]),
            "desc_m": td("fp32", [bm1]), "desc_delta": td("fp32", [bm1]), "M_ptr": "*fp32", "delta_ptr": "*fp32",
            "H": "i32", "Z": "i32", "N_CTX": "i32",
            "desc_kt": td("fp16", [1, 1, bn1 * nc, hd // nc]), "desc_qt": td("fp16", [1, 1, bm1 // nc, hd]),
            "desc_dot": td("fp16", [1, 1, bm1 // nc, hd])},
        "constexprs": {"BLOCK_M1": bm1, "BLOCK_N1": bn1, "BLK_SLICE_FACTOR": 2, "HEAD_DIM": hd, "NUM_BUFFERS_KV": 1,
                       "NUM_BUFFERS_Q": nbq, "NUM_BUFFERS_DO": 1, "NUM_BUFFERS_DS": 1, "NUM_BUFFERS_TMEM": 1,
                       "NUM_COMPUTE_SLICES": 2, "DQ_REDUCE_STAGES": 2, "DQ_REDUCE_NCOL": 32, "DKV_STORE_NCOL": 64,
                       "STAGE": stage, "GROUP_SIZE_M": 1, "USE_WARP_BARRIER": uwb, "EPILOGUE_SUBTILE": es,
                       "NUM_CTAS": nc},
        "num_warps": 8, "num_stages": 1, **({"ctas_per_cga": [nc, 1, 1]} if nc > 1 else {})}


def _tlx_fa_pp(stage, kv, gsn, ropt, where, uwb, hd=128, bm=256):
    """blackwell_fa_ws_pipelined_persistent.py _attn_fwd_ws (its `configs` list, pruned by
    prune_configs_by_hdim: NUM_BUFFERS_KV 6 for HEAD_DIM 64 else 3, GROUP_SIZE_N 4 for STAGE 3)."""
    return {"signature": FA_SIG(bm // 2, 128, hd),
            "constexprs": {"HEAD_DIM": hd, "BLOCK_M": bm, "BLOCK_N": 128, "STAGE": stage, "NUM_BUFFERS_Q": 1,
                           "NUM_BUFFERS_KV": kv, "NUM_BUFFERS_QK": 1, "NUM_MMA_GROUPS": 2, "NUM_MMA_SLICES": 2,
                           "GROUP_SIZE_N": gsn, "RESCALE_OPT": ropt, "USE_WHERE": where, "USE_WARP_BARRIER": uwb},
            "num_warps": 4, "num_stages": 1}


def _hopper_gemm_ws(bm, bn, bk, s, mw, mg, es, nc, uwb, sms=132):
    """hopper_gemm_ws.py matmul_kernel_tlx_ws (descriptor blocks as its pre_hook sets them)."""
    bms = bm // mg
    return {"signature": {"a_desc": td("fp16", [bms, bk]), "b_desc": td("fp16", [bk, bn // nc]),
                          "c_desc": td("fp16", [bms, bn // (2 if es else 1)]), "M": "i32", "N": "i32", "K": "i32"},
            "constexprs": {"BM": bm, "BN": bn, "BK": bk, "GROUP_SIZE_M": 8, "NUM_STAGES": s, "NUM_MMA_WARPS": mw,
                           "NUM_MMA_GROUPS": mg, "EPILOGUE_SUBTILE": es, "NUM_CTAS": nc, "NUM_SMS": sms,
                           "USE_WARP_BARRIER": uwb, "A_ROW_MAJOR": True, "B_ROW_MAJOR": True},
            "num_warps": 4, "num_stages": 1, **HOPPER, **({"ctas_per_cga": [nc, 1, 1]} if nc > 1 else {})}


# Each entry: name, family, compiler, path, kernel, spec (compile_src.py's SPEC), why.
CONFIGS: list[dict] = [
    # ---------------------------------------------------------------- TLX, Blackwell GEMM (new kernel)
    *[{"name": f"matmul_kernel_tma_ws_blackwell__BM{c[0]}_BN{c[1]}_BK{c[2]}_G{c[3]}_S{c[4]}_T{c[5]}_MG{c[6]}"
               f"_ES{c[7]}_NC{c[8]}_SK{c[9]}_IL{c[10]}",
       "family": "tlx", "compiler": "fbtriton", "path": TLX + "blackwell_gemm_ws.py",
       "kernel": "matmul_kernel_tma_ws_blackwell", "spec": _bw_gemm_ws(*c), "why": why}
      for c, why in [
          ((256, 128, 128, 1, 2, 2, 2, 1, 2, 1, 1), "get_heuristic_config: tall-M saturated, low intensity (2-CTA)"),
          ((256, 256, 64, 8, 4, 1, 2, 4, 2, 1, 1), "get_heuristic_config: tall-M saturated, K <= 2N (2-CTA)"),
          ((256, 256, 128, 8, 2, 1, 2, 4, 2, 1, 0), "get_heuristic_config: tall-M, K > 2N, no interleave"),
          ((256, 128, 64, 8, 4, 2, 2, 8, 1, 4, 1), "get_heuristic_config: undersaturated large output, split-K 4"),
          ((128, 64, 128, 8, 4, 3, 2, 1, 1, 2, 1), "get_heuristic_config: undersaturated small output, split-K 2"),
          ((256, 256, 64, 8, 3, 1, 2, 4, 1, 1, 1), "get_heuristic_config: saturated square (8192^3)"),
          ((128, 256, 64, 8, 3, 2, 1, 2, 1, 1, 0), "candidates: wide tiles, one MMA group"),
      ]],
    {"name": "matmul_kernel_tma_ws_blackwell__BM128_BN128_BK64_G8_S4_T2_MG1_ES2_NC1_SK1_IL0_UWB1",
     "family": "tlx", "compiler": "fbtriton", "path": TLX + "blackwell_gemm_ws.py",
     "kernel": "matmul_kernel_tma_ws_blackwell", "spec": _bw_gemm_ws(128, 128, 64, 8, 4, 2, 1, 2, 1, 1, 0, True),
     "why": "candidates: square tiles, USE_WARP_BARRIER (named barriers) on"},
    # ---------------------------------------------------------------- TLX, FA backward (new kernel)
    *[{"name": f"_attn_bwd_ws__pp_BM1-{bm1}_NC{nc}_ES{es}_UWB{int(uwb)}_NBQ{nbq}_stage{stage}",
       "family": "tlx", "compiler": "fbtriton", "path": TLX + "blackwell_fa_ws_pipelined_persistent.py",
       "kernel": "_attn_bwd_ws", "spec": _tlx_fa_bwd(bm1, nc, es, uwb, stage, nbq), "why": why}
      for (bm1, nc, es, uwb, stage, nbq), why in [
          ((64, 1, 4, False, 1, 2), "configs_bwd_1cta[0], non-causal"),
          ((64, 1, 4, True, 3, 2), "configs_bwd_1cta[1] (warp barrier), causal"),
          ((128, 2, 8, False, 1, 1), "configs_bwd_2cta[0] (2-CTA), non-causal"),
          ((128, 2, 8, False, 3, 1), "configs_bwd_2cta[0] (2-CTA), causal"),
      ]],
    # ---------------------------------------------------------------- TLX, FA forward pipelined persistent (new kernel)
    *[{"name": f"_attn_fwd_ws__pp_BM{c[7] if len(c) > 7 else 256}_KV{c[1]}_GSN{c[2]}_ROPT{int(c[3])}_UW{int(c[4])}"
               f"_UWB{int(c[5])}_hd{c[6]}_stage{c[0]}",
       "family": "tlx", "compiler": "fbtriton", "path": TLX + "blackwell_fa_ws_pipelined_persistent.py",
       "kernel": "_attn_fwd_ws", "spec": _tlx_fa_pp(*c), "why": why}
      for c, why in [
          ((1, 3, 1, False, False, False, 128), "configs pruned for HEAD_DIM 128, STAGE 1 [0]"),
          ((3, 3, 4, True, True, True, 128), "configs pruned for HEAD_DIM 128, STAGE 3 [5]"),
          ((1, 6, 1, True, False, True, 64), "configs pruned for HEAD_DIM 64, STAGE 1 [3]"),
          ((1, 3, 1, True, False, False, 128, 128), "test_blackwell_fa_ws_pipelined_persistent: BLOCK_M 128"),
          ((3, 3, 1, True, True, False, 128, 128), "test_blackwell_fa_ws_pipelined_persistent: BLOCK_M 128, causal"),
      ]],
    # ---------------------------------------------------------------- TLX, Hopper persistent GEMM pingpong (new kernel)
    *[{"name": f"matmul_kernel_tlx_ws_persistent__pingpong_BM128_BN128_BK64_NS6_NB{int(nb)}",
       "family": "tlx", "compiler": "fbtriton", "path": TLX + "hopper-persistent-gemm-ws-pingpong.py",
       "kernel": "matmul_kernel_tlx_ws_persistent",
       "spec": {"signature": {"a_desc": td("fp16", [128, 64]), "b_desc": td("fp16", [64, 128]),
                              "c_desc": td("fp16", [128, 64]), "M": "i32", "N": "i32", "K": "i32"},
                "constexprs": {"NUM_SMS": 132, "BM": 128, "BN": 128, "BK": 64, "GROUP_SIZE_M": 8, "NUM_STAGES": 6,
                               "NUM_MMA_WARPS": 8, "NUM_MMA_GROUPS": 2, "EPILOGUE_SUBTILE": True,
                               "USE_NAMED_BARRIER": nb},
                "num_warps": 4, "num_stages": 1, **HOPPER},
       "why": "matmul_get_configs (both entries: named-barrier pingpong on / off)"}
      for nb in (True, False)],
    # ---------------------------------------------------------------- TLX, other configs of shared kernels
    *[{"name": f"matmul_kernel_tlx_ws__BM{c[0]}_BN{c[1]}_BK{c[2]}_NS{c[3]}_NMW{c[4]}_NMG{c[5]}_ES{int(c[6])}"
               f"_NC{c[7]}_UWB{int(c[8])}",
       "family": "tlx", "compiler": "fbtriton", "path": TLX + "hopper_gemm_ws.py", "kernel": "matmul_kernel_tlx_ws",
       "spec": _hopper_gemm_ws(*c), "why": why}
      for c, why in [
          ((128, 256, 64, 3, 8, 2, False, 1, True), "autotune list: 3 stages, no subtile, warp barrier"),
          ((128, 128, 64, 2, 8, 2, False, 2, False), "autotune list: 2 stages, 2-CTA cluster, no subtile"),
          ((256, 128, 64, 3, 8, 2, True, 2, True), "autotune list: 2-CTA cluster with warp barrier"),
          ((256, 256, 64, 2, 8, 2, True, 1, False), "autotune list: 256x256 tile, 2 stages"),
      ]],
    *[{"name": f"_attn_fwd_ws__hopper_BM128_BN128_NB{nb}_NMW{mw}_NMG{mg}_hd{hd}",
       "family": "tlx", "compiler": "fbtriton", "path": TLX + "hopper_fa_ws.py", "kernel": "_attn_fwd_ws",
       "spec": {"signature": FA_SIG(128 // mg, 128, hd),
                "constexprs": {"HEAD_DIM": hd, "BLOCK_M": 128, "BLOCK_N": 128, "FP8_OUTPUT": False,
                               "NUM_BUFFERS": nb, "NUM_MMA_WARPS": mw, "NUM_MMA_GROUPS": mg},
                "num_warps": 4, "num_stages": 1, **HOPPER},
       "why": "hopper_fa_ws configs with three buffers (BLOCK_N <= HEAD_DIM: no head dim 64)"}
      for nb, mw, mg, hd in [(3, 4, 1, 128), (3, 8, 2, 128)]],
    {"name": "_attn_fwd_ws_pipelined_pingpong__BM128_BN128_NB3_NMW8_NMG2_hd128", "family": "tlx",
     "compiler": "fbtriton", "path": TLX + "hopper_fa_ws_pipelined_pingpong.py",
     "kernel": "_attn_fwd_ws_pipelined_pingpong",
     "spec": {"signature": FA_SIG(64, 128, 128),
              "constexprs": {"HEAD_DIM": 128, "BLOCK_M": 128, "BLOCK_N": 128, "FP8_OUTPUT": False,
                             "NUM_BUFFERS": 3, "NUM_MMA_WARPS": 8, "NUM_MMA_GROUPS": 2},
              "num_warps": 4, "num_stages": 1, **HOPPER},
     "why": "pingpong FA forward, three buffers (the kernel asserts BLOCK_N <= HEAD_DIM: no head dim 64)"},
    *[{"name": f"_attn_fwd_ws__bw_BM256_BN128_NBKV{kv}_NBQK{qk}_NMG2_hd{hd}",
       "family": "tlx", "compiler": "fbtriton", "path": TLX + "blackwell_fa_ws.py", "kernel": "_attn_fwd_ws",
       "spec": {"signature": FA_SIG(128, 128, hd),
                "constexprs": {"HEAD_DIM": hd, "BLOCK_M": 256, "BLOCK_N": 128, "FP8_OUTPUT": False,
                               "NUM_BUFFERS_KV": kv, "NUM_BUFFERS_QK": qk, "NUM_MMA_GROUPS": 2},
                "num_warps": 4, "num_stages": 1},
       "why": "blackwell_fa_ws with other K/V buffer counts (BLOCK_N <= HEAD_DIM: no head dim 64)"}
      for kv, qk, hd in [(2, 1, 128), (4, 1, 128)]],
    *[{"name": f"grouped_matmul_tlx_kernel__BSM{c[0]}_BSN{c[1]}_BSK{c[2]}_NSB{c[3]}_NTB{c[4]}_ES{c[5]}_NC{c[6]}",
       "family": "tlx", "compiler": "fbtriton", "path": TLX + "blackwell-grouped-gemm_test.py",
       "kernel": "grouped_matmul_tlx_kernel",
       "spec": {"signature": {"group_a_ptrs": "*i64", "group_b_ptrs": "*i64", "group_c_ptrs": "*i64",
                              "group_gemm_sizes": "*i32", "g_lds": "*i32", "group_size": "i32"},
                "constexprs": {"NUM_SM": 148, "BLOCK_SIZE_M": c[0], "BLOCK_SIZE_N": c[1], "BLOCK_SIZE_K": c[2],
                               "NUM_SMEM_BUFFERS": c[3], "NUM_TMEM_BUFFERS": c[4], "EPILOGUE_SUBTILE": c[5],
                               "FP8": False, "NUM_CTAS": c[6]},
                "num_warps": 4, "num_stages": 1, "ctas_per_cga": [c[6], 1, 1]},
       "why": "tlx_configs, other buffer / subtile / cluster counts"}
      for c in [(128, 128, 64, 4, 2, 2, 1), (128, 256, 128, 2, 2, 4, 2), (128, 128, 128, 3, 2, 1, 2)]],
    *[{"name": f"matmul_kernel_tma_ws_blackwell_clc__BSM{c[0]}_BSN{c[1]}_BSK{c[2]}_NSB{c[3]}_NTB{c[4]}_ES{int(c[5])}",
       "family": "tlx", "compiler": "fbtriton", "path": TLX + "blackwell_gemm_clc.py",
       "kernel": "matmul_kernel_tma_ws_blackwell_clc",
       "spec": {"signature": {"a_desc": td("fp16", [c[0], c[2]]), "b_desc": td("fp16", [c[2], c[1]]),
                              "c_desc": td("fp16", [c[0], c[1] // (2 if c[5] else 1)]),
                              "M": "i32", "N": "i32", "K": "i32"},
                "constexprs": {"BLOCK_SIZE_M": c[0], "BLOCK_SIZE_N": c[1], "BLOCK_SIZE_K": c[2], "GROUP_SIZE_M": 8,
                               "NUM_SMEM_BUFFERS": c[3], "NUM_TMEM_BUFFERS": c[4], "NUM_SMS": 148,
                               "NUM_CLC_STAGES": 1, "EPILOGUE_SUBTILE": c[5], "USE_WARP_BARRIER": False},
                "num_warps": 4, "num_stages": 1},
       "why": "CLC GEMM autotune list, other buffer counts"}
      for c in [(128, 256, 64, 4, 2, True), (128, 128, 64, 2, 3, True)]],
    *[{"name": f"kernel_layernorm_multi_cta_ws__BSM{m}_BSN8192_rc2_w8_cga1x2x1",
       "family": "tlx", "compiler": "fbtriton", "path": TLX + "blackwell_multi_cta_layernorm_ws_test.py",
       "kernel": "kernel_layernorm_multi_cta_ws",
       "spec": {"signature": {"X": "*fp16", "Y": "*fp16", "W": "*fp16", "B": "*fp16", "Mean_out": "*fp32",
                              "Rstd_out": "*fp32", "row_stride": "i32", "M": "i32", "N": "i32", "eps": "fp32"},
                "constexprs": {"BLOCK_SIZE_M": m, "BLOCK_SIZE_N": 8192, "num_reduction_ctas": 2,
                               "SHOULD_MASK_ROW": False, "SHOULD_MASK_COL": False},
                "num_warps": 8, "num_stages": 3, "ctas_per_cga": [1, 2, 1],
                "aligned": ["X", "Y", "W", "B", "Mean_out", "Rstd_out", "row_stride", "N"],
                "edits": [{"replace": "from torch._inductor.runtime.triton_compat import libdevice",
                           "with": "from triton.language.extra import libdevice"}]},
       "why": "_ws_configs pruned for (M, N) = (1024, 16384): a 2-CTA cluster with a remote-store reduction"}
      for m in (2, 4)],
    *[{"name": f"{k}__hstu_BM{bm}_BN{bn}_KV{kv}_NMG2_hd128_bf16", "family": "tlx", "compiler": "fbtriton",
       "path": TLX + "blackwell-cross-attention.py", "kernel": k,
       "spec": {"signature": {"alpha": "fp32", "Z": "i32", "H": "i32", "desc_q": td("bf16", [qm, 128]),
                              "desc_k": td("bf16", [bn, 128]), "desc_v": td("bf16", [bn, 128]), "Out": "*bf16",
                              "seq_offsets_q": "*i64", "seq_offsets": "*i64", "max_seq_len": "i32",
                              "stride_qh": "i32", "stride_kh": "i32", "stride_vh": "i32", "stride_om": "i32",
                              "stride_oh": "i32"},
                "constexprs": {"AUTOTUNE_MAX_Q_LEN": 1024, "HEAD_DIM": 128, "BLOCK_D_V": 128, "BLOCK_M": bm,
                               "BLOCK_N": bn, "NUM_BUFFERS_KV": kv, "NUM_MMA_GROUPS": 2},
                "num_warps": 4, "num_stages": 1},
       "why": why}
      for k, bm, bn, kv, qm, why in [
          ("_attn_fwd_single_q", 128, 64, 3, 128, "HSTU cross-attention get_fwd_configs[2] (_host_descriptor_pre_hook_ws)"),
          ("_attn_fwd_single_q", 128, 128, 2, 128, "HSTU cross-attention get_fwd_configs[3]"),
          ("_attn_fwd_single_q", 64, 128, 3, 64, "HSTU cross-attention get_fwd_configs[1]"),
          ("_attn_fwd_pipeline", 256, 128, 2, 128, "HSTU cross-attention get_fwd_pipeline_configs[0] (BLOCK_M split in 2)"),
          ("_attn_fwd_pipeline", 128, 64, 2, 64, "HSTU cross-attention get_fwd_pipeline_configs[2]"),
      ]],
    # ---------------------------------------------------------------- AutoWS
    *[{"name": f"_attn_fwd__06ws_BM{bm}_BN{bn}_w4s{s}_hd{hd}_stage{st}", "family": "autows", "compiler": "fbtriton",
       "path": "python/tutorials/06-fused-attention-ws.py", "kernel": "_attn_fwd",
       "spec": {"signature": FA_SIG(bm, bn, hd),
                "constexprs": {"HEAD_DIM": hd, "BLOCK_M": bm, "BLOCK_N": bn, "FP8_OUTPUT": False, "STAGE": st,
                               "warp_specialize": True, "IS_HOPPER": False},
                "num_warps": 4, "num_stages": s, "knobs": {"nvidia.use_meta_ws": True},
                "options": {"maxnreg": 168}},
       "why": "06-fused-attention-ws autotune list, head dim 64 / 2 stages (STAGE 3 does not compile with AutoWS)"}
      for bm, bn, s, hd, st in [(128, 64, 3, 64, 1), (128, 128, 2, 128, 1)]],
    *[{"name": f"addmm_kernel_tma_persistent_ws__BM{bm}_BN128_BK64_ES{es}_Acm{int(ac)}_Bcm{int(bc)}_DPF{dp}_gsr{int(g)}_w4s3",
       "family": "autows", "compiler": "fbtriton", "path": "python/test/unit/language/test_autows_addmm.py",
       "kernel": "addmm_kernel_tma_persistent_ws",
       "spec": {"signature": {"a_desc": td("fp16", [64, bm] if ac else [bm, 64]),
                              "b_desc": td("fp16", [64, 128] if bc else [128, 64]),
                              "c_desc": td("fp16", [bm, 128 // es]), "bias_desc": td("fp16", [bm, 128 // es]),
                              "M": "i32", "N": "i32", "K": "i32"},
                "constexprs": {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8,
                               "EPILOGUE_SUBTILE": es, "NUM_SMS": 148, "FLATTEN": False, "A_COL_MAJOR": ac,
                               "B_COL_MAJOR": bc, "DATA_PARTITION_FACTOR": dp},
                "num_warps": 4, "num_stages": 3, "knobs": {"nvidia.use_meta_ws": True},
                "options": {"generate_subtiled_region": g}},
       "why": "test_autows_addmm_tma_persistent parametrization"}
      for bm, es, ac, bc, dp, g in [(256, 2, True, True, 2, True), (128, 4, False, True, 1, False),
                                    (256, 1, True, False, 1, True), (128, 1, False, False, 1, True),
                                    (256, 2, True, True, 2, False), (128, 2, False, False, 1, True),
                                    (256, 2, False, False, 2, True)]],
    *[{"name": f"{k}__tlxdir_cfg{i}_BM1-{bm1}_ES{es}_DQ4{'_smem220k' if budget else ''}_w4s2_hd128",
       "family": "autows", "compiler": "fbtriton", "path": TLX + "fused_attention_ws_device_tma.py", "kernel": k,
       "spec": {"signature": {"desc_q": td("fp16", [bm1, 128]), "desc_k": td("fp16", [128, 128]),
                              "desc_v": td("fp16", [128, 128]), "sm_scale": "fp32", "desc_do": td("fp16", [bm1, 128]),
                              "desc_dq": td("fp32", [bm1, 32]), "desc_dk": td("fp16", [128, 128 // es]),
                              "desc_dv": td("fp16", [128, 128 // es]), "desc_m": td("fp32", [bm1]),
                              "desc_delta": td("fp32", [bm1]), "stride_z": "i32", "stride_h": "i32",
                              "stride_tok": "i32", "BATCH": "i32", "H": "i32", "N_CTX": "i32"},
                "constexprs": {"stride_d": 1, "BLOCK_M1": bm1, "BLOCK_N1": 128, "BLOCK_M2": 128, "BLOCK_N2": 128,
                               "BLK_SLICE_FACTOR": 2, "HEAD_DIM": 128, "dtype": {"eval": "tl.float16"},
                               "warp_specialize": True, "EPILOGUE_SUBTILE": es, "DQ_SUBTILE": 4,
                               "BWD_DOT_ATTRS": {"eval": attrs}, "SMEM_BUDGET": budget or 200000},
                "num_warps": 4, "num_stages": 2, "knobs": {"nvidia.use_meta_ws": True},
                "options": {"maxRegAutoWS": 192}},
       "why": why}
      for k, i, bm1, es, attrs, budget, why in [
          ("_attn_bwd_persist", 0, 128, 4, "_DEFAULT_BWD_DOT_ATTRS", 0, "configs_bwd_persist[0]"),
          ("_attn_bwd_persist", 2, 128, 2, "_BWD_DOT_ATTRS_TMEM", 220000,
           "configs_bwd_persist[2]: 'test dk/dv staging buffer reuse'"),
          ("_attn_bwd_persist", 3, 64, 2, "_BWD_DOT_ATTRS_BM64_TMEM", 0, "configs_bwd_persist[3]"),
          ("_attn_bwd_persist", 4, 64, 2, "_BWD_DOT_ATTRS_BM64", 0, "configs_bwd_persist[4]"),
          ("_attn_bwd", 0, 128, 4, "FrozenDotAttrs(None)", 0, "configs_bwd[0] (non-persistent)"),
      ]],
    # (configs_bwd_persist[1] and configs_bwd[0] of fused-attention-ws-device-tma-hopper-or-blackwell.py
    # do not compile with fbtriton 3.7.4: "can't find tmem space"; not listed.)
    *[{"name": f"matmul_kernel_tma__BSM128_BSN{bn}_BSK{bk}_w{w}s{st}_ws", "family": "autows", "compiler": "fbtriton",
       "path": "python/tutorials/09-persistent-matmul.py", "kernel": "matmul_kernel_tma",
       "spec": {"signature": {"a_desc": td("fp16", [128, bk]), "b_desc": td("fp16", [bn, bk]),
                              "c_desc": td("fp16", [128, bn]), "M": "i32", "N": "i32", "K": "i32"},
                "constexprs": {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "GROUP_SIZE_M": 8,
                               "FP8_OUTPUT": False, "WARP_SPECIALIZE": True},
                "num_warps": w, "num_stages": st, "env": {"TRITON_USE_META_WS": "1"}, "edits": NO_CUBLAS},
       "why": "matmul_get_configs (tutorial 09), AutoWS through TRITON_USE_META_WS=1"}
      for bn, bk, w, st in [(128, 128, 4, 3), (256, 64, 4, 4), (128, 64, 8, 2)]],
    # (matmul_kernel_tma_persistent of tutorial 09 is not warp-specialized by fbtriton 3.7.4's AutoWS.)
    *[{"name": f"matmul_kernel_descriptor_persistent__blackwell_BSM128_BSN{bn}_BSK64_ES{int(es)}_w4s{st}_ws",
       "family": "autows", "compiler": "fbtriton", "path": "python/tutorials/09-persistent-matmul.py",
       "kernel": "matmul_kernel_descriptor_persistent",
       "spec": {"signature": {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"},
                "constexprs": {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8,
                               "EPILOGUE_SUBTILE": es, "NUM_SMS": 148, "WARP_SPECIALIZE": True, "FLATTEN": False},
                "num_warps": 4, "num_stages": st, "env": {"TRITON_USE_META_WS": "1"}, "edits": NO_CUBLAS},
       "why": "tutorial 09 device-descriptor persistent GEMM on Blackwell (the shared file is Hopper)"}
      for bn, es, st in [(256, True, 3), (128, False, 4)]],
    # ---------------------------------------------------------------- Gluon (upstream triton 3.9, nightly sources)
    *[{"name": f"matmul_warp_specialized_kernel__08_BM128_BN256_BK64_nb{nb}_sub4_{sched_name}",
       "family": "gluon", "compiler": "triton39", "path": "python/tutorials/gluon/08-warp-specialization.py",
       "kernel": "matmul_warp_specialized_kernel",
       "spec": {"signature": {"a_desc": gd("fp16", [128, 64]), "b_desc": gd("fp16", [64, 256]),
                              "c_desc": gd("fp16", [128, 64], "gl.NVMMASharedLayout.get_default_for([128, 256], gl.float16)")},
                "constexprs": {"SchedulerImpl": {"eval": sched}, "num_buffers": nb, "SUBTILE_FACTOR": 4, "num_warps": 4},
                "num_warps": 4},
       "why": "test_matmul_warp_specialized parametrization (the issue's tutorial-08 example)"}
      for nb, sched_name, sched in [(2, "persistent", "t7.PersistentTileScheduler"),
                                    (3, "grouped1", "t7.GroupedPersistentTileScheduler(1)"),
                                    (4, "grouped8", "t7.GroupedPersistentTileScheduler(8)"),
                                    (3, "persistent", "t7.PersistentTileScheduler")]],
    # (03-matmul-multicta.py at the nightly calls tcgen05_mma_barrier_count(smems, multicast), whose
    # triton 3.9.0 form also takes two_ctas and counts commits differently: not compiled here.)
    *[{"name": f"elementwise_add_warp_specialized_kernel__08_X32_Y64_lb{nb}_sb{nb}_w{w}",
       "family": "gluon", "compiler": "triton39", "path": "python/tutorials/gluon/08-warp-specialization.py",
       "kernel": "elementwise_add_warp_specialized_kernel",
       "spec": {"signature": {"a_desc": gd("fp32", [32, 64]), "b_desc": gd("fp32", [32, 64]),
                              "c_desc": gd("fp32", [32, 64]), "xnumel": "i32", "ynumel": "i32"},
                "constexprs": {"XBLOCK": 32, "YBLOCK": 64, "num_load_buffers": nb, "num_store_buffers": nb,
                               "num_warps": w},
                "num_warps": w, "options": {"maxnreg": 128}},
       "why": "test_elementwise_add_warp_specialized parametrization"}
      for nb, w in [(1, 4), (2, 8)]],
    # (01-attention-forward.py at the nightly imports `float2` from the Blackwell Gluon module, which
    # triton 3.9.0 does not have: not compiled here.)
]


# ------------------------------------------------------------------------------------- compile

CHILD = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
import compile_src as cs
spec = json.loads(sys.argv[2]); src = sys.argv[3]; kernel = sys.argv[4]; out = sys.argv[5]
from triton.backends.compiler import GPUTarget
arch, cap = spec.get("target", "cuda:100").split(":")
target = GPUTarget(arch, int(cap), 32)
class _ImportTarget(GPUTarget):
    """What a tutorial's import-time capability probe sees (`target.is_cuda_backend()`)."""
    def is_cuda_backend(self):
        return self.backend == "cuda"
    def is_hip_backend(self):
        return self.backend == "hip"
cs._install_stubs(_ImportTarget(target.backend, target.arch, target.warp_size))
import importlib.util, os
import triton
from triton.compiler import ASTSource
sys.path.insert(0, os.path.dirname(src))  # Gluon tutorials import their siblings by name
for key, value in (spec.get("knobs") or {}).items():
    obj = triton.knobs
    *parents, leaf = key.split(".")
    for p in parents:
        obj = getattr(obj, p)
    setattr(obj, leaf, value)
name = os.path.splitext(os.path.basename(src))[0]
loader = importlib.util.spec_from_file_location(name, src)
module = importlib.util.module_from_spec(loader)
sys.modules[name] = module
loader.loader.exec_module(module)
fn = getattr(module, kernel)
from triton.runtime.jit import JITFunction
while not isinstance(fn, JITFunction):  # autotuner / heuristics wrappers
    fn = fn.fn
ns = vars(module)
def value(v):
    return eval(v["eval"], ns) if isinstance(v, dict) and "eval" in v else v
constexprs = {k: value(v) for k, v in (spec.get("constexprs") or {}).items()}
# A launch binds a constexpr the caller leaves out to its default (`A_ROW_MAJOR: tl.constexpr =
# True`); ASTSource does not, so the defaults are bound here.
for p in fn.params:
    if p.is_constexpr and p.has_default and p.name not in constexprs and p.name not in spec["signature"]:
        constexprs[p.name] = p.default
signature = {}
for k, v in spec["signature"].items():
    if isinstance(v, dict) and "gdesc" in v:
        from triton.experimental.gluon import language as gl
        dt, shape, layout = v["gdesc"]
        gdt = {"fp16": gl.float16, "bf16": gl.bfloat16, "fp32": gl.float32, "u8": gl.uint8,
               "fp8e4nv": gl.float8e4nv}[dt]
        lay = eval(layout, ns) if layout else gl.NVMMASharedLayout.get_default_for(shape, gdt)
        v = f"tensordesc<{dt}[{', '.join(map(str, shape))}],{lay!r}>"
    signature[k] = v
signature.update({k: "constexpr" for k in constexprs})
options = {"num_warps": spec.get("num_warps", 4), "num_stages": spec.get("num_stages", 1),
           "num_ctas": spec.get("num_ctas", 1)}
if spec.get("ctas_per_cga"):
    options["ctas_per_cga"] = tuple(spec["ctas_per_cga"])
options.update(spec.get("options") or {})
# Pointer arguments a real launch passes 16-byte aligned (Triton specializes them as divisible
# by 16; the kernel's cp.async widths depend on it).
attrs = {(fn.arg_names.index(k),): [["tt.divisibility", 16]] for k in spec.get("aligned", [])}
if type(fn).__name__.startswith("Gluon"):
    from triton.experimental.gluon._runtime import GluonASTSource as Src
else:
    Src = ASTSource
k = triton.compile(Src(fn, signature, constexprs, attrs), target=target, options=options)
ttgir = k.asm["ttgir"]
open(out, "w").write(ttgir)
print(json.dumps({"bytes": len(ttgir), "version": triton.__version__,
                  "warp_specialized": "ttg.warp_specialize" in ttgir}))
'''


# Triton 3.9.0 removed the old names of the Gluon TMA copies (they raise "has been removed; call
# ... instead"); some tutorials of the nightly still call them. Same arguments, same op: renamed.
GLUON_RENAMES = [("tma.async_copy_global_to_shared_im2col(", "tma.async_load_im2col("),
                 ("tma.async_copy_global_to_shared(", "tma.async_load("),
                 ("tma.async_copy_shared_to_global(", "tma.async_store(")]


def _write_sources(git_dir: str, commit: str, path: str, scratch: Path) -> Path:
    """The tutorial and its sibling files (Gluon tutorials import each other by file name), at
    fixed scratch paths so the IR's loc() names do not depend on a temporary directory."""
    folder = str(Path(path).parent)
    dest = scratch / commit[:9] / folder
    dest.mkdir(parents=True, exist_ok=True)
    names = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "--name-only", f"{commit}:{folder}"],
                           check=True, capture_output=True, text=True).stdout.split()
    for n in names:
        if n.endswith(".py"):
            text = subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{folder}/{n}"], check=True,
                                  capture_output=True, text=True).stdout
            if commit == NIGHTLY:
                for before, after in GLUON_RENAMES:
                    text = text.replace(before, after)
            (dest / n).write_text(text)
    return dest / Path(path).name


def cmd_compile(args) -> int:
    out = Path(args.out)
    scratch = Path("/tmp/barrier-viz-families-more-src")
    pythons = {"fbtriton": args.fbt_python, "triton39": args.up_python}
    manifest_path = out / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {"entries": []}
    by_file = {e["file"]: e for e in manifest["entries"]}
    failed = 0
    for c in CONFIGS:
        if args.only and args.only not in c["name"]:
            continue
        commit = NIGHTLY if c["compiler"] == "triton39" else TAG
        rel = f"{c['family']}/{c['name']}.ttgir"
        dest = out / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if args.skip_existing and dest.exists() and rel in by_file:
            continue
        src = _write_sources(args.git_dir, commit, c["path"], scratch)
        if c["spec"].get("edits"):
            from history.compile_src import apply_edits  # noqa: PLC0415 - the history tool's edit format
            src.write_text(apply_edits(src.read_text(), c["spec"]["edits"]))
        t0 = time.time()
        res = subprocess.run([pythons[c["compiler"]], "-c", CHILD, str(HERE / "history"), json.dumps(c["spec"]),
                              str(src), c["kernel"], str(dest)], capture_output=True, text=True,
                             env={**os.environ, **(c["spec"].get("env") or {})}, timeout=args.timeout)
        if res.returncode != 0:
            failed += 1
            print(f"FAIL {rel}: {res.stderr.strip().splitlines()[-1] if res.stderr.strip() else res.returncode}")
            continue
        info = json.loads(res.stdout.strip().splitlines()[-1])
        by_file[rel] = {"file": rel, "family": c["family"], "source": f"facebookexperimental/triton@{commit}:{c['path']}",
                        "kernel": c["kernel"], "compiler": f"{c['compiler']} {info['version']}", "spec": c["spec"],
                        "why": c["why"], "warp_specialized": info["warp_specialized"]}
        print(f"ok   {rel} ({info['bytes']} bytes, ws={info['warp_specialized']}, {time.time() - t0:.0f}s)")
    manifest["entries"] = sorted(by_file.values(), key=lambda e: e["file"])
    manifest_path.write_text(json.dumps(manifest, indent=1) + "\n")
    return 1 if failed else 0


# --------------------------------------------------------------------------------------- check

def not_judged(doc: dict) -> list[str]:
    """Where a `check --format json` result concluded nothing (issue 21): the simulation runs
    and input points that ended in `limit`, each with its reason."""
    out = [f"{r['policy']}: {r.get('reason', '')}" for r in (doc.get("simulation") or {}).get("runs", [])
           if r.get("outcome") == "limit"]
    return out + [f"{p.get('input')}: limit" for p in (doc.get("input_points") or {}).get("points", [])
                  if p.get("outcome") == "limit"]


def cmd_check(args) -> int:
    venv = ROOT / ".venv" / "bin" / "barrier-viz"
    cli = [str(venv)] if venv.exists() else [sys.executable, "-m", "barrier_viz"]  # (a worktree has no .venv)
    files = sorted(Path(args.dir).rglob("*.ttgir"))
    files = [f for f in files if not args.only or args.only in f.name]
    bad = 0
    for i, f in enumerate(files):
        t0 = time.time()
        res = subprocess.run([*cli, "check", str(f), "--format", "json"], capture_output=True, text=True)
        secs = time.time() - t0
        try:
            doc = json.loads(res.stdout)
        except json.JSONDecodeError:
            print(f"CRASH {f.relative_to(args.dir)} rc={res.returncode}: {res.stderr.strip()[-300:]}")
            bad += 1
            continue
        errs = [x for x in doc["findings"] if x["severity"] == "error"]
        warns = [x for x in doc["findings"] if x["severity"] == "warning"]
        kinds = sorted({f"{x['kind']}@{','.join(map(str, x.get('lines') or []))}" for x in errs + warns})
        bad += bool(errs)
        limits = not_judged(doc)
        line = f"{len(errs)}E {len(warns)}W {secs:5.1f}s {f.relative_to(args.dir)}"
        if kinds:
            line += "  " + " ".join(kinds)
        if limits:
            line += f"  NOT JUDGED ({limits[0][:160]})"
        if args.explore and i % args.explore == 0:
            ex = subprocess.run([*cli, "explore", str(f), "--timeout", "5", "--format", "json"],
                                capture_output=True, text=True)
            try:
                doc_ex = json.loads(ex.stdout)
                kinds_ex = sorted({x["kind"] for x in doc_ex.get("findings", []) if x.get("severity") == "error"})
                line += f"  explore: {doc_ex.get('result')}" + (f" {' '.join(kinds_ex)}" if kinds_ex else "")
            except json.JSONDecodeError:
                line += f"  explore: CRASH rc={ex.returncode}"
        print(line, flush=True)
    print(f"{len(files)} files, {bad} with an error finding")
    return 1 if bad else 0


def compile_parser(sub, out: str):
    """The `compile` subcommand's options (also cluster_unseen.py's): where the fork's history
    is, where the IR goes, which kernels, and the two compilers' interpreters."""
    c = sub.add_parser("compile")
    c.add_argument("--git-dir", default="/work/.mirror/facebookexperimental+triton/repo")
    c.add_argument("--out", default=out)
    c.add_argument("--only", default="")
    c.add_argument("--fbt-python", default="/tmp/fbt-hist/bin/python")
    c.add_argument("--up-python", default="/tmp/up39/bin/python")
    c.add_argument("--timeout", type=int, default=900)
    return c


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = compile_parser(sub, "/tmp/fam-more")
    c.add_argument("--skip-existing", action="store_true", help="keep files already compiled")
    k = sub.add_parser("check")
    k.add_argument("dir", nargs="?", default="/tmp/fam-more")
    k.add_argument("--only", default="")
    k.add_argument("--explore", type=int, default=0, help="also explore every N-th file")
    args = ap.parse_args()
    return cmd_compile(args) if args.cmd == "compile" else cmd_check(args)


if __name__ == "__main__":
    sys.exit(main())
