"""`race.remote_after_exit`: a remote shared-memory access into a CTA that may already have exited.

Why: a CTA of a cluster reaches a peer's shared memory through distributed shared memory: an
arrive on a `map_to_remote_buffer` view (`mbarrier.arrive.shared::cluster`), a remote copy or
store (`async_remote_shmem_copy/store`, `remote_shmem_store`), a multicast TMA load, the commit
of a paired 2-CTA MMA. Such an access is valid only while the peer CTA is running: once all of
its threads have returned its shared memory is gone, and the access faults (the fork's 798274bbb:
CTA 1 still arrived on CTA 0's `bar_empty` after the "no more tiles" answer, when CTA 0 had left
its loop; the test died with an unspecified launch failure, `compute-sanitizer --tool synccheck`
flags it). So some thread of the target CTA must pass a wait (or a cluster barrier) that the
access happens-before: then the target cannot exit before the access is done.

With the vector clocks of a race-tracking run (`analyses.sim.hb`) that is checkable at the end of a
completed run: each remote effect is recorded with the clock stamp of its actor (the thread, or
for an asynchronous agent (a TMA transfer, a tcgen05 commit) its issue: all of one issue's
arrivals are one completion); it is ordered before the target's exit when some thread of the
target CTA ends with a clock covering that stamp (the main thread joins its partitions, so a
partition's wait counts). tcgen05 work of one thread completes in issue order, so a paired
commit into the peer is ordered too once the peer has seen a later tcgen05 completion of the
same thread land (the epilogue's wait on the accumulator commit covers the release commits
issued before it).

Where the lowering itself syncs the cluster before exit, every access is ordered and nothing is
reported: fbtriton 3.7.4's tensor-memory lowering (`NVGPUToLLVMPass.cpp`, `freeTMAlloc`) puts
`barrier.cluster.arrive` + `wait` before the TMEM dealloc of a module with TMEM when it is a TLX
paired-MMA module (`tlx.enable_paired_cta_mma`; every warp of the partitions arrives too, before
its `warp_return`) unless the kernel takes that sync over (`tlx.user_post_ws_sync`, from
`async_tasks(no_ending_cluster_sync=True)`), and when it is a 2-CTA module (`ttng.two-ctas`)
without warp specialization. Without TMEM, or a non-TLX warp-specialized 2-CTA module (a CTA
barrier only), nothing of the kind is added (checked on the PTX of the fix's own test kernel:
the start-up `barrier.cluster` pair is the only one). Triton's CGA form is not judged here (its
run is not race-tracked).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...facts.cluster import TLX_PAIRED_ATTR, TWO_CTAS_ATTR
from ...ir.model import Operation

if TYPE_CHECKING:
    from ..sim.machine import Machine

USER_POST_WS_SYNC = "tlx.user_post_ws_sync"
NO_ENDING_SYNC = "tlx.no_ending_cluster_sync"


def lowering_exit_sync(module: Operation | None) -> str:
    """Why the lowering syncs the whole cluster before any CTA exits ("" when it does not)."""
    if module is None or not any(op.name == "ttng.tmem_alloc" for op in module.walk()):
        return ""
    ws = [op for op in module.walk() if op.name == "ttg.warp_specialize"]
    if module.attr(TLX_PAIRED_ATTR) is True:
        if module.attr(USER_POST_WS_SYNC) is True or any(NO_ENDING_SYNC in op.attributes for op in ws):
            return ""  # the kernel's own cluster sync, if any, is in the IR and the run sees it
        return ("the lowering puts a cluster arrive/wait before the TMEM dealloc at exit (TLX paired MMA), "
                "and every partition arrives on it before returning")
    if module.attr(TWO_CTAS_ATTR) is True and not ws:
        return "the lowering puts a cluster arrive/wait before the TMEM dealloc at exit (2-CTA module)"
    return ""


# -- recording (the extension hooks `note_issue` / `note`, which machine.Machine calls on every issue,
# arrival and access of a race-tracking cluster run) ------------------------------------------------
TCGEN05_OPS = frozenset({"ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled", "ttng.tc_gen5_commit"})


def note_issue(m: "Machine", who: int, aid: int, op: Operation, stamp: int) -> None:
    """Agent `aid` issued by thread `who` at `op`: its issue stamp, and for tcgen05 work its place
    in the thread's issue order (tcgen05 ops and commits of one thread complete in issue order)."""
    order = None
    if op.name in TCGEN05_OPS:
        issued = m.tc_issues.setdefault(who, [])
        order = len(issued)
        issued.append((aid, stamp, op.name == "ttng.tc_gen5_commit"))
    m.agent_issue[aid] = (stamp, order)


def note(m: "Machine", target_cta: int, actor: int, line: int, slot=None) -> None:
    """Record an effect of `actor` (a thread, or an agent < 0) on CTA `target_cta`'s shared memory
    when that is not the actor's own CTA. Keeps the latest stamp per (actor, line, target): if the
    target's exit is ordered after the latest, it is after the earlier ones too."""
    if slot is not None and slot.ref.indices[:1] in (("cluster",), ("named",)):
        return  # the cluster rendezvous and named barriers are no shared-memory access
    issuer = m.agent_owner.get(actor, 0) if actor < 0 else actor
    if not 0 <= issuer < len(m.threads) or m.threads[issuer].cta == target_cta:
        return
    if actor < 0:
        if actor not in m.agent_issue:
            return
        stamp, order = m.agent_issue[actor]
    else:
        stamp, order = m.hb.clock(actor).get(actor, 0), None
    m.remote[(actor, line, target_cta)] = (stamp, issuer, order)


