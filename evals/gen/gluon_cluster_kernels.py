"""Hand-written Gluon sm90 kernels that run as a 2-CTA cluster, for GPU-observed cluster truth.

Triton 3.6 (the H200's) describes a cluster kernel in CGA form: the module has
`"ttg.num-ctas" = 2`, the program is the cluster's (`program_id` is the cluster id), and each
shared buffer's layout says which part of it each CTA holds (`CGALayout = [[1, 0]]`: CTA 1
holds the second half of the rows). Gluon 3.6 offers no remote arrive, multicast TMA or DSMEM
store on Hopper; what it offers is this form, so these kernels exercise what a cluster kernel
author must get right in it: the barrier's CGA layout (broadcast `[[0]]`, or none) and the
transaction bytes each barrier must expect (the bytes of one CTA's share of the tile, not the
cluster tile's `block_type.nbytes`).

* `cga_copy` — out = x through a TMA ring, 2-CTA cluster per 128-row block (64 rows per CTA).
  The loader (a 1-warp worker) waits for a free slot, expects the CTA's share on `ready` and
  issues the TMA load; the default partition (4 warps) waits for the slot, TMA-stores it to
  `out`, waits for the store to have read the slot (`store_wait(0)`) and releases it on
  `empty`. A dropped wait or an early release shows as wrong values, a missing arrival or a
  wrong byte count as a hang. `BAR_CGA` picks the barriers' CGA layout (`bcast`: `[[0]]`,
  one barrier for the cluster, by the IR's contract living in CTA 0; `none`: no CGA layout);
  `EXPECT_FULL` makes the loader expect the whole cluster tile's bytes (the mistake: each CTA
  receives only its half, so on the GPU its barrier's phase never completes).

What the H200 ran (Triton 3.6's PTX of these kernels): every CTA inits, expects, waits on and
arrives at its own copy of each barrier, whatever its CGA layout (`[[0]]` and none give the same
PTX), and each CTA's TMA load (no multicast in 3.6) completes on its own copy. Newer Triton lowers
the same `[[0]]` barrier as one barrier in CTA 0 (3.9: init with count * 2 there, a cluster sync
after the init, expect and arrive through `shared::cluster` addresses) and rejects a `[[0]]` or
layout-less barrier on a TMA load ("TMA barrier cga_layout must be [[1]]"): the same IR text has
two lowerings, and these cases record what 3.6's does.

Nothing here runs at import; gluon_probe.py launches them, gluon_compile.py compiles them here.
"""

from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier, tma

from gluon_kernels import _advance, ws_list_api  # noqa: F401  (ring helper shared with the 1-CTA kernels)

NUM_CTAS = 2


def tile_cga(probe: dict) -> list[list[int]]:
    """The tile's CGA layout: `split` (default), the rows are split over the CTAs (CTA k holds
    rows [k*BM/2, (k+1)*BM/2)); `bcast`, every CTA holds (and, with no multicast in Triton 3.6,
    loads) the whole tile."""
    return [[0, 0]] if probe.get("tile") == "bcast" else [[1, 0]]

CTAS = gl.constexpr(NUM_CTAS)  # read inside the kernels (gl.num_ctas() is a runtime value)
_BASE = {"kernel": "cga_copy", "size": {"M": 4096, "NC": 4096}, "warps": 4, "ctas": NUM_CTAS, "grid": "blocks"}
PROBES: dict[str, dict] = {
    "gluon-cluster-copy": {**_BASE, "constexprs": {"BM": 128, "BC": 64, "STAGES": 3, "BAR_CGA": "bcast",
                                               "EXPECT_FULL": False}},
    "gluon-cluster-copy_nolayout": {**_BASE, "constexprs": {"BM": 128, "BC": 64, "STAGES": 3, "BAR_CGA": "none",
                                                        "EXPECT_FULL": False}},
    "gluon-cluster-copy_expectfull": {**_BASE, "constexprs": {"BM": 128, "BC": 64, "STAGES": 3, "BAR_CGA": "bcast",
                                                          "EXPECT_FULL": True}},
    # Broadcast tile: each CTA receives the whole tile, so expecting the full tile is right and
    # expecting "one CTA's share" (half) completes the phase early (a race on the other half).
    "gluon-cluster-copy_bcasttile": {**_BASE, "tile": "bcast", "constexprs": {
        "BM": 128, "BC": 64, "STAGES": 3, "BAR_CGA": "bcast", "EXPECT_FULL": True}},
    "gluon-cluster-copy_bcasttile_expecthalf": {**_BASE, "tile": "bcast", "constexprs": {
        "BM": 128, "BC": 64, "STAGES": 3, "BAR_CGA": "bcast", "EXPECT_FULL": False}},
}


