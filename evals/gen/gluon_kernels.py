"""Our own hand-written warp-specialized kernels in Gluon, for GPU-observed truth on Hopper (sm90).

Gluon is upstream Triton's explicit language: the kernel author writes the partitions, the SMEM
rings, the mbarriers and their phases by hand, the way TLX / CUTLASS-style kernels do, instead of
letting the compiler warp-specialize a `tl.range(..., warp_specialize=True)` loop. The TTGIR of
these kernels therefore carries hand-written synchronization idioms the compiler-generated corpus
lacks: pre-arrived empty barriers, a phase bit carried as a loop value and flipped when the ring
index wraps, the `phase ^ 1` first-pass idiom, releases after `warpgroup_mma_wait`, an empty
barrier shared by two consumers (init count 2).

Kernels (all fp16 in, fp32 accumulate; each checked against torch by gluon_probe.py):

* `gemm_ws` — persistent GEMM C = A @ B (B row-major [K, N]). Partitions: the default (4 warps)
  is the MMA partition (wait ready, `warpgroup_mma`, `warpgroup_mma_wait`, release the slot, then
  hand the tile to the epilogue through one SMEM buffer); worker 0 (1 warp) is the TMA loader;
  worker 1 (1 warp) is the epilogue (TMA store of the tile, release of the buffer). The loader's
  empty barriers are pre-arrived once, so its first wait on each slot is on parity 0.
* `gemm_2c` — one tile per program, two consumer warpgroups (the default and a 4-warp worker)
  each computing 64 rows of a 128-row tile with `warpgroup_mma`, one 1-warp TMA loader. Each ring
  slot holds both halves of A and B; its empty barrier has count 2 (both consumers release it);
  the loader uses the `phase ^ 1` idiom instead of pre-arrivals.
* `rowstats` — producer / two consumers without MMA: a 1-warp TMA loader streams [BM, BC] tiles
  of X through the ring; the default partition sums each row, a 4-warp worker takes each row's
  maximum; both read the same slot (`local_load`) and release it (count 2).

Nothing here runs at import: the launchers need a CUDA device and triton >= 3.5 with Gluon.
"""

from __future__ import annotations

import inspect

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, mbarrier, tma, warpgroup_mma,
                                                              warpgroup_mma_wait)


# name -> kernel, constexprs, problem size, launch meta; shared by gluon_compile.py (CPU) and
# gluon_probe.py (device). Sizes are chosen so every ring slot is reused many times per program.
PROBES: dict[str, dict] = {
    "gluon-gemm_ws": {"kernel": "gemm_ws", "constexprs": {"BM": 128, "BN": 128, "BK": 64, "STAGES": 3},
                      "size": {"M": 2048, "N": 2048, "K": 1024}, "warps": 4, "grid": "persistent"},
    "gluon-gemm_2c": {"kernel": "gemm_2c", "constexprs": {"BM": 128, "BN": 128, "BK": 64, "STAGES": 3},
                      "size": {"M": 2048, "N": 2048, "K": 1024}, "warps": 4, "grid": "tiles"},
    "gluon-rowstats": {"kernel": "rowstats", "constexprs": {"BM": 128, "BC": 64, "STAGES": 3},
                       "size": {"M": 8192, "NC": 2048}, "warps": 4, "grid": "rows"},
}


def ws_list_api() -> bool:
    """Whether `gl.warp_specialize` takes a list of (function, args) pairs (newer Gluon) rather
    than (default_args, default_fn, worker_args, worker_fns, ...) (older)."""
    params = [p for p in inspect.signature(gl.warp_specialize).parameters if not p.startswith("_")]
    return params[0] != "default_args"


@gluon.jit
def _advance(idx, phase, STAGES: gl.constexpr):
    """Next ring slot; the phase bit flips when the index wraps to slot 0."""
    nxt = idx + 1
    wrap = nxt == STAGES
    return gl.where(wrap, 0, nxt), gl.where(wrap, phase ^ 1, phase)


