"""The barrier dependency graph (report section 2): who signals whom, through which barrier, for which data.

Nodes are partitions (plus `main` for synchronizing ops outside every partition). One edge is one
(logical channel, arriving partition, waiting partition) triple: all arrives of that partition on
the channel and all waits of the other partition on it, with their lines.

**Channels.** An mbarrier allocation is one channel. A legacy NVWS token and an aref are two: the
token lowering (ir-semantics 3.10/3.11) turns each into a *full* and an *empty* barrier array, so
`producer_commit` / `put.exit` arrive on full and are awaited by `consumer_wait` / `get.enter`, while
`consumer_release` / `get.exit` arrive on empty and are awaited by `producer_acquire` / `put.enter`.
Arrive and wait sites whose slot indices are different constants never meet, so they get no edge.

**Who arrives.** Asynchronous arrivals are charged to the partition that issued the operation: a TMA
copy's complete-tx is the TMA engine working for the issuing (load) partition, a `tc_gen5_commit` or
an MMA `barriers(...)` entry is the tensor core working for the MMA partition. `agent` names the
engine so renderings can say so.

**Direction.** forward = producer -> consumer (the protected data's writer arrives, the reader
waits); backward = consumer -> producer (a release: the slot may be overwritten, including
next-iteration reuse). Sources, strongest first, and `source` says which one decided:

1. `constraints` - the `WSBarrier.direction` written on a wait (or arrive) of the edge by AutoWS.
2. `lowering` - token and aref channels: full is forward, empty is backward by construction.
3. `tma` - an edge arrived by TMA copies is forward: the copy writes the data it signals.
4. `phase` - the parity the waiter's first wait polls (in IR order), from `analyses.symbolic` with
   every enclosing loop at iteration 0: parity 1 on a fresh barrier passes at once, which is
   the pre-inverted producer acquire of ir-semantics 4.4 (backward); parity 0 needs a completion
   first, the consumer side (forward).
5. `dataflow` - when the phase is not a known formula: the waiter writes, right after its wait, a
   buffer the arriver read before its arrive (backward), else forward.

**Data.** What an edge protects is read from the accesses around the two ends, never from names.
The *publish window* of an arrive is what its partition accessed since its previous synchronous
arrive in the same loop iteration (for an MMA `barriers(...)` entry, the MMA's own operands; for a
TMA copy, its destination; for `tc_gen5_commit`, every MMA issued before it in the iteration, since
a commit tracks all earlier tcgen05 work). The *guard window* of a wait is what its partition
accesses after it, up to the next wait once something was accessed (waits written back to back all
guard the access that follows the group) or its next wait on the same channel. Forward data =
buffers written in the publish window and read in the guard window; backward data = buffers read in
the publish window and written in the guard window. When that is empty the guard widens to the whole
loop body (the rest of this iteration and the start of the next), then any access kind counts, then one side alone is reported; `data_source` names
the tier (`ends`, `iteration`, `any-access`, `arriver`, `waiter`, `none`), so a reader can tell a
proven buffer from a guess.

Persistent kernels (some partition runs a loop nest: an outer tile loop around an inner loop)
make every backward edge a *return edge* into the next iteration; renderings draw them that way.
Same-partition edges are kept and marked `self_loop` (ir-semantics 7.4: they order asynchronous
work of one partition, or nothing at all when every arrive is synchronous).

**Clusters.** In a CTA cluster (`facts.cluster`) an arrival may land in another CTA's copy of the
barrier: an arrive through `map_to_remote_buffer` (the tracer resolves the view; the barrier facts
keep such uses apart, `BarrierFacts.remote`, and they are added here on the barrier of the source
view), a multicast TMA load, the commit of a
paired 2-CTA MMA, a remote copy, a CLC multicast. Nodes stay partitions (every CTA runs the same
partitions), and each edge lists, per arrive line that can leave the issuing CTA, which CTAs it
reaches (`cta_targets`, the one answer the rules and the interpreter share); `crosses_ctas` is
true when some issuing CTA reaches another CTA's barrier, None when that is not computable.

Not done: the "TMEM token back-edge not loop-carried" check of the skill. In final IR tokens do not
cross partitions, and in pre-partition IR deciding that a token *should* be carried needs the
channel the compiler would create; no sound rule was found, so nothing is flagged.

The parts of the graph live in `graph_model` (nodes, edges, the graph) and what an edge protects
in `graph_data`; this module builds the graph from the barrier facts.
"""

