"""Running a CTA cluster: the ops through which the CTAs of a cluster reach each other.

Why a cluster must be run as a whole: a 2-CTA GEMM's leader waits on a barrier that the peer CTA
arrives on (`map_to_remote_buffer` + `arrive_barrier`), a multicast TMA load issued by one CTA
completes transaction bytes on the barriers of every CTA of its mask, and a paired (2-CTA)
`tc_gen5_mma` is issued by the even CTA of the pair only while its commit arrives on both CTAs'
barriers. Run one CTA alone and each of these looks like a missing arrival or missing bytes: a
false deadlock.

The interpreter (`analyses.sim.machine`) runs every CTA of a small cluster (`MAX_CTAS`) of the
per-CTA form TLX and hand-written kernels use (`"ttg.num-ctas" = 1`, `ttg.cluster-dim-x/y/z`):
each CTA has its own main thread, partitions, allocations and barrier slots (`Ref.cta`), and the
handlers and hooks here (installed into the interpreter by `cluster.extension`; the core
calls them through `analyses.sim.extension`) move arrivals and bytes between CTAs as the lowering does:

* `nvg.cluster_id` is the CTA's rank; `tt.get_program_id` of CTA rank r is its cluster's first
  program id plus r's coordinate along that axis (CTAs of a cluster have consecutive ids);
* `ttng.map_to_remote_buffer %v, %r` is view `%v` in CTA `r`;
* a multicast TMA load (`..., %bar, %pred, %mask {multicast}`) writes its box into, and
  completes its bytes on the barrier of, every CTA whose bit is set in the mask;
* `ttg.async_remote_shmem_copy %src, rank %r, %dst barrier %bar` and `ttg.async_remote_shmem_store`
  (a register tensor, `st.async`): the bytes land in CTA `r`, on its barrier at `%bar`'s offset;
  `ttg.remote_shmem_store` writes the peer's buffer without a barrier;
* paired 2-CTA MMA (module `tlx.enable_paired_cta_mma` or `ttng.two-ctas`, which the lowering
  sets from the first MMA's `two_ctas`): `tc_gen5_mma` and `tc_gen5_commit` are issued by the
  even CTA of a pair only, and each
  of their barrier arrivals lands in both CTAs of the pair (`tcgen05.commit.cta_group::2 ...
  multicast::cluster` with mask `3 << (rank & ~1)`: the fork's MMAv5 lowering);
* TLX's `async_clc_try_cancel` is issued by the first CTA along x and multicast to every CTA
  (a response and 16 bytes each); upstream's `clc_try_cancel {multicast}` is issued by every CTA;
* `ttng.cluster_arrive` / `cluster_wait` / `cluster_barrier` in the function body (outside the
  partitions) are a rendezvous of the CTAs. Before the partitions start, the CTAs rendezvous
  once (TLX and the lowering put a cluster sync after the barrier inits; without it a peer's
  remote arrive could reach an uninitialised barrier).

Triton's cluster-wide CGA form (`"ttg.num-ctas" > 1`) runs with each CTA's share and barrier
copy from the layouts (the CGA section at the end; what they do not determine is a stated limit).
Not modelled, and said so (the kernel is then not simulated, no verdict): clusters larger than
`MAX_CTAS`, a cluster barrier inside a partition (it counts every thread of every CTA), and a
remote view or multicast mask whose CTA the run cannot compute (that barrier is marked
unmodelled: a hang on it is a limit).
"""

from __future__ import annotations

from ...facts.cluster import Cluster
from ...ir.model import Operation
from ...ir.types import memdesc_bytes
from ..sim.machine import Machine, cluster_for  # noqa: F401 (cluster_for: re-exported for the cluster rules)
from ..sim.ops.clc import CLC_TRY_OPS  # noqa: F401 (re-exported)
from ..sim.ops.tcgen05 import pair_of  # noqa: F401 (re-exported)
from ..sim.state import BarrierSlot, Ref, SimulationError, Step, Wait

# The portable cluster size limit of sm90/sm100 (16 needs a non-portable opt-in). Each CTA adds its
# partitions' threads, so a run grows with the cluster: an 8-CTA TLX GEMM or layernorm runs well
# under a second.
MAX_CTAS = 8
CLUSTER_SYNC_OPS = frozenset({"ttng.cluster_arrive", "ttng.cluster_wait", "ttng.cluster_barrier"})


