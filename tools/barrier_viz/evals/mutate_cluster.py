"""Mutation operators for cluster kernels: the mistakes a cluster engineer makes.

A cluster kernel synchronizes across CTAs with three mechanisms the one-CTA operators never
touch, and each operator here breaks exactly one of them, stating from mbarrier and cluster
semantics alone what the edited kernel does on the hardware (never from what `check` says):

* remote arrivals (`ttng.arrive_barrier` on a `ttng.map_to_remote_buffer` view): a CTA arrives
  on the barrier of the CTA the rank operand names. The handshake idioms: every CTA arrives on
  the leader's barrier and only the leader waits (TLX 2-CTA MMA: `remote_cta_rank=0`, the wait
  predicated on rank 0), or each CTA arrives locally and on its peer and both wait (the multicast
  GEMM's "both buffers are free" handshake). `drop_remote_arrive`, `remote_arrive_self`,
  `drop_handshake_wait`, `handshake_wait_everywhere` break these.
* multicast TMA (`async_tma_copy_global_to_local ... %mask {multicast}`): the bytes land at the
  same offset in every CTA of the mask and complete transaction bytes on each of those CTAs'
  barrier at the same offset; the issuing CTA is not implied. `wrong_multicast_mask` and
  `expect_own_half` break the mask or the byte count that must include the peers' halves.
* remote shared-memory stores (`ttg.async_remote_shmem_store %v, rank %r, %dst barrier %bar`):
  the value lands in CTA %r's `%dst` and completes its bytes on CTA %r's `%bar`, which that CTA
  armed with `barrier_expect` for all its peers' bytes (the cluster reduction idiom).
  `drop_remote_store`, `expect_missing_peer` and `drop_remote_data_wait` break it.
* cluster launch control (`async_clc_try_cancel` completes 16 bytes on the CLC full barrier;
  every consumer waits on it, reads the response with `clc_query_cancel` and releases the slot
  on the CLC empty barrier, initialized for the number of consumers). `clc_phase_flip` and
  `drop_clc_release` break that ring.

What an expectation's `cta` key means (evals/scoring.py): some thread of the finding's witness
(or one of its partitions) is named `cta<k>.`: the hang is reported in the CTA that hangs.
"""

from __future__ import annotations

import re
from typing import Iterator

from ..facts.barriers import Mechanism, Role
from ..ir.model import Operation
from .mutate_engine import Mutant, Source

REMOTE_VIEW = "ttng.map_to_remote_buffer"
ARRIVE = "ttng.arrive_barrier"
WAIT = "ttng.wait_barrier"
TMA_LOAD = "ttng.async_tma_copy_global_to_local"
CLC_ISSUE = "ttng.async_clc_try_cancel"
# Hang mutants must get a deadlock finding (issue 12), not any hang-kind error: a byte-count or
# constant-phase rule is a static hint, the deadlock is the interpreter's verdict.
DEADLOCK = "deadlock.*"
RACE = "race.*"


def _remote_arrives(src: Source) -> Iterator[tuple[Operation, Operation]]:
    """(arrive, map_to_remote_buffer) pairs: arrivals on another CTA's barrier."""
    for op in src.ops:
        if op.name != ARRIVE or not op.positional:
            continue
        view = src.defining_op(op.positional[0])
        if view is not None and view.name == REMOTE_VIEW and len(view.positional) >= 2:
            yield op, view


def _later_in_block(op: Operation, name: str, first_operand: str) -> Operation | None:
    """The first later op of `op`'s block named `name` whose first operand is `first_operand`."""
    block = op.block
    if block is None:
        return None
    ops = block.operations
    for nxt in ops[ops.index(op) + 1:]:
        if nxt.name == name and nxt.positional and nxt.positional[0] == first_operand:
            return nxt
    return None


def _local_arrive_before(op: Operation, barrier: str) -> bool:
    """Whether the same block arrives on `barrier` itself (the symmetric handshake: own CTA
    locally, the peer remotely) before `op`."""
    block = op.block
    ops = block.operations if block is not None else []
    return any(o.name == ARRIVE and o.positional and o.positional[0] == barrier for o in ops[:ops.index(op)])


