"""Running a CTA cluster: the ops through which the CTAs of a cluster reach each other.

Why a cluster must be run as a whole: a 2-CTA GEMM's leader waits on a barrier that the peer CTA
arrives on (`map_to_remote_buffer` + `arrive_barrier`), a multicast TMA load issued by one CTA
completes transaction bytes on the barriers of every CTA of its mask, and a paired (2-CTA)
`tc_gen5_mma` is issued by the even CTA of the pair only while its commit arrives on both CTAs'
barriers. Run one CTA alone and each of these looks like a missing arrival or missing bytes: a
false deadlock.

The interpreter (`analyses.machine`) runs every CTA of a small cluster (`MAX_CTAS`) of the
per-CTA form TLX and hand-written kernels use (`"ttg.num-ctas" = 1`, `ttg.cluster-dim-x/y/z`):
each CTA has its own main thread, partitions, allocations and barrier slots (`Ref.cta`), and the
handlers here move arrivals and bytes between CTAs as the lowering does:

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

from typing import TYPE_CHECKING

from ..facts.cluster import Cluster, ReachKind, cluster_of_module
from ..ir.model import Operation
from ..ir.types import memdesc_bytes

if TYPE_CHECKING:
    from .machine import BarrierSlot, Machine, Ref

# The portable cluster size limit of sm90/sm100 (16 needs a non-portable opt-in). Each CTA adds its
# partitions' threads, so a run grows with the cluster: an 8-CTA TLX GEMM or layernorm runs well
# under a second.
MAX_CTAS = 8
CLUSTER_SYNC_OPS = frozenset({"ttng.cluster_arrive", "ttng.cluster_wait", "ttng.cluster_barrier"})
CLC_TRY_OPS = frozenset({"ttng.async_clc_try_cancel", "ttng.clc_try_cancel"})
CLC_RESPONSE_OPS = CLC_TRY_OPS | {"ttng.clc_query_cancel", "ttng.clc_load_result"}  # write / read the response


def cluster_for(function: Operation) -> Cluster:
    """The cluster `function` runs in (one CTA outside a module)."""
    module = next((a for a in function.ancestors() if a.name == "builtin.module"), None)
    return cluster_of_module(module) if module is not None else Cluster(1, (1, 1, 1))


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


def pair_of(rank: int) -> tuple[int, int]:
    base = rank & ~1
    return base, base + 1


def reach(m: "Machine", op: Operation):
    """How `op`'s arrival or bytes reach the CTAs (`facts.cluster.cta_reach`, the one place that
    says it for the static rules too). The barrier operand is not passed: the run already
    resolved remote views to the CTA they name (`h_map_to_remote`)."""
    from ..facts.cluster import cta_reach

    return cta_reach(op, None, m.cluster, None)


def mask_targets(m: "Machine", op: Operation, mask) -> list[int] | None:
    """CTAs named by a multicast mask value (None: not computable)."""
    targets = reach(m, op).targets(0, m.cluster, mask if isinstance(mask, int) else None)
    return sorted(targets) if targets is not None else None


def unresolved(m: "Machine", op: Operation, ref) -> None:
    """A cluster op whose target CTA the run cannot compute: what it does to `ref`'s barrier is
    invisible, so a hang on that barrier is a limit, never a verdict."""
    from .machine import Ref

    m.notes.append(f"line {op.line}: {op.name}: the target CTA is not computable; not modelled")
    if isinstance(ref, Ref):
        what = f"{op.name} at line {op.line} (target CTA unknown)"
        for key, slot in m.slots.items():
            if key[:2] == ref.key[:2] and not slot.unmodelled:
                slot.unmodelled = what


# -- handlers (registered in machine._HANDLERS) ----------------------------------------------------
def h_cluster_id(m: "Machine", op: Operation, env, who, it):
    """`nvg.cluster_id`: this CTA's rank in its cluster."""
    for r in op.results:
        env[r] = m.threads[who].cta


def h_map_to_remote(m: "Machine", op: Operation, env, who, it):
    """`map_to_remote_buffer %view, %rank`: the same view in CTA `rank` (`mapa`)."""
    from .machine import Ref

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
    from .machine import Ref

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
    from .machine import Step

    yield Step(op)
    agent = m.agent(who, op)
    m.access(op, src, "read", agent, it)
    if isinstance(dst, Ref):
        m.access(op, dst.in_cta(rank), "write", agent, it)
    m.complete_tx(slot, nbytes, op.line, who, agent, it=it)


