"""The interpreter's op handlers, one module per op family.

Each module registers its handlers by op name (`registry.handles`): `mbarrier` (init, wait,
arrive, expect, NVWS tokens), `named` (hardware named barriers), `tma` (TMA and bulk copies,
TMA stores), `tcgen05` (MMAs, commits, TMEM copies), `clc` (cluster launch control), `memory`
(allocations, views, plain loads and stores), `control` (loops, `scf.if`, `warp_specialize`),
`inputs` (program ids, loads from input arrays); `arith` is the integer semantics the core
applies to every `arith.*` op. A new op goes into the module of its family (a new family: a new
module, imported below). Handlers import the state they build (`..state`) and the shared helpers
(`common`), never the core (`..machine`) that dispatches to them, nor `analyses.cluster`.
"""

from . import clc, control, inputs, mbarrier, memory, named, tcgen05, tma  # noqa: F401  (registers their handlers)