def _init_count(src: Source, barrier_op: Operation, operand: str) -> int | None:
    uses = src.analysis.barriers.uses_at(barrier_op)
    counts = {c for b, u in uses if u.operand == operand for c in b.init_counts}
    return counts.pop() if len(counts) == 1 else None


def _handshakes(src: Source) -> Iterator[dict]:
    """Remote-arrive handshakes: a count-1 arrival through map_to_remote_buffer on a barrier
    initialized for 2 arrivals (one per CTA of a pair), followed in the same block by this
    CTA's wait on its own copy of that barrier."""
    for arrive, view in _remote_arrives(src):
        local, rank = view.positional[0], view.positional[1]
        wait = _later_in_block(arrive, WAIT, local)
        if wait is None or len(wait.positional) < 2:
            continue
        if _init_count(src, wait, local) != 2 or not src.alone_on_line(arrive):
            continue
        if len(arrive.positional) > 1 and src.constant_of(arrive.positional[1]) not in (None, 1):
            continue  # an explicit count other than one
        pred = wait.positional[2] if len(wait.positional) > 2 else None
        yield {"arrive": arrive, "view": view, "wait": wait, "local": local, "rank": rank,
               "target": _rank_target(src, rank), "symmetric": _local_arrive_before(arrive, local),
               "pred": pred, "pred_const": src.constant_of(pred) if pred else 1}


def cluster_size(src: Source) -> int:
    """CTAs per cluster from the module's `ttg.cluster-dim-{x,y,z}` (1 when absent)."""
    n = 1
    for axis in "xyz":
        m = re.search(rf'"ttg\.cluster-dim-{axis}" = (\d+)', src.text)
        n *= int(m.group(1)) if m else 1
    return n


def _rank_target(src: Source, rank: str) -> int | None:
    """The CTA a rank operand names when it does not depend on the arriving CTA: a constant,
    or the pair's leader `cluster_id & -2` in a cluster of two (always CTA 0)."""
    value = src.constant_of(rank)
    if value is not None:
        return value
    op = src.defining_op(rank)
    if op is not None and op.name == "arith.andi" and len(op.operands) == 2 and cluster_size(src) == 2:
        a, b = (src.defining_op(x) for x in op.operands)
        consts = [src.constant_of(x) for x in op.operands]
        if -2 in consts and any(d is not None and d.name == "nvg.cluster_id" for d in (a, b)):
            return 0
    return None


def _cta(target: int | None) -> int | str:
    return "any" if target is None else target


def op_drop_remote_arrive(src: Source) -> Iterator[Mutant]:
    """Delete an arrival through map_to_remote_buffer that a handshake barrier counts."""
    for h in _handshakes(src):
        a = h["arrive"]
        text = src.delete_op(a)
        if text is None:
            continue
        if h["symmetric"]:
            who = "each CTA now arrives only on its own copy"
            cta: int | str = "any"
        else:
            who = (f"the phases this arrive served now get no arrival from any CTA (every CTA arrived on the copy of "
                   f"CTA {_cta(h['target'])})")
            cta = _cta(h["target"])
        why = (f"the arrive at line {a.line} was a CTA's arrival on {h['local']} of CTA rank {h['rank']} (through "
               f"map_to_remote_buffer at line {h['view'].line}); that barrier is initialized for 2 arrivals, one per CTA "
               f"of the pair, and {who}: the phase never completes and the wait at line {h['wait'].line} blocks "
               "forever, then every partition that needs that CTA's progress (the cluster) hangs.")
        yield Mutant(f"drop_remote_arrive_L{a.line}", "drop_remote_arrive", text, [{"kind": DEADLOCK, "cta": cta}],
                     [RACE], why, a.line, f"removed remote arrive on {h['local']} (rank {h['rank']})")