def h_remote_store_plain(m: "Machine", op: Operation, env, who, it):
    """`remote_shmem_store %tensor, rank %r, %dst`: a write into CTA `r`'s buffer, no barrier."""
    from .machine import Ref

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
        m.cluster_arrived[who] = cluster_arrive(m, op, who, it)
    if op.name != "ttng.cluster_arrive":
        generation = m.cluster_arrived.pop(who, None)
        if generation is not None:
            from .machine import Wait

            yield Wait(op, m.cluster_slot(op), generation, it)


def cluster_arrive(m: "Machine", op: Operation, who: int, it) -> int:
    """Arrive on the cluster rendezvous; returns the generation arrived in."""
    slot = m.cluster_slot(op)
    generation = slot.parity
    m.arrive(slot, 1, op.line, who, it=it)
    return generation


def deliver_tma(m: "Machine", op: Operation, env, who, it, slot: "BarrierSlot", dst, nbytes: int, agent):
    """A TMA load's box and bytes: to its own CTA, or to every CTA of its multicast mask."""
    from .machine import Ref

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


def mma_targets(m: "Machine", op: Operation, cta: int) -> list[int] | None:
    """CTAs whose barriers an MMA's or commit's arrivals reach; None when this CTA does not issue
    it (the odd CTA of a pair)."""
    return targets(m, op, cta) if issues(m, op, cta) else None


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


def cluster_races(function: Operation, params, trips: int, deadline=None, adjust=None) -> list:
    """Races between the CTAs of a cluster (and on CLC responses), from the friendliest schedule
    run with happens-before tracking.

    The static race rules reason about one CTA; they cannot see a multicast TMA load writing a
    peer's buffer while the peer still reads it, a paired MMA reading the peer's operand tiles
    before they land, or a remote store racing the peer's read. The run can: every access is
    recorded in the CTA whose memory it touches. Kept: races that cross CTAs (one side runs in
    another CTA than the other, or touches another CTA's memory); races inside one CTA on shared
    memory where one side is a cluster op (`_cluster_op_in_smem`: a paired MMA reading the
    tiles its CTA's own loads fill, ordered only through the leader's barriers); races on a CLC
    response (`_on_clc_response`). Other races inside one CTA stay with the static rules, as
    for single-CTA kernels.

    A run stopped at `trips` (the coverage the deadlock runs ask for) goes on to the end once
    more: a read after the last tile (an epilogue's MMA) is made only by a run that finishes
    (within the step bound and `deadline`); when that longer run's end is no verdict, the
    covered prefix's races stand alone.

    Which runs count (`_races_stand`): every access of a run happened on a schedule the hardware
    can take, so a race seen before the run stopped is real whether the run then completed, was
    stopped by a bound, or hung. A phase that completes early (an expect that leaves out a
    peer's bytes, a flipped wait that passes on a fresh barrier) lets the reader in before the
    write lands; the run then hangs or hits a slot anomaly, and those races are the cause. Races
    are discarded only when the interpreter could not run the kernel faithfully (`not_simulated`:
    what came before the unmodelled op may already be mis-ordered) or when the run's hang is
    itself not a verdict (`deadlock._unmodelled`: a barrier an unmodelled op touches, trip counts
    assumed in some partitions only, CTAs of one cluster given unequal work): then the orders
    the run drew from those barriers and loops are not the kernel's."""
    from dataclasses import replace

    from .explore import race_findings, races_of

    cluster = cluster_for(function)
    clc = any(op.name in CLC_TRY_OPS for op in function.walk())
    if cluster.size <= 1 and not clc:
        return []
    from .schedule import _ran_empty

    # The chosen launch keeps the arguments no coverage needs small, which can leave an inner
    # loop (a K loop after a peeled first step) without an iteration: its accesses are never
    # made, so no race in it can be seen. Then once more with every argument at a size where
    # the loops run.
    races: list = []
    for attempt in (params, replace(params, arg_values=(), int_args=max(256, params.int_args))):
        result = _race_run(function, replace(attempt, track_races=True, late_clc=clc), trips, deadline)
        if result is None:
            break
        races.append(result)
        if result.outcome == "deadlock":
            # The hang came inside a loop, so what follows the loop (an epilogue's MMA after the
            # last tile) never ran: a launch with less work per loop may end the loop first.
            races += _shorter_launch(function, replace(attempt, track_races=True, late_clc=clc), trips, deadline,
                                     adjust)
        if not _ran_empty(result.machine, function):
            break
    found = race_findings(races_of(races)) if races else []
    if cluster.cga and races:
        # CGA form: one race family is a question of the groups' pace, not a verdict (cga_pace_races).
        found = cga_pace_findings(races, found)
    return found + remote_after_exit(function, params, deadline)