def unsupported(cluster: Cluster, function: Operation) -> str:
    """Why this cluster kernel is not run ("" when it is)."""
    if cluster.size <= 1:
        return ""
    if cluster.size > MAX_CTAS:
        return f"a cluster of {cluster.size} CTAs (the interpreter runs clusters of up to {MAX_CTAS})"
    for op in function.walk():
        if op.name in CLUSTER_SYNC_OPS and any(a.name == "ttg.warp_specialize" for a in op.ancestors()):
            return (f"{op.name} at line {op.line} inside a partition: a cluster barrier counts every thread of every "
                    "CTA, which the interpreter does not model there")
    return ""


def coordinates(cluster: Cluster, rank: int) -> tuple[int, int, int]:
    """(x, y, z) of CTA `rank` in its cluster (x varies fastest, like %cluster_ctarank)."""
    dx, dy, _ = cluster.dims
    return rank % dx, (rank // dx) % dy, rank // (dx * dy)


def program_id(m: "Machine", value: int, axis: int, rank: int) -> int:
    """Program id along `axis` of CTA `rank`: its cluster's first id plus its coordinate (in
    CGA form a program is the whole cluster: every CTA has the cluster's id)."""
    d = m.cluster.dims[axis] if m.cluster.size > 1 and not m.cluster.cga else 1
    return (value // d) * d + coordinates(m.cluster, rank)[axis] if d > 1 else value


def reach(m: "Machine", op: Operation):
    """How `op`'s arrival or bytes reach the CTAs (`facts.cluster.cta_reach`, the one place that
    says it for the static rules too). The barrier operand is not passed: the run already
    resolved remote views to the CTA they name (`h_map_to_remote`)."""
    from ...facts.cluster import cta_reach

    return cta_reach(op, None, m.cluster, None)


def mask_targets(m: "Machine", op: Operation, mask) -> list[int] | None:
    """CTAs named by a multicast mask value (None: not computable)."""
    targets = reach(m, op).targets(0, m.cluster, mask if isinstance(mask, int) else None)
    return sorted(targets) if targets is not None else None


def unresolved(m: "Machine", op: Operation, ref) -> None:
    """A cluster op whose target CTA the run cannot compute: what it does to `ref`'s barrier is
    invisible, so a hang on that barrier is a limit, never a verdict."""
    m.notes.append(f"line {op.line}: {op.name}: the target CTA is not computable; not modelled")
    if isinstance(ref, Ref):
        what = f"{op.name} at line {op.line} (target CTA unknown)"
        for key, slot in m.slots.items():
            if key[:2] == ref.key[:2] and not slot.unmodelled:
                slot.unmodelled = what


# -- handlers (registered into the interpreter by `cluster.extension`) --------------------------------
def h_cluster_id(m: "Machine", op: Operation, env, who, it):
    """`nvg.cluster_id`: this CTA's rank in its cluster."""
    for r in op.results:
        env[r] = m.threads[who].cta


def h_map_to_remote(m: "Machine", op: Operation, env, who, it):
    """`map_to_remote_buffer %view, %rank`: the same view in CTA `rank` (`mapa`)."""
    pos = op.positional
    ref = env.get(pos[0]) if pos else None
    rank = env.get(pos[1]) if len(pos) > 1 else None
    if not isinstance(ref, Ref):
        for r in op.results:
            env[r] = None
        return
    if not isinstance(rank, int) or not 0 <= rank < max(m.cluster.size, 1):
        unresolved(m, op, ref)
        for r in op.results:
            env[r] = None
        return
    for r in op.results:
        env[r] = ref.in_cta(rank)


def h_remote_copy(m: "Machine", op: Operation, env, who, it):
    """`async_remote_shmem_copy %src, rank %r, %dst barrier %bar` (a shared-memory copy) and
    `async_remote_shmem_store %tensor, rank %r, %dst barrier %bar` (`st.async`): the bytes land
    in CTA `r`'s `%dst` and complete on its barrier at `%bar`'s offset."""
    pos = op.positional
    if len(pos) < 4:
        return
    src, rank, dst, bar = (env.get(p) for p in (pos[0], pos[1], pos[2], pos[-1]))
    if not isinstance(rank, int) or not 0 <= rank < max(m.cluster.size, 1):
        unresolved(m, op, bar)
        return
    slot = m.slot(bar.in_cta(rank), op) if isinstance(bar, Ref) else None
    if slot is None and isinstance(bar, Ref):
        m.early_use(bar.in_cta(rank), op, who)
    # A copy's bytes are its source's (a memdesc); a store's source is a tensor, so its bytes are
    # those of the destination view it fills.
    nbytes = next((b for b in (memdesc_bytes(t) for t in op.types[:2]) if b is not None), None)
    if slot is None or nbytes is None:
        m.notes.append(f"line {op.line}: remote copy to an unknown barrier or of unknown size; not modelled")
        return
    yield Step(op)
    agent = m.agent(who, op)
    m.access(op, src, "read", agent, it)
    if isinstance(dst, Ref):
        m.access(op, dst.in_cta(rank), "write", agent, it)
    m.complete_tx(slot, nbytes, op.line, who, agent, it=it)


def h_remote_store_plain(m: "Machine", op: Operation, env, who, it):
    """`remote_shmem_store %tensor, rank %r, %dst`: a write into CTA `r`'s buffer, no barrier."""
    pos = op.positional
    rank = env.get(pos[1]) if len(pos) > 1 else None
    dst = env.get(pos[2]) if len(pos) > 2 else None
    if isinstance(dst, Ref) and isinstance(rank, int):
        m.access(op, dst.in_cta(rank), "write", who, it)


def h_cluster_sync(m: "Machine", op: Operation, env, who, it):
    """`cluster_arrive` / `cluster_wait` / `cluster_barrier` in the function body: the CTAs'
    main threads rendezvous (in one CTA it orders nothing the interpreter tracks)."""
    if m.cluster.size <= 1:
        return
    if op.name != "ttng.cluster_wait":
        m.cluster_arrived[who] = m.cluster_arrive(op, who, it)
    if op.name != "ttng.cluster_arrive":
        generation = m.cluster_arrived.pop(who, None)
        if generation is not None:
            yield Wait(op, m.cluster_slot(op), generation, it)


def deliver_tma(m: "Machine", op: Operation, env, who, it, slot: "BarrierSlot", dst, nbytes: int, agent):
    """A TMA load's box and bytes: to its own CTA, or to every CTA of its multicast mask."""
    pos = op.positional
    if "multicast" not in op.attributes or len(pos) < 5 or m.cluster.size <= 1:
        m.access(op, dst, "write", agent, it)
        m.complete_tx(slot, nbytes, op.line, who, agent, it=it)
        return
    ctas = mask_targets(m, op, env.get(pos[4]))
    if ctas is None:
        unresolved(m, op, slot.ref)
        return
    for k in ctas:
        target = m.slots.get(slot.ref.in_cta(k).key)
        if target is None:
            m.notes.append(f"line {op.line}: multicast to CTA {k}, whose barrier is not initialised")
            m.early_use(slot.ref.in_cta(k), op, who)
            continue
        if isinstance(dst, Ref):
            m.access(op, dst.in_cta(k), "write", agent, it)
        m.complete_tx(target, nbytes, op.line, who, agent, it=it)


def issues(m: "Machine", op: Operation, cta: int) -> bool:
    """Does CTA `cta` issue `op` (the pair's even CTA for a paired MMA or commit, the first CTA
    along x for TLX's try-cancel)?"""
    return m.cluster.size <= 1 or reach(m, op).issues(cta, m.cluster)


def targets(m: "Machine", op: Operation, cta: int) -> list[int]:
    """CTAs whose barrier `op` issued by CTA `cta` arrives on or answers (its own when the form
    does not name others)."""
    if m.cluster.size <= 1:
        return [cta]
    t = reach(m, op).targets(cta, m.cluster)
    return sorted(t) if t else [cta]


def unequal_work(m: "Machine", blocked) -> str:
    """Why a stuck cluster run is not a verdict: a whole CTA had finished, after running fewer
    iterations of some loop than a CTA that is still blocked. The CTAs of a cluster wait for each
    other (remote arrivals, multicast bytes, the paired MMA), so one that runs out of tiles first
    leaves its peers waiting; whether a launch gives the CTAs of one cluster unequal work (a grid
    and a tile count that do not divide) is the host's contract, not something the IR decides.
    A CTA that finished with the same iterations as its peers (it skipped an arrival) is no
    excuse: that hang is a verdict."""
    if m.cluster.size <= 1 or not blocked:
        return ""
    done = {t.cta for t in m.threads} - {t.cta for t in m.threads if not t.done}
    stuck = {b.thread.cta for b in blocked}
    for per in m.iterations_per_cta().values():
        for d in sorted(done):
            for s in sorted(stuck):
                if per.get(d, 0) < per.get(s, 0):
                    b = next(b for b in blocked if b.thread.cta == s)
                    return (f"cta{d} finished after fewer loop iterations than cta{s} ({per.get(d, 0)} against "
                            f"{per.get(s, 0)}), and {b.thread.name} blocks at line {b.line}: at this launch the CTAs of "
                            "one cluster get different amounts of work, and the peers wait for a CTA that has left; "
                            "not judged (the host launch decides whether that happens)")
    return ""


# -- Triton's cluster-wide (CGA) form ----------------------------------------------------------------
# One program for the whole cluster, with cluster-wide types; what each CTA's copy of a barrier
# receives follows the layouts (facts/cga.py, from the fork's lowering): a barrier with
# broadcast bits lives in its group's leader, which initialises it for the group and alone waits
# on it; the others' expects and arrives land on the leader's copy; TMA loads complete each CTA's
# share; paired MMAs and commits are issued by the even CTA and arrive where their descs say.
def cga_for(function: Operation):
    """The CGA module of `function` (None outside CGA form or without layouts to read)."""
    from ...facts.cga import cga_module_of

    module = next((a for a in function.ancestors() if a.name == "builtin.module"), None)
    return cga_module_of(module) if module is not None else None


def _cga_call(fn, *args):
    """Run a facts.cga query; what the layouts do not determine ends the run as a stated limit."""
    from ...facts.cga import CgaUnknown

    try:
        return fn(*args)
    except CgaUnknown as exc:
        raise SimulationError(f"CGA form: {exc}") from None


def cga_init(m: "Machine", op: Operation, cta: int, count: int) -> int | None:
    """The count CTA `cta`'s copy is initialised with (None: this CTA holds no copy)."""
    from ...facts import cga

    t = cga.barrier_type_of(op)
    if not _cga_call(cga.waits_on, t, m.cga, cta):
        return None
    return _cga_call(cga.init_count, count, t, m.cga)


def cga_waits(m: "Machine", op: Operation, cta: int) -> bool:
    from ...facts import cga

    return _cga_call(cga.waits_on, cga.barrier_type_of(op), m.cga, cta)


def cga_arrival_home(m: "Machine", op: Operation, cta: int) -> int:
    from ...facts import cga

    return _cga_call(cga.arrival_home, cga.barrier_type_of(op), m.cga, cta)


def cga_expect_bytes(m: "Machine", op: Operation, declared: int) -> int:
    """What the leader's copy expects for `barrier_expect %b, declared`: the group's shares."""
    from ...facts import cga

    home = _cga_call(m.cga.home, cga.barrier_type_of(op))
    return declared * home.group_size()


def cga_tx(m: "Machine", op: Operation, cta: int) -> dict[int, int]:
    """Bytes a TMA load / CLC try-cancel of CTA `cta` completes on each CTA's barrier copy."""
    from ...facts import cga

    return _cga_call(cga.tx_bytes_by_cta, op, m.cga, cta)


def cga_commit(m: "Machine", op: Operation, cta: int, barrier_type: str | None = None) -> frozenset[int]:
    """CTAs whose barrier copy an MMA's barrier list or a commit of CTA `cta` arrives on (empty:
    this CTA does not issue it)."""
    from ...facts import cga

    return _cga_call(cga.commit_arrivals, op, m.cga, cta, barrier_type)