# -- the rule ------------------------------------------------------------------------------------
def unordered_exits(m: "Machine") -> list[tuple[int, int, int, int, bool]]:
    """(line, issuing thread, actor, target CTA, trailing) of the recorded remote effects that no
    thread of their target CTA is ordered after, at the end of a completed run of `m`; `trailing`:
    a tcgen05 commit that tracks the same work as an earlier commit the target did see (see
    `_trails_a_seen_commit`)."""
    out = []
    for (actor, line, target), (stamp, issuer, order) in sorted(m.remote.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        clocks = [m.hb.clock(t.index) for t in m.threads if t.cta == target]
        if any(c.get(actor, 0) >= stamp for c in clocks):
            continue
        issued = m.tc_issues.get(issuer, [])
        if order is not None and _later_tcgen05_seen(issued[order:], clocks):
            continue
        trailing = order is not None and issued[order][2] and _trails_a_seen_commit(issued[:order + 1], clocks)
        out.append((line, issuer, actor, target, trailing))
    return out


def _later_tcgen05_seen(later: list[tuple[int, int, bool]], clocks: list[dict]) -> bool:
    """Has the target seen the completion of a tcgen05 op or commit its issuer issued at or after
    this one? Then this one has completed too: a commit arrives once all of the thread's earlier
    tcgen05 work is done, in issue order (an epilogue waiting on the last commit has seen the
    earlier release commits land)."""
    return any(c.get(aid, 0) >= stamp for aid, stamp, _ in reversed(later) for c in clocks)


def _trails_a_seen_commit(upto: list[tuple[int, int, bool]], clocks: list[dict]) -> bool:
    """Is the last of `upto` (a commit) separated from a commit the target saw land only by other
    commits, no MMA between them? Then both wait for the same MMAs and arrive back to back: the
    target exits after the first, and only the commit unit's pace of arrivals puts the second
    before that exit. The fork's AutoWS 2-CTA lowering ends its MMA partition with such release
    commits (nothing waits on them after the last tile) and syncs only its own CTA at exit. A
    possible fault, but not a verdict the IR settles."""
    for aid, stamp, is_commit in reversed(upto[:-1]):
        if not is_commit:
            return False
        if any(c.get(aid, 0) >= stamp for c in clocks):
            return True
    return False


def remote_after_exit(function: Operation, params, deadline=None) -> list:
    """Findings for remote accesses a completed run leaves unordered before their target's exit."""
    from dataclasses import replace

    from .sim import cluster_for
    from ..model.findings import Kind, Severity, finding
    from ..sim.schedule import run

    cluster = cluster_for(function)
    if cluster.size <= 1 or cluster.cga:
        return []
    module = next((a for a in function.ancestors() if a.name == "builtin.module"), None)
    if lowering_exit_sync(module):
        return []
    result = run(function, replace(params, track_races=True), "favorable", deadline=deadline)
    m = result.machine
    if result.outcome != "completed" or m is None or m.remote is None:
        return []  # only a run in which every CTA exits says what is ordered before each exit
    ops = {op.line: op for op in function.walk()}
    exit_line = next((op.line for op in reversed(list(function.walk())) if op.name in ("tt.return", "func.return")), 0)
    by_line: dict[int, list] = {}
    for line, issuer, actor, target, trailing in unordered_exits(m):
        by_line.setdefault(line, []).append((issuer, actor, target, trailing))
    out = []
    for line, hits in sorted(by_line.items()):
        name = ops[line].name if line in ops else "the access"
        threads = sorted({m.threads[i].name for i, _, _, _ in hits})
        targets = sorted({t for _, _, t, _ in hits})
        if all(trailing for *_, trailing in hits):
            out.append(_trailing_commit(name, line, threads, targets, exit_line))
            continue
        cta_names = "+".join(f"cta{t}" for t in targets)
        ends = sorted({m.threads[t.index].name for t in m.threads if t.cta in targets})
        out.append(finding(
            Kind.RACE_REMOTE_AFTER_EXIT, Severity.error,
            f"{name} at line {line} ({', '.join(threads)}) reaches the shared memory of {cta_names}, and no thread of "
            f"{cta_names} waits on anything it happens before: in the completed run {cta_names} can finish and exit "
            f"(return at line {exit_line}) first, and the distributed shared-memory access then faults (an unspecified launch failure) or lands in "
            "the next CTA on that SM.",
            lines=[line], partitions=threads,
            evidence={"schedule": "favorable", "targets": targets, "target_threads": ends, "op": name,
                      "exit_line": exit_line},
            suggestion="Skip the access when the target will not wait for it any more (predicate the last arrive off, "
                       "as for the final \"no more tiles\" round), or have the target wait for it (or a cluster "
                       "barrier) before it exits."))
    return out


def _trailing_commit(name: str, line: int, threads: list[str], targets: list[int], exit_line: int):
    """The warning for a commit into the peer that trails one the peer waited for (see
    `_trails_a_seen_commit`)."""
    from ..model.findings import Kind, Severity, finding

    cta_names = "+".join(f"cta{t}" for t in targets)
    return finding(
        Kind.RACE_REMOTE_AFTER_EXIT, Severity.warning,
        f"Possible, not judged: {name} at line {line} ({', '.join(threads)}) arrives in {cta_names}'s shared memory, "
        f"which waits for nothing it happens before; it tracks the same MMAs as a commit {cta_names} did wait for "
        f"(only commits issued between them), so the two arrive back to back and {cta_names} exits (return at line "
        f"{exit_line}) after the first: only the commit unit's pace puts this one first.",
        lines=[line], partitions=threads,
        evidence={"schedule": "favorable", "targets": targets, "op": name, "exit_line": exit_line,
                  "trails_a_waited_commit": True},
        suggestion="Drop the commit when nothing will wait on its barrier again (after the last tile), or sync "
                   "the cluster before exit.")