def remote_after_exit(function: Operation, params, deadline=None) -> list:
    """Remote accesses into a CTA that may have exited (`analyses.cluster_exit`, its own run to
    the end: the race run above stops once the loops are covered)."""
    from .cluster_exit import remote_after_exit as rule

    return rule(function, params, deadline)


def _race_run(function: Operation, tracked, trips: int, deadline):
    """One race run (the favorable schedule, stopped at `trips`, then on to the end), its races
    filtered to those `cluster_races` reports; None when its races do not stand."""
    from .schedule import run

    result = run(function, tracked, "favorable", stop_trips=trips, deadline=deadline)
    if result.machine is None or result.machine.hb is None or not _races_stand(result):
        return None
    if result.outcome == "covered":
        # The same schedule on to the end (the covered run is its prefix); if what comes after
        # is no verdict (CTAs out of step hang on unequal work), the prefix stands.
        full = run(function, tracked, "favorable", deadline=deadline)
        if full.machine is not None and full.machine.hb is not None and _races_stand(full):
            result = full
    m = result.machine
    smem = _smem_storages(function)
    inside = _tmem_pairs_inside_one_cta(m, function)
    kept = [r for r in m.hb.races
            if (_crosses(m, r) and _pair(r) not in inside) or _on_clc_response(r) or _cluster_op_in_smem(m, r, smem)]
    # One finding per pair of lines: the copy that crosses CTAs names both CTAs, so it goes first.
    m.hb.races = sorted(kept, key=lambda r: not _crosses(m, r))
    return result


def _pair(race) -> frozenset:
    return frozenset((id(race.first.op), id(race.second.op)))


def _tmem_pairs_inside_one_cta(m: "Machine", function: Operation) -> set[frozenset]:
    """Op pairs of the run that race on tensor memory inside one CTA. Those stay with the static
    rules (TMEM reinterpreted to another shape, a QK accumulator reused for P or dQ, is placed by
    column only approximately here), and so does their copy in the peer's TMEM: every CTA runs
    the same code, so a pair racing in the peer's copy as well is the same approximation seen
    twice, not a cluster race (one a cluster op alone causes races in the peer's copy only)."""
    tmem = {f"{op.results[0]}@{op.line}" for op in function.walk() if op.name == "ttng.tmem_alloc" and op.results}

    def on_tmem(storage: tuple) -> bool:
        return storage[:1] == ("tmem",) or (len(storage) > 1 and storage[0] == "alloc" and storage[1] in tmem)

    return {_pair(r) for r in m.hb.races if on_tmem(r.first.region.storage) and not _crosses(m, r)}


def _shorter_launch(function: Operation, tracked, trips: int, deadline, adjust=None) -> list:
    """After a race run that hung: the run at the smallest launch below it (every argument at
    one of `INT_ARG_CANDIDATES`, moved by `adjust` to one the kernel admits: whole tiles) that
    does not hang, if its races stand."""
    from dataclasses import replace

    from .schedule import INT_ARG_CANDIDATES

    for value in INT_ARG_CANDIDATES:
        if value >= tracked.int_args:
            break
        trial = replace(tracked, arg_values=(), int_args=value)
        result = _race_run(function, adjust(trial) if adjust is not None else trial, trips, deadline)
        if result is not None and result.outcome != "deadlock":
            return [result]
    return []


def _races_stand(result) -> bool:
    """Do the races this run observed stand as verdicts (see `cluster_races`)?"""
    if result.outcome in ("completed", "covered", "bound_reached"):
        return True
    if result.outcome == "deadlock":
        from .deadlock import _unmodelled

        return not _unmodelled(result)
    return False


def _smem_storages(function: Operation) -> set[str]:
    """Storage names (`machine._region`) of the shared-memory allocations."""
    return {f"{op.results[0]}@{op.line}" for op in function.walk() if op.name == "ttg.local_alloc" and op.results}


def _cluster_op_in_smem(m: "Machine", race, smem: set[str]) -> bool:
    """A race inside one CTA, on shared memory, where one side is an op that reaches across the
    CTAs (a paired MMA, a multicast load, a remote copy). A 2-CTA MMA is issued by the leader
    for both CTAs and must wait, on the leader's barriers, for the tiles each CTA's loader fills;
    the static TMA-channel rules pair a load with the waits of its own CTA and cannot follow
    that, so the run reports it even when the tile and the reader are in the same CTA. TMEM
    races stay out: tensor memory reinterpreted to another shape (a QK accumulator reused for P
    or dQ) is placed by column only approximately here."""
    storage = race.first.region.storage
    if len(storage) < 2 or storage[0] != "alloc" or storage[1] not in smem:
        return False
    return any(reach(m, a.op).kind is not ReachKind.OWN for a in (race.first, race.second))


