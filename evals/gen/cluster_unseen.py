"""Cluster kernels none of the project's cases or shared corpus files were built from, compiled
and checked (issue 12: "0 error findings on cluster kernels we run it on that you have not seen").

    python evals/gen/cluster_unseen.py compile [--out /tmp/cluster-unseen] [--only SUB]
    python evals/gen/cluster_unseen.py check [/tmp/cluster-unseen] [--only SUB]

Sources (read with `git show` from a bare clone of facebookexperimental/triton; nothing compiled
here is kept in the project; the kernels that drew a false verdict are cases of
evals/gen/cluster_cases.py):
- the fork's TLX unit tests at v3.7.4 (python/test/unit/language/test_tlx_cluster.py, _tma.py,
  _dot.py, test_dot_2cta.py), whose kernels are defined inside the test functions and are lifted
  out (history/compile_src.py's `lift_nested`): remote stores and copies, CLC (multi-CTA,
  3-D, delayed exit), multicast and 2-CTA TMA, 2-CTA MMAs (plain, warp-specialized, scaled,
  AutoWS data-partitioned), explicit cluster barriers;
- TLX tutorials at other constexprs than cluster_cases.py / families_more.py use (2-CTA GEMM
  4x2 / 2x2 clusters, blackwell_gemm_ws and hopper_gemm_ws with NUM_CTAS 2, grouped GEMM,
  2-CTA FA backward, CLC GEMM / FA, multi-CTA layernorms, tutorial 15);
- Gluon multi-CTA tutorials (14-multicta, 03-matmul-multicta) from the fork at v3.7.4 with
  fbtriton 3.7.4 and from its nightly with triton 3.9.0 (two API renames of 3.9.0 applied as
  edits: `tcgen05_mma_barrier_count(..., two_ctas)` and the automatic cluster init sync);
- tutorial 09 with `num_ctas` 2 / 4 under triton 3.9.0's warp specialization (fbtriton 3.7.4's
  AutoWS does not compile these).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "history"))
import families_more as fm  # noqa: E402  (its compile child, source writer and spec helpers)
from compile_src import apply_edits, lift_nested  # noqa: E402

td, gd = fm.td, fm.gd
TLX = "third_party/tlx/tutorials/"
UT = "python/test/unit/language/"
LIBDEVICE = {"replace": "from torch._inductor.runtime.triton_compat import libdevice",
             "with": "from triton.language.extra import libdevice"}


def add(name, path, kernel, spec, comp="fbt", nested=None, family="tlx"):
    """One kernel: `comp` fbt (fbtriton 3.7.4, fork v3.7.4) or up39 (triton 3.9.0, fork nightly);
    `nested`: the test function the kernel is defined in."""
    C.append(dict(name=name, path=path, kernel=kernel, spec=spec, comp=comp, nested=nested, family=family))


C: list[dict] = []


def gl03(cga, la, lb, bm, bn, bk, st, gmd, gtw, comp="fbt", edits=None):
    """Gluon 03-matmul-multicta at one config: `cga` the C layout's CGA bases, `la`/`lb` A's and
    B's (the number of bases along M decides the tile's M)."""
    cg = eval(cga); sm = 1 << sum(b[0] != 0 for b in cg); tile_m = bm * sm
    spec = {"signature": {"a_desc": gd("fp16", [tile_m, bk], f"gl.NVMMASharedLayout.get_default_for([{tile_m}, {bk}], gl.float16, cga_layout={la})"),
                          "b_desc": gd("fp16", [bk, bn], f"gl.NVMMASharedLayout.get_default_for([{bk}, {bn}], gl.float16, cga_layout={lb})"),
                          "c_desc": gd("fp16", [tile_m, 32], f"gl.NVMMASharedLayout.get_default_for([{tile_m}, 32], gl.float16, cga_layout={cga})"),
                          "M": "i32", "N": "i32", "K": "i32"},
            "constexprs": {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "GRID_MINOR_DIM": gmd,
                           "GRID_TILE_WIDTH": gtw, "STAGES": st, "ACC_STAGES": 2, "CGA_LAYOUT": {"eval": cga},
                           "EPILOGUE_SIZE_N": 32, "SUBTILE_STAGES": 4},
            "num_warps": 4, "num_stages": 3, "num_ctas": 2 ** len(cg), "target": "cuda:100"}
    if edits:
        spec["edits"] = edits
    add(f"gl03_matmul_multicta_nc{2**len(cg)}_BN{bn}_BK{bk}_st{st}.{comp}", "python/examples/gluon/03-matmul-multicta.py",
        "_matmul_kernel", spec, comp=comp, family="gluon")

# ---- TLX unit tests (test_tlx_cluster.py)
for tgt in ("cuda:100", "cuda:90"):
    sm = tgt[-3:].strip(":")
    add(f"ut_remote_shmem_store.sm{sm}", UT + "test_tlx_cluster.py", "remote_shmem_store_kernel",
        {"signature": {"x": "*fp32", "y": "*fp32"}, "constexprs": {}, "num_warps": 4, "ctas_per_cga": [2, 1, 1], "target": tgt},
        nested="test_remote_shmem_store")
    add(f"ut_explicit_cluster_sync_ws.sm{sm}", UT + "test_tlx_cluster.py", "explicit_cluster_sync_ws_kernel",
        {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32"}, "constexprs": {"BLOCK_SIZE": 128}, "num_warps": 4,
         "ctas_per_cga": [2, 1, 1], "target": tgt}, nested="test_explicit_cluster_sync_ws")
for n in (2, 4):
    add(f"ut_remote_store_sum_nc{n}", UT + "test_tlx_cluster.py", "remote_store_sum_kernel",
        {"signature": {"input_ptr": "*fp32", "output_ptr": "*fp32"},
         "constexprs": {"M": 64, "N": 256, "BLOCK_M": 64, "NUM_CTAS": n}, "num_warps": 1, "ctas_per_cga": [1, n, 1],
         "target": "cuda:100"}, nested="test_async_remote_shmem_store")
add("ut_remote_copy", UT + "test_tlx_cluster.py", "remote_copy_kernel",
    {"signature": {"input_ptr": "*fp32", "output_ptr": "*fp32"}, "constexprs": {"N": 1024}, "num_warps": 1,
     "ctas_per_cga": [2, 1, 1], "target": "cuda:100"}, nested="test_async_remote_shmem_copy")
add("ut_mul2_clc", UT + "test_tlx_cluster.py", "mul2_clc",
    {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "z_ptr": "*fp32", "n_elements": "i32"},
     "constexprs": {"BLOCK_SIZE": 1024}, "num_warps": 4, "options": {"launch_cluster": True}, "target": "cuda:100"},
    nested="test_cluster_launch_control")
add("ut_clc_3d", UT + "test_tlx_cluster.py", "clc_3d_kernel",
    {"signature": {"output_ptr": "*i32"}, "constexprs": {"TILES_X": 3, "TILES_Y": 2, "TILES_Z": 2}, "num_warps": 4,
     "options": {"launch_cluster": True}, "target": "cuda:100"}, nested="test_cluster_launch_control_3d")
for n in (2, 4):
    add(f"ut_mul2_clc_multi_cta_nc{n}", UT + "test_tlx_cluster.py", "mul2_clc_multi_cta",
        {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "z_ptr": "*fp32", "n_elements": "i32"},
         "constexprs": {"BLOCK_SIZE": 1024, "CLUSTER_SIZE": n}, "num_warps": 4,
         "options": {"launch_cluster": True}, "ctas_per_cga": [n, 1, 1], "target": "cuda:100"},
        nested="test_cluster_launch_control_multi_cta")
add("ut_clc_delayed", UT + "test_tlx_cluster.py", "clc_delayed",
    {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "z_ptr": "*fp32", "n_elements": "i32"},
     "constexprs": {"BLOCK_SIZE": 1024, "CLUSTER_SIZE": 2}, "num_warps": 4, "ctas_per_cga": [2, 1, 1],
     "target": "cuda:100"}, nested="test_cluster_launch_control_multi_cta_delayed_exit")
# ---- test_tlx_tma.py
for tgt in ("cuda:100", "cuda:90"):
    sm = tgt[-3:].strip(":")
    add(f"ut_descriptor_load_multicast.sm{sm}", UT + "test_tlx_tma.py", "descriptor_load_kernel",
        {"signature": {"input_ptr": "*fp16", "output_ptr": "*fp16", "M": "i32", "N": "i32"},
         "constexprs": {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64}, "num_warps": 4, "ctas_per_cga": [2, 2, 1], "target": tgt},
        nested="test_descriptor_load_multicast")
add("ut_two_cta_load", UT + "test_tlx_tma.py", "two_cta_load_kernel",
    {"signature": {"input_ptr": "*fp16", "output_ptr": "*fp16", "M": "i32", "N": "i32"},
     "constexprs": {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128}, "num_warps": 4, "ctas_per_cga": [2, 1, 1],
     "target": "cuda:100"}, nested="test_descriptor_load_two_cta")
# ---- test_tlx_dot.py
DOT_SIG = {"a_ptr": "*fp16", "stride_am": "i32", "b_ptr": "*fp16", "stride_bk": "i32",
           "c_ptr": "*fp16", "stride_cm": "i32"}
UNIT = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1}
for at, sm_ in ((False, 256), (True, 256), (False, 128)):
    add(f"ut_dot_2cta_tma_atmem{int(at)}_M{sm_}", UT + "test_tlx_dot.py", "tcgen5_dot_kernel2cta_tma",
        {"signature": DOT_SIG, "constexprs": {**UNIT, "BLOCK_M": sm_ // 2, "BLOCK_N": 128, "BLOCK_K": 128,
         "OUT_DTYPE": {"eval": "tl.float32"}, "M": sm_, "N": 128, "K": 128, "A_TMEM": at}, "num_warps": 4,
         "ctas_per_cga": [2, 1, 1], "target": "cuda:100"}, nested="test_async_dot_blackwell_2cta_tma")
for ne in (False, True):
    add(f"ut_dot_2cta_tma_ws_noend{int(ne)}", UT + "test_tlx_dot.py", "tcgen5_dot_kernel2cta_tma_ws",
        {"signature": DOT_SIG, "constexprs": {**UNIT, "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 128,
         "OUT_DTYPE": {"eval": "tl.float32"}, "M": 256, "N": 128, "K": 128, "NO_ENDING": ne}, "num_warps": 4,
         "ctas_per_cga": [2, 1, 1], "target": "cuda:100"}, nested="test_async_dot_blackwell_2cta_tma_ws")
add("ut_dot_scaled_2cta", UT + "test_tlx_dot.py", "tcgen5_dot_scaled_2cta_kernel",
    {"signature": {"a_ptr": "*fp8e4nv", "stride_am": "i32", "b_ptr": "*fp8e4nv", "stride_bk": "i32",
                   "a_scale_ptr": "*u8", "b_scale_ptr": "*u8", "c_ptr": "*fp16", "stride_cm": "i32"},
     "constexprs": {**UNIT, "A_format": "e4m3", "B_format": "e4m3", "BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 128,
                    "M": 256, "N": 256, "K": 128}, "num_warps": 4, "ctas_per_cga": [2, 1, 1], "target": "cuda:100"},
    nested="test_async_dot_scaled_2cta")
# ---- TLX tutorials
for cpg, nm in (([4, 2, 1], "cga4x2"), ([2, 1, 1], "cga2x1")):
    add(f"tut_gemm_2cta_{nm}", TLX + "blackwell_gemm_2cta.py", "tcgen5_dot_kernel2cta_tma",
        {"signature": DOT_SIG,
         "constexprs": {**UNIT, "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 128, "OUT_DTYPE": {"eval": "tl.float32"},
                        "M": 1024, "N": 1024, "K": 512}, "num_warps": 4, "num_stages": 1, "ctas_per_cga": cpg,
         "target": "cuda:100"})
for c in [(128, 128, 64, 8, 4, 2, 1, 1, 2, 1, 0), (128, 256, 64, 8, 3, 2, 1, 2, 2, 1, 0),
          (256, 128, 64, 4, 3, 2, 2, 2, 2, 1, 0), (256, 256, 64, 8, 3, 1, 2, 2, 2, 1, 1)]:
    add("tut_bw_gemm_ws_" + "_".join(map(str, c)), TLX + "blackwell_gemm_ws.py", "matmul_kernel_tma_ws_blackwell",
        dict(fm._bw_gemm_ws(*c), target="cuda:100"))
add("tut_bw_gemm_ws_128_128_128_uwb_nc2", TLX + "blackwell_gemm_ws.py", "matmul_kernel_tma_ws_blackwell",
    dict(fm._bw_gemm_ws(128, 128, 128, 8, 3, 2, 1, 4, 2, 1, 0, True), target="cuda:100"))
for c in [(128, 256, 64, 4, 8, 2, True, 2, False), (128, 128, 64, 3, 8, 2, True, 2, True),
          (128, 256, 64, 2, 8, 2, False, 2, True)]:
    add("tut_hopper_gemm_ws_" + "_".join(map(str, map(int, c))), TLX + "hopper_gemm_ws.py", "matmul_kernel_tlx_ws",
        fm._hopper_gemm_ws(*c))
for c in [(128, 128, 64, 4, 2, 1, 2), (128, 256, 64, 2, 2, 2, 2)]:
    add("tut_grouped_gemm_" + "_".join(map(str, c)), TLX + "blackwell-grouped-gemm_test.py", "grouped_matmul_tlx_kernel",
        {"signature": {"group_a_ptrs": "*i64", "group_b_ptrs": "*i64", "group_c_ptrs": "*i64",
                       "group_gemm_sizes": "*i32", "g_lds": "*i32", "group_size": "i32"},
         "constexprs": {"NUM_SM": 148, "BLOCK_SIZE_M": c[0], "BLOCK_SIZE_N": c[1], "BLOCK_SIZE_K": c[2],
                        "NUM_SMEM_BUFFERS": c[3], "NUM_TMEM_BUFFERS": c[4], "EPILOGUE_SUBTILE": c[5],
                        "FP8": False, "NUM_CTAS": c[6]},
         "num_warps": 4, "num_stages": 1, "ctas_per_cga": [c[6], 1, 1], "target": "cuda:100"})
for args in [(128, 2, 8, True, 1, 1), (128, 2, 4, False, 3, 1), (128, 2, 8, True, 3, 2)]:
    add("tut_fa_bwd_2cta_" + "_".join(map(str, map(int, args))), TLX + "blackwell_fa_ws_pipelined_persistent.py",
        "_attn_bwd_ws", dict(fm._tlx_fa_bwd(*args), target="cuda:100"))
for m, bsn, rc, nw in [(1, 4096, 4, 8), (2, 2048, 8, 4), (1, 1024, 2, 16)]:
    add(f"tut_layernorm_ws_M{m}_N{bsn}_rc{rc}_w{nw}", TLX + "blackwell_multi_cta_layernorm_ws_test.py",
        "kernel_layernorm_multi_cta_ws",
        {"signature": {"X": "*fp16", "Y": "*fp16", "W": "*fp16", "B": "*fp16", "Mean_out": "*fp32",
                       "Rstd_out": "*fp32", "row_stride": "i32", "M": "i32", "N": "i32", "eps": "fp32"},
         "constexprs": {"BLOCK_SIZE_M": m, "BLOCK_SIZE_N": bsn, "num_reduction_ctas": rc,
                        "SHOULD_MASK_ROW": False, "SHOULD_MASK_COL": False},
         "num_warps": nw, "num_stages": 1, "ctas_per_cga": [1, rc, 1], "target": "cuda:100",
         "aligned": ["X", "Y", "W", "B", "Mean_out", "Rstd_out", "row_stride"], "edits": [LIBDEVICE]})
for m, bsn, rc, nw, mr, mc in [(1, 8192, 2, 8, False, False), (2, 4096, 4, 4, True, False), (1, 4096, 8, 16, False, False)]:
    add(f"tut_layernorm_M{m}_N{bsn}_rc{rc}_w{nw}_mr{int(mr)}_mc{int(mc)}", TLX + "blackwell-multi-cta-layernorm_test.py",
        "kernel_layernorm_multi_cta",
        {"signature": {"X": "*fp16", "Y": "*fp16", "W": "*fp16", "B": "*fp16", "Mean_out": "*fp32",
                       "Rstd_out": "*fp32", "row_stride": "i32", "M": "i32", "N": "i32", "eps": "fp32"},
         "constexprs": {"BLOCK_SIZE_M": m, "BLOCK_SIZE_N": bsn, "num_reduction_ctas": rc,
                        "SHOULD_MASK_ROW": mr, "SHOULD_MASK_COL": mc},
         "num_warps": nw, "num_stages": 1, "ctas_per_cga": [1, rc, 1], "target": "cuda:100",
         "aligned": ["X", "Y", "W", "B", "Mean_out", "Rstd_out", "row_stride"], "edits": [LIBDEVICE]})
add("tut_gemm_clc_stages2", TLX + "blackwell_gemm_clc.py", "matmul_kernel_tma_ws_blackwell_clc",
    {"signature": {"a_desc": td("fp16", [128, 64]), "b_desc": td("fp16", [64, 256]), "c_desc": td("fp16", [128, 128]),
                   "M": "i32", "N": "i32", "K": "i32"},
     "constexprs": {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8,
                    "NUM_SMEM_BUFFERS": 3, "NUM_TMEM_BUFFERS": 2, "NUM_SMS": 148, "NUM_CLC_STAGES": 2,
                    "EPILOGUE_SUBTILE": True, "USE_WARP_BARRIER": True}, "num_warps": 4, "num_stages": 1,
     "target": "cuda:100"})
add("tut_fa_clc_hd128_stage1", TLX + "blackwell_fa_clc.py", "_attn_fwd_clc",
    {"signature": fm.FA_SIG(128, 128, 128),
     "constexprs": {"HEAD_DIM": 128, "BLOCK_M": 256, "BLOCK_N": 128, "STAGE": 1, "NUM_BUFFERS_Q": 1,
                    "NUM_BUFFERS_KV": 3, "NUM_BUFFERS_QK": 1, "NUM_MMA_GROUPS": 2, "NUM_MMA_SLICES": 2,
                    "GROUP_SIZE_N": 1, "RESCALE_OPT": False, "USE_WHERE": True, "NUM_SMS": 148,
                    "NUM_CLC_STAGES": 1, "USE_WARP_BARRIER": False}, "num_warps": 4, "num_stages": 1, "target": "cuda:100"})
ADDMM = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
         "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32"}
for bm, bn, bk, st in [(128, 128, 128, 2), (128, 256, 64, 3)]:
    add(f"tut_addmm_2cta_ws_BM{bm}_BN{bn}_BK{bk}_s{st}", TLX + "blackwell-triton-addmm-2cta_test.py", "matmul_2cta_ws_kernel",
        {"signature": ADDMM, "constexprs": {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "BLOCK_M": bm, "BLOCK_N": bn,
         "BLOCK_K": bk}, "num_warps": 4, "num_stages": st, "ctas_per_cga": [2, 1, 1], "target": "cuda:100",
         "env": {"TRITON_USE_META_WS": "1", "TRITON_USE_META_PARTITION": "1"}}, family="autows")
add("tut_addmm_2cta_nows_BM128_BN128_BK64", TLX + "blackwell-triton-addmm-2cta_test.py", "matmul_2cta_kernel",
    {"signature": ADDMM,
     "constexprs": {**UNIT, "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, "num_warps": 4, "num_stages": 1,
     "ctas_per_cga": [2, 1, 1], "target": "cuda:100"})
# ---- Gluon (fork v3.7.4 with fbtriton; nightly with triton 3.9.0)
GT = "python/tutorials/gluon/14-multicta.py"
NOBENCH = [{"replace": "benchmark_multicta_softmax_f32()", "with": "pass"}]
# triton 3.9.0's tcgen05_mma_barrier_count also takes two_ctas (odd CTAs of a 2-CTA pair do not
# commit); the nightly's calls predate it: pass the kernel's own 2-CTA mode, as upstream now does.
UP39_BC = NOBENCH + [
    {"replace": "mbarrier.init(mma_bar, count=tcgen05_mma_barrier_count([smem_a, smem_b], multicast=True))",
     "with": "mbarrier.init(mma_bar, count=tcgen05_mma_barrier_count([smem_a, smem_b], multicast=True, two_ctas=True))"},
    {"replace": "mma_barrier_count: gl.constexpr = tcgen05_mma_barrier_count([a_bufs.index(0), b_bufs.index(0)], multicast=True)",
     "with": "mma_barrier_count: gl.constexpr = tcgen05_mma_barrier_count([a_bufs.index(0), b_bufs.index(0)], multicast=True, two_ctas=two_ctas)"}]
for comp in ("fbt", "up39"):
    add(f"gl14_two_cta_tcgen05.{comp}", GT, "two_cta_tcgen05_kernel",
        {"signature": {"a_desc": gd("fp16", [256, 64], "gl.NVMMASharedLayout.get_default_for([256, 64], gl.float16, cga_layout=[(1, 0)])"),
                       "b_desc": gd("fp16", [64, 128], "gl.NVMMASharedLayout.get_default_for([64, 128], gl.float16, cga_layout=[(0, 1)])"),
                       "c_desc": gd("fp16", [256, 128], "gl.NVMMASharedLayout.get_default_for([256, 128], gl.float16, cga_layout=[(1, 0)])")},
         "constexprs": {}, "num_warps": 4, "num_ctas": 2, "target": "cuda:100", "edits": UP39_BC if comp == "up39" else NOBENCH}, comp=comp, family="gluon")
    add(f"gl14_tma_multicast_copy.{comp}", GT, "tma_multicast_copy_kernel",
        {"signature": {"in_desc": gd("fp16", [128, 128], "gl.NVMMASharedLayout.get_default_for([128, 128], gl.float16, cga_layout=[[0, 0]])"),
                       "out_desc": gd("fp16", [128, 128], "gl.NVMMASharedLayout.get_default_for([128, 128], gl.float16, cga_layout=[[0, 0]])")},
         "constexprs": {}, "num_warps": 4, "num_ctas": 2, "target": "cuda:90", "edits": UP39_BC if comp == "up39" else NOBENCH}, comp=comp, family="gluon")
    add(f"gl14_tma_tcgen05.{comp}", GT, "tma_tcgen05_kernel",
        {"signature": {"a_desc": gd("fp16", [512, 64], "gl.NVMMASharedLayout.get_default_for([512, 64], gl.float16, cga_layout=((1, 0), (2, 0)))"),
                       "b_desc": gd("fp16", [64, 128], "gl.NVMMASharedLayout.get_default_for([64, 128], gl.float16, cga_layout=((0, 1), (0, 0)))"),
                       "out_desc": gd("fp16", [512, 128], "gl.NVMMASharedLayout.get_default_for([512, 128], gl.float16, cga_layout=((1, 0), (2, 0)))")},
         "constexprs": {"NUM_K_TILES": 3, "acc_tmem_layout": {"eval": "TensorMemoryLayout(block=(128, 128), col_stride=1, cga_layout=((1, 0), (2, 0)), two_ctas=True)"}},
         "num_warps": 4, "num_ctas": 4, "target": "cuda:100", "edits": UP39_BC if comp == "up39" else NOBENCH}, comp=comp, family="gluon")
    if comp == "up39":  # fbtriton 3.7.4 rejects the cross-CTA reduction of the fork's version
        add(f"gl14_softmax_nc4.{comp}", GT, "multicta_softmax_kernel",
            {"signature": {"x_ptr": "*fp32", "out_ptr": "*fp32", "x_row_stride": "i32", "out_row_stride": "i32"},
             "constexprs": {"BLOCK_N": 65536}, "num_warps": 4, "num_ctas": 4, "target": "cuda:90", "edits": UP39_BC},
            comp=comp, family="gluon")
    for cga, bm, bn, st, gmd in [("((1, 0),)", 128, 256, 4, 1), ("((1, 0), (2, 0))", 128, 128, 3, 0)]:
        cg = eval(cga)
        sm = 1 << sum(b[0] != 0 for b in cg); sn = 1 << sum(b[1] != 0 for b in cg)
        tile_m = bm * sm
        add(f"gl14_matmul_multicta_nc{2**len(cg)}_st{st}_g{gmd}.{comp}", GT, "matmul_multicta_kernel",
            {"signature": {"a_desc": gd("fp16", [tile_m, 64], f"gl.NVMMASharedLayout.get_default_for([{tile_m}, 64], gl.float16, cga_layout=get_cga_layout({cga}, 0, True))"),
                           "b_desc": gd("fp16", [64, bn], f"gl.NVMMASharedLayout.get_default_for([64, {bn}], gl.float16, cga_layout=get_cga_layout({cga}, 1, True))"),
                           "c_desc": gd("fp16", [tile_m, 32], f"gl.NVMMASharedLayout.get_default_for([{tile_m}, 32], gl.float16, cga_layout={cga})"),
                           "M": "i32", "N": "i32", "K": "i32"},
             "constexprs": {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": 64, "GRID_MINOR_DIM": gmd,
                            "GRID_TILE_WIDTH": 8, "STAGES": st, "ACC_STAGES": 2, "CGA_LAYOUT": {"eval": cga},
                            "EPILOGUE_SIZE_N": 32, "SUBTILE_STAGES": 4},
             "num_warps": 4, "num_ctas": 2 ** len(cg), "target": "cuda:100", "edits": UP39_BC if comp == "up39" else NOBENCH}, comp=comp, family="gluon")
# fork v3.7.4 03-matmul-multicta at other configs
for cfg in [("((1, 0),)", "((1, 0),)", "((0, 1),)", 128, 128, 128, 3, 1, 4),
            ("((1, 0), (2, 0))", "((1, 0), (2, 0))", "((0, 1), (0, 0))", 128, 256, 64, 4, 0, 8)]:
    gl03(*cfg)

# ---- more unit-test kernels and tutorial configurations
LN_SIG = {"X": "*fp16", "Y": "*fp16", "W": "*fp16", "B": "*fp16", "Mean": "*fp32", "Rstd": "*fp32", "stride": "i32",
          "N": "i32", "eps": "fp32"}
LN_AL = ["X", "Y", "W", "B", "Mean", "Rstd", "stride"]
for nc, bs, nw in [(2, 8192, 8), (4, 4096, 8)]:
    add(f"tut15_layernorm_multi_cta_nc{nc}_BS{bs}", "python/tutorials/15-multi-cta-layer-norm.py", "_layer_norm_fwd_multi_cta",
        {"signature": LN_SIG, "constexprs": {"BLOCK_SIZE": bs}, "num_warps": nw, "num_stages": 1,
         "ctas_per_cga": [1, nc, 1], "target": "cuda:100", "aligned": LN_AL})
add("tut15_layernorm_multi_cta_2d_nc2", "python/tutorials/15-multi-cta-layer-norm.py", "_layer_norm_fwd_multi_cta_2d",
    {"signature": {**{k: v for k, v in LN_SIG.items() if k != "N" and k != "eps"}, "M": "i32", "N": "i32", "eps": "fp32"},
     "constexprs": {"BLOCK_SIZE_M": 4, "BLOCK_SIZE_N": 8192}, "num_warps": 8, "num_stages": 1,
     "ctas_per_cga": [1, 2, 1], "target": "cuda:100", "aligned": LN_AL})
add("tut15_layernorm_multi_cta_nc2_BS8192.sm90", "python/tutorials/15-multi-cta-layer-norm.py", "_layer_norm_fwd_multi_cta",
    {"signature": LN_SIG, "constexprs": {"BLOCK_SIZE": 8192}, "num_warps": 8, "num_stages": 1,
     "ctas_per_cga": [1, 2, 1], "target": "cuda:90", "aligned": LN_AL})
add("ut_dot_2cta_data_partition", UT + "test_dot_2cta.py", "_tl_dot_2cta_data_partition_kernel",
    {"signature": {"a_desc": td("bf16", [256, 64]), "b_desc": td("bf16", [64, 256]), "c_desc": td("bf16", [256, 256])},
     "constexprs": {"M": 512, "N": 256, "K": 128, "BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 64,
                    "DATA_PARTITION_FACTOR": 2, "NUM_SMS": 148},
     "num_warps": 4, "num_stages": 3, "ctas_per_cga": [2, 1, 1], "target": "cuda:100",
     "knobs": {"nvidia.use_meta_ws": True, "nvidia.use_meta_partition": True}}, family="autows")
add("ut_dot_2cta_data_partition_K512", UT + "test_dot_2cta.py", "_tl_dot_2cta_data_partition_kernel",
    {"signature": {"a_desc": td("bf16", [256, 64]), "b_desc": td("bf16", [64, 256]), "c_desc": td("bf16", [256, 256])},
     "constexprs": {"M": 1024, "N": 512, "K": 512, "BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 64,
                    "DATA_PARTITION_FACTOR": 2, "NUM_SMS": 148},
     "num_warps": 4, "num_stages": 4, "ctas_per_cga": [2, 1, 1], "target": "cuda:100",
     "knobs": {"nvidia.use_meta_ws": True, "nvidia.use_meta_partition": True}}, family="autows")
add("ut_cluster_size_1d", UT + "test_tlx_cluster.py", "cluster_size_kernel",
    {"signature": {"out_ptr": "*i32"}, "constexprs": {"GRID_SIZE_X": 10, "GRID_SIZE_Y": 8}, "num_warps": 4,
     "ctas_per_cga": [2, 1, 3], "target": "cuda:100"}, nested="test_cluster_size_1d")
add("ut_atomic_add_cga", UT + "test_tlx_cluster.py", "atomic_add_cga_kernel",
    {"signature": {"counter_ptr": "*i32", "out_ptr": "*i32"}, "constexprs": {"NUM_CTAS": 2}, "num_warps": 4,
     "ctas_per_cga": [2, 1, 1], "target": "cuda:90"}, nested="test_atomic_add_cga")
for tgt in ("cuda:90",):
    add("ut_remote_copy.sm90", UT + "test_tlx_cluster.py", "remote_copy_kernel",
        {"signature": {"input_ptr": "*fp32", "output_ptr": "*fp32"}, "constexprs": {"N": 2048}, "num_warps": 1,
         "ctas_per_cga": [2, 1, 1], "target": tgt}, nested="test_async_remote_shmem_copy")
    add("ut_remote_store_sum_nc2.sm90", UT + "test_tlx_cluster.py", "remote_store_sum_kernel",
        {"signature": {"input_ptr": "*fp32", "output_ptr": "*fp32"},
         "constexprs": {"M": 64, "N": 256, "BLOCK_M": 64, "NUM_CTAS": 2}, "num_warps": 1, "ctas_per_cga": [1, 2, 1],
         "target": tgt}, nested="test_async_remote_shmem_store")
add("ut_remote_store_sum_nc8_BM32", UT + "test_tlx_cluster.py", "remote_store_sum_kernel",
    {"signature": {"input_ptr": "*fp32", "output_ptr": "*fp32"},
     "constexprs": {"M": 32, "N": 512, "BLOCK_M": 32, "NUM_CTAS": 8}, "num_warps": 2, "ctas_per_cga": [1, 8, 1],
     "target": "cuda:100"}, nested="test_async_remote_shmem_store")
add("tut_fa_clc_hd64_stage1", TLX + "blackwell_fa_clc.py", "_attn_fwd_clc",
    {"signature": fm.FA_SIG(128, 128, 64),
     "constexprs": {"HEAD_DIM": 64, "BLOCK_M": 256, "BLOCK_N": 128, "STAGE": 1, "NUM_BUFFERS_Q": 1,
                    "NUM_BUFFERS_KV": 6, "NUM_BUFFERS_QK": 1, "NUM_MMA_GROUPS": 2, "NUM_MMA_SLICES": 2,
                    "GROUP_SIZE_N": 1, "RESCALE_OPT": True, "USE_WHERE": False, "NUM_SMS": 148,
                    "NUM_CLC_STAGES": 1, "USE_WARP_BARRIER": True}, "num_warps": 4, "num_stages": 1, "target": "cuda:100"})
for c in [(128, 256, 128, 8, 2, 1, 1, 4, 2, 1, 0), (256, 128, 128, 4, 2, 2, 2, 1, 2, 1, 1)]:
    add("tut_bw_gemm_ws_" + "_".join(map(str, c)), TLX + "blackwell_gemm_ws.py", "matmul_kernel_tma_ws_blackwell",
        dict(fm._bw_gemm_ws(*c), target="cuda:100"))
for c in [(128, 128, 64, 4, 8, 2, False, 2, False), (256, 256, 64, 3, 8, 2, True, 2, False)]:
    add("tut_hopper_gemm_ws_" + "_".join(map(str, map(int, c))), TLX + "hopper_gemm_ws.py", "matmul_kernel_tlx_ws",
        fm._hopper_gemm_ws(*c))
add("tut_grouped_gemm_128_128_128_2_1_2_2", TLX + "blackwell-grouped-gemm_test.py", "grouped_matmul_tlx_kernel",
    {"signature": {"group_a_ptrs": "*i64", "group_b_ptrs": "*i64", "group_c_ptrs": "*i64",
                   "group_gemm_sizes": "*i32", "g_lds": "*i32", "group_size": "i32"},
     "constexprs": {"NUM_SM": 148, "BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 128,
                    "NUM_SMEM_BUFFERS": 2, "NUM_TMEM_BUFFERS": 1, "EPILOGUE_SUBTILE": 2, "FP8": False, "NUM_CTAS": 2},
     "num_warps": 4, "num_stages": 1, "ctas_per_cga": [2, 1, 1], "target": "cuda:100"})
for args in [(128, 2, 8, False, 1, 2), (128, 2, 4, False, 1, 1)]:
    add("tut_fa_bwd_2cta_" + "_".join(map(str, map(int, args))), TLX + "blackwell_fa_ws_pipelined_persistent.py",
        "_attn_bwd_ws", dict(fm._tlx_fa_bwd(*args), target="cuda:100"))
add("tut_layernorm_M1_N4096_rc2_w8_mr0_mc1", TLX + "blackwell-multi-cta-layernorm_test.py", "kernel_layernorm_multi_cta",
    {"signature": {"X": "*fp16", "Y": "*fp16", "W": "*fp16", "B": "*fp16", "Mean_out": "*fp32",
                   "Rstd_out": "*fp32", "row_stride": "i32", "M": "i32", "N": "i32", "eps": "fp32"},
     "constexprs": {"BLOCK_SIZE_M": 1, "BLOCK_SIZE_N": 4096, "num_reduction_ctas": 2,
                    "SHOULD_MASK_ROW": True, "SHOULD_MASK_COL": True},
     "num_warps": 8, "num_stages": 1, "ctas_per_cga": [1, 2, 1], "target": "cuda:100",
     "aligned": ["X", "Y", "W", "B", "Mean_out", "Rstd_out", "row_stride", "N"], "edits": [LIBDEVICE]})
add("tut_gemm_2cta_cga2x2", TLX + "blackwell_gemm_2cta.py", "tcgen5_dot_kernel2cta_tma",
    {"signature": DOT_SIG, "constexprs": {**UNIT, "BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64,
     "OUT_DTYPE": {"eval": "tl.float32"}, "M": 1024, "N": 1024, "K": 1024}, "num_warps": 8, "num_stages": 1,
     "ctas_per_cga": [2, 2, 1], "target": "cuda:100"})

# ---- plain Triton warp specialization with num_ctas > 1 (CGA form), triton 3.9.0 (fbtriton 3.7.4's
# AutoWS fails in make_ttgir on these: not compiled)
NO_CUBLAS = fm.NO_CUBLAS
for bn, bk, w, st, nc in [(128, 64, 4, 3, 2), (256, 64, 4, 4, 2)]:
    add(f"t09_matmul_kernel_tma_ws_BN{bn}_BK{bk}_w{w}s{st}_nctas{nc}.up39", "python/tutorials/09-persistent-matmul.py", "matmul_kernel_tma",
        {"signature": {"a_desc": td("fp16", [128, bk]), "b_desc": td("fp16", [bn, bk]),
                       "c_desc": td("fp16", [128, bn]), "M": "i32", "N": "i32", "K": "i32"},
         "constexprs": {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "GROUP_SIZE_M": 8,
                        "FP8_OUTPUT": False, "WARP_SPECIALIZE": True},
         "num_warps": w, "num_stages": st, "num_ctas": nc, "target": "cuda:100", "edits": NO_CUBLAS},
        comp="up39", family="autows")

add("t09_matmul_kernel_descriptor_persistent_ws_nctas2.up39", "python/tutorials/09-persistent-matmul.py", "matmul_kernel_descriptor_persistent",
    {"signature": {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"},
     "constexprs": {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8,
                    "EPILOGUE_SUBTILE": False, "NUM_SMS": 148, "WARP_SPECIALIZE": True, "FLATTEN": False},
     "num_warps": 4, "num_stages": 3, "num_ctas": 2, "target": "cuda:100", "edits": NO_CUBLAS}, comp="up39", family="autows")
add("t09_matmul_kernel_tma_persistent_ws_nctas2.up39", "python/tutorials/09-persistent-matmul.py", "matmul_kernel_tma_persistent",
    {"signature": {"a_desc": td("fp16", [128, 64]), "b_desc": td("fp16", [128, 64]), "c_desc": td("fp16", [128, 128]),
                   "M": "i32", "N": "i32", "K": "i32"},
     "constexprs": {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8,
                    "FP8_OUTPUT": False, "EPILOGUE_SUBTILE": False, "NUM_SMS": 148, "WARP_SPECIALIZE": True},
     "num_warps": 4, "num_stages": 3, "num_ctas": 2, "target": "cuda:100", "edits": NO_CUBLAS}, comp="up39", family="autows")
add("t09_matmul_kernel_tma_persistent_ws_nctas4_sub.up39", "python/tutorials/09-persistent-matmul.py", "matmul_kernel_tma_persistent",
    {"signature": {"a_desc": td("fp16", [128, 64]), "b_desc": td("fp16", [128, 64]), "c_desc": td("fp16", [128, 64]),
                   "M": "i32", "N": "i32", "K": "i32"},
     "constexprs": {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8,
                    "FP8_OUTPUT": False, "EPILOGUE_SUBTILE": True, "NUM_SMS": 148, "WARP_SPECIALIZE": True},
     "num_warps": 4, "num_stages": 4, "num_ctas": 4, "target": "cuda:100", "edits": NO_CUBLAS}, comp="up39", family="autows")

UP39_03 = [{"replace": "mbarrier.sync_cluster_init()", "with": "pass  # triton 3.9.0 inserts the cluster init sync itself"}, {"replace": "mma_barrier_count: gl.constexpr = tcgen05_mma_barrier_count([a_bufs.index(0), b_bufs.index(0)], multicast=True)",
            "with": "mma_barrier_count: gl.constexpr = tcgen05_mma_barrier_count([a_bufs.index(0), b_bufs.index(0)], multicast=True, two_ctas=TWO_CTAS)"}]
for cfg in [("((1, 0),)", "((1, 0),)", "((0, 1),)", 128, 256, 64, 6, 0, 16),
            ("((1, 0), (2, 0))", "((1, 0), (2, 0))", "((0, 1), (0, 0))", 128, 128, 64, 4, 1, 8),
            ("((1, 0),)", "((1, 0),)", "((0, 1),)", 128, 128, 128, 3, 1, 4)]:
    gl03(*cfg, comp="up39", edits=UP39_03)


# Kernels whose error finding was judged by hand against the IR, the source and the lowering to be
# a real hazard (a true verdict, kept): name prefix -> why.
JUDGED = {
    "tut_addmm_2cta_ws_": "as the case fbtriton-metaws.addmm_2cta_ws_v0.sm100.base: Insert2CTASync initialises the "
                          "peeled 2-CTA MMA's cross-CTA barrier inside the MMA partition, after the cluster's start-up "
                          "sync; CTA 1's remote arrive can reach CTA 0's copy before that init, which discards it",
    "tut_addmm_2cta_nows_": "non-WS tl.dot(two_ctas=True) at num_stages 1: each K step inits a fresh MMA barrier in "
                            "the loop body; the lowering's only cross-CTA ordering before the paired MMA is a "
                            "cluster *arrive* (MMAv5.cpp: no wait), so CTA 0's multicast commit can reach CTA 1's "
                            "barrier before CTA 1 (re)initialises it in that step: a timing-dependent hang",
    "tut_fa_bwd_2cta_128_2_8_1_": "USE_WARP_BARRIER with NUM_CTAS 2 (the tutorial's 2-CTA configs all set it False): "
                                  "p_fulls is a warp barrier for 8 warps (256 arrivals) but both CTAs' 8 compute warps "
                                  "arrive on CTA 0's copy (512 per phase), so each phase completes twice (overrun)",
}


def write_source(git_dir: str, c: dict) -> Path:
    commit = fm.NIGHTLY if c["comp"] == "up39" else fm.TAG
    src = fm._write_sources(git_dir, commit, c["path"], Path("/tmp/barrier-viz-cluster-unseen-src"))
    text = src.read_text()
    if c["spec"].get("edits"):
        text = apply_edits(text, c["spec"]["edits"])
    if c["nested"]:
        text = lift_nested(text, c["nested"], c["kernel"])
        src = src.with_name(f"lifted_{c['kernel']}.py")
    src.write_text(text)
    return src


def cmd_compile(args) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    pythons = {"fbt": args.fbt_python, "up39": args.up_python}
    man_p = out / "manifest.json"
    man = json.loads(man_p.read_text()) if man_p.exists() else {}
    failed = 0
    for c in C:
        if args.only and args.only not in c["name"]:
            continue
        src = write_source(args.git_dir, c)
        t0 = time.time()
        res = subprocess.run([pythons[c["comp"]], "-c", fm.CHILD, str(HERE / "history"), json.dumps(c["spec"]), str(src),
                              c["kernel"], str(out / f"{c['name']}.ttgir")], capture_output=True, text=True,
                             env={**os.environ, **(c["spec"].get("env") or {})}, timeout=args.timeout)
        if res.returncode != 0:
            failed += 1
            err = res.stderr.strip().splitlines()
            print(f"FAIL {c['name']}: {err[-1] if err else res.returncode}", flush=True)
            continue
        info = json.loads(res.stdout.strip().splitlines()[-1])
        man[c["name"]] = dict(c, version=info["version"], warp_specialized=info["warp_specialized"])
        print(f"ok   {c['name']} ({info['bytes']} bytes, ws={info['warp_specialized']}, {time.time() - t0:.0f}s)", flush=True)
    man_p.write_text(json.dumps(dict(sorted(man.items())), indent=1) + "\n")
    return 1 if failed else 0


def cmd_check(args) -> int:
    exe = str(ROOT / ".venv" / "bin" / "barrier-viz")
    man = json.loads((Path(args.dir) / "manifest.json").read_text())
    per_family: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    bad = judged = 0
    for name in sorted(man):
        if args.only and args.only not in name:
            continue
        f = Path(args.dir) / f"{name}.ttgir"
        t0 = time.time()
        res = subprocess.run([exe, "check", str(f), "--format", "json"], capture_output=True, text=True)
        secs = time.time() - t0
        fam = f"{man[name]['family']}/{man[name]['comp']}"
        per_family[fam][0] += 1
        try:
            doc = json.loads(res.stdout)
        except json.JSONDecodeError:
            print(f"CRASH {name} rc={res.returncode}: {res.stderr.strip()[-300:]}")
            bad += 1
            per_family[fam][1] += 1
            continue
        errs = sorted({f"{x['kind']}@{','.join(map(str, x.get('lines') or []))}" for x in doc["findings"]
                       if x["severity"] == "error"})
        why = next((w for prefix, w in JUDGED.items() if name.startswith(prefix)), None) if errs else None
        bad += bool(errs) and why is None
        judged += bool(why)
        per_family[fam][1] += bool(errs)
        print(f"{len(errs)}E {secs:5.1f}s {name}" + ("  " + " ".join(errs) if errs else "")
              + (f"\n      judged a true verdict: {why}" if why else ""), flush=True)
    for fam, (n, e) in sorted(per_family.items()):
        print(f"{fam}: {n} kernels, {e} with an error finding")
    print(f"{sum(n for n, _ in per_family.values())} files: {judged} with an error finding judged true by hand, "
          f"{bad} with one not explained")
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = fm.compile_parser(sub, "/tmp/cluster-unseen")
    k = sub.add_parser("check")
    k.add_argument("dir", nargs="?", default="/tmp/cluster-unseen")
    k.add_argument("--only", default="")
    args = ap.parse_args()
    return cmd_compile(args) if args.cmd == "compile" else cmd_check(args)


if __name__ == "__main__":
    sys.exit(main())