from __future__ import annotations

from typing import Iterable

from ...facts.barriers import Barrier, BarrierKind, BarrierUse, Mechanism, Role, remote_uses
from ...facts.buffers import Member
from ...facts.cluster import RankEvaluator, ReachKind, cluster_of, cta_targets
from ...facts.partitions import module_warps
from ...facts.roles import assign_roles
from ...ir.vocab import LOOP_OPS
from .graph_data import _DataWindows, _ordered
from .graph_model import ARRIVES, CtaHop, DependencyGraph, GraphEdge, GraphNode, MAIN, Unmatched, WAITS, _Channel


# Token / aref channels: which roles arrive on and wait on the full and the empty barrier.
_SPLIT = {
    BarrierKind.NVWS_TOKEN: {"full": ({Role.COMMIT}, {Role.WAIT}), "empty": ({Role.RELEASE}, {Role.ACQUIRE})},
    BarrierKind.AREF: {"full": ({Role.PUT_EXIT}, {Role.GET_ENTER}), "empty": ({Role.GET_EXIT}, {Role.PUT_ENTER})},
}


_AGENT = {
    Mechanism.MBARRIER_TMA: "TMA engine",
    Mechanism.TCGEN05_COMMIT: "tensor core",
    Mechanism.MMA_BARRIER: "tensor core",
    Mechanism.TMA_STORE_WAIT_ARRIVE: "TMA engine",
    Mechanism.ASYNC_COPY_ARRIVE: "cp.async unit",
}


# -- building -----------------------------------------------------------------------------------
def build_graph(analysis) -> DependencyGraph:
    """The dependency graph of one `Analysis` (one function)."""
    return _Builder(analysis).run()


