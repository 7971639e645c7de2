"""The small vocabulary of operations the analysis understands; everything else is opaque."""

from __future__ import annotations

MBARRIER_OPS = frozenset(
    {
        "ttng.init_barrier",
        "ttng.inval_barrier",
        "ttng.wait_barrier",
        "ttng.arrive_barrier",
        "ttng.barrier_expect",
        "ttng.async_copy_mbarrier_arrive",
    }
)
NAMED_BARRIER_OPS = frozenset({"ttng.arrive_barrier_named", "ttng.wait_barrier_named"})
ASYNC_ARRIVE_OPS = frozenset(
    {
        "ttng.async_tma_copy_global_to_local",
        "ttng.tc_gen5_mma",
        "ttng.tc_gen5_mma_scaled",
        "ttng.tc_gen5_commit",
        "ttng.async_tma_store_token_wait",
    }
)
NVWS_TOKEN_OPS = frozenset(
    {
        "nvws.create_token",
        "nvws.producer_acquire",
        "nvws.producer_commit",
        "nvws.consumer_wait",
        "nvws.consumer_release",
    }
)
AREF_OPS = frozenset(
    {
        "nvws.aref.create",
        "nvws.aref.put.enter",
        "nvws.aref.put.exit",
        "nvws.aref.get.enter",
        "nvws.aref.get.exit",
        "nvws.aref.buffer",
    }
)
MEMORY_OPS = frozenset(
    {
        "ttg.local_alloc",
        "ttg.local_store",
        "ttg.local_load",
        "ttng.tmem_alloc",
        "ttng.tmem_load",
        "ttng.tmem_store",
        "ttng.tmem_copy",
        "ttng.async_tma_copy_local_to_global",
        "ttng.async_tma_store_wait",
        "tt.descriptor_load",
        "tt.descriptor_store",
        "nvws.descriptor_load",
        "ttg.async_copy_global_to_local",
        "ttg.async_commit_group",
        "ttg.async_wait",
    }
)
MMA_OPS = frozenset(
    {"tt.dot", "ttng.warp_group_dot", "ttng.warp_group_dot_wait", "ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled"}
)
STRUCTURE_OPS = frozenset({"ttg.warp_specialize", "nvws.warp_group", "ttg.barrier"})
LOOP_OPS = frozenset({"scf.for", "scf.while"})

BARRIER_RELEVANT = (
    MBARRIER_OPS
    | NAMED_BARRIER_OPS
    | ASYNC_ARRIVE_OPS
    | NVWS_TOKEN_OPS
    | AREF_OPS
    | MEMORY_OPS
    | MMA_OPS
    | STRUCTURE_OPS
)


def is_barrier_relevant(name: str) -> bool:
    return name in BARRIER_RELEVANT