@gluon.jit
def _cga_load_impl(x_desc, o_desc, bufs, ready, empty, NC, STAGES: gl.constexpr, EXPECT_FULL: gl.constexpr):
    BM: gl.constexpr = x_desc.block_type.shape[0]
    BC: gl.constexpr = x_desc.block_type.shape[1]
    off_m = gl.program_id(0) * BM
    idx = gl.to_tensor(0)
    phase = gl.to_tensor(0)
    for c in range(0, NC, BC):
        mbarrier.wait(empty.index(idx), phase ^ 1)  # a fresh barrier passes parity 1
        bar = ready.index(idx)
        if EXPECT_FULL:
            mbarrier.expect(bar, x_desc.block_type.nbytes)
        else:
            # Each CTA's TMA load brings its share of the cluster tile into its own slot.
            mbarrier.expect(bar, x_desc.block_type.nbytes // CTAS)
        tma.async_copy_global_to_shared(x_desc, [off_m, c], bar, bufs.index(idx))
        idx, phase = _advance(idx, phase, STAGES)


@gluon.jit
def _cga_load(x_desc, o_desc, bufs, ready, empty, NC, STAGES: gl.constexpr, num_warps: gl.constexpr):
    _cga_load_impl(x_desc, o_desc, bufs, ready, empty, NC, STAGES, False)


@gluon.jit
def _cga_load_full(x_desc, o_desc, bufs, ready, empty, NC, STAGES: gl.constexpr, num_warps: gl.constexpr):
    # (a constexpr passed through warp_specialize's arguments becomes a runtime value: the
    # variant is its own partition function so the expect stays one op, not an scf.if)
    _cga_load_impl(x_desc, o_desc, bufs, ready, empty, NC, STAGES, True)


@gluon.jit
def _cga_store(x_desc, o_desc, bufs, ready, empty, NC, STAGES: gl.constexpr, num_warps: gl.constexpr):
    BM: gl.constexpr = x_desc.block_type.shape[0]
    BC: gl.constexpr = x_desc.block_type.shape[1]
    off_m = gl.program_id(0) * BM
    idx = gl.to_tensor(0)
    phase = gl.to_tensor(0)
    for c in range(0, NC, BC):
        mbarrier.wait(ready.index(idx), phase)
        tma.async_copy_shared_to_global(o_desc, [off_m, c], bufs.index(idx))
        # The slot may be refilled only once the store has read it.
        tma.store_wait(0)
        mbarrier.arrive(empty.index(idx), count=1)
        idx, phase = _advance(idx, phase, STAGES)


@gluon.jit
def cga_copy(x_desc, o_desc, NC, STAGES: gl.constexpr, BAR_CGA: gl.constexpr, EXPECT_FULL: gl.constexpr,
             WS_LIST: gl.constexpr, num_warps: gl.constexpr):
    bufs = gl.allocate_shared_memory(x_desc.dtype, [STAGES] + x_desc.block_type.shape, x_desc.layout)
    # (Triton 3.6 accepts only 1xi64 barriers, so a per-CTA [CTAS] barrier array with CGA
    # layout [[1]], the newer fork's multicta form, does not verify here.)
    if BAR_CGA == "bcast":
        BAR2: gl.constexpr = mbarrier.MBarrierLayout(cga_layout=[[0]])
        ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], BAR2)
        empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], BAR2)
    else:
        BAR3: gl.constexpr = mbarrier.MBarrierLayout()
        ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], BAR3)
        empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], BAR3)
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=1)
    args = (x_desc, o_desc, bufs, ready, empty, NC, STAGES, num_warps)
    wargs = (x_desc, o_desc, bufs, ready, empty, NC, STAGES, 1)
    if EXPECT_FULL:
        if WS_LIST:
            gl.warp_specialize([(_cga_store, args), (_cga_load_full, wargs)], [1], [40])
        else:
            gl.warp_specialize(args, _cga_store, wargs, [_cga_load_full], [1], [40])
    else:
        if WS_LIST:
            gl.warp_specialize([(_cga_store, args), (_cga_load, wargs)], [1], [40])
        else:
            gl.warp_specialize(args, _cga_store, wargs, [_cga_load], [1], [40])
