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
from . import limits
from .ir.model import Operation
from .session import Selection

_READERS = {"ttng.tc_gen5_mma": (0, 1), "ttng.tc_gen5_mma_scaled": (0, 1), "ttng.warp_group_dot": (0, 1),
            "tt.dot": (0, 1), "ttg.local_load": (0,), "ttng.async_tma_copy_local_to_global": (1,)}
ARRIVE_ROLES = frozenset({Role.ARRIVE, Role.EXPECT, Role.TMA_ARRIVE, Role.MMA_ARRIVE, Role.COMMIT, Role.RELEASE,
                          Role.PUT_EXIT, Role.GET_EXIT})
WAIT_ROLES = frozenset({Role.WAIT, Role.ACQUIRE, Role.PUT_ENTER, Role.GET_ENTER})


class Analysis:
    """Facts and verdicts of one selection."""

    def __init__(self, sel: Selection):
        self.sel = sel

    @classmethod
    def of(cls, sel: Selection) -> "Analysis":
        """The selection's one `Analysis`: the report's sections and its `check` look at the same
        selection, so they share one fact build (each used to make its own)."""
        shared = sel.__dict__.get("_analysis")
        if shared is None:
            shared = sel.__dict__["_analysis"] = cls(sel)
        return shared

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
        facts = collect_barriers(self.ops, self.tracer, self.partitions)
        limits.check_barrier_slots(facts, self.sel.unit.path)
        return facts

    @cached_property
    def buffers(self) -> BufferFacts:
        return buffer_facts(self.sel.ir, self.ops, self.partitions, self.tracer)

    @cached_property
    def ssa_problems(self):
        """Duplicate definitions, uses before definition and undefined values (`ir.ssa`)."""
        from .ir.ssa import ssa_problems

        return ssa_problems(self.sel.ir)

    @cached_property
    def unresolved_lines(self) -> set[int]:
        """Lines of operations that depend on a value with an SSA problem: no verdict may rest
        on them (`analyses.verdicts.demote_unresolved`)."""
        from .ir.ssa import tainted_lines

        return tainted_lines(self.sel.ir, self.ssa_problems)

    @cached_property
    def num_ctas(self) -> int:
        """CTAs per cluster: `"ttg.num-ctas"`, or the cluster shape (`"ttg.cluster-dim-x/y/z"`)
        when it is larger (TLX 2-CTA kernels launch with `ctas_per_cga=(2,1,1)` and keep
        num-ctas = 1); above 1, peer CTAs share barriers and TMA bytes."""
        for top in self.sel.ir.operations:
            if top.name == "builtin.module":
                n = top.attr("ttg.num-ctas")
                n = n if isinstance(n, int) and not isinstance(n, bool) else 1
                dims = 1
                for axis in "xyz":
                    d = top.attr(f"ttg.cluster-dim-{axis}")
                    if isinstance(d, int) and not isinstance(d, bool) and d > 0:
                        dims *= d
                return max(n, dims)
        return 1

    def partition_name(self, op: Operation) -> str | None:
        p = self.partitions.primary(op)
        return p.name if p is not None else None

    @cached_property
    def _ops_by_line(self) -> dict[int, Operation]:
        out: dict[int, Operation] = {}
        for op in self.ops:
            out.setdefault(op.line, op)
        return out

    def arrival_gated(self, line: int, waiter: str, wait_op: Operation | None = None) -> bool:
        """Is the arrival written at `line` held back by the waiter's progress? It is when it is
        preceded, in its iteration, by a wait on a barrier that partition `waiter` arrives on
        after `wait_op` (the backward edge that keeps an arriver at most one phase ahead). A wait
        on something the waiter signalled *before* `wait_op` does not bound the arrival
        relative to it."""
        from .analyses.program.order import following_in_iteration, loop_depth, preceding_in_iteration

        op = self._ops_by_line.get(line)
        if op is None:
            return True
        releases = self._releases_of_data_signalled_by(op, waiter)
        if releases:
            # The arrival fills a buffer the waiter reads: what must hold it back is the waiter's
            # release of that buffer, not any earlier signal of the waiter.
            return any(u.role in WAIT_ROLES and b.alloc is not None and id(b.alloc) in releases
                       for prev in preceding_in_iteration(op) for b, u in self.barriers.uses_at(prev))
        if wait_op is not None:
            later = following_in_iteration(wait_op, loop_depth(wait_op))
            signalled = {id(b.alloc) for o in later for b, u in self.barriers.uses_at(o)
                         if u.role in ARRIVE_ROLES and b.alloc is not None}
        else:
            signalled = {k for k, names in self.arrivers.items() if waiter in names}
        for prev in preceding_in_iteration(op):
            for b, u in self.barriers.uses_at(prev):
                if u.role in WAIT_ROLES and b.alloc is not None and id(b.alloc) in signalled:
                    return True
        return False

    def _releases_of_data_signalled_by(self, op: Operation, reader: str) -> set[int]:
        """Barriers (allocation ids) that partition `reader` arrives on after reading a buffer
        that `op` fills by TMA (a copy, or the copies that follow an expect on its barrier)."""
        from .analyses.program.order import following_in_iteration, loop_depth

        copies: list[Operation] = []
        if op.name in ("ttng.async_tma_copy_global_to_local", "ttng.async_tma_gather"):
            copies = [op]
        elif op.name == "ttng.barrier_expect" and op.block is not None:
            ops = op.block.operations
            bar = op.operands[0] if op.operands else None
            for later in ops[ops.index(op) + 1:]:
                if later.name == "ttng.barrier_expect" and later.operands[:1] == [bar]:
                    break
                if later.name == "ttng.async_tma_copy_global_to_local" and bar in later.operands:
                    copies.append(later)
        roots = set()
        for c in copies:
            pos = c.positional
            if len(pos) > 1:
                t = self.tracer.trace(pos[1], c)
                if t.resolved:
                    roots.add(t.key)
        if not roots:
            return set()
        out: set[int] = set()
        for r in self.ops:
            if self.partition_name(r) != reader or r.name not in _READERS:
                continue
            pos = r.positional
            if not any(k < len(pos) and self.tracer.trace(pos[k], r).key in roots for k in _READERS[r.name]):
                continue
            depth = loop_depth(r)
            # The read's own iteration (or, before any loop, what follows at the same level):
            # later loops are later uses, and their releases say nothing about this one.
            for f in following_in_iteration(r):
                if loop_depth(f) > depth:
                    continue
                for b, u in self.barriers.uses_at(f):
                    if u.role in ARRIVE_ROLES and b.alloc is not None:
                        out.add(id(b.alloc))
        return out

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
        # A peer CTA's arrivals come through `map_to_remote_buffer` (the same allocation in the
        # CTA the rank names): the partition taking that view arrives on this barrier too. The
        # barrier facts keep such uses apart from the CTA's own (`BarrierFacts.remote`).
        for op in self.ops:
            if op.name == "ttng.map_to_remote_buffer" and op.operands:
                t = self.tracer.trace(op.operands[0], op)
                if t.root is not None:
                    out.setdefault(id(t.root), set()).add(self.partition_name(op) or "main")
        return out