def op_remote_arrive_self(src: Source) -> Iterator[Mutant]:
    """Point a remote arrive at the arriving CTA itself (rank operand -> own cluster rank)."""
    for h in _handshakes(src):
        view = h["view"]
        if src.defining_op(h["rank"]) is not None and src.defining_op(h["rank"]).name == "nvg.cluster_id":
            continue  # already its own rank
        text = src.replace_in_op(view, f"{h['local']}, {h['rank']} ", f"{h['local']}, %mut_rank ",
                                 before=["%mut_rank = nvg.cluster_id"])
        if text is None:
            continue
        if h["symmetric"]:
            why = (f"map_to_remote_buffer at line {view.line} now names the arriving CTA itself: each CTA arrives twice "
                   f"on its own {h['local']} (count 2), so the handshake completes without the peer. The peer's slot "
                   "may still be read by the peer's consumers (it has not waited for its release yet) when this CTA's "
                   "multicast load overwrites it: a write into another CTA's buffer unordered with its reads (a race; "
                   "bytes landing in the peer's previous phase may also hang it, left unjudged).")
            yield Mutant(f"remote_arrive_self_L{view.line}", "remote_arrive_self", text, [{"kind": RACE}], [], why,
                         view.line, f"remote rank {h['rank']} -> own rank")
            continue
        why = (f"map_to_remote_buffer at line {view.line} now names the arriving CTA itself instead of CTA "
               f"{_cta(h['target'])}: the other CTA's arrival lands on its own copy, which nobody waits on (its wait is "
               f"predicated on {h['pred']}), so the copy of CTA {_cta(h['target'])} receives one of its 2 arrivals per "
               f"phase and its wait at line {h['wait'].line} never returns: CTA {_cta(h['target'])} hangs.")
        yield Mutant(f"remote_arrive_self_L{view.line}", "remote_arrive_self", text,
                     [{"kind": DEADLOCK, "cta": _cta(h["target"])}], [RACE], why, view.line,
                     f"remote rank {h['rank']} -> own rank")


def op_drop_handshake_wait(src: Source) -> Iterator[Mutant]:
    """Delete the wait that completes a cross-CTA handshake (the leader's cta_bar wait)."""
    seen: set[int] = set()
    for h in _handshakes(src):
        w = h["wait"]
        if id(w) in seen:
            continue
        seen.add(id(w))
        text = src.delete_op(w)
        if text is None:
            continue
        if h["symmetric"]:
            guarded = ("this CTA's multicast load, which writes the peer's copy of the slot before the peer has "
                       "waited for its consumers to release it")
        else:
            guarded = ("the leader's paired operation (the 2-CTA MMA reads both CTAs' operand tiles), issued before "
                       "the peer CTA's loads of them have landed")
        why = (f"the wait at line {w.line} on {h['local']} was the only proof that the other CTA of the pair reached the "
               f"arrive at line {h['arrive'].line}; without it nothing orders {guarded}: a race across CTAs (the "
               "unthrottled CTA may also run its peer's barriers a phase ahead and hang it, left unjudged).")
        yield Mutant(f"drop_handshake_wait_L{w.line}", "drop_handshake_wait", text, [{"kind": RACE}],
                     ["phase.constant_in_loop", "expect.bytes_mismatch"], why, w.line, "handshake wait removed")


def op_handshake_wait_everywhere(src: Source) -> Iterator[Mutant]:
    """Unpredicate the leader-only wait of a collect-on-the-leader handshake: every CTA waits
    on its own copy, which only the leader's copy is arrived on."""
    seen: set[int] = set()
    for h in _handshakes(src):
        w, pred = h["wait"], h["pred"]
        if id(w) in seen or h["symmetric"] or h["target"] is None or pred is None or h["pred_const"] is not None:
            continue
        seen.add(id(w))
        text = src.replace_in_op(w, f", {pred} ", ", %mut_true ", before=["%mut_true = arith.constant true"])
        if text is None:
            continue
        other = 1 if h["target"] == 0 else 0
        why = (f"the wait at line {w.line} was predicated on {pred} (only CTA {h['target']}, the one every CTA arrives "
               f"on through map_to_remote_buffer, waits); unpredicated, CTA {other} waits on its own copy of "
               f"{h['local']}, which no arrival ever reaches: CTA {other} blocks at its first handshake forever.")
        yield Mutant(f"handshake_wait_everywhere_L{w.line}", "handshake_wait_everywhere", text,
                     [{"kind": DEADLOCK, "cta": other}], [RACE], why, w.line, f"predicate {pred} -> true")


