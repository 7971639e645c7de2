"""The CTA-cluster model as an extension of the interpreter (`analyses.sim.extension`).

The core runs every CTA of a cluster as its own main thread with its own partitions,
allocations and barriers; this is what it asks about the CTAs reaching each other. Each hook
is the function of this package that answers it: the cross-CTA ops and routing of `sim`
(handlers for `nvg.cluster_id`, `map_to_remote_buffer`, remote copies and stores, cluster
barriers; multicast TMA, paired MMAs, CLC multicast; the CGA form's barrier copies), the
recording of remote effects for `remote_exit`, and the run-level excuses of `races`.

`install()` registers it; `barrier_viz.analyses` calls it once, on import (see
`analyses.sim.extension` for why there).
"""

from __future__ import annotations

from ..sim.extension import Extension, install as install_extension
from . import races, remote_exit, sim


class ClusterExtension(Extension):
    """The hooks of `analyses.sim.extension.Extension`, answered for clusters."""

    def handlers(self) -> dict:
        return {
            "nvg.cluster_id": sim.h_cluster_id,
            "ttng.cluster_cta_id": sim.h_cluster_id,
            "nvgpu.cluster_id": sim.h_cluster_id,
            "ttng.map_to_remote_buffer": sim.h_map_to_remote,
            "ttg.async_remote_shmem_copy": sim.h_remote_copy,
            "ttg.async_remote_shmem_store": sim.h_remote_copy,
            "ttg.remote_shmem_store": sim.h_remote_store_plain,
            "ttng.cluster_arrive": sim.h_cluster_sync,
            "ttng.cluster_wait": sim.h_cluster_sync,
            "ttng.cluster_barrier": sim.h_cluster_sync,
        }

    cga_for = staticmethod(sim.cga_for)
    unsupported = staticmethod(sim.unsupported)
    program_id = staticmethod(sim.program_id)
    issues = staticmethod(sim.issues)
    targets = staticmethod(sim.targets)
    deliver_tma = staticmethod(sim.deliver_tma)
    cga_init = staticmethod(sim.cga_init)
    cga_waits = staticmethod(sim.cga_waits)
    cga_arrival_home = staticmethod(sim.cga_arrival_home)
    cga_expect_bytes = staticmethod(sim.cga_expect_bytes)
    cga_tx = staticmethod(sim.cga_tx)
    cga_commit = staticmethod(sim.cga_commit)
    note_issue = staticmethod(remote_exit.note_issue)
    note = staticmethod(remote_exit.note)
    unequal_work = staticmethod(sim.unequal_work)
    pace_excuse = staticmethod(races.pace_excuse)
    approximate_races = staticmethod(races.approximate_races)
    crosses = staticmethod(races._crosses)


CLUSTER = ClusterExtension()


def install() -> None:
    """Install the cluster model into the interpreter (idempotent)."""
    install_extension(CLUSTER)
