"""Table 2, operand-D accumulator init (ir-semantics §7.2): per MMA accumulator, whether a
zero `tmem_store` survives beside an MMA that zeroes it itself (useD false), in which partition,
and whether barriers order it; and its findings (`race.redundant_zero_store`).
"""

from __future__ import annotations

from functools import cached_property
from typing import Iterator

from ....facts.barriers import BarrierKind, BarrierUse, Role
from ....facts.values import OpResult
from ....ir.model import BlockArgument, Operation
from ...model.findings import Finding, Kind, Severity, finding
from .common import (MMA_OPS, _ARRIVES, _TAccess, _WAITS, _after, _before, _depth, _int_attr, _is_zero_literal, _label,
                     _loops, _memory_operands, _side)
from .rows import AccumulatorRow


class _AccumulatorTable:
    """Table 2: per MMA accumulator, whether a zero `tmem_store` survives beside a self-zeroing
    MMA and whether barriers order it."""

    # -- table 2: accumulators -----------------------------------------------------------------
    def accumulator_rows(self) -> Iterator[AccumulatorRow]:
        by_root: dict[int, list[_TAccess]] = {}
        roots: dict[int, Operation] = {}
        for a in self.accesses:
            if a.op.name in MMA_OPS and a.kind == "write" and a.op.positional[2:3] and \
                    getattr(self._trace(a.op.positional[2], a.op), "root", None) is a.root:
                by_root.setdefault(id(a.root), []).append(a)
                roots[id(a.root)] = a.root
        for key in sorted(by_root, key=lambda k: roots[k].line):
            yield self._accumulator_row(roots[key], by_root[key])

    def _accumulator_row(self, root: Operation, mmas: list[_TAccess]) -> AccumulatorRow:
        states = [self.use_d_state(m.op) for m in mmas]
        self_zero = any(s in ("false", "false-first") for s in states)
        stores = [a for a in self.accesses if a.root is root and a.op.name == "ttng.tmem_store" and a.kind == "write"
                  and self._is_zero_store(a.op)]
        mparts = sorted({p for m in mmas for p in m.parts})
        sparts = sorted({p for s in stores for p in s.parts})
        same = None if not stores else set(sparts) <= set(mparts)
        outer = next((_loops(m.op)[1] for m in mmas if len(_loops(m.op)) >= 2), None)
        barriers, commits = self._accumulator_barriers(root) if self.stage != "pre-partition" else (None, None)
        condition = self._init_condition(mmas, outer) if self_zero and stores else None
        status, ok, verdict, evidence = self._accumulator_verdict(mmas, stores, self_zero, same, outer, condition)
        return AccumulatorRow(
            buffer_id=_int_attr(root, "buffer.id"), name=_label(root), line=root.line,
            type=root.result_types[0] if root.result_types else "?", mma_lines=[m.op.line for m in mmas],
            mma_partitions=mparts, use_d="/".join(dict.fromkeys(states)), self_zeroing=self_zero,
            zero_store_lines=[s.op.line for s in stores], store_partitions=sparts, same_partition=same,
            persistent_loop=outer.name if outer is not None else None,
            persistent_loop_line=outer.line if outer is not None else None,
            barriers=barriers, commits=commits, status=status, ok=ok, verdict=verdict, evidence=evidence,
            init_condition=condition)

    def _init_condition(self, mmas, outer) -> str | None:
        """When the MMA that starts the tile with useD=false runs at all in a tile (its predicate,
        the trip count of the K loop around it: `run_condition`); None when always. Where it
        does not run, nothing but the zero store initialises the accumulator."""
        from ...launch.run_condition import describe, run_condition

        first = [m for m in mmas if self.use_d_state(m.op) in ("false", "false-first")]
        conditions = [describe(run_condition(self.a, m.op, outer)) for m in first]
        if not first or any(not c for c in conditions):
            return None
        return conditions[0]

    def _is_zero_store(self, op: Operation) -> bool:
        pos = op.positional
        d = self.a.values.lookup(pos[0], op) if pos else None
        if isinstance(d, BlockArgument) and d.block is not None and d.block.region is not None:
            owner = d.block.region.parent
            if owner is not None and owner.name == "ttg.warp_specialize" and d.index < len(owner.operands):
                d = self.a.values.lookup(owner.operands[d.index], owner)
        return isinstance(d, OpResult) and d.op.name == "arith.constant" and _is_zero_literal(d.op.literals)

    def _accumulator_verdict(self, mmas, stores, self_zero, same, outer, condition=None):
        if not stores:
            if self_zero:
                return "clean", True, "✓ init via useD=false only (no explicit zero store)", []
            return "clean", True, "✓ no explicit zero store (accumulates from whatever the producer left)", []
        lines = [s.op.line for s in stores] + [m.op.line for m in mmas]
        if not self_zero:
            return "explicit_init", True, "✓ the zero store is the initializer (no MMA starts with useD=false)", lines
        if same:
            return ("redundant_same_partition", True, "✓ redundant zero store, but in the MMA's partition "
                    "(program order; no channel)", lines)
        if self.stage == "pre-partition":
            return ("redundant_pre_partition", False, "⚠ redundant cross-partition zero store: the code partitioner "
                    "must remove it (removeRedundantTmemZeroStores), else it becomes a cross-tile channel", lines)
        looped = [s for s in stores if _depth(s.op) > 0 and "main" not in s.parts]
        if outer is None or not looped:
            where = "no persistent loop" if outer is None else "the store runs once, outside the persistent loop"
            return ("redundant_single_tile", False, f"⚠ redundant cross-partition zero store ({where}: "
                    "an extra channel, no cross-tile reuse)", lines)
        return self._zero_store_ordering(looped, mmas, outer, lines, condition)

    def _zero_store_ordering(self, stores, mmas, outer, lines, condition=None):
        """A surviving zero store is harmless only if (A) the MMA of the tile waits, before its
        first write, on a forward barrier released after the store, and (B) the store waits for
        the previous tile's MMAs."""
        mma = mmas[0]
        g = mma.parts[0]
        inner = _loops(mma.op)[0] if _loops(mma.op) and _loops(mma.op)[0] is not outer else None
        pre_mma = {id(x) for x in _before(mma.op, stop=outer)}
        for s in stores:
            sp = s.parts[0]
            to_mma = self.happens_before(s.op, sp, lambda op, q, _a: q == g and id(op) in pre_mma, forward_only=True)
            start = inner if inner is not None else mma.op
            s_loops = list(reversed(_loops(s.op)))
            s_outer = s_loops[min(_depth(outer), len(s_loops)) - 1] if s_loops else None
            from_mma = self.happens_before(
                start, g, lambda op, q, _a: q == sp and s_outer is not None and s_outer in op.ancestors())
            if to_mma is None or from_mma is None:
                side = "before the tile's first MMA" if to_mma is None else "after the previous tile's MMAs"
                expected = ("store removed; init via useD=false only" if not condition else
                            f"store removed if {condition} always holds, else ordered before the tile's MMA: "
                            "without it a tile with no MMA reads uninitialised TMEM")
                return ("redundant_unordered", False, f"✗ REDUNDANT cross-partition zero store (line {s.op.line}, "
                        f"{self.plabel(sp)}) in a persistent {outer.name} (line {outer.line}); nothing orders it {side} "
                        f"in {self.plabel(g)} → cross-tile race/hang (expected: {expected})", lines)
            ev = [x for e in to_mma + from_mma for x in (e.arrive.line, e.wait.line)]
            via = "; ".join(f"{e.barrier}: line {e.arrive.line} → {e.wait.line}" for e in to_mma)
            back = "; ".join(f"{e.barrier}: line {e.arrive.line} → {e.wait.line}" for e in from_mma)
            first = next((m.op.line for m in mmas if self.use_d_state(m.op) in ("false", "false-first")), mma.op.line)
            if condition:
                dead = (f"Not a race: when {condition}, the MMA at line {first} starts the tile with useD=false and "
                        "overwrites the zeros, so the store is dead work that costs a cross-partition handshake per "
                        "tile; otherwise that MMA does not run and the zeros are the accumulator's only "
                        "initialisation, so the store is needed then (remove it only if that condition always holds, "
                        "or predicate it on the condition's negation).")
            else:
                dead = (f"Not a race: the MMA at line {first} starts each tile with useD=false and overwrites the "
                        "zeros, so the store is dead work that costs a cross-partition handshake per tile — a channel "
                        "that should not exist (remove the store).")
            return ("redundant_ordered", False, f"⚠ REDUNDANT cross-partition zero store (line {s.op.line}, "
                    f"{self.plabel(sp)}) in a persistent {outer.name} (line {outer.line}), but ordered: store → MMA via "
                    f"{via}; MMA → next store via {back}. " + dead, sorted(set(lines + ev)))
        return "clean", True, "✓", lines

    def _forward(self, op: Operation) -> bool:
        """Does this wait pair with the arrive of the same iteration (a consumer-side wait), as
        opposed to the previous one (a pre-inverted producer acquire that passes at once the
        first time)? Token/aref ops say it by their kind; an mbarrier wait by the parity it
        awaits on the first iteration (1 = passes at once = backward). Unknown counts as forward."""
        for b, u in self.a.barriers.uses_at(op):
            if u.role in (Role.ACQUIRE, Role.PUT_ENTER):
                return False
            if u.role in (Role.WAIT, Role.GET_ENTER) and b.kind is not BarrierKind.MBARRIER:
                return True
        direction = ((op.attr("constraints") or {}).get("WSBarrier") or {}).get("direction") \
            if isinstance(op.attr("constraints"), dict) else None
        if direction in ("forward", "backward"):
            return direction == "forward"
        try:
            _, phase = self.sym.wait(op)
            first = self.sym.simulate(phase.raw, {loop.line: 0 for loop in _loops(op)})
        except Exception:  # noqa: BLE001 - an unknown phase is not evidence of a backward wait
            return True
        return (first & 1) == 0

    @cached_property
    def sym(self):
        from ...symbolic import SymbolicAnalysis

        return SymbolicAnalysis(self.a.sel.ir, self.a.sel.unit.text(), self.a.values)

    def _accumulator_barriers(self, root: Operation) -> tuple[int, int]:
        """Barriers (full/empty sides counted apart) whose every arrive follows an access of the
        accumulator and whose every wait precedes one — the handshake of this accumulator — and
        how many `tc_gen5_commit`s arrive on them."""
        count, commits = 0, 0
        for b in self.a.barriers.barriers:
            sides: dict[str, tuple[list[BarrierUse], list[BarrierUse]]] = {}
            for u in b.uses:
                if u.role in _ARRIVES or u.role in _WAITS:
                    arr, wai = sides.setdefault(_side(b, u), ([], []))
                    (arr if u.role in _ARRIVES else wai).append(u)
            for arrives, waits in sides.values():
                if not arrives or not waits:
                    continue
                if all(self._touches(u.op, root, after=False) for u in arrives) and \
                        all(self._touches(u.op, root, after=True) for u in waits):
                    count += 1
                    commits += sum(1 for u in arrives if u.op.name == "ttng.tc_gen5_commit")
        return count, commits

    def _touches(self, op: Operation, root: Operation, after: bool) -> bool:
        """Is the nearest memory access after (a wait) / before (an arrive) `op` in its partition
        an access of `root`? Wraps around the enclosing loop when the iteration has none."""
        part = self.parts(op)[0]
        if not after and op.name in MMA_OPS:
            return self._accesses_root(op, root)
        seq = list(_after(op)) if after else list(_before(op))
        loops = _loops(op)
        if loops:
            body = [x for reg in loops[0].regions for top in reg.operations() for x in top.walk()]
            seq += body if after else list(reversed(body))
        for x in seq:
            if part not in self.parts(x) or not _memory_operands(x):
                continue
            return self._accesses_root(x, root)
        return False

    def _accesses_root(self, op: Operation, root: Operation) -> bool:
        """Whole-view accesses only: a packed sibling's column view is another channel."""
        for n, _ in _memory_operands(op):
            t = self._trace(n, op)
            if getattr(t, "root", None) is root and t.column_offset is None:
                return True
        return False