def _multicast_loads(src: Source) -> Iterator[tuple[Operation, str, str]]:
    """(copy, barrier operand, mask operand) of multicast TMA loads."""
    for op in src.ops:
        if op.name == TMA_LOAD and "multicast" in op.attributes and len(op.positional) >= 5:
            yield op, op.positional[2], op.positional[4]


def op_wrong_multicast_mask(src: Source) -> Iterator[Mutant]:
    """Replace a multicast load's CTA mask with one that leaves a CTA out."""
    for op, bar, mask in _multicast_loads(src):
        if not src.alone_on_line(op):
            continue
        text = src.replace_in_op(op, f"{bar}, {op.positional[3]}, {mask} ", f"{bar}, {op.positional[3]}, %mut_mask ",
                                 before=["%mut_mask = arith.constant 1 : i32"])
        if text is None:
            continue
        why = (f"the multicast load at line {op.line} delivered its half of the tile (and its transaction bytes) to every "
               f"CTA of mask {mask}; with mask 1 it lands in CTA 0 only. CTA 1 never receives any of these loads' bytes "
               f"(its own load goes to CTA 0 as well), so the phase of {bar} it expects bytes for never completes and its "
               "consumers' wait blocks forever: CTA 1 hangs, and CTA 0 with it at the next cluster handshake.")
        yield Mutant(f"wrong_multicast_mask_L{op.line}", "wrong_multicast_mask", text,
                     [{"kind": DEADLOCK, "cta": 1}], [], why, op.line, f"multicast mask {mask} -> 1")


def op_expect_own_half(src: Source) -> Iterator[Mutant]:
    """Make a multicast-fed barrier's expect count only this CTA's own load."""
    for op, bar, mask in _multicast_loads(src):
        mine = [u for b, u in src.analysis.barriers.uses_at(op) if u.role is Role.TMA_ARRIVE]
        if len(mine) != 1 or not mine[0].bytes:
            continue
        own = mine[0].bytes
        expects = [x for x in src.ops if x.name == "ttng.barrier_expect" and x.positional and x.positional[0] == bar
                   and x.block is op.block]
        for e in expects:
            uses = [u for b, u in src.analysis.barriers.uses_at(e) if u.role is Role.EXPECT]
            if len(uses) != 1 or uses[0].bytes is None or uses[0].bytes <= own:
                continue
            total = uses[0].bytes
            text = src.replace_in_op(e, f"{bar}, {total},", f"{bar}, {own},")
            if text is None:
                continue
            why = (f"barrier_expect at line {e.line} announced {total} bytes: this CTA's load at line {op.line} ({own} "
                   f"bytes) plus the peers' multicast halves that land on the same barrier. Announcing only {own}, the "
                   "phase completes as soon as the first half lands, so the consumer reads the other half before it is "
                   "written (a race); the remaining bytes then go to the next phase, which completes at its expect, "
                   "and from the third use of a slot its transaction count never returns to zero (a hang, unjudged "
                   "here: it needs three rounds per slot).")
            yield Mutant(f"expect_own_half_L{e.line}", "expect_own_half", text,
                         [{"kind": "expect.bytes_mismatch"}, {"kind": RACE}], [], why, e.line,
                         f"expect {total} -> {own}")


def _clc_barriers(src: Source) -> tuple[set[str], set[str]]:
    """Ids of CLC full barriers (completed by try_cancel's response bytes) and CLC empty
    barriers (waited on right before a try_cancel's expect by the producer)."""
    full: set[str] = set()
    for op in src.ops:
        for b, u in src.analysis.barriers.uses_at(op):
            if u.mechanism is Mechanism.CLC_RESPONSE:
                full.add(b.id)
    empty: set[str] = set()
    for op in src.ops:
        if op.name != CLC_ISSUE or op.block is None:
            continue
        ops = op.block.operations
        for prev in reversed(ops[:ops.index(op)]):
            if prev.name == WAIT:
                empty.update(b.id for b, u in src.analysis.barriers.uses_at(prev) if u.role is Role.WAIT)
                break
    return full, empty - full


def _flip(src: Source, w: Operation, phase: str) -> str | None:
    return src.replace_in_op(w, f"{w.positional[0]}, {phase},", f"{w.positional[0]}, %mut_flip,",
                             before=["%mut_one = arith.constant 1 : i32", f"%mut_flip = arith.xori {phase}, %mut_one : i32"])


