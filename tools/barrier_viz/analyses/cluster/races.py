"""Races across the CTAs of a cluster, from a run with happens-before tracking.

Why a module of its own: the per-CTA static race rules (`static_checks`, `early_release`, ...)
reason about one CTA's program; what one CTA does to another's memory (a multicast refill of a
peer's tile, a paired MMA reading the peer's operands, a remote store, a CLC response landing)
is seen only by running the cluster (`cluster.sim`, `sim.machine`). `check` runs the friendliest
schedule once more with vector clocks (`hb`) and keeps the races that only a cluster can have
(`cluster_races`); in Triton's CGA form, one family of them (a CLC response reused across CTA
groups) is a question of pace and is reported as a warning (`cga_pace_findings`, and for
`explore`, `pace_excuse`). Remote accesses into a CTA that may have exited are `remote_exit`'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...facts.cluster import ReachKind
from ...ir.model import Operation
from ..sim.deadlock import races_stand  # noqa: F401 (re-exported: `check` and the tests ask it here)
from .sim import CLC_TRY_OPS, cluster_for, reach

if TYPE_CHECKING:
    from ..sim.machine import Machine

CLC_RESPONSE_OPS = CLC_TRY_OPS | {"ttng.clc_query_cancel", "ttng.clc_load_result"}  # write / read the response


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
    response (`_on_clc_response`). Other races inside one CTA come from `check`'s own schedules
    (`verdicts.run_races`), as for single-CTA kernels.

    A run stopped at `trips` (the coverage the deadlock runs ask for) goes on to the end once
    more: a read after the last tile (an epilogue's MMA) is made only by a run that finishes
    (within the step bound and `deadline`); when that longer run's end is no verdict, the
    covered prefix's races stand alone.

    Which runs count (`races_stand`): every access of a run happened on a schedule the hardware
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

    from ..sim.explore import race_findings, races_of

    cluster = cluster_for(function)
    clc = any(op.name in CLC_TRY_OPS for op in function.walk())
    if cluster.size <= 1 and not clc:
        return []
    from ..sim.schedule import _ran_empty

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
        # CGA form: one race family is a question of the groups' pace, not a verdict (cga_pace_findings).
        found = cga_pace_findings(races, found)
    return found + remote_after_exit(function, params, deadline)


def remote_after_exit(function: Operation, params, deadline=None) -> list:
    """Remote accesses into a CTA that may have exited (`analyses.cluster.remote_exit`, its own run to
    the end: the race run above stops once the loops are covered)."""
    from .remote_exit import remote_after_exit as rule

    return rule(function, params, deadline)


def _race_run(function: Operation, tracked, trips: int, deadline):
    """One race run (the favorable schedule, stopped at `trips`, then on to the end), its races
    filtered to those `cluster_races` reports; None when its races do not stand."""
    from ..sim.schedule import run

    result = run(function, tracked, "favorable", stop_trips=trips, deadline=deadline)
    if result.machine is None or result.machine.hb is None or not races_stand(result):
        return None
    if result.outcome == "covered":
        # The same schedule on to the end (the covered run is its prefix); if what comes after
        # is no verdict (CTAs out of step hang on unequal work), the prefix stands.
        full = run(function, tracked, "favorable", deadline=deadline)
        if full.machine is not None and full.machine.hb is not None and races_stand(full):
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


APPROXIMATE_TMEM = ("the run places tensor memory inside one CTA of a cluster by column only, approximately (a view "
                    "reinterpreted to another shape, as a two-CTA MMA's 64-row operand or accumulator)")


def approximate_races(result) -> dict[tuple[int, int], str]:
    """The races of a cluster run that are no verdict (`check`'s runs and `explore` alike):
    races on tensor memory inside one CTA, and their copies in the peer's TMEM
    (`_tmem_pairs_inside_one_cta`), placed by column only approximately. Keyed by the pair of
    lines, with why."""
    m = result.machine
    if m is None or m.hb is None or m.cluster.size <= 1:
        return {}
    inside = _tmem_pairs_inside_one_cta(m, m.function)
    return {(r.first.op.line, r.second.op.line): APPROXIMATE_TMEM for r in m.hb.races if _pair(r) in inside}


def _shorter_launch(function: Operation, tracked, trips: int, deadline, adjust=None) -> list:
    """After a race run that hung: the run at the smallest launch below it (every argument at
    one of `INT_ARG_CANDIDATES`, moved by `adjust` to one the kernel admits: whole tiles) that
    does not hang, if its races stand."""
    from dataclasses import replace

    from ..sim.schedule import INT_ARG_CANDIDATES

    for value in INT_ARG_CANDIDATES:
        if value >= tracked.int_args:
            break
        trial = replace(tracked, arg_values=(), int_args=value)
        result = _race_run(function, adjust(trial) if adjust is not None else trial, trips, deadline)
        if result is not None and result.outcome != "deadlock":
            return [result]
    return []


def _smem_storages(function: Operation) -> set[str]:
    """Storage names (`sim.ops.memory.access_region`) of the shared-memory allocations."""
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
    from ..model.findings import Severity

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
    from ...facts import cga
    from ...facts.cga import CgaUnknown

    region = _issuing_region(op)
    if region is None:
        return None
    out: set[int] = set()
    for top in region.operations():
        for w in top.walk():
            if w.name != "ttng.wait_barrier":
                continue
            try:
                home = m.cga.home(cga.barrier_type_of(w))
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
