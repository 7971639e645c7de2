"""Hand-written warp-specialized Gluon kernels for Hopper (sm90) whose work is data (issue 21).

Each partition of these kernels loads the same offsets / schedule from global memory and derives
its own trip counts from them, the way jagged / varlen / grouped kernels do; segments can be
empty and persistent programs get unequal numbers of segments. They are the ground truth for the
`data-dependent` eval group (dd_cases.py makes the mutants and cases, dd_probe.py runs them on
the H200, each mutant under several launch schedules, see SCHEDULES).

* `jagged_norm` — per-segment column L2 norm of a jagged matrix: out[s, :] = ||X[offs[s]:offs[s+1], :]||
  over rows. Persistent programs walk segments s = pid, pid + nprog, ... Three partitions:
  worker 0 (1 warp) TMA-loads [BR, D] row blocks of the segment into a 3-slot ring (ready /
  empty barriers, the `phase ^ 1` first pass); the default partition (4 warps) masks the rows
  past the segment's end, accumulates the squares and hands the segment's D sums to worker 1
  through a 2-slot SMEM result ring (res_ready / res_empty, indexed by the program's segment
  count, so an odd number of segments per program ends on slot 0 of the next pair); worker 1
  (1 warp) takes the square root and writes out[s]. An empty segment (offs[s+1] == offs[s])
  runs no ring iteration but still hands over a zero row.
* `moe_dw` — grouped GEMM of a MoE backward (weight gradient): dW[e] = X_e^T @ dY_e for each
  expert e, where X_e, dY_e are the rows goffs[e]..goffs[e+1] (group sizes padded to BK, possibly
  0). The reduction dimension is the group's token count, so the K loop of a tile runs
  (goffs[e+1]-goffs[e]) / BK times: zero for an empty expert, not a multiple of the ring depth
  in general. Persistent programs walk a tile list sched[t] = (expert, m0, n0, 0) of ntiles[0]
  entries (both in device memory, ordered by the host: longest group first). Worker 0 (1 warp)
  is the TMA loader (3-slot ring, empty barriers pre-arrived once); the default partition
  (4 warps) runs wgmma on the transposed X tile, releases each slot after `warpgroup_mma_wait`,
  and stores each tile with a TMA store from one of two SMEM staging buffers, alternating per
  tile (`tma.store_wait(1)` before a buffer is rewritten: the store two tiles back, from the
  same buffer, has read it; `tma.store_wait(0)` before the program exits).

Nothing here runs at import: the launchers need a CUDA device and triton >= 3.5 with Gluon.
"""

from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, mbarrier, tma, warpgroup_mma,
                                                              warpgroup_mma_wait)

from gluon_kernels import _advance, ws_list_api  # noqa: F401  (shared ring helper; the probe uses ws_list_api)

from dd_schedules import PROBES, SCHEDULES  # noqa: E402,F401  (plain data; no triton needed to read it)


# ---------------------------------------------------------------------------------------------
# jagged_norm
# ---------------------------------------------------------------------------------------------
@gluon.jit
def _jn_load(x_desc, offs_ptr, out_ptr, S, bufs, ready, empty, res, res_ready, res_empty, STAGES: gl.constexpr,
             num_warps: gl.constexpr):
    BR: gl.constexpr = x_desc.block_type.shape[0]
    idx = gl.to_tensor(0)
    phase = gl.to_tensor(0)
    for s in range(gl.program_id(0), S, gl.num_programs(0)):
        start = gl.load(offs_ptr + s)
        seg_len = gl.load(offs_ptr + s + 1) - start
        for r in range(0, seg_len, BR):
            mbarrier.wait(empty.index(idx), phase ^ 1)
            bar = ready.index(idx)
            mbarrier.expect(bar, x_desc.block_type.nbytes)
            tma.async_copy_global_to_shared(x_desc, [start + r, 0], bar, bufs.index(idx))
            idx, phase = _advance(idx, phase, STAGES)


@gluon.jit
def _jn_reduce(x_desc, offs_ptr, out_ptr, S, bufs, ready, empty, res, res_ready, res_empty, STAGES: gl.constexpr,
               num_warps: gl.constexpr):
    BR: gl.constexpr = x_desc.block_type.shape[0]
    D: gl.constexpr = x_desc.block_type.shape[1]
    layout: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    rows_layout: gl.constexpr = gl.SliceLayout(1, layout)
    idx = gl.to_tensor(0)
    phase = gl.to_tensor(0)
    slot = gl.to_tensor(0)
    rphase = gl.to_tensor(0)
    for s in range(gl.program_id(0), S, gl.num_programs(0)):
        start = gl.load(offs_ptr + s)
        seg_len = gl.load(offs_ptr + s + 1) - start
        acc = gl.zeros([D], gl.float32, gl.SliceLayout(0, layout))
        for r in range(0, seg_len, BR):
            mbarrier.wait(ready.index(idx), phase)
            x = bufs.index(idx).load(layout).to(gl.float32)
            # The next TMA write into the slot must be ordered after this generic-proxy read.
            fence_async_shared()
            mbarrier.arrive(empty.index(idx), count=1)
            rows = r + gl.arange(0, BR, layout=rows_layout)
            x = gl.where(gl.expand_dims(rows < seg_len, 1), x, 0.0)
            acc = acc + gl.sum(x * x, axis=0)
            idx, phase = _advance(idx, phase, STAGES)
        # Hand the segment's sums to the writer (also for an empty segment: a zero row).
        mbarrier.wait(res_empty.index(slot), rphase ^ 1)
        res.index(slot).store(acc)
        fence_async_shared()
        mbarrier.arrive(res_ready.index(slot), count=1)
        slot, rphase = _advance(slot, rphase, 2)


