"""What an edge of the dependency graph protects, read from the accesses around its two ends
(the **Data.** paragraph of `graph`): the publish window of an arrive, the guard window of a
wait, widened tier by tier until a buffer is found, each tier named in `data_source`.
"""

from __future__ import annotations

from typing import Iterator

from ...facts.barriers import BarrierUse, Mechanism, Role
from ...ir.model import Operation
from ..program.order import following_in_iteration, preceding_in_iteration
from .graph_model import DataRef, WAITS, _Channel


_MMA_OPS = frozenset({"ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled"})
# Ops whose arrival is performed by the issuing thread in program order (publish windows end there).
_SYNC_ARRIVE_OPS = frozenset({"ttng.arrive_barrier", "ttng.barrier_expect", "nvws.producer_commit",
                              "nvws.consumer_release", "nvws.aref.put.exit", "nvws.aref.get.exit",
                              "ttng.arrive_barrier_named"})


class _DataWindows:
    """What an edge protects (the **Data.** tiers of `graph`): the publish window of each
    arrive, the guard window of each wait, and the buffers both touch."""

    def _data(self, ch: _Channel, arrives: list[BarrierUse], waits: list[BarrierUse],
              direction: str) -> tuple[tuple[DataRef, ...], str]:
        """Buffers the edge protects, by the tiers of the module docstring; the tier is returned
        as `data_source`: `ends` (publish window x guard window, wanted access kinds),
        `iteration` (guard widened to the rest of the iteration), `any-access` (any kinds),
        else one side alone (`arriver` / `waiter`) or `none`."""
        want_a, want_w = ("write", "read") if direction == "forward" else ("read", "write")
        if any(u.role is Role.TMA_ARRIVE for u in arrives):
            # the copies, not the expect's program-order window, carry the data
            arrives = [u for u in arrives if u.role is not Role.EXPECT]
        publish = [acc for u in arrives for acc in self._publish(u)]
        narrow = [acc for w in waits for acc in self._guard(w, wide=False)]
        wide = [acc for w in waits for acc in self._guard(w, wide=True)]
        published = _ordered(m for m, k in publish if k == want_a)
        tiers = (
            ("ends", published, {m for m, k in narrow if k == want_w}),
            ("iteration", published, {m for m, k in wide if k == want_w}),
            ("any-access", _ordered(m for m, _ in publish), {m for m, _ in wide}),
        )
        for name, left, right in tiers:
            both = [m for m in left if m in right]
            if both:
                return self._refs(both), name
        if direction == "forward" and published:
            return self._refs(published), "arriver"
        guarded = _ordered(m for m, k in narrow if k == want_w)
        if direction == "backward" and guarded:
            return self._refs(guarded), "waiter"
        return (), "none"

    def _refs(self, names: list[str]) -> tuple[DataRef, ...]:
        self._index()
        out = []
        for n in names:
            m = self._members.get(n)
            if m is None:
                continue
            shape = "x".join(str(d) for d in m.slot_shape) + ("x" if m.slot_shape else "") + m.dtype
            out.append(DataRef(m.label, m.name, m.line, shape, m.space, m.buffer_id))
        return tuple(out)

    def _publish(self, u: BarrierUse) -> list[tuple[str, str]]:
        """Accesses an arrive makes visible (see the module docstring)."""
        op = u.op
        if u.role in (Role.TMA_ARRIVE, Role.MMA_ARRIVE):
            return self._accesses(op)
        out: list[tuple[str, str]] = []
        if u.role is Role.COMMIT and u.mechanism is Mechanism.TCGEN05_COMMIT:
            for prev in preceding_in_iteration(op):
                if prev.name in _MMA_OPS:
                    out += self._accesses(prev)
            return out
        for prev in preceding_in_iteration(op):
            if prev.name in _SYNC_ARRIVE_OPS and prev is not op:
                break
            out += self._accesses(prev)
        return out

    def _guard(self, w: BarrierUse, wide: bool) -> list[tuple[str, str]]:
        """Accesses a wait orders, within its iteration: up to its next wait on the same barrier,
        and unless `wide`, up to the next wait once an access has been seen (waits written back
        to back all guard the access after the group). `wide` adds the ops before the wait in
        its iteration, which the next iteration runs after it."""
        out: list[tuple[str, str]] = []
        mine = self._barrier_of(w)
        for nxt in following_in_iteration(w.op):
            if nxt is w.op:
                continue
            waits = [b.id for b, u in self.a.barriers.uses_at(nxt) if u.role in WAITS]
            if waits and (mine in waits or (out and not wide)):
                break
            out += self._accesses(nxt)
        if wide:
            # a wait at the end of a loop body guards the start of the next iteration
            for prev in preceding_in_iteration(w.op):
                out += self._accesses(prev)
        return out

    def _barrier_of(self, u: BarrierUse) -> str | None:
        found = self.a.barriers.uses_at(u.op)
        return found[0][0].id if found else None

    def _accesses(self, op: Operation) -> list[tuple[str, str]]:
        self._index()
        assert self._access is not None
        return self._access.get((op.line, op.name), [])

    def _index(self) -> None:
        if self._access is not None:
            return
        self._access = {}
        for g in self.a.buffers.groups:
            for m in g.members:
                self._members[m.name] = m
            for acc in (*g.writers, *g.readers):
                self._access.setdefault((acc.line, acc.op), []).append((acc.member, acc.kind))


def _ordered(names: Iterator[str]) -> list[str]:
    return list(dict.fromkeys(names))