def _accumulator_findings(r: AccumulatorRow) -> list[Finding]:
    if r.status not in ("redundant_unordered", "redundant_ordered"):
        return []
    sev = Severity.error if r.status == "redundant_unordered" else Severity.warning
    return [finding(
        Kind.RACE_REDUNDANT_ZERO_STORE, sev, f"Accumulator {r.name} (buffer.id {r.buffer_id}): {r.verdict}",
        lines=r.evidence, partitions=r.store_partitions + r.mma_partitions, buffer_id=r.buffer_id,
        evidence={"row": r.model_dump()}, suggestion=_zero_store_suggestion(r))]


def _zero_store_suggestion(r: AccumulatorRow) -> str:
    """Remove the store, where that holds: the useD=false MMA initialises the accumulator only
    in a tile where it runs (`AccumulatorRow.init_condition`)."""
    if not r.init_condition:
        return "Remove the zero tmem_store; the MMA's useD=false on the first iteration already initializes it."
    return (f"Remove the zero tmem_store only if {r.init_condition} holds for every launch: the MMA whose useD=false "
            "initializes the accumulator runs only then, and in a tile where it does not run (e.g. a K smaller than "
            "one K block) the zeros are what the epilogue reads. Otherwise keep the store but predicate it on the "
            "negation (store zeros only in a tile with no MMA), ordered before the epilogue's read.")