class _Builder(_DataWindows):
    def __init__(self, analysis):
        self.a = analysis
        self._sym = None
        self._sym_failed = False
        self._access: dict[tuple[int, str], list[tuple[str, str]]] | None = None
        self._members: dict[str, Member] = {}
        self.cluster = cluster_of(analysis.sel.ir)
        self._remote: dict[str, list[BarrierUse]] = {}
        if self.cluster.size > 1:
            for r in remote_uses(analysis.barriers, analysis.tracer, analysis.partitions):
                self._remote.setdefault(r.barrier.id, []).append(r.use)
        self._ranks = RankEvaluator(analysis.values)

    # -- top level --------------------------------------------------------------------------
    def run(self) -> DependencyGraph:
        persistent = self._persistent()
        raw: list[GraphEdge] = []
        unmatched: list[Unmatched] = []
        for barrier in self.a.barriers.barriers:
            for ch in self._channels(barrier):
                edges, lost = self._channel_edges(ch, persistent)
                raw.extend(edges)
                unmatched.extend(lost)
        nodes = self._nodes(raw, unmatched)
        order = {n.id: i for i, n in enumerate(nodes)}
        ranks = _ranks(nodes, raw)
        key = lambda e: (e.direction != "forward", ranks.get(e.source_node, 0), ranks.get(e.target_node, 0),  # noqa: E731
                         order.get(e.source_node, 0), order.get(e.target_node, 0), e.self_loop,
                         min(e.arrive_lines + e.wait_lines, default=0), e.barrier, e.channel or "")
        unmatched.sort(key=lambda u: (order.get(u.partition, 0), min(u.lines, default=0), u.barrier))
        return DependencyGraph(tuple(nodes), tuple(sorted(raw, key=key)), tuple(unmatched), persistent, ranks,
                               self.cluster)

    def _persistent(self) -> bool:
        """A partition (or, without partitions, the function) that runs a loop nest: an outer
        tile loop around inner loops, so backward edges feed the next tile."""
        for op in self.a.ops:
            if op.name in LOOP_OPS and any(anc.name in LOOP_OPS for anc in op.ancestors()):
                return True
        return False

    def _nodes(self, edges: list[GraphEdge], unmatched: list[Unmatched]) -> list[GraphNode]:
        pm = self.a.partitions
        roles = assign_roles(pm, self.a.sel.ir, self.a.ops) if pm.partitions else {}
        nodes = [GraphNode(p.name, roles[p.name].label if p.name in roles else p.name, p.task_id, p.warps, p.type,
                           (p.start_line, p.end_line) if p.start_line else None) for p in pm.partitions]
        used = {e.source_node for e in edges} | {e.target_node for e in edges} | {u.partition for u in unmatched}
        if MAIN in used:
            nodes.insert(0, GraphNode(MAIN, "outside partitions", None, None, None, None))
        return nodes

    # -- channels ---------------------------------------------------------------------------
    def _channels(self, b: Barrier) -> list[_Channel]:
        arrives = [u for u in b.uses if u.role in ARRIVES]
        arrives += sorted((u for u in self._remote.get(b.id, ()) if u.role in ARRIVES), key=lambda u: (u.line, u.op.column))
        waits = [u for u in b.uses if u.role in WAITS]
        split = _SPLIT.get(b.kind)
        if split is None:
            return [_Channel(b, None, arrives, waits)] if arrives or waits else []
        out = []
        for name, (arrive_roles, wait_roles) in split.items():
            a = [u for u in arrives if u.role in arrive_roles]
            w = [u for u in waits if u.role in wait_roles]
            if a or w:
                out.append(_Channel(b, name, a, w))
        return out

    def _channel_edges(self, ch: _Channel, persistent: bool) -> tuple[list[GraphEdge], list[Unmatched]]:
        if ch.barrier.kind is BarrierKind.NAMED:
            return self._named_edges(ch, persistent)
        by_arriver = _group(ch.arrives)
        by_waiter = _group(ch.waits)
        edges: list[GraphEdge] = []
        met_a: set[str] = set()
        met_w: set[str] = set()
        for src, arrives in by_arriver.items():
            for dst, waits in by_waiter.items():
                arrives_m = [u for u in arrives if any(_slots_meet(u, w) for w in waits)]
                waits_m = [w for w in waits if any(_slots_meet(u, w) for u in arrives)]
                if not arrives_m or not waits_m:
                    continue
                met_a.add(src)
                met_w.add(dst)
                edges.append(self._edge(ch, src, dst, arrives_m, waits_m, persistent))
        lost = [Unmatched(ch.barrier.id, _display_name(ch), p, "arrive without wait", _lines(us))
                for p, us in by_arriver.items() if p not in met_a]
        lost += [Unmatched(ch.barrier.id, _display_name(ch), p, "wait without arrive", _lines(us))
                 for p, us in by_waiter.items() if p not in met_w]
        return edges, lost

    def _named_edges(self, ch: _Channel, persistent: bool) -> tuple[list[GraphEdge], list[Unmatched]]:
        """A named barrier as the hardware runs it: a generation completes when its thread count
        has arrived, and `bar.sync` (`wait_barrier_named`) arrives with its threads as well as
        waiting; `bar.arrive` only arrives. So a waiting partition depends on every *other*
        partition that syncs or arrives on the id (a producer/consumer pair, or several partitions
        meeting), and a partition alone on the id is a sync of its own threads (a self loop) when
        they reach the count. Unmatched: an arrive no partition waits for, or a lone sync whose
        threads cannot reach the count."""
        by_arriver = _group(ch.arrives + ch.waits)
        by_waiter = _group(ch.waits)
        edges: list[GraphEdge] = []
        met_a: set[str] = set()
        lost: list[Unmatched] = []
        for dst, waits in by_waiter.items():
            others = [p for p in by_arriver if p != dst]
            for src in others:
                met_a.add(src)
                edges.append(self._edge(ch, src, dst, by_arriver[src], waits, persistent))
            if others:
                continue
            if self._threads_reach(dst, waits):
                met_a.add(dst)
                edges.append(self._edge(ch, dst, dst, waits, waits, persistent))
            else:
                lost.append(Unmatched(ch.barrier.id, _display_name(ch), dst, "wait without arrive", _lines(waits)))
        lost += [Unmatched(ch.barrier.id, _display_name(ch), p, "arrive without wait", _lines(us))
                 for p, us in _group(ch.arrives).items() if p not in met_a]
        return edges, lost

    def _threads_reach(self, part: str, syncs: list[BarrierUse]) -> bool:
        """Do `part`'s own threads (32 per warp) reach the count of each of its syncs? Unknown
        counts or warps are not held against it."""
        warps = next((p.warps for p in self.a.partitions.partitions if p.name == part), None)
        if warps is None and part == MAIN:
            warps = module_warps(self.a.ops)
        if warps is None:
            return True
        return all(u.count is None or u.count <= 32 * warps for u in syncs)

    def _edge(self, ch: _Channel, src: str, dst: str, arrives: list[BarrierUse], waits: list[BarrierUse],
              persistent: bool) -> GraphEdge:
        mechs = _mechanisms(arrives)
        direction, source, note = self._direction(ch, arrives, waits, mechs)
        data, data_source = self._data(ch, arrives, waits, direction)
        agent = next((_AGENT[Mechanism(m)] for m in mechs if Mechanism(m) in _AGENT), None)
        hops = self._cta_hops(arrives)
        crosses = False if not hops else (None if any(h.crosses is None for h in hops) else any(h.crosses for h in hops))
        return GraphEdge(
            source_node=src,
            target_node=dst,
            barrier=ch.barrier.id,
            barrier_name=_display_name(ch),
            channel=ch.name,
            slots=ch.barrier.slots,
            mechanism=_mechanism_label(ch, mechs, arrives),
            mechanisms=mechs,
            agent=agent,
            direction=direction,
            direction_source=source,
            direction_note=note,
            data=data,
            data_source=data_source,
            arrive_lines=_lines(arrives),
            wait_lines=_lines(waits),
            self_loop=src == dst,
            return_edge=persistent and direction == "backward",
            dst_task_mismatch=self._dst_task_mismatch(ch, waits),
            crosses_ctas=crosses,
            ctas=hops,
        )

    def _cta_hops(self, arrives: list[BarrierUse]) -> tuple[CtaHop, ...]:
        """The arrive lines whose arrival can leave the issuing CTA, with where it lands."""
        if self.cluster.size <= 1:
            return ()
        out: dict[tuple[int, str], CtaHop] = {}
        for u in arrives:
            t = cta_targets(u.op, u.operand, self.cluster, self.a.values, self._ranks, (u.predicate, u.op_predicate))
            if t.reach.kind is ReachKind.OWN or (u.line, u.op.name) in out:
                continue
            issuers = tuple(s for s, on in enumerate(t.issues) if on)
            targets = tuple((tuple(sorted(x)) if x is not None else None) if t.issues[s] else ()
                            for s, x in enumerate(t.targets))
            out[(u.line, u.op.name)] = CtaHop(u.line, u.op.name, t.reach.kind.value, t.describe(), issuers, targets,
                                              t.crosses)
        return tuple(sorted(out.values(), key=lambda h: (h.line, h.op)))

    # -- direction --------------------------------------------------------------------------
    def _direction(self, ch: _Channel, arrives: list[BarrierUse], waits: list[BarrierUse],
                   mechs: tuple[str, ...]) -> tuple[str, str, str]:
        for side, uses in (("wait", waits), ("arrive", arrives)):
            for u in uses:
                d = _ws_barrier(u).get("direction")
                if d in ("forward", "backward"):
                    return d, "constraints", f"WSBarrier direction on the {side} at line {u.line}"
        if ch.name is not None:
            d = "forward" if ch.name == "full" else "backward"
            return d, "lowering", f"{ch.name} barrier of the {ch.barrier.kind.value} channel"
        if ch.barrier.kind is BarrierKind.NAMED:
            if {u.op.name for u in arrives} <= {"ttng.wait_barrier_named"}:
                return "forward", "named", "bar.sync: every participant arrives and waits for the thread count"
            return "forward", "named", "bar.arrive -> bar.sync: the waiter goes on once the thread count has arrived"
        if Mechanism.MBARRIER_TMA.value in mechs:
            return "forward", "tma", "arrived by TMA copies, which write the data they signal"
        first = min(waits, key=lambda u: (u.line, u.op.column))
        parity = self._first_parity(first)
        if parity is not None:
            if parity == 1:
                return "backward", "phase", f"first wait (line {first.line}) polls parity 1: pre-inverted acquire"
            return "forward", "phase", f"first wait (line {first.line}) polls parity 0: waits for a completion"
        if self._writes_what_arriver_read(arrives, waits):
            return "backward", "dataflow", "the waiter overwrites a buffer the arriver read"
        return "forward", "dataflow", "phase unknown; the waiter does not overwrite what the arriver read"

    def _first_parity(self, wait: BarrierUse) -> int | None:
        """Parity `wait` polls the first time it runs: its raw phase tree simulated with every
        enclosing loop at iteration 0 (the IR's own recurrences, so AutoWS counters and
        upstream stage/phase pairs alike). When that needs a value the IR does not give (a trip
        count, a kernel argument), the normalized formula is evaluated with each additive counter
        at its constant initial value; otherwise None."""
        if wait.op.name != "ttng.wait_barrier":
            return None
        sym = self._symbolic()
        if sym is None:
            return None
        try:
            from ..symbolic import Const, Var, evaluate, leaves

            _, phase = sym.wait(wait.op)
            if not phase.resolved:
                return None
            loops = {a.line: 0 for a in wait.op.ancestors() if a.name in LOOP_OPS}
            try:
                return sym.simulate(phase.raw, loops) & 1
            except Exception:  # noqa: BLE001 - fall back to the normalized formula
                pass
            bindings: dict[str, int] = {}
            for c in phase.counters:
                if c.kind != "additive" or not isinstance(c.init, Const):
                    return None
                bindings[c.key] = c.init.value
            for leaf in leaves(phase.expr):
                if isinstance(leaf, Var) and leaf.key not in bindings:
                    return None
            return evaluate(phase.expr, bindings) & 1
        except Exception:  # noqa: BLE001 - a formula we cannot evaluate is not a direction
            return None

    def _symbolic(self):
        if self._sym is None and not self._sym_failed:
            try:
                from ..symbolic import SymbolicAnalysis

                self._sym = SymbolicAnalysis(self.a.sel.ir, self.a.sel.unit.text(), self.a.values)
            except Exception:  # noqa: BLE001
                self._sym_failed = True
        return self._sym

    def _writes_what_arriver_read(self, arrives: list[BarrierUse], waits: list[BarrierUse]) -> bool:
        read = {m for u in arrives for m, k in self._publish(u) if k == "read"}
        written = {m for w in waits for m, k in self._guard(w, wide=False) if k == "write"}
        return bool(read & written)

    def _dst_task_mismatch(self, ch: _Channel, waits: list[BarrierUse]) -> bool:
        """A wait whose `WSBarrier.dstTask` (the other end, ir-semantics 6) names none of the
        partitions that arrive on its channel: the compiler meant another channel."""
        tasks = {self._task(p) for p in _group(ch.arrives)}
        if None in tasks:
            return False
        for w in waits:
            t = _ws_barrier(w).get("dstTask")
            if isinstance(t, int) and t not in tasks:
                return True
        return False

    def _task(self, name: str) -> int | None:
        p = self.a.partitions.by_name(name)
        return p.task_id if p is not None else None


