"""`channel.same_partition`: a wait whose barrier only its own partition's synchronous arrives
complete: it orders nothing across partitions (ir-semantics §7.4).

Info when an own arrive precedes it in the iteration (a no-op), a warning otherwise; barriers a
peer CTA arrives on are cluster barriers, not reported.
"""

from __future__ import annotations

from ...facts.barriers import Role
from ..model.findings import Finding, Kind, Severity, finding
from ..model.kinds import KindDoc, Rule
from ..program.operands import barrier_label, remotely_arrived, slot_key
from ..program.order import following_in_iteration, preceding_in_iteration


def same_partition_channels(analysis) -> list[Finding]:
    """Waits only their own partition's synchronous arrives satisfy (ir-semantics §7.4).

    A barrier a peer CTA also arrives on (through `map_to_remote_buffer`) synchronizes the CTAs
    of a cluster, not partitions: not reported. When the partition's own arrive on the slot
    precedes the wait in the same iteration, the wait is self-satisfied: it never blocks and
    orders only what program order already orders in that partition (AutoWS emits such
    same-task acquires for TMEM reuse, e.g. a P store into columns aliasing the QK tile the
    partition has just loaded): a no-op, reported as info. Otherwise the wait waits for an
    arrive its own partition makes later (or in another loop): a warning."""
    out: list[Finding] = []
    remote = remotely_arrived(analysis)
    for b in analysis.barriers.barriers:
        arrives = [u for u in b.uses if u.role not in (Role.WAIT, Role.ACQUIRE, Role.INIT, Role.INVAL)]
        if not arrives or any(u.role is not Role.ARRIVE for u in arrives):
            continue  # asynchronous arrivals (TMA, tcgen05) make even a same-partition wait meaningful
        if b.alloc is not None and id(b.alloc) in remote:
            continue  # a peer CTA arrives on it too: a cluster barrier
        for u in b.uses:
            if u.role is not Role.WAIT or u.partition is None:
                continue
            if not all(a.partition == u.partition for a in arrives):
                continue
            lines = ", ".join(str(a.line) for a in arrives)
            own = {id(a.op) for a in arrives if slot_key(a) == slot_key(u)}
            before = next((p for p in preceding_in_iteration(u.op) if id(p) in own), None)
            if before is not None:
                nxt = next((x for x in following_in_iteration(u.op) if x is not u.op and x.name not in _VIEWS), None)
                guarded = f" (the {nxt.name} at line {nxt.line} after it)" if nxt is not None else ""
                out.append(finding(
                    Kind.CHANNEL_SAME_PARTITION, Severity.info,
                    f"The wait at line {u.line} on {barrier_label(b, u)} is a no-op: only synchronous arrives of its "
                    f"own partition ({u.partition}, lines {lines}) complete its barrier, and the one at line "
                    f"{before.line} precedes it in the same iteration, so it never blocks. It orders nothing across "
                    f"partitions; what it sits before{guarded} is ordered after the partition's earlier ops by "
                    "program order alone.",
                    lines=[u.line] + [a.line for a in arrives], partitions=[u.partition], barrier=barrier_label(b, u),
                    evidence={"arrive_lines": [a.line for a in arrives], "self_satisfied_by": before.line}))
                continue
            out.append(finding(
                Kind.CHANNEL_SAME_PARTITION, Severity.warning,
                f"The wait at line {u.line} on {barrier_label(b, u)} is only ever satisfied by synchronous arrives of "
                f"its own partition ({u.partition}, lines {lines}), none of them before it in its iteration: it "
                "waits for its own partition's later progress (a hang if that phase is needed) and orders nothing "
                "across partitions.",
                lines=[u.line] + [a.line for a in arrives], partitions=[u.partition], barrier=barrier_label(b, u),
                evidence={"arrive_lines": [a.line for a in arrives]}))
    return out


_VIEWS = frozenset({"ttg.memdesc_index", "ttg.memdesc_reinterpret", "ttng.tmem_subslice", "ttg.memdesc_subslice",
                    "arith.constant"})


RULE = Rule("same_partition", __name__, same_partition_channels, docs=(KindDoc(
    Kind.CHANNEL_SAME_PARTITION,
    "A wait whose barrier only its own partition's synchronous arrives complete.",
    "Finds a `wait_barrier` whose barrier is arrived on only by plain `arrive_barrier`s of the "
    "waiting partition (no TMA, tcgen05 or peer-CTA arrivals). The consequence (whether the wait "
    "was the only guard of another partition's access) is added by `rules/explanations.py`.",
    "Such a wait orders nothing across partitions. When an own arrive precedes it in the "
    "iteration it never blocks (a no-op); otherwise it waits for its own partition's later "
    "progress, which hangs if that phase is needed first.",
    "// partition default, in one iteration\n"
    "ttng.arrive_barrier %bar, 1\n"
    "ttng.wait_barrier %bar, %ph               // satisfied by the line above: orders nothing",
    "Wait on a barrier the other partition arrives on, or drop the pair.",
    (Severity.warning, Severity.info),
    "Info when an own arrive precedes the wait (a no-op), a warning otherwise; the outcome is "
    "the one the explanation states."),))
