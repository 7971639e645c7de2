"""What orders two operations for the coverage tables: the stage of the IR (pre- or
post-partition) and the partitions an op runs in; post-partition, release -> wait chains across
partitions through barriers (`happens_before`, a bounded search shared with the release rules);
pre-partition, the data flow between tasks.
"""

from __future__ import annotations

from functools import cached_property
from typing import Callable

from ....facts.barriers import Barrier, BarrierUse, Role
from ....facts.values import OpResult
from ....ir.model import Operation
from ....ir.vocab import LOOP_OPS
from ...program.order import following_in_iteration
from .common import (MMA_OPS, _ARRIVES, _BOUNDARY, _Edge, _MAX_SEARCH, _WAITS, _bar_sync_arrives, _before, _depth,
                     _memory_operands, _side)


class _Ordering:
    """Who runs an op (stage and partitions) and what orders two ops: barrier release -> wait
    chains across partitions (post-partition) and data flow between tasks (pre-partition)."""

    # -- stage and partitions -------------------------------------------------------------------
    @cached_property
    def stage(self) -> str:
        src = self.a.partitions.derived_from
        if src in ("warp_specialize", "nvws.warp_group"):
            return "post-partition"
        if src in ("async_task_id", "ttg.partition"):
            return "pre-partition"
        return "single"

    def parts(self, op: Operation) -> tuple[str, ...]:
        found = self.a.partitions.of(op)
        if not found:
            return ("main",)
        if self.stage == "post-partition":
            return (found[0].name,)
        return tuple(p.name for p in found)

    def plabel(self, name: str) -> str:
        """`partition0 (task 1, gemm)` / `task1 (gemm)`: the name a reader finds in the IR, plus
        the task id and role the skill's tables use."""
        p = self.a.partitions.by_name(name)
        if p is None:
            return name
        bits = []
        if p.task_id is not None and not name.startswith("task"):
            bits.append(f"task {p.task_id}")
        if p.type:
            bits.append(p.type)
        return f"{name} ({', '.join(bits)})" if bits else name

    # -- barrier events ------------------------------------------------------------------------
    def _events(self, op: Operation, roles: frozenset[Role]) -> list[tuple[tuple[str, str], BarrierUse]]:
        """`op`'s uses of barriers with one of `roles`, its arrivals on a peer CTA's copy
        (`map_to_remote_buffer`) included: every CTA runs the same code, so the waiter on that
        copy is the same partition as in its own CTA (the 2-CTA leader's MMA partition waiting
        for both CTAs' releases), the ordering the cluster simulator follows."""
        uses = list(self.a.barriers.uses_at(op)) + self._remote_uses.get(id(op), [])
        return [((b.id, _side(b, u)), u) for b, u in uses if u.role in roles or _bar_sync_arrives(b, u, roles)]

    @cached_property
    def _remote_uses(self) -> dict[int, list[tuple[Barrier, BarrierUse]]]:
        out: dict[int, list[tuple[Barrier, BarrierUse]]] = {}
        for r in self.a.barriers.remote:
            out.setdefault(id(r.use.op), []).append((r.barrier, r.use))
        return out

    @cached_property
    def _waits_by_key(self) -> dict[tuple[str, str], list[BarrierUse]]:
        out: dict[tuple[str, str], list[BarrierUse]] = {}
        for b in self.a.barriers.barriers:
            for u in b.uses:
                if u.role in _WAITS:
                    out.setdefault((b.id, _side(b, u)), []).append(u)
        return out

    def releases_after(self, op: Operation, part: str, levels: int = 0) -> list[tuple[tuple[str, str], Operation]]:
        """Barriers `part` arrives on after `op` in the same iteration (the op's own arrivals
        included: an MMA's barrier list fires once it has read its operands); with `levels`, in
        the iteration of the loop that many levels further out (a release after the inner loop
        the op sits in, e.g. a `tc_gen5_commit` once the K loop's MMAs are done)."""
        out = []
        for x in following_in_iteration(op, levels):
            if part in self.parts(x):
                out += [(k, x) for k, _ in self._events(x, _ARRIVES)]
        if op.name in MMA_OPS:
            # tcgen05 ops complete in issue order: the arrivals of the tcgen05 ops this partition
            # issues in the next iteration (the loop body before `op`) fire after `op` has read.
            loop = next((a for a in op.ancestors() if a.name in LOOP_OPS or a.name in _BOUNDARY), None)
            if loop is not None and loop.name in LOOP_OPS:
                for x in _before(op, stop=loop):
                    if part in self.parts(x) and (x.name in MMA_OPS or x.name == "ttng.tc_gen5_commit"):
                        out += [(k, x) for k, _ in self._events(x, frozenset({Role.MMA_ARRIVE, Role.COMMIT}))]
        return out

    def happens_before(self, start: Operation, part: str, accept: Callable[[Operation, str, Operation], bool],
                       forward_only: bool = False, levels: int = 0, hop=None) -> list[_Edge] | None:
        """A chain of release→wait edges from `start` (run by `part`) to a wait `accept` takes
        (called with the wait op, its partition and the matching arrive op). By default each hop
        needs the wait at the arrive's loop depth (same cadence). `forward_only` keeps only
        consumer-side waits (paired with the arrive of the same iteration), so the chain orders
        `start` before the target *in the same iteration*; loop depths may then differ (a
        peeled first iteration waits outside the loop its partner arrives in). `hop(arrive op,
        wait use)` may refuse an edge (release_order asks for the same ring slot)."""
        frontier: list[tuple[Operation, str, list[_Edge]]] = [(start, part, [])]
        seen: set[tuple[int, str]] = {(id(start), part)}
        budget = _MAX_SEARCH
        while frontier and budget > 0:
            op, p, path = frontier.pop(0)
            for key, arrive in self.releases_after(op, p, levels if op is start else 0):
                for w in self._waits_by_key.get(key, []):
                    budget -= 1
                    if forward_only and not self._forward(w.op):
                        continue
                    if not forward_only and _depth(w.op) != _depth(arrive):
                        continue
                    if hop is not None and not hop(arrive, w):
                        continue
                    for q in self.parts(w.op):
                        if q == p:
                            continue
                        step = path + [_Edge(arrive, w.op, key[0] + (f" ({key[1]})" if key[1] else ""))]
                        if accept(w.op, q, arrive):
                            return step
                        if (id(w.op), q) not in seen:
                            seen.add((id(w.op), q))
                            frontier.append((w.op, q, step))
        return None

    # -- pre-partition data flow ---------------------------------------------------------------
    @cached_property
    def _users(self) -> dict[int, list[Operation]]:
        out: dict[int, list[Operation]] = {}
        for op in self.a.ops:
            for name in op.operands:
                d = self.a.values.lookup(name, op)
                if isinstance(d, OpResult):
                    out.setdefault(id(d.op), []).append(op)
        return out

    @cached_property
    def _buffer_readers(self) -> dict[int, list[Operation]]:
        out: dict[int, list[Operation]] = {}
        for op in self.a.ops:
            for name, kind in _memory_operands(op):
                t = self._trace(name, op)
                root = getattr(t, "root", None)
                if kind == "read" and root is not None:
                    out.setdefault(id(root), []).append(op)
        return out

    def _written_roots(self, op: Operation) -> list[Operation]:
        roots = []
        for name, kind in _memory_operands(op):
            if kind == "write":
                root = getattr(self._trace(name, op), "root", None)
                if root is not None:
                    roots.append(root)
        return roots

    def dataflow_before(self, start: Operation, part: str, accept: Callable[[Operation, str], bool]) -> list[Operation] | None:
        """Pre-partition: a chain of cross-task data channels (an SSA value, or a buffer written
        by one task and read by another) from what `part` does after `start` in the same
        iteration to an op `accept` takes. Each channel becomes a forward barrier."""
        frontier: list[tuple[Operation, str, list[Operation]]] = [(start, part, [])]
        seen: set[tuple[int, str]] = {(id(start), part)}
        budget = _MAX_SEARCH
        while frontier and budget > 0:
            op, p, path = frontier.pop(0)
            for x in following_in_iteration(op):
                if p not in self.parts(x):
                    continue
                targets = list(self._users.get(id(x), []))
                for root in self._written_roots(x):
                    targets += self._buffer_readers.get(id(root), [])
                for u in targets:
                    budget -= 1
                    for q in self.parts(u):
                        if q in self.parts(x):
                            continue
                        step = path + [x, u]
                        if accept(u, q):
                            return step
                        if (id(u), q) not in seen:
                            seen.add((id(u), q))
                            frontier.append((u, q, step))
        return None