@gluon.jit
def _tile_coords(tile, N, BM: gl.constexpr, BN: gl.constexpr):
    tiles_n = gl.cdiv(N, BN)
    return (tile // tiles_n) * BM, (tile % tiles_n) * BN


# ---------------------------------------------------------------------------------------------
# gemm_ws: persistent TMA + wgmma GEMM, loader / MMA / epilogue partitions
# ---------------------------------------------------------------------------------------------
@gluon.jit
def _gemm_ws_load(a_desc, b_desc, c_desc, a_bufs, b_bufs, ready, empty, c_smem, c_ready, c_empty, M, N, K,
                  STAGES: gl.constexpr, num_warps: gl.constexpr):
    BM: gl.constexpr = c_desc.block_type.shape[0]
    BN: gl.constexpr = c_desc.block_type.shape[1]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    tiles = gl.cdiv(M, BM) * gl.cdiv(N, BN)
    idx = gl.to_tensor(0)
    phase = gl.to_tensor(0)
    for tile in range(gl.program_id(0), tiles, gl.num_programs(0)):
        off_m, off_n = _tile_coords(tile, N, BM, BN)
        for k in range(0, K, BK):
            # The slot is free once its phase completed: pre-arrived for the first round, then
            # released by the MMA partition.
            mbarrier.wait(empty.index(idx), phase)
            bar = ready.index(idx)
            mbarrier.expect(bar, a_desc.block_type.nbytes + b_desc.block_type.nbytes)
            tma.async_copy_global_to_shared(a_desc, [off_m, k], bar, a_bufs.index(idx))
            tma.async_copy_global_to_shared(b_desc, [k, off_n], bar, b_bufs.index(idx))
            idx, phase = _advance(idx, phase, STAGES)


@gluon.jit
def _gemm_ws_mma(a_desc, b_desc, c_desc, a_bufs, b_bufs, ready, empty, c_smem, c_ready, c_empty, M, N, K,
                 STAGES: gl.constexpr, num_warps: gl.constexpr):
    BM: gl.constexpr = c_desc.block_type.shape[0]
    BN: gl.constexpr = c_desc.block_type.shape[1]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[gl.num_warps(), 1],
                                                     instr_shape=[16, BN, 16])
    tiles = gl.cdiv(M, BM) * gl.cdiv(N, BN)
    idx = gl.to_tensor(0)
    phase = gl.to_tensor(0)
    c_phase = gl.to_tensor(0)
    for tile in range(gl.program_id(0), tiles, gl.num_programs(0)):
        acc = gl.zeros((BM, BN), gl.float32, layout)
        for k in range(0, K, BK):
            mbarrier.wait(ready.index(idx), phase)
            acc = warpgroup_mma(a_bufs.index(idx), b_bufs.index(idx), acc, is_async=True)
            # The slot may be overwritten only after the wgmma reading it has retired.
            acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
            mbarrier.arrive(empty.index(idx), count=1)
            idx, phase = _advance(idx, phase, STAGES)
        # Hand the tile to the epilogue: wait until it stored the previous one (a fresh barrier
        # passes a wait on parity 1).
        mbarrier.wait(c_empty, c_phase ^ 1)
        c_smem.store(acc.to(c_desc.dtype))
        fence_async_shared()
        mbarrier.arrive(c_ready, count=1)
        c_phase = c_phase ^ 1


@gluon.jit
def _gemm_ws_store(a_desc, b_desc, c_desc, a_bufs, b_bufs, ready, empty, c_smem, c_ready, c_empty, M, N, K,
                   STAGES: gl.constexpr, num_warps: gl.constexpr):
    BM: gl.constexpr = c_desc.block_type.shape[0]
    BN: gl.constexpr = c_desc.block_type.shape[1]
    tiles = gl.cdiv(M, BM) * gl.cdiv(N, BN)
    c_phase = gl.to_tensor(0)
    for tile in range(gl.program_id(0), tiles, gl.num_programs(0)):
        off_m, off_n = _tile_coords(tile, N, BM, BN)
        mbarrier.wait(c_ready, c_phase)
        tma.async_copy_shared_to_global(c_desc, [off_m, off_n], c_smem)
        tma.store_wait(0)
        mbarrier.arrive(c_empty, count=1)
        c_phase = c_phase ^ 1