# -- helpers ------------------------------------------------------------------------------------
def _group(uses: Iterable[BarrierUse]) -> dict[str, list[BarrierUse]]:
    """Uses by partition; a replicated (task-id) op belongs to each of its partitions."""
    out: dict[str, list[BarrierUse]] = {}
    for u in uses:
        for p in (u.partitions or ((u.partition,) if u.partition else (MAIN,))):
            out.setdefault(p, []).append(u)
    return out


def _slots_meet(a: BarrierUse, w: BarrierUse) -> bool:
    """Two uses can touch the same slot unless both index it with different constants."""
    ka = tuple(s.constant for s in a.slots)
    kw = tuple(s.constant for s in w.slots)
    if len(ka) != len(kw):
        return True
    return all(x is None or y is None or x == y for x, y in zip(ka, kw))


def _lines(uses: Iterable[BarrierUse]) -> tuple[int, ...]:
    return tuple(sorted({u.line for u in uses}))


def _mechanisms(arrives: list[BarrierUse]) -> tuple[str, ...]:
    order = list(Mechanism)
    found = {u.mechanism for u in arrives if u.mechanism is not Mechanism.MBARRIER}
    return tuple(m.value for m in sorted(found, key=order.index))


_MECH_TEXT = {
    Mechanism.MBARRIER_TMA.value: "barrier_expect + async_tma_copy",
    Mechanism.TCGEN05_COMMIT.value: "tc_gen5_commit",
    Mechanism.MMA_BARRIER.value: "tc_gen5_mma barrier",
    Mechanism.MBARRIER_EXPLICIT.value: "arrive_barrier",
    Mechanism.NAMED_BARRIER.value: "named barrier",
    Mechanism.ASYNC_COPY_ARRIVE.value: "async_copy_mbarrier_arrive",
    Mechanism.TMA_STORE_WAIT_ARRIVE.value: "tma_store_token_wait arrive",
}
_ROLE_TEXT = {
    Role.COMMIT: "producer_commit", Role.RELEASE: "consumer_release",
    Role.PUT_EXIT: "aref.put.exit", Role.GET_EXIT: "aref.get.exit",
}