def _on_clc_response(race) -> bool:
    """A race on a CLC response buffer: try-cancel's hardware write against a query or load of
    the answer. No static rule follows that buffer (it is neither a TMA channel nor TMEM), and
    the run lands each response as late as the hardware may (`Params.late_clc`), so a read that
    polls before the answer came is seen, in a single CTA too."""
    return race.first.op.name in CLC_RESPONSE_OPS and race.second.op.name in CLC_RESPONSE_OPS


def _cta_of(m: "Machine", thread: int) -> int:
    if thread < 0:
        thread = m.agent_owner.get(thread, 0)
    return m.threads[thread].cta if 0 <= thread < len(m.threads) else 0


def _storage_cta(storage: tuple) -> int:
    last = storage[-1] if storage else None
    return int(last[3:]) if isinstance(last, str) and last.startswith("cta") and last[3:].isdigit() else 0


def _crosses(m: "Machine", race) -> bool:
    a, b = _cta_of(m, race.first.thread), _cta_of(m, race.second.thread)
    home = _storage_cta(race.first.region.storage)
    return a != b or home != a or home != b


# -- Triton's cluster-wide (CGA) form ----------------------------------------------------------------
# One program for the whole cluster, with cluster-wide types; what each CTA's copy of a barrier
# receives follows the layouts (facts/cga.py, from the fork's lowering): a barrier with
# broadcast bits lives in its group's leader, which initialises it for the group and alone waits
# on it; the others' expects and arrives land on the leader's copy; TMA loads complete each CTA's
# share; paired MMAs and commits are issued by the even CTA and arrive where their descs say.
def cga_for(function: Operation):
    """The CGA module of `function` (None outside CGA form or without layouts to read)."""
    from ..facts.cga import cga_module_of

    module = next((a for a in function.ancestors() if a.name == "builtin.module"), None)
    return cga_module_of(module) if module is not None else None


def _cga_call(fn, *args):
    """Run a facts.cga query; what the layouts do not determine ends the run as a stated limit."""
    from ..facts.cga import CgaUnknown
    from .machine import SimulationError

    try:
        return fn(*args)
    except CgaUnknown as exc:
        raise SimulationError(f"CGA form: {exc}") from None


def cga_init(m: "Machine", op: Operation, cta: int, count: int) -> int | None:
    """The count CTA `cta`'s copy is initialised with (None: this CTA holds no copy)."""
    from ..facts import cga

    t = cga.barrier_type_of(op)
    if not _cga_call(cga.waits_on, t, m.cga, cta):
        return None
    return _cga_call(cga.init_count, count, t, m.cga)


def cga_waits(m: "Machine", op: Operation, cta: int) -> bool:
    from ..facts import cga

    return _cga_call(cga.waits_on, cga.barrier_type_of(op), m.cga, cta)


def cga_arrival_home(m: "Machine", op: Operation, cta: int) -> int:
    from ..facts import cga

    return _cga_call(cga.arrival_home, cga.barrier_type_of(op), m.cga, cta)


def cga_expect_bytes(m: "Machine", op: Operation, declared: int) -> int:
    """What the leader's copy expects for `barrier_expect %b, declared`: the group's shares."""
    from ..facts import cga

    home = _cga_call(cga.barrier_home, cga.barrier_type_of(op), m.cga.aliases, m.cga.num_ctas)
    return declared * home.group_size()


def cga_tx(m: "Machine", op: Operation, cta: int) -> dict[int, int]:
    """Bytes a TMA load / CLC try-cancel of CTA `cta` completes on each CTA's barrier copy."""
    from ..facts import cga

    return _cga_call(cga.tx_bytes_by_cta, op, m.cga, cta)


def cga_commit(m: "Machine", op: Operation, cta: int, barrier_type: str | None = None) -> frozenset[int]:
    """CTAs whose barrier copy an MMA's barrier list or a commit of CTA `cta` arrives on (empty:
    this CTA does not issue it)."""
    from ..facts import cga

    return _cga_call(cga.commit_arrivals, op, m.cga, cta, barrier_type)


