"""Our own warp-specialized Triton kernels, written for the eval corpus.

Each kernel is a plain `@triton.jit` function plus a table of the signatures and constexprs it is
compiled with (`KERNELS`). Nothing here needs a GPU: `generate.py` compiles them on the CPU to
TTGIR for `cuda:100` and `cuda:90`; `gpu_probe.py` also launches them on the device. The kernels
are kept small and regular on purpose: the eval needs IR whose synchronization we understand,
not peak performance.
"""

from __future__ import annotations

import triton
import triton.language as tl


# --------------------------------------------------------------------------------------------
# GEMMs: C[M, N] = A[M, K] @ B[N, K]^T, fp16 in, fp32 accumulate, fp16 out, TMA descriptors.
# --------------------------------------------------------------------------------------------


@triton.jit
def gemm_tile(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """One output tile per program; the K loop is the warp-specialized loop."""
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BN)
    row = (pid // tiles_n) * BM
    col = (pid % tiles_n) * BN
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kk in tl.range(0, tl.cdiv(K, BK), warp_specialize=True):
        a = a_desc.load([row, kk * BK])
        b = b_desc.load([col, kk * BK])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([row, col], acc.to(tl.float16))


@triton.jit
def _swizzle(tile, tiles_m, tiles_n, GROUP: tl.constexpr):
    """Grouped tile order (GROUP rows of tiles at a time) so neighbouring programs share A."""
    per_group = GROUP * tiles_n
    first_m = (tile // per_group) * GROUP
    rows = min(tiles_m - first_m, GROUP)
    return first_m + (tile % rows), (tile % per_group) // rows


@triton.jit
def gemm_persistent(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                    GROUP: tl.constexpr, NUM_PROGS: tl.constexpr):
    """Persistent GEMM: each program walks tiles pid, pid+NUM_PROGS, ...; the tile loop is the
    warp-specialized loop and the K loop nests inside it."""
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    k_steps = tl.cdiv(K, BK)
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    for tile in tl.range(pid, tiles_m * tiles_n, NUM_PROGS, flatten=False, warp_specialize=True):
        tm, tn = _swizzle(tile, tiles_m, tiles_n, GROUP)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for kk in range(k_steps):
            a = a_desc.load([tm * BM, kk * BK])
            b = b_desc.load([tn * BN, kk * BK])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([tm * BM, tn * BN], acc.to(tl.float16))


@triton.jit
def gemm_subtiled(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                  NUM_PROGS: tl.constexpr):
    """Persistent GEMM whose epilogue stores the accumulator as two BN/2 halves, so the store
    of one half overlaps the conversion of the other (epilogue subtiling)."""
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BN)
    tiles = tl.cdiv(M, BM) * tiles_n
    k_steps = tl.cdiv(K, BK)
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN // 2])
    for tile in tl.range(pid, tiles, NUM_PROGS, flatten=False, warp_specialize=True):
        row = (tile // tiles_n) * BM
        col = (tile % tiles_n) * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for kk in range(k_steps):
            a = a_desc.load([row, kk * BK])
            b = b_desc.load([col, kk * BK])
            acc = tl.dot(a, b.T, acc)
        halves = tl.reshape(acc, (BM, 2, BN // 2)).permute(0, 2, 1)
        lo, hi = tl.split(halves)
        c_desc.store([row, col], lo.to(tl.float16))
        c_desc.store([row, col + BN // 2], hi.to(tl.float16))


@triton.jit
def gemm_bias_relu(a_ptr, b_ptr, c_ptr, bias_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                   BK: tl.constexpr):
    """Non-persistent GEMM with a bias + ReLU epilogue read through plain pointers: a second
    reader of the accumulator next to the TMA pipeline."""
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BN)
    row = (pid // tiles_n) * BM
    col = (pid % tiles_n) * BN
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kk in tl.range(0, tl.cdiv(K, BK), warp_specialize=True):
        a = a_desc.load([row, kk * BK])
        b = b_desc.load([col, kk * BK])
        acc = tl.dot(a, b.T, acc)
    bias = tl.load(bias_ptr + col + tl.arange(0, BN))
    out = tl.maximum(acc + bias[None, :], 0.0)
    c_desc.store([row, col], out.to(tl.float16))


# --------------------------------------------------------------------------------------------
# Attention forward: O = softmax(Q K^T * scale) V, online softmax, one (batch*head) per axis 1.
# Q/K/V/O are [Z*H*N_CTX, D] row-major fp16.
# --------------------------------------------------------------------------------------------


@triton.jit
def _attn_tile(q, k_desc, v_desc, kv_row0, n_ctx, qk_scale, BM: tl.constexpr, BN: tl.constexpr,
               D: tl.constexpr, WS: tl.constexpr):
    """The inner KV loop of one query tile; returns the normalized output tile."""
    m_i = tl.full((BM,), float("-inf"), dtype=tl.float32)
    l_i = tl.full((BM,), 1.0, dtype=tl.float32)
    acc = tl.zeros((BM, D), dtype=tl.float32)
    for start in tl.range(0, n_ctx, BN, warp_specialize=WS):
        k = k_desc.load([kv_row0 + start, 0])
        s = tl.dot(q, k.T) * qk_scale
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = v_desc.load([kv_row0 + start, 0])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_new
    return acc / l_i[:, None]


@triton.jit
def attn_fwd(q_ptr, k_ptr, v_ptr, o_ptr, sm_scale, ZH, N_CTX, D: tl.constexpr, BM: tl.constexpr,
             BN: tl.constexpr):
    """One query tile per program; the KV loop is warp-specialized."""
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    rows = ZH * N_CTX
    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[rows, D], strides=[D, 1], block_shape=[BM, D])
    k_desc = tl.make_tensor_descriptor(k_ptr, shape=[rows, D], strides=[D, 1], block_shape=[BN, D])
    v_desc = tl.make_tensor_descriptor(v_ptr, shape=[rows, D], strides=[D, 1], block_shape=[BN, D])
    o_desc = tl.make_tensor_descriptor(o_ptr, shape=[rows, D], strides=[D, 1], block_shape=[BM, D])
    q_row = bh * N_CTX + pid_m * BM
    q = q_desc.load([q_row, 0])
    out = _attn_tile(q, k_desc, v_desc, bh * N_CTX, N_CTX, sm_scale * 1.44269504, BM, BN, D, True)
    o_desc.store([q_row, 0], out.to(tl.float16))


@triton.jit
def attn_fwd_persistent(q_ptr, k_ptr, v_ptr, o_ptr, sm_scale, ZH, N_CTX, D: tl.constexpr,
                        BM: tl.constexpr, BN: tl.constexpr, NUM_PROGS: tl.constexpr):
    """Persistent attention: programs stride over (query tile, batch*head) pairs; the outer tile
    loop is warp-specialized, the KV loop nests inside."""
    pid = tl.program_id(0)
    rows = ZH * N_CTX
    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[rows, D], strides=[D, 1], block_shape=[BM, D])
    k_desc = tl.make_tensor_descriptor(k_ptr, shape=[rows, D], strides=[D, 1], block_shape=[BN, D])
    v_desc = tl.make_tensor_descriptor(v_ptr, shape=[rows, D], strides=[D, 1], block_shape=[BN, D])
    o_desc = tl.make_tensor_descriptor(o_ptr, shape=[rows, D], strides=[D, 1], block_shape=[BM, D])
    m_tiles = tl.cdiv(N_CTX, BM)
    qk_scale = sm_scale * 1.44269504
    for tile in tl.range(pid, m_tiles * ZH, NUM_PROGS, flatten=False, warp_specialize=True):
        bh = tile // m_tiles
        q_row = bh * N_CTX + (tile % m_tiles) * BM
        q = q_desc.load([q_row, 0])
        out = _attn_tile(q, k_desc, v_desc, bh * N_CTX, N_CTX, qk_scale, BM, BN, D, False)
        o_desc.store([q_row, 0], out.to(tl.float16))


@triton.jit
def attn_fwd_persistent_dp(q_ptr, k_ptr, v_ptr, o_ptr, sm_scale, ZH, N_CTX, D: tl.constexpr,
                           BM: tl.constexpr, BN: tl.constexpr, NUM_PROGS: tl.constexpr):
    """Persistent attention for Meta AutoWS's knobs: the tile loop asks for data partitioning
    (two query halves, each with its own softmax partition) and a merged epilogue, the layout in
    which packed TMEM columns (alpha, l_i next to the accumulators) appear."""
    pid = tl.program_id(0)
    rows = ZH * N_CTX
    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[rows, D], strides=[D, 1], block_shape=[BM, D])
    k_desc = tl.make_tensor_descriptor(k_ptr, shape=[rows, D], strides=[D, 1], block_shape=[BN, D])
    v_desc = tl.make_tensor_descriptor(v_ptr, shape=[rows, D], strides=[D, 1], block_shape=[BN, D])
    o_desc = tl.make_tensor_descriptor(o_ptr, shape=[rows, D], strides=[D, 1], block_shape=[BM, D])
    m_tiles = tl.cdiv(N_CTX, BM)
    qk_scale = sm_scale * 1.44269504
    for tile in tl.range(pid, m_tiles * ZH, NUM_PROGS, flatten=False, warp_specialize=True,
                         data_partition_factor=2, merge_epilogue=True):
        bh = tile // m_tiles
        q_row = bh * N_CTX + (tile % m_tiles) * BM
        q = q_desc.load([q_row, 0])
        out = _attn_tile(q, k_desc, v_desc, bh * N_CTX, N_CTX, qk_scale, BM, BN, D, False)
        o_desc.store([q_row, 0], out.to(tl.float16))


GEMM_SIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"}
ATTN_SIG = {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16", "sm_scale": "fp32",
            "ZH": "i32", "N_CTX": "i32"}

# name -> (function, runtime signature, list of constexpr variants)
KERNELS: dict[str, tuple] = {
    "gemm_tile": (gemm_tile, GEMM_SIG, [
        {"BM": 128, "BN": 128, "BK": 64},
        {"BM": 128, "BN": 256, "BK": 64},
    ]),
    "gemm_persistent": (gemm_persistent, GEMM_SIG, [
        {"BM": 128, "BN": 128, "BK": 64, "GROUP": 8, "NUM_PROGS": 132},
        {"BM": 128, "BN": 256, "BK": 64, "GROUP": 8, "NUM_PROGS": 132},
    ]),
    "gemm_subtiled": (gemm_subtiled, GEMM_SIG, [
        {"BM": 128, "BN": 256, "BK": 64, "NUM_PROGS": 132},
    ]),
    "gemm_bias_relu": (gemm_bias_relu, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "bias_ptr": "*fp32",
                                         "M": "i32", "N": "i32", "K": "i32"}, [
        {"BM": 128, "BN": 128, "BK": 64},
    ]),
    "attn_fwd": (attn_fwd, ATTN_SIG, [
        {"D": 64, "BM": 128, "BN": 64},
        {"D": 128, "BM": 128, "BN": 128},
    ]),
    "attn_fwd_persistent": (attn_fwd_persistent, ATTN_SIG, [
        {"D": 64, "BM": 128, "BN": 64, "NUM_PROGS": 132},
    ]),
    "attn_fwd_persistent_dp": (attn_fwd_persistent_dp, ATTN_SIG, [
        {"D": 128, "BM": 256, "BN": 128, "NUM_PROGS": 132},
    ]),
}
