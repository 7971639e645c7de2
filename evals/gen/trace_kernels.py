"""A hand-written warp-specialized Gluon kernel whose hang needs a particular launch (issue 25).

`chunk_sum` sums x[pid * K : pid * K + K] in chunks of BK elements through a STAGES-slot SMEM
ring. A 1-warp loader partition loads each chunk with plain loads and stores it into the ring;
the default partition (the consumer, 4 warps) adds the chunks up. The consumer's first chunk is
peeled out of its loop, the way hand-pipelined kernels often start: it waits on slot 0's ready
barrier before the loop, unconditionally. The loader's loop runs `cdiv(K, BK)` times, so a launch
with K = 0 gives the loader nothing to do: slot 0 is never filled and the consumer waits forever.
Any K >= 1 completes (a K below BK masks the tail of the single chunk).

K = 0 and K = 4096 share one compilation (both divisible by 16, neither 1), so a trace of the
two launches holds one TTGIR and two launches whose scalar argument decides the outcome: the
case `check --launch` exists for. trace_probe.py runs both on the H200 under a watchdog;
tests/fixtures/traces/ holds what tritonparse wrote.

Nothing runs at import beyond the decorators: the launchers need a CUDA device (or a
`triton.compile` with an explicit target, as tests/fixtures/traces/make_cpu_trace.py does).
"""

from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier

# Module constants rather than constexpr arguments: Triton 3.6's `gl.warp_specialize` passes a
# partition's arguments as values, so a constexpr in its argument tuple would arrive as a tensor.
BK = gl.constexpr(128)
STAGES = gl.constexpr(2)


@gluon.jit
def _next(idx, phase):
    """Next ring slot; the phase bit flips when the index wraps to slot 0."""
    nxt = idx + 1
    wrap = nxt == STAGES
    return gl.where(wrap, 0, nxt), gl.where(wrap, phase ^ 1, phase)


@gluon.jit
def _chunk_sum_load(x_ptr, out_ptr, bufs, ready, empty, K):
    layout: gl.constexpr = gl.BlockedLayout([1], [32], [1], [0])  # the loader's one warp
    base = gl.program_id(0).to(gl.int64) * K
    idx = gl.to_tensor(0)
    phase = gl.to_tensor(0)
    for k in range(0, K, BK):
        # a fresh barrier passes a wait on parity 1: the first round needs no pre-arrival
        mbarrier.wait(empty.index(idx), phase ^ 1)
        offs = gl.arange(0, BK, layout=layout) + k
        chunk = gl.load(x_ptr + base + offs, mask=offs < K, other=0.0)
        bufs.index(idx).store(chunk)
        mbarrier.arrive(ready.index(idx), count=1)
        idx, phase = _next(idx, phase)


@gluon.jit
def _chunk_sum_add(x_ptr, out_ptr, bufs, ready, empty, K):
    layout: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])  # the default partition: num_warps = 4
    # The first chunk, peeled: an unconditional wait on slot 0 (the hang when K == 0).
    mbarrier.wait(ready.index(0), 0)
    acc = bufs.index(0).load(layout)
    mbarrier.arrive(empty.index(0), count=1)
    idx = gl.to_tensor(1 % STAGES)
    phase = gl.to_tensor(0 if STAGES > 1 else 1)
    for k in range(BK, K, BK):
        mbarrier.wait(ready.index(idx), phase)
        acc += bufs.index(idx).load(layout)
        mbarrier.arrive(empty.index(idx), count=1)
        idx, phase = _next(idx, phase)
    gl.store(out_ptr + gl.program_id(0), gl.sum(acc, axis=0))


@gluon.jit
def chunk_sum(x_ptr, out_ptr, K, num_warps: gl.constexpr):
    smem: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [0])
    bufs = gl.allocate_shared_memory(gl.float32, [STAGES, BK], smem)
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=1)
    args = (x_ptr, out_ptr, bufs, ready, empty, K)
    gl.warp_specialize([(_chunk_sum_add, args), (_chunk_sum_load, args)], [1], [40])





@gluon.jit
def chunk_sum_lost_ready(x_ptr, out_ptr, K, num_warps: gl.constexpr):
    """`chunk_sum` with its loader handed the wrong barriers: `empty` as its ready barriers, so
    nothing ever arrives on `ready` and the consumer's first wait never completes, whatever the
    launch (the injected bad kernel of the pytest plugin's tests). The allocations repeat
    chunk_sum's on purpose: chunk_sum is the source the H200 traces were made from."""
    bufs = gl.allocate_shared_memory(gl.float32, [STAGES, BK], gl.SwizzledSharedLayout(1, 1, 1, [0]))
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=1)
    gl.warp_specialize([(_chunk_sum_add, (x_ptr, out_ptr, bufs, ready, empty, K)),
                        (_chunk_sum_load, (x_ptr, out_ptr, bufs, empty, empty, K))], [1], [40])