# -- cross-CTA races in CGA form ---------------------------------------------------------------------
# The race check runs on CGA IR as on per-CTA IR: the interpreter places every access in the CTA
# whose memory it touches (a CTA's share of a split buffer, each CTA's copy of a replicated one, a
# paired MMA's read of the peer's operand share), so a two-CTA MMA issued before the peer's share
# has landed, or a multicast refill of a peer's slot it still reads, is a race like any other.
# One family is left unjudged: CLC's response. The lowering issues `clc_try_cancel` from CTA 0 for
# the whole cluster (`multicast::cluster::all`: the response lands in every CTA), while the program,
# written for the cluster, releases a response slot on a barrier whose layout keeps one copy per
# group (Gluon's `two_ctas` barriers: one per pair). CTA 0 waits on its own group's copy only; a CTA
# of another group releases into a copy CTA 0 never waits on, so no barrier orders that CTA's reads
# of the old response before CTA 0's next write into the slot: only how far the groups may run
# apart does (the multicast operand rings and paired MMAs couple them; the epilogues less so).
# Whether that pace suffices is not a question of barrier order, so such a race is a warning that
# says which copy is missing, never a verdict. A response read inside CTA 0's own group, or a CLC
# slot whose release barrier collects every CTA, is judged as usual.
CLC_ISSUE = "ttng.clc_try_cancel"


def cga_pace_findings(runs: list, found: list) -> list:
    """`found` with the race findings whose every observed instance is a CLC response reuse
    across groups (`_across_groups`) made warnings that say so."""
    from .findings import Severity

    pace: dict[frozenset, str] = {}
    judged: set[frozenset] = set()
    for result in runs:
        m = result.machine
        for race in m.hb.races:
            lines = frozenset((race.first.op.line, race.second.op.line))
            why = _across_groups(m, race)
            if why:
                pace.setdefault(lines, why)
            else:
                judged.add(lines)
    for f in found:
        key = frozenset(f.lines)
        if key in pace and key not in judged:
            f.severity = Severity.warning
            f.message = f"Possible, not judged: {f.message} {pace[key]}"
            f.evidence["not_judged"] = pace[key]
            f.settle_outcome()
    return found


def pace_excuse(result) -> str:
    """Why what a run found is no verdict (CGA form): the schedule it took reuses a CLC response
    across CTA groups (`_across_groups`), which only the groups' pace forbids; a hang or a race
    that follows from it (CTAs of one cluster then work on different tiles) is as possible, and
    as unjudged, as that reuse. "" for a run without one."""
    m = result.machine
    if m is None or m.cga is None or m.hb is None:
        return ""
    for race in m.hb.races:
        why = _across_groups(m, race)
        if why:
            return f"the schedule reuses a CLC response across CTA groups (lines {race.first.op.line} and {race.second.op.line}): {why}"
    return ""


def _across_groups(m: "Machine", race) -> str:
    """Why `race` is a CLC response reuse across groups ("" when it is not)."""
    a, b = race.first, race.second
    issue, other = (a, b) if a.op.name == CLC_ISSUE else (b, a)
    if issue.op.name != CLC_ISSUE or issue.kind != "write" or m.cga is None:
        return ""
    issuer, reader = _cta_of(m, issue.thread), _storage_cta(issue.region.storage)
    if reader == issuer or _cta_of(m, other.thread) != reader:
        return ""
    waited = _released_by(m, issue.op, issuer)
    if waited is None or reader in waited:
        return ""
    return (f"CTA {issuer} issues the CLC request for the whole cluster and waits, before reusing the slot, only on "
            f"barrier copies that CTAs {sorted(waited)} release; cta{reader} releases its read of the old response into "
            "its own group's copy, so only the groups' pace keeps the next response from overwriting it (CGA form: "
            "the release barrier has one copy per group).")


def _released_by(m: "Machine", op: Operation, issuer: int) -> set[int] | None:
    """CTAs whose arrivals reach a barrier copy that the partition issuing `op` in CTA `issuer`
    waits on (each CTA arrives on its group leader's copy: facts.cga); None when a waited
    barrier's layout does not say."""
    from ..facts import cga
    from ..facts.cga import CgaUnknown

    region = _issuing_region(op)
    if region is None:
        return None
    out: set[int] = set()
    for top in region.operations():
        for w in top.walk():
            if w.name != "ttng.wait_barrier":
                continue
            try:
                home = cga.barrier_home(cga.barrier_type_of(w), m.cga.aliases, m.cga.num_ctas)
            except CgaUnknown:
                return None
            if home.is_home(issuer):
                out |= {c for c in range(m.cga.num_ctas) if home.home(c) == issuer}
    return out


def _issuing_region(op: Operation):
    """The `ttg.warp_specialize` region `op` runs in, or its function's body outside one."""
    inner = op
    for anc in op.ancestors():
        if anc.name == "ttg.warp_specialize":
            return inner.parent_region
        if anc.name == "tt.func":
            return anc.regions[0] if anc.regions else None
        inner = anc
    return None