@gluon.jit
def _jn_write(x_desc, offs_ptr, out_ptr, S, bufs, ready, empty, res, res_ready, res_empty, STAGES: gl.constexpr,
              num_warps: gl.constexpr):
    D: gl.constexpr = x_desc.block_type.shape[1]
    layout: gl.constexpr = gl.BlockedLayout([2], [32], [gl.num_warps()], [0])
    slot = gl.to_tensor(0)
    rphase = gl.to_tensor(0)
    cols = gl.arange(0, D, layout=layout)
    for s in range(gl.program_id(0), S, gl.num_programs(0)):
        mbarrier.wait(res_ready.index(slot), rphase)
        v = res.index(slot).load(layout)
        mbarrier.arrive(res_empty.index(slot), count=1)
        gl.store(out_ptr + s * D + cols, gl.sqrt(v))
        slot, rphase = _advance(slot, rphase, 2)


@gluon.jit
def jagged_norm(x_desc, offs_ptr, out_ptr, S, STAGES: gl.constexpr, WS_LIST: gl.constexpr,
                num_warps: gl.constexpr):
    D: gl.constexpr = x_desc.block_type.shape[1]
    bufs = gl.allocate_shared_memory(x_desc.dtype, [STAGES] + x_desc.block_type.shape, x_desc.layout)
    res = gl.allocate_shared_memory(gl.float32, [2, D], gl.SwizzledSharedLayout(1, 1, 1, [0]))
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    res_ready = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    res_empty = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=1)
    for i in gl.static_range(2):
        mbarrier.init(res_ready.index(i), count=1)
        mbarrier.init(res_empty.index(i), count=1)
    args0 = (x_desc, offs_ptr, out_ptr, S, bufs, ready, empty, res, res_ready, res_empty, STAGES, num_warps)
    args1 = (x_desc, offs_ptr, out_ptr, S, bufs, ready, empty, res, res_ready, res_empty, STAGES, 1)
    if WS_LIST:
        gl.warp_specialize([(_jn_reduce, args0), (_jn_load, args1), (_jn_write, args1)], [1, 1], [40, 80])
    else:
        gl.warp_specialize(args0, _jn_reduce, args1, [_jn_load, _jn_write], [1, 1], [40, 80])


# ---------------------------------------------------------------------------------------------
# moe_dw
# ---------------------------------------------------------------------------------------------
@gluon.jit
def _dw_tile(sched_ptr, goffs_ptr, t):
    """The tile's expert, its row and column offsets in dW[e], and its group's rows."""
    e = gl.load(sched_ptr + 4 * t)
    m0 = gl.load(sched_ptr + 4 * t + 1)
    n0 = gl.load(sched_ptr + 4 * t + 2)
    start = gl.load(goffs_ptr + e)
    rows = gl.load(goffs_ptr + e + 1) - start
    return e, m0, n0, start, rows


@gluon.jit
def _dw_load(x_desc, dy_desc, dw_desc, sched_ptr, ntiles_ptr, goffs_ptr, H, x_bufs, dy_bufs, ready, empty, c_smem,
             STAGES: gl.constexpr, num_warps: gl.constexpr):
    BK: gl.constexpr = x_desc.block_type.shape[0]
    idx = gl.to_tensor(0)
    phase = gl.to_tensor(0)
    ntiles = gl.load(ntiles_ptr)
    for t in range(gl.program_id(0), ntiles, gl.num_programs(0)):
        e, m0, n0, start, rows = _dw_tile(sched_ptr, goffs_ptr, t)
        for k in range(0, rows, BK):
            # Pre-arrived once: the first round waits on parity 0, then on the MMA's releases.
            mbarrier.wait(empty.index(idx), phase)
            bar = ready.index(idx)
            mbarrier.expect(bar, x_desc.block_type.nbytes + dy_desc.block_type.nbytes)
            tma.async_copy_global_to_shared(x_desc, [start + k, m0], bar, x_bufs.index(idx))
            tma.async_copy_global_to_shared(dy_desc, [start + k, n0], bar, dy_bufs.index(idx))
            idx, phase = _advance(idx, phase, STAGES)