@gluon.jit
def gemm_ws(a_desc, b_desc, c_desc, M, N, K, STAGES: gl.constexpr, WS_LIST: gl.constexpr,
            num_warps: gl.constexpr):
    a_bufs = gl.allocate_shared_memory(a_desc.dtype, [STAGES] + a_desc.block_type.shape, a_desc.layout)
    b_bufs = gl.allocate_shared_memory(b_desc.dtype, [STAGES] + b_desc.block_type.shape, b_desc.layout)
    c_smem = gl.allocate_shared_memory(c_desc.dtype, c_desc.block_type.shape, c_desc.layout)
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    c_bars = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=1)
    c_ready = c_bars.index(0)
    c_empty = c_bars.index(1)
    mbarrier.init(c_ready, count=1)
    mbarrier.init(c_empty, count=1)
    # Every slot starts free: complete phase 0 of each empty barrier once.
    for i in gl.static_range(STAGES):
        mbarrier.arrive(empty.index(i), count=1)
    args = (a_desc, b_desc, c_desc, a_bufs, b_bufs, ready, empty, c_smem, c_ready, c_empty, M, N, K, STAGES,
            num_warps)
    if WS_LIST:
        gl.warp_specialize([(_gemm_ws_mma, args), (_gemm_ws_load, args), (_gemm_ws_store, args)], [1, 1],
                           [40, 40])
    else:
        gl.warp_specialize(args, _gemm_ws_mma, args, [_gemm_ws_load, _gemm_ws_store], [1, 1], [40, 40])


# ---------------------------------------------------------------------------------------------
# gemm_2c: two consumer warpgroups share each ring slot (empty count 2)
# ---------------------------------------------------------------------------------------------
@gluon.jit
def _gemm_2c_load(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, N, K, STAGES: gl.constexpr,
                  WHICH: gl.constexpr, num_warps: gl.constexpr):
    HM: gl.constexpr = c_desc.block_type.shape[0]
    BN: gl.constexpr = c_desc.block_type.shape[1]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    off_m, off_n = _tile_coords(gl.program_id(0), N, 2 * HM, BN)
    idx = gl.to_tensor(0)
    phase = gl.to_tensor(0)
    for k in range(0, K, BK):
        # First round: a fresh barrier passes a wait on parity 1, so no pre-arrival is needed.
        mbarrier.wait(empty.index(idx), phase ^ 1)
        bar = ready.index(idx)
        mbarrier.expect(bar, 2 * a_desc.block_type.nbytes + b_desc.block_type.nbytes)
        tma.async_copy_global_to_shared(a_desc, [off_m, k], bar, a_bufs.index(2 * idx))
        tma.async_copy_global_to_shared(a_desc, [off_m + HM, k], bar, a_bufs.index(2 * idx + 1))
        tma.async_copy_global_to_shared(b_desc, [k, off_n], bar, b_bufs.index(idx))
        idx, phase = _advance(idx, phase, STAGES)


@gluon.jit
def _gemm_2c_consume(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, N, K, STAGES: gl.constexpr,
                     WHICH: gl.constexpr, num_warps: gl.constexpr):
    HM: gl.constexpr = c_desc.block_type.shape[0]
    BN: gl.constexpr = c_desc.block_type.shape[1]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[gl.num_warps(), 1],
                                                     instr_shape=[16, BN, 16])
    off_m, off_n = _tile_coords(gl.program_id(0), N, 2 * HM, BN)
    acc = gl.zeros((HM, BN), gl.float32, layout)
    idx = gl.to_tensor(0)
    phase = gl.to_tensor(0)
    for k in range(0, K, BK):
        mbarrier.wait(ready.index(idx), phase)
        acc = warpgroup_mma(a_bufs.index(2 * idx + WHICH), b_bufs.index(idx), acc, is_async=True)
        acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
        mbarrier.arrive(empty.index(idx), count=1)
        idx, phase = _advance(idx, phase, STAGES)
    c = c_bufs.index(WHICH)
    c.store(acc.to(c_desc.dtype))
    fence_async_shared()
    tma.async_copy_shared_to_global(c_desc, [off_m + WHICH * HM, off_n], c)
    tma.store_wait(0)


@gluon.jit
def _gemm_2c_consume1(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, N, K, STAGES: gl.constexpr,
                      WHICH: gl.constexpr, num_warps: gl.constexpr):
    _gemm_2c_consume(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, N, K, STAGES, 1, num_warps)


@gluon.jit
def gemm_2c(a_desc, b_desc, c_desc, N, K, STAGES: gl.constexpr, WS_LIST: gl.constexpr, num_warps: gl.constexpr):
    a_bufs = gl.allocate_shared_memory(a_desc.dtype, [2 * STAGES] + a_desc.block_type.shape, a_desc.layout)
    b_bufs = gl.allocate_shared_memory(b_desc.dtype, [STAGES] + b_desc.block_type.shape, b_desc.layout)
    c_bufs = gl.allocate_shared_memory(c_desc.dtype, [2] + c_desc.block_type.shape, c_desc.layout)
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=2)  # both consumers release the slot
    args0 = (a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, N, K, STAGES, 0, num_warps)
    args = (a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, N, K, STAGES, 1, 4)
    if WS_LIST:
        gl.warp_specialize([(_gemm_2c_consume, args0), (_gemm_2c_consume1, args), (_gemm_2c_load, args)], [4, 1],
                           [152, 40])
    else:
        gl.warp_specialize(args0, _gemm_2c_consume, args, [_gemm_2c_consume1, _gemm_2c_load], [4, 1], [152, 40])


