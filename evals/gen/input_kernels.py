"""Our kernels whose barrier behaviour depends on the launch (issue 13: input points).

Same style as kernels.py: plain `@triton.jit` functions plus a table of signatures and
constexprs (`KERNELS`); `input_cases.py` compiles them on the CPU and writes eval cases. Each
kernel has a loop whose trip count or a condition whose side the arguments and program ids
decide: the last split of a split-K GEMM, a CTA of a persistent GEMM with no tile, the
off-diagonal blocks of a causal attention-like loop (none for the first query tile), a runtime
flag that adds a bias load to a persistent GEMM's epilogue.
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def gemm_splitk(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                SPLIT_K: tl.constexpr):
    """Split-K: program (pid, pid_k) reduces K tiles [pid_k * per, min((pid_k + 1) * per, tiles));
    the last split is empty when the tiles do not fill every split."""
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    tiles_n = tl.cdiv(N, BN)
    row = (pid // tiles_n) * BM
    col = (pid % tiles_n) * BN
    k_tiles = tl.cdiv(K, BK)
    per_split = tl.cdiv(k_tiles, SPLIT_K)
    k_lo = pid_k * per_split
    k_hi = tl.minimum(k_lo + per_split, k_tiles)
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M * SPLIT_K, N], strides=[N, 1], block_shape=[BM, BN])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kk in tl.range(k_lo, k_hi, warp_specialize=True):
        a = a_desc.load([row, kk * BK])
        b = b_desc.load([col, kk * BK])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pid_k * M + row, col], acc.to(tl.float16))


@triton.jit
def attn_causal_offdiag(q_ptr, k_ptr, v_ptr, o_ptr, sm_scale, ZH, N_CTX, D: tl.constexpr, BM: tl.constexpr,
                        BN: tl.constexpr):
    """The off-diagonal part of causal attention: query tile pid_m attends to the KV blocks
    before its own rows, [0, pid_m * BM): no block at all for the first query tile."""
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    rows = ZH * N_CTX
    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[rows, D], strides=[D, 1], block_shape=[BM, D])
    k_desc = tl.make_tensor_descriptor(k_ptr, shape=[rows, D], strides=[D, 1], block_shape=[BN, D])
    v_desc = tl.make_tensor_descriptor(v_ptr, shape=[rows, D], strides=[D, 1], block_shape=[BN, D])
    o_desc = tl.make_tensor_descriptor(o_ptr, shape=[rows, D], strides=[D, 1], block_shape=[BM, D])
    q_row = bh * N_CTX + pid_m * BM
    q = q_desc.load([q_row, 0])
    m_i = tl.full((BM,), float("-inf"), dtype=tl.float32)
    l_i = tl.full((BM,), 1.0, dtype=tl.float32)
    acc = tl.zeros((BM, D), dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    hi = tl.minimum(pid_m * BM, N_CTX)
    for start in tl.range(0, hi, BN, warp_specialize=True):
        k = k_desc.load([bh * N_CTX + start, 0])
        s = tl.dot(q, k.T) * qk_scale
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = v_desc.load([bh * N_CTX + start, 0])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_new
    o_desc.store([q_row, 0], (acc / l_i[:, None]).to(tl.float16))


@triton.jit
def gemm_persistent_few(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Persistent GEMM striding over tiles by the launched program count: a CTA whose id is
    at or beyond the tile count gets no tile."""
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    tiles_n = tl.cdiv(N, BN)
    tiles = tl.cdiv(M, BM) * tiles_n
    k_steps = tl.cdiv(K, BK)
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    for tile in tl.range(pid, tiles, nprog, flatten=False, warp_specialize=True):
        row = (tile // tiles_n) * BM
        col = (tile % tiles_n) * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for kk in range(k_steps):
            a = a_desc.load([row, kk * BK])
            b = b_desc.load([col, kk * BK])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([row, col], acc.to(tl.float16))


@triton.jit
def gemm_persistent_flag(a_ptr, b_ptr, c_ptr, bias_ptr, M, N, K, HAS_BIAS, BM: tl.constexpr, BN: tl.constexpr,
                         BK: tl.constexpr):
    """Persistent GEMM with a runtime-flag epilogue: when HAS_BIAS is set the epilogue loads a
    bias tile (a TMA copy with its own barrier, under an scf.if on the argument)."""
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    tiles_n = tl.cdiv(N, BN)
    tiles = tl.cdiv(M, BM) * tiles_n
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    bias_desc = tl.make_tensor_descriptor(bias_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    for tile in tl.range(pid, tiles, nprog, flatten=False, warp_specialize=True):
        row = (tile // tiles_n) * BM
        col = (tile % tiles_n) * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for kk in range(tl.cdiv(K, BK)):
            a = a_desc.load([row, kk * BK])
            b = b_desc.load([col, kk * BK])
            acc = tl.dot(a, b.T, acc)
        if HAS_BIAS != 0:
            acc = acc + bias_desc.load([row, col]).to(tl.float32)
        c_desc.store([row, col], acc.to(tl.float16))


GEMM_SIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"}
ATTN_SIG = {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16", "sm_scale": "fp32",
            "ZH": "i32", "N_CTX": "i32"}

KERNELS: dict[str, tuple] = {
    "gemm_splitk": (gemm_splitk, GEMM_SIG, [{"BM": 128, "BN": 128, "BK": 64, "SPLIT_K": 4}]),
    "attn_causal_offdiag": (attn_causal_offdiag, ATTN_SIG, [{"D": 64, "BM": 128, "BN": 64}]),
    "gemm_persistent_few": (gemm_persistent_few, GEMM_SIG, [{"BM": 128, "BN": 128, "BK": 64}]),
    "gemm_persistent_flag": (gemm_persistent_flag, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16",
                                                    "bias_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
                                                    "HAS_BIAS": "i32"}, [{"BM": 128, "BN": 128, "BK": 64}]),
}