@gluon.jit
def _dw_mma(x_desc, dy_desc, dw_desc, sched_ptr, ntiles_ptr, goffs_ptr, H, x_bufs, dy_bufs, ready, empty, c_smem,
            STAGES: gl.constexpr, num_warps: gl.constexpr):
    BK: gl.constexpr = x_desc.block_type.shape[0]
    BM: gl.constexpr = dw_desc.block_type.shape[0]
    BN: gl.constexpr = dw_desc.block_type.shape[1]
    layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[gl.num_warps(), 1],
                                                     instr_shape=[16, BN, 16])
    idx = gl.to_tensor(0)
    phase = gl.to_tensor(0)
    cbuf = gl.to_tensor(0)
    ntiles = gl.load(ntiles_ptr)
    for t in range(gl.program_id(0), ntiles, gl.num_programs(0)):
        e, m0, n0, start, rows = _dw_tile(sched_ptr, goffs_ptr, t)
        acc = gl.zeros((BM, BN), gl.float32, layout)
        for k in range(0, rows, BK):
            mbarrier.wait(ready.index(idx), phase)
            acc = warpgroup_mma(x_bufs.index(idx).permute((1, 0)), dy_bufs.index(idx), acc, is_async=True)
            acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
            mbarrier.arrive(empty.index(idx), count=1)
            idx, phase = _advance(idx, phase, STAGES)
        # Two staging buffers: the one this tile rewrites was last stored two tiles ago, so at
        # most one store (the previous tile's, from the other buffer) may still be in flight.
        tma.store_wait(1)
        c = c_smem.index(cbuf)
        c.store(acc.to(dw_desc.dtype))
        fence_async_shared()
        tma.async_copy_shared_to_global(dw_desc, [e * H + m0, n0], c)
        cbuf = cbuf ^ 1
    # No store may be in flight when the program exits (its shared memory goes away).
    tma.store_wait(0)


@gluon.jit
def moe_dw(x_desc, dy_desc, dw_desc, sched_ptr, ntiles_ptr, goffs_ptr, H, STAGES: gl.constexpr,
           WS_LIST: gl.constexpr, num_warps: gl.constexpr):
    x_bufs = gl.allocate_shared_memory(x_desc.dtype, [STAGES] + x_desc.block_type.shape, x_desc.layout)
    dy_bufs = gl.allocate_shared_memory(dy_desc.dtype, [STAGES] + dy_desc.block_type.shape, dy_desc.layout)
    c_smem = gl.allocate_shared_memory(dw_desc.dtype, [2] + dw_desc.block_type.shape, dw_desc.layout)
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=1)
    # Every slot starts free: complete phase 0 of each empty barrier once.
    for i in gl.static_range(STAGES):
        mbarrier.arrive(empty.index(i), count=1)
    args0 = (x_desc, dy_desc, dw_desc, sched_ptr, ntiles_ptr, goffs_ptr, H, x_bufs, dy_bufs, ready, empty, c_smem,
             STAGES, num_warps)
    args1 = (x_desc, dy_desc, dw_desc, sched_ptr, ntiles_ptr, goffs_ptr, H, x_bufs, dy_bufs, ready, empty, c_smem,
             STAGES, 1)
    if WS_LIST:
        gl.warp_specialize([(_dw_mma, args0), (_dw_load, args1)], [1], [40])
    else:
        gl.warp_specialize(args0, _dw_mma, args1, [_dw_load], [1], [40])


# ---------------------------------------------------------------------------------------------
# host side: inputs and references for a schedule (device only; torch passed in)
# ---------------------------------------------------------------------------------------------
def jagged_inputs(torch, sched: dict, D: int, dev: str = "cuda"):
    lens = sched["lens"]
    offs = [0]
    for n in lens:
        offs.append(offs[-1] + n)
    x = torch.randn(max(offs[-1], 1), D, device=dev, dtype=torch.float16)
    ref = torch.stack([x[offs[i]:offs[i + 1]].float().pow(2).sum(0).sqrt() for i in range(len(lens))])
    return x, torch.tensor(offs, device=dev, dtype=torch.int32), ref


def moe_inputs(torch, sched: dict, H: int, N: int, BM: int, BN: int, dev: str = "cuda"):
    sizes = sched["sizes"]
    goffs = [0]
    for n in sizes:
        goffs.append(goffs[-1] + n)
    T = max(goffs[-1], 1)
    x = torch.randn(T, H, device=dev, dtype=torch.float16)
    dy = torch.randn(T, N, device=dev, dtype=torch.float16)
    ref = torch.stack([x[goffs[e]:goffs[e + 1]].float().T @ dy[goffs[e]:goffs[e + 1]].float()
                       for e in range(len(sizes))]).reshape(len(sizes) * H, N)
    experts = list(range(len(sizes)))
    if sched["order"] == "size":
        experts.sort(key=lambda e: -sizes[e])
    tiles = [(e, m0, n0, 0) for e in experts for m0 in range(0, H, BM) for n0 in range(0, N, BN)]
    sched_t = torch.tensor(tiles, device=dev, dtype=torch.int32).reshape(-1)
    ntiles = torch.tensor([len(tiles)], device=dev, dtype=torch.int32)
    return x, dy, torch.tensor(goffs, device=dev, dtype=torch.int32), sched_t, ntiles, ref