def _mechanism_label(ch: _Channel, mechs: tuple[str, ...], arrives: list[BarrierUse]) -> str:
    """The arrive side in the skill's words (`barrier_expect + async_tma_copy`, `tc_gen5_commit`...)."""
    if ch.name is not None:
        roles = _ordered(_ROLE_TEXT.get(u.role, u.role.value) for u in arrives)
        return " + ".join(roles) + f" ({ch.barrier.kind.value} {ch.name})"
    return " + ".join(_MECH_TEXT.get(m, m) for m in mechs) or "mbarrier"


def _display_name(ch: _Channel) -> str:
    b = ch.barrier
    base = f"{b.name}@{b.line}" if b.kind is not BarrierKind.NAMED else b.id
    label = f" \"{b.loc_name}\"" if b.loc_name else ""
    return base + (f".{ch.name}" if ch.name else "") + label


def _ws_barrier(u: BarrierUse) -> dict:
    c = u.constraints or {}
    ws = c.get("WSBarrier")
    return ws if isinstance(ws, dict) else {}


def _ranks(nodes: list[GraphNode], edges: list[GraphEdge]) -> dict[str, int]:
    """Pipeline position of each node: breadth-first depth from the sources over forward, non-self edges
    (cycles cut by visiting each node once), so renderings list load before MMA before softmax."""
    succ: dict[str, list[str]] = {n.id: [] for n in nodes}
    indeg: dict[str, int] = {n.id: 0 for n in nodes}
    for e in edges:
        if e.direction == "forward" and not e.self_loop and e.target_node not in succ[e.source_node]:
            succ[e.source_node].append(e.target_node)
            indeg[e.target_node] += 1
    rank: dict[str, int] = {}
    order = [n.id for n in nodes]
    frontier = [n for n in order if indeg[n] == 0] or order[:1]
    for n in frontier:
        rank[n] = 0
    queue = list(frontier)
    while queue:
        n = queue.pop(0)
        for m in succ[n]:
            if m not in rank:
                rank[m] = rank[n] + 1
                queue.append(m)
    for n in order:  # nodes only reachable through cycles
        rank.setdefault(n, max(rank.values(), default=0) + 1)
    return rank
