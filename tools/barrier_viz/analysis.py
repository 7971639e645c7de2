"""One `Analysis` per selected unit and function: every fact and verdict computed once, lazily.

Commands, the report, the agent's tools and the eval harness are views over this object, so a
six-tool agent session on one dump parses and traces once.
"""

from __future__ import annotations

from functools import cached_property

from .facts.barriers import BarrierFacts, Role, collect_barriers
from .facts.buffers import BufferFacts, buffer_facts
from .facts.partitions import PartitionMap, module_warps
from .facts.trace import Tracer
from .facts.values import ValueIndex
from .ir.model import Operation
from .session import Selection

ARRIVE_ROLES = frozenset({Role.ARRIVE, Role.EXPECT, Role.TMA_ARRIVE, Role.MMA_ARRIVE, Role.COMMIT, Role.RELEASE,
                          Role.PUT_EXIT, Role.GET_EXIT})
WAIT_ROLES = frozenset({Role.WAIT, Role.ACQUIRE, Role.PUT_ENTER, Role.GET_ENTER})


class Analysis:
    """Facts and verdicts of one selection."""

    def __init__(self, sel: Selection):
        self.sel = sel

    @cached_property
    def ops(self) -> list[Operation]:
        return list(self.sel.operations())

    @cached_property
    def values(self) -> ValueIndex:
        return ValueIndex(self.sel.ir)

    @cached_property
    def tracer(self) -> Tracer:
        return Tracer(self.sel.ir, self.values)

    @cached_property
    def partitions(self) -> PartitionMap:
        return PartitionMap(self.ops, module_warps(self.ops))

    @cached_property
    def barriers(self) -> BarrierFacts:
        return collect_barriers(self.ops, self.tracer, self.partitions)

    @cached_property
    def buffers(self) -> BufferFacts:
        return buffer_facts(self.sel.ir, self.ops, self.partitions, self.tracer)

    def partition_name(self, op: Operation) -> str | None:
        p = self.partitions.primary(op)
        return p.name if p is not None else None

    @cached_property
    def _ops_by_line(self) -> dict[int, Operation]:
        out: dict[int, Operation] = {}
        for op in self.ops:
            out.setdefault(op.line, op)
        return out

    def arrival_gated(self, line: int, waiter: str) -> bool:
        """Is the arrival written at `line` preceded, in its iteration, by a wait on a barrier
        that partition `waiter` arrives on? (A producer gated by its consumer's release.)"""
        from .analyses.static_checks import preceding_in_iteration

        op = self._ops_by_line.get(line)
        if op is None:
            return True
        for prev in preceding_in_iteration(op):
            for b, u in self.barriers.uses_at(prev):
                if u.role in WAIT_ROLES and b.alloc is not None and waiter in self.arrivers.get(id(b.alloc), set()):
                    return True
        return False

    @cached_property
    def arrivers(self) -> dict[int, set[str]]:
        """id(barrier allocation op) -> names of the partitions that arrive on it."""
        out: dict[int, set[str]] = {}
        for b in self.barriers.barriers:
            if b.alloc is None:
                continue
            names = out.setdefault(id(b.alloc), set())
            for u in b.uses:
                if u.role in ARRIVE_ROLES:
                    names.update(u.partitions or ((u.partition,) if u.partition else ("main",)))
        return out