def op_clc_phase_flip(src: Source) -> Iterator[Mutant]:
    """Flip the parity of a CLC wait: a consumer's wait on the response (race) or the
    producer's wait for the slot's release (hang)."""
    full, empty = _clc_barriers(src)
    for op in src.ops:
        if op.name != WAIT:
            continue
        for b, u in src.analysis.barriers.uses_at(op):
            if u.role is not Role.WAIT or not u.phase or src.constant_of(u.phase) is not None:
                continue
            if b.id in full:
                text = _flip(src, op, u.phase)
                if text is None:
                    continue
                why = (f"the CLC consumer's wait at line {op.line} on {b.name} now polls the opposite parity: its first "
                       "poll (parity 1 of a fresh barrier) passes at once, so clc_query_cancel reads the response before "
                       "try_cancel has written it (a race on the response); from then on it reads each response a "
                       "round late and releases the slot early, with a garbage tile id (wrong tiles, an early exit or "
                       "a hang: left unjudged).")
                yield Mutant(f"clc_phase_flip_consumer_L{op.line}", "clc_phase_flip", text, [{"kind": RACE}], [],
                             why, op.line, f"phase {u.phase} -> xori 1", {"wait_kind": "consumer"})
            elif b.id in empty:
                text = _flip(src, op, u.phase)
                if text is None:
                    continue
                why = (f"the CLC producer's wait at line {op.line} on {b.name} (the consumers' release of the response "
                       "slot) now polls the opposite parity: its first poll needs a release, but the consumers release "
                       "only after reading a response this producer has not requested yet: a cycle, every partition "
                       "blocks before the first tile completes.")
                yield Mutant(f"clc_phase_flip_producer_L{op.line}", "clc_phase_flip", text, [{"kind": DEADLOCK}],
                             [RACE], why, op.line, f"phase {u.phase} -> xori 1", {"wait_kind": "producer"})


def op_drop_clc_release(src: Source) -> Iterator[Mutant]:
    """Delete one consumer's release (arrive) of the CLC response slot."""
    _, empty = _clc_barriers(src)
    for op in src.ops:
        if op.name != ARRIVE:
            continue
        for b, u in src.analysis.barriers.uses_at(op):
            if b.id not in empty or u.role is not Role.ARRIVE:
                continue
            n = max(b.init_counts) if b.init_counts else None
            text = src.delete_op(op)
            if text is None or not n:
                continue
            why = (f"{b.name} is initialized for {n} arrivals, one per CLC consumer; without the arrive at line "
                   f"{op.line} ({u.partition or 'main'}) a round of the response slot collects {n - 1}, so the "
                   "producer's wait for the slot's release never returns, no further try_cancel is issued, and every "
                   "consumer blocks on the next response: the kernel hangs once the first steal succeeds (a grid "
                   "larger than the CTAs resident at once).")
            yield Mutant(f"drop_clc_release_L{op.line}", "drop_clc_release", text, [{"kind": DEADLOCK}], [RACE], why,
                         op.line, f"removed CLC release arrive ({u.partition or 'main'})")


REMOTE_STORES = ("ttg.async_remote_shmem_store", "ttng.async_remote_shmem_copy")