# ---------------------------------------------------------------------------------------------
# rowstats: one producer, two consumers reading the same slot (sum and max of each row)
# ---------------------------------------------------------------------------------------------
@gluon.jit
def _rs_load(x_desc, bufs, ready, empty, sum_ptr, max_ptr, NC, STAGES: gl.constexpr, num_warps: gl.constexpr):
    BM: gl.constexpr = x_desc.block_type.shape[0]
    BC: gl.constexpr = x_desc.block_type.shape[1]
    off_m = gl.program_id(0) * BM
    idx = gl.to_tensor(0)
    phase = gl.to_tensor(0)
    for c in range(0, NC, BC):
        mbarrier.wait(empty.index(idx), phase ^ 1)
        bar = ready.index(idx)
        mbarrier.expect(bar, x_desc.block_type.nbytes)
        tma.async_copy_global_to_shared(x_desc, [off_m, c], bar, bufs.index(idx))
        idx, phase = _advance(idx, phase, STAGES)


@gluon.jit
def _rs_consume(x_desc, bufs, ready, empty, sum_ptr, max_ptr, NC, STAGES: gl.constexpr, num_warps: gl.constexpr,
                IS_MAX: gl.constexpr):
    BM: gl.constexpr = x_desc.block_type.shape[0]
    BC: gl.constexpr = x_desc.block_type.shape[1]
    layout: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    rows_layout: gl.constexpr = gl.SliceLayout(1, layout)
    if IS_MAX:
        acc = gl.full([BM], float("-inf"), gl.float32, rows_layout)
    else:
        acc = gl.zeros([BM], gl.float32, rows_layout)
    idx = gl.to_tensor(0)
    phase = gl.to_tensor(0)
    for c in range(0, NC, BC):
        mbarrier.wait(ready.index(idx), phase)
        x = bufs.index(idx).load(layout).to(gl.float32)
        # The next TMA write into the slot must be ordered after this generic-proxy read.
        fence_async_shared()
        mbarrier.arrive(empty.index(idx), count=1)
        if IS_MAX:
            acc = gl.maximum(acc, gl.max(x, axis=1))
        else:
            acc = acc + gl.sum(x, axis=1)
        idx, phase = _advance(idx, phase, STAGES)
    rows = gl.program_id(0) * BM + gl.arange(0, BM, layout=rows_layout)
    if IS_MAX:
        gl.store(max_ptr + rows, acc)
    else:
        gl.store(sum_ptr + rows, acc)


@gluon.jit
def _rs_sum(x_desc, bufs, ready, empty, sum_ptr, max_ptr, NC, STAGES: gl.constexpr, num_warps: gl.constexpr):
    _rs_consume(x_desc, bufs, ready, empty, sum_ptr, max_ptr, NC, STAGES, num_warps, False)


@gluon.jit
def _rs_max(x_desc, bufs, ready, empty, sum_ptr, max_ptr, NC, STAGES: gl.constexpr, num_warps: gl.constexpr):
    _rs_consume(x_desc, bufs, ready, empty, sum_ptr, max_ptr, NC, STAGES, 4, True)


@gluon.jit
def rowstats(x_desc, sum_ptr, max_ptr, NC, STAGES: gl.constexpr, WS_LIST: gl.constexpr, num_warps: gl.constexpr):
    bufs = gl.allocate_shared_memory(x_desc.dtype, [STAGES] + x_desc.block_type.shape, x_desc.layout)
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=2)
    args0 = (x_desc, bufs, ready, empty, sum_ptr, max_ptr, NC, STAGES, num_warps)
    args = (x_desc, bufs, ready, empty, sum_ptr, max_ptr, NC, STAGES, 4)
    if WS_LIST:
        gl.warp_specialize([(_rs_sum, args0), (_rs_max, args), (_rs_load, args)], [4, 1], [96, 40])
    else:
        gl.warp_specialize(args0, _rs_sum, args, [_rs_max, _rs_load], [4, 1], [96, 40])