def _remote_store_sites(src: Source) -> Iterator[dict]:
    """Per barrier fed by remote stores in a cluster of n CTAs: its stores (one per rank, each
    skipped by the CTA it names), the expect that arms it and the wait that reads after it."""
    n = cluster_size(src)
    by_bar: dict[str, list[Operation]] = {}
    for op in src.ops:
        if op.name in REMOTE_STORES and len(op.positional) >= 4:
            by_bar.setdefault(op.positional[-1], []).append(op)
    for bar, stores in by_bar.items():
        expects = [x for x in src.ops if x.name == "ttng.barrier_expect" and x.positional and x.positional[0] == bar]
        waits = [x for x in src.ops if x.name == WAIT and x.positional and x.positional[0] == bar]
        if n < 2 or len(expects) != 1 or len(waits) != 1:
            continue
        uses = [u for b, u in src.analysis.barriers.uses_at(expects[0]) if u.role is Role.EXPECT]
        if len(uses) != 1 or not uses[0].bytes or uses[0].bytes % (n - 1):
            continue
        yield {"bar": bar, "stores": stores, "expect": expects[0], "wait": waits[0], "n": n,
               "bytes": uses[0].bytes, "per_peer": uses[0].bytes // (n - 1)}


def op_drop_remote_store(src: Source) -> Iterator[Mutant]:
    """Delete the remote store that delivers a partial to one CTA of the cluster."""
    for site in _remote_store_sites(src):
        for st in site["stores"]:
            rank = src.constant_of(st.positional[1])
            if rank is None:
                continue
            text = src.delete_op(st)
            if text is None:
                continue
            why = (f"the remote store at line {st.line} delivered this CTA's partial (and {site['per_peer']} bytes) to "
                   f"CTA {rank}'s {site['bar']}, which CTA {rank} armed at line {site['expect'].line} for "
                   f"{site['bytes']} bytes: one store from each of its {site['n'] - 1} peers. Every CTA other than "
                   f"{rank} skips it now, so CTA {rank}'s phase stays {site['per_peer']} bytes short "
                   f"of its expect, its wait at line {site['wait'].line} never returns: CTA {rank} hangs "
                   "(and the other CTAs with it, at the next reduction that needs its partial).")
            yield Mutant(f"drop_remote_store_L{st.line}", "drop_remote_store", text, [{"kind": DEADLOCK, "cta": rank}],
                         [RACE], why, st.line, f"removed remote store to rank {rank}")


def op_expect_missing_peer(src: Source) -> Iterator[Mutant]:
    """Arm a remote-store-fed barrier for one peer fewer than the cluster has."""
    for site in _remote_store_sites(src):
        e, total = site["expect"], site["bytes"]
        fewer = total - site["per_peer"]
        text = src.replace_in_op(e, f"{site['bar']}, {total},", f"{site['bar']}, {fewer},")
        if text is None:
            continue
        why = (f"barrier_expect at line {e.line} armed {site['bar']} for {total} bytes, {site['per_peer']} from each of "
               f"the {site['n'] - 1} peers' remote stores; armed for {fewer}, the phase completes before the last peer's "
               f"partial lands, so the reads after the wait at line {site['wait'].line} can read a partial not yet "
               "written (a race across CTAs); the late bytes then count against the next phase, which completes early "
               "or, once the deficit no longer returns to zero, never (a hang, unjudged here).")
        yield Mutant(f"expect_missing_peer_L{e.line}", "expect_missing_peer", text,
                     [{"kind": "expect.bytes_mismatch"}, {"kind": RACE}], [], why, e.line, f"expect {total} -> {fewer}")


def op_drop_remote_data_wait(src: Source) -> Iterator[Mutant]:
    """Delete the wait that proves the peers' remote stores have landed."""
    for site in _remote_store_sites(src):
        w = site["wait"]
        text = src.delete_op(w)
        if text is None:
            continue
        why = (f"the wait at line {w.line} on {site['bar']} was this CTA's only proof that its {site['n'] - 1} peers' "
               "remote stores (their partials) have landed in its shared memory; without it the loads that follow read "
               "the partials unsynchronized with the peers' stores: a race across CTAs.")
        yield Mutant(f"drop_remote_data_wait_L{w.line}", "drop_remote_data_wait", text, [{"kind": RACE}],
                     ["phase.constant_in_loop"], why, w.line, "remote-store wait removed")


CLUSTER = {
    "drop_remote_arrive": op_drop_remote_arrive,
    "remote_arrive_self": op_remote_arrive_self,
    "drop_handshake_wait": op_drop_handshake_wait,
    "handshake_wait_everywhere": op_handshake_wait_everywhere,
    "wrong_multicast_mask": op_wrong_multicast_mask,
    "expect_own_half": op_expect_own_half,
    "drop_remote_store": op_drop_remote_store,
    "expect_missing_peer": op_expect_missing_peer,
    "drop_remote_data_wait": op_drop_remote_data_wait,
    "clc_phase_flip": op_clc_phase_flip,
    "drop_clc_release": op_drop_clc_release,
}
