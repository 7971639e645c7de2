"""Per-barrier index and phase analysis (report section 3).

The question behind a hang is "which wait polls a phase that never comes". Section 3 of the
skill answers the first half of it for every logical barrier: how many slots it has, which
loop advances the counter its slot and phase come from (the *cadence*), the slot and phase of
every wait as a formula of that counter, the parity each wait polls at its first few uses, and
what every arrive site contributes towards completing a phase. The deadlock verdicts
(`analyses.verdicts`) reason over the same facts; this module makes them readable and checkable.

Sources, so nothing here re-derives what other modules already know:

* the logical barriers and their uses: `Analysis.barriers` (facts/barriers.py);
* slot and phase formulas: `analyses.symbolic` (index = `cnt % N`, phase = `((cnt / N) & 1) ^ k`,
  upstream wrap pairs, partition-local delayed phases), evaluated by its `evaluate`;
* the data a barrier protects: the dependency graph's edges (`analyses.structure.graph`), which read it
  from the accesses around each arrive and wait;
* merged barriers and expect sizes: `Analysis.buffers` (facts/buffers.py).

**Cadence.** A use's cadence is the level of the deepest loop that advances a counter its slot or
phase reads: the per-iteration step of a leaf loop nested in another loop is *inner*; a step of a
loop that contains other loops is *outer* (per tile). A loop that neither contains nor sits in
another loop is *outer* when the function runs a loop nest somewhere (a persistent kernel: such
loops are the partitions' tile loops) and *inner* otherwise (a plain k/KV loop). Nothing
advancing the formula makes it *constant*. A barrier whose uses disagree is *mixed*: a
same-cadence wait on an outer-cadence barrier deadlocks rather than races (skill, column-packed
TMEM aliasing, point 3).

**Samples.** For every wait, slot and parity at i = 0 .. 2*depth+1, where i counts the uses of the
formula's counter from its start: an additive counter's value is `init + i*step` (its constant
init and the step of the deepest loop advancing it); a wrap or toggle counter's `n` is i. The
first sample tells the wait's side: parity 1 on a fresh slot passes at once (the pre-inverted
producer acquire, ir-semantics 4.4), parity 0 blocks until the slot's first completion (the
consumer). A formula still written in loop variables the tool could not turn into a counter is
sampled by running the IR's own recurrences (`SymbolicAnalysis.simulate`: i = iteration of the
innermost loop around the wait, enclosing loops at their first iteration); one that needs a
kernel input or an unknown trip count gets no samples, and `samples_note` says why.

**Offsets.** A slot of the form `(cnt + k) % N` has offset k. Waits (or arrives) of one barrier
at several offsets of one counter are *stagger* (data-partitioned operands, or a use one
iteration ahead); barriers whose data share a `buffer.id` are grouped so their offsets can be
compared. An arrive indexing the slot ahead of the waits is the partition-local "wait for the
previous MMA" pattern (ir-semantics 5.4) and gets a note, not a stagger entry.

The results (what a report row holds) live in `phase_model`; this module builds them.
"""

from __future__ import annotations

from typing import Iterable

from ...analysis import ARRIVE_ROLES, WAIT_ROLES
from ...facts.barriers import Barrier, BarrierKind, BarrierUse, Mechanism, Role, barrier_operands
from ...facts.buffers import ExpectCheck, MergedBarrier
from ...ir.model import Operation
from ...ir.vocab import LOOP_OPS
from ..symbolic import (BinOp, Cast, Const, Counter, EvalError, Expr, SymbolicAnalysis, SymbolicValue, Unknown, Var,
                        evaluate, leaves, simplify)
from .phase_model import (Advance, ArrivePhase, BarrierPhases, CONSTANT, DataItem, IMPLICIT, INNER, MIXED, Merged,
                          NONE, OUTER, Offset, PhaseReport, Sample, StaggerGroup, WAIT_BARRIER, WaitPhase,
                          _CONSUMER_ROLES, _PRODUCER_ROLES, _STILL)


# -- building -----------------------------------------------------------------------------------
def phase_report(analysis, symbolic: SymbolicAnalysis | None = None, *, with_data: bool = True) -> PhaseReport:
    """Section 3 facts of one `Analysis`. `with_data=False` skips the dependency graph (the
    data names in the headers), which is the slowest part on large kernels."""
    return _Builder(analysis, symbolic, with_data).run()


class _Builder:
    def __init__(self, analysis, symbolic: SymbolicAnalysis | None, with_data: bool):
        self.a = analysis
        self.sym = symbolic or SymbolicAnalysis(analysis.sel.ir, None, analysis.values)
        self.with_data = with_data
        self.levels = _loop_levels(analysis.ops)
        self.parents = {op.line: next((a.line for a in op.ancestors() if a.name in LOOP_OPS), None)
                        for op in analysis.ops if op.name in LOOP_OPS}

    def run(self) -> PhaseReport:
        data = self._data() if self.with_data else {}
        expects = {id(e.op): e for e in self.a.buffers.expects}
        covering = {id(c.op): e for e in self.a.buffers.expects for c in e.copies}
        merged = list(self.a.buffers.merged_barriers)
        labels = {m.name: m.label for g in self.a.buffers.groups for m in g.members}
        out = []
        for b in self.a.barriers.barriers:
            waits = tuple(self._wait(b, u) for u in b.uses if u.role in WAIT_ROLES)
            arrives = tuple(self._arrive(b, u, expects, covering) for u in b.uses if u.role in ARRIVE_ROLES)
            if not waits and not arrives:
                continue
            out.append(self._barrier(b, waits, arrives, data.get(b.id, ()), merged, labels))
        return PhaseReport(tuple(out), _stagger_groups(out))

    # -- per barrier ------------------------------------------------------------------------
    def _barrier(self, b: Barrier, waits: tuple[WaitPhase, ...], arrives: tuple[ArrivePhase, ...],
                 data: tuple[DataItem, ...], merged: list[MergedBarrier], labels: dict[str, str]) -> BarrierPhases:
        by_level: dict[str, list[int]] = {}
        for use in (*waits, *arrives):
            by_level.setdefault(use.cadence, []).append(use.use.line)
        moving = {lvl for lvl in by_level if lvl not in _STILL}
        if moving:
            cadence = moving.pop() if len(moving) == 1 else MIXED
        else:
            cadence = next((c for c in (CONSTANT, IMPLICIT, NONE) if c in by_level), CONSTANT)
        phases = [w.phase for w in waits if w.phase is not None]
        constant_phase = bool(phases) and all(p.constant is not None for p in phases)
        offsets: dict[Offset, list[int]] = {}
        for use in (*waits, *arrives):
            if use.offset is not None:
                offsets.setdefault(use.offset, []).append(use.use.line)
        notes: list[str] = []
        if cadence == MIXED:
            parts = "; ".join(f"{lvl}: lines {', '.join(map(str, sorted(set(ls))))}" for lvl, ls in sorted(by_level.items()))
            notes.append(f"uses disagree on cadence ({parts}): a wait at one loop level on a barrier "
                         f"completed at another polls the wrong parity")
        for w in waits:
            if w.phase is not None and w.phase.constant is not None and _loop_depth(w.use.op) > 0:
                notes.append(f"wait at line {w.use.line} polls the constant parity {w.phase.constant & 1} inside a loop: "
                             f"right only if every pass completes an even number of phases on its slot (ir-semantics 7.3)")
        wait_offs = {(w.offset.key, w.offset.offset) for w in waits if w.offset is not None}
        for a in arrives:
            o = a.offset
            if o is None or not any(k == o.key for k, _ in wait_offs) or (o.key, o.offset) in wait_offs:
                continue
            lead = min((o.offset - off) % o.modulus for k, off in wait_offs if k == o.key)
            notes.append(f"the arrive at line {a.use.line} indexes the slot {lead} ahead of the waits on the same "
                         f"counter: each wait polls the slot an earlier arrival completed (ir-semantics 5.4)")
        unresolved = [w.use.line for w in waits if w.slot is not None and not w.resolved]
        if unresolved:
            notes.append(f"slot or phase not fully traced at line(s) {', '.join(map(str, unresolved))}")
        return BarrierPhases(
            barrier=b,
            depth=b.slots,
            cadence=cadence,
            cadence_lines={k: tuple(sorted(set(v))) for k, v in sorted(by_level.items())},
            constant_phase=constant_phase,
            data=data,
            merged=_merged(b, merged, self.a.buffers.expects, labels),
            offsets=tuple((o, tuple(sorted(set(ls)))) for o, ls in sorted(offsets.items(), key=lambda kv: (kv[0].counter, kv[0].offset))),
            waits=waits,
            arrives=arrives,
            notes=tuple(notes),
        )

    # -- per use ----------------------------------------------------------------------------
    def _operands(self, u: BarrierUse) -> tuple[str | None, str | None]:
        """(stage, phase) operands written on a token / aref op for this use."""
        for r in barrier_operands(u.op):
            if r.operand == u.operand and r.role is u.role:
                return r.stage, r.phase
        return None, None

    def _slot_phase(self, b: Barrier, u: BarrierUse) -> tuple[SymbolicValue | None, SymbolicValue | None]:
        if b.kind is BarrierKind.NAMED:
            return None, None
        if u.op.name == WAIT_BARRIER:
            return self.sym.wait(u.op)
        stage, phase = self._operands(u)
        if b.kind in (BarrierKind.AREF, BarrierKind.NVWS_TOKEN):
            slot = self.sym.value(stage, u.op) if stage else None
        else:
            slot = self.sym.slot(u.operand, u.op)
        return slot, (self.sym.value(phase, u.op) if phase else None)

    def _wait(self, b: Barrier, u: BarrierUse) -> WaitPhase:
        slot, phase = self._slot_phase(b, u)
        values = [v for v in (slot, phase) if v is not None]
        advances = self._advances(values)
        cadence = _deepest(advances) if values else _still(b)
        samples, note = self._samples(b, u, slot, phase, b.slots)
        side = None
        if u.op.name != WAIT_BARRIER:
            # Token and aref waits: the lowering decides the parity, the role decides the side.
            side = "producer" if u.role in _PRODUCER_ROLES else ("consumer" if u.role in _CONSUMER_ROLES else None)
        elif samples and samples[0].parity is not None:
            side = "producer" if samples[0].parity == 1 else "consumer"
        return WaitPhase(u, slot, phase, cadence, advances, samples, note, side,
                         _offset(slot.expr) if slot is not None else None)

    def _arrive(self, b: Barrier, u: BarrierUse, expects: dict[int, ExpectCheck],
                covering: dict[int, ExpectCheck]) -> ArrivePhase:
        slot, _ = self._slot_phase(b, u)
        advances = self._advances([slot] if slot is not None else [])
        init = b.init_counts[0] if len(b.init_counts) == 1 else None
        arrivals: int | None = u.count
        tx: int | None = None
        expect: ExpectCheck | None = None
        if u.role is Role.EXPECT:
            expect, tx, arrivals = expects.get(id(u.op)), u.bytes, 1
        elif u.role is Role.TMA_ARRIVE:
            expect, tx, arrivals = covering.get(id(u.op)), u.bytes, 0
            # The expect's pairing counted the copy per CTA (CGA form: one CTA's share).
            tx = next((c.bytes for c in expect.copies if c.op is u.op and c.bytes is not None), tx) if expect else tx
        elif u.role in (Role.MMA_ARRIVE, Role.COMMIT) and arrivals is None:
            arrivals = 1
        return ArrivePhase(u, slot, _deepest(advances) if slot is not None else _still(b), advances, _offset(slot.expr) if slot is not None else None,
                           arrivals, init, tx, expect, _contribution(u, arrivals, init, tx, expect))

    def _advances(self, values: list[SymbolicValue]) -> tuple[Advance, ...]:
        """The loops that move the values: counter steps with an amount, and the loops of any
        loop variable the formula still reads directly."""
        out: dict[int, Advance] = {}
        for v in values:
            for c in v.counters:
                for s in c.steps:
                    if s.amount is not None and s.amount != 0 and s.loop not in out:
                        out[s.loop] = Advance(s.loop, self._level(s.loop), s.amount, s.condition)
            for leaf in leaves(v.expr):
                if not (isinstance(leaf, Var) and leaf.kind in ("induction", "iter_arg", "loop_result")) \
                        or leaf.loop is None:
                    continue
                if leaf.kind == "induction":
                    loops = {leaf.loop}
                elif leaf.kind == "iter_arg":
                    loops = self._carried(leaf.loop, leaf.index or 0, 0) or {leaf.loop}
                else:  # a loop result passed through unchanged is its init: it moves with the loop around
                    parent = self.parents.get(leaf.loop)
                    loops = self._carried(leaf.loop, leaf.index or 0, 0) or ({parent} if parent is not None else set())
                for loop in loops:
                    if loop not in out:
                        out[loop] = Advance(loop, self._level(loop), None)
        return tuple(sorted(out.values(), key=lambda a: (self.levels.get(a.loop, (0, INNER))[0], a.loop)))

    def _carried(self, loop: int, index: int, depth: int) -> set[int]:
        """The loops that change a loop-carried value the tool did not recognise as a counter:
        the loop itself when its yield changes it, and, through nested loops whose results the
        yield passes on, every loop that changes it inside (an upstream stage carried from the
        k loop into the tile loop advances per k step, like a peeled AutoWS counter). Empty when
        every loop passes it through unchanged."""
        info = self.sym.loop(loop)
        if info is None or info.kind != "for" or index >= len(info.yields) or depth > 8:
            return {loop}  # not a for loop the tool can look into: say it may change it
        y = info.yields[index]
        out: set[int] = set()
        if not (isinstance(y, Var) and y.key == f"L{loop}.iter{index}"):
            out.add(loop)
        for leaf in leaves(y):
            if isinstance(leaf, Var) and leaf.kind == "loop_result" and leaf.loop not in (None, loop) \
                    and leaf.index is not None and self.parents.get(leaf.loop) == loop:
                out |= self._carried(leaf.loop, leaf.index, depth + 1)
        return out

    def _level(self, loop: int) -> str:
        return self.levels.get(loop, (0, INNER))[1]

    def _samples(self, b: Barrier, u: BarrierUse, slot: SymbolicValue | None, phase: SymbolicValue | None,
                 depth: int | None) -> tuple[tuple[Sample, ...], str | None]:
        if b.kind is BarrierKind.NAMED:
            return (), "named barrier: synchronizes by thread count, no slot or phase"
        if slot is None and phase is None:
            return (), "no stage or phase operand written (assigned later by the aref/token lowering)"
        if slot is None or phase is None:
            return (), f"no {'stage' if slot is None else 'phase'} operand written"
        unknown = [u for v in (slot, phase) for u in v.unknowns]
        if unknown:
            return (), f"depends on {_unknown_text(unknown[0])}"
        counters = {c.key: c for v in (slot, phase) for c in v.counters}
        free = []
        for leaf in (*leaves(slot.expr), *leaves(phase.expr)):
            if isinstance(leaf, Var) and leaf.kind != "counter":
                free.append(leaf)
            elif isinstance(leaf, Var) and leaf.key not in counters:
                free.append(leaf)
        count = 2 * max(depth or 1, 1) + 2
        if free:
            return self._simulated(u, slot, phase, count, free[0])
        starts = {k: _start(c) for k, c in counters.items()}
        out = []
        for i in range(count):
            bind = {k: s + i * st for k, (s, st) in starts.items()}
            try:
                s_val = evaluate(slot.expr, bind)
                p_val = evaluate(phase.expr, bind) & 1
            except EvalError as exc:  # a division by zero or an unbound name: say so, do not guess
                return tuple(out), str(exc)
            out.append(Sample(i, {counters[k].name: v for k, v in bind.items()}, s_val, p_val))
        note = None
        if len(counters) > 1:
            note = "several counters: each sampled as advancing once per i"
        return tuple(out), note

    def _simulated(self, u: BarrierUse, slot: SymbolicValue, phase: SymbolicValue, count: int,
                   free: Var) -> tuple[tuple[Sample, ...], str | None]:
        """Samples for a formula left in terms of loop variables: run the IR's own recurrences
        (`SymbolicAnalysis.simulate`) for iteration i of the innermost loop around the use, the
        enclosing loops at their first iteration. Kernel inputs and unknown trip counts stop it
        (nothing is guessed); the note then says what was missing."""
        what = "kernel input" if free.kind == "param" else f"{free.kind.replace('_', ' ')} of loop at line {free.loop}"
        loops = [a.line for a in u.op.ancestors() if a.name in LOOP_OPS]
        if not loops:
            return (), f"depends on {free.name} ({what})"
        out = []
        for i in range(count):
            it = {line: 0 for line in loops}
            it[loops[0]] = i
            try:
                s_val = self.sym.simulate(slot.raw, it)
                p_val = self.sym.simulate(phase.raw, it) & 1
            except EvalError as exc:
                if not out:
                    return (), f"depends on {free.name} ({what}); simulating the IR needs {exc}"
                return tuple(out), f"simulation stopped at i = {i}: {exc}"
            out.append(Sample(i, {}, s_val, p_val))
        return tuple(out), (f"simulated from the IR's recurrences: i = iteration of the loop at line {loops[0]}, "
                            f"enclosing loops at their first iteration (the formula reads {free.name}, {what})")

    # -- data -------------------------------------------------------------------------------
    def _data(self) -> dict[str, tuple[DataItem, ...]]:
        from .graph import build_graph

        out: dict[str, dict[tuple, DataItem]] = {}
        for e in build_graph(self.a).edges:
            items = out.setdefault(e.barrier, {})
            for d in e.data:
                item = DataItem(d.name, d.shape, d.space, d.buffer_id)
                items.setdefault((d.name, d.line), item)
        return {k: tuple(v.values()) for k, v in out.items()}


# -- helpers ------------------------------------------------------------------------------------
def _loop_levels(ops: Iterable[Operation]) -> dict[int, tuple[int, str]]:
    """line -> (nesting depth, level) for every loop in scope (see the module docstring)."""
    loops = [op for op in ops if op.name in LOOP_OPS]
    depth = {id(op): sum(1 for a in op.ancestors() if a.name in LOOP_OPS) for op in loops}
    parents = {id(a) for op in loops for a in op.ancestors() if a.name in LOOP_OPS}
    nest = any(depth[id(op)] > 0 for op in loops)
    out: dict[int, tuple[int, str]] = {}
    for op in loops:
        d = depth[id(op)]
        if id(op) in parents:
            level = OUTER
        elif d > 0:
            level = INNER
        else:
            level = OUTER if nest else INNER
        out[op.line] = (d, level)
    return out


def _loop_depth(op: Operation) -> int:
    return sum(1 for a in op.ancestors() if a.name in LOOP_OPS)


def _deepest(advances: tuple[Advance, ...]) -> str:
    """Advances are sorted outermost first, so the last one is the deepest loop."""
    return advances[-1].level if advances else CONSTANT


def _still(b: Barrier) -> str:
    """Cadence of a use without slot and phase operands."""
    return NONE if b.kind is BarrierKind.NAMED else IMPLICIT


def _start(c: Counter) -> tuple[int, int]:
    """(value at the counter's first use, step per use). Additive counters count from their
    constant init by the step of their deepest advancing loop; wrap/toggle `n` from 0 by 1."""
    if c.kind != "additive":
        return 0, 1
    init = simplify(c.init)
    start = init.value if isinstance(init, Const) else 0
    amounts = [s.amount for s in c.steps if s.amount is not None and s.condition is None]
    step = amounts[-1] if amounts else 1
    return start, step if step else 1


def _strip(e: Expr) -> Expr:
    while isinstance(e, Cast):
        e = e.operand
    return e


def _offset(e: Expr) -> Offset | None:
    """`(c + k) % N` or `c % N` over one counter variable `c`."""
    e = _strip(e)
    if not (isinstance(e, BinOp) and e.op in ("remu", "rems") and isinstance(e.rhs, Const) and e.rhs.value > 0):
        return None
    x = _strip(e.lhs)
    k = 0
    if isinstance(x, BinOp) and x.op == "add" and isinstance(x.rhs, Const):
        k, x = x.rhs.value, _strip(x.lhs)
    if isinstance(x, Var) and x.kind == "counter":
        return Offset(x.name, k % e.rhs.value, e.rhs.value, x.key)
    return None


def _unknown_text(u: Unknown) -> str:
    if u.source:
        return f"{u.source} ({u.reason or 'not modelled'}, line {u.line})"
    return f"unknown({u.op} at line {u.line})" + (f": {u.reason}" if u.reason else "")


def _contribution(u: BarrierUse, arrivals: int | None, init: int | None, tx: int | None,
                  expect: ExpectCheck | None) -> str:
    """One line: what this site adds towards completing the slot's current phase."""
    of = f" of {init}" if init is not None else ""
    if u.role is Role.EXPECT:
        text = f"1 arrival{of} + expects {tx if tx is not None else '?'} tx bytes"
        if expect is not None and expect.copies:
            lines = ", ".join(str(c.line) for c in expect.copies)
            text += f"; TMA copies at line(s) {lines} deliver {expect.delivered if expect.delivered is not None else '?'} ({expect.status})"
        return text
    if u.role is Role.TMA_ARRIVE:
        text = f"no arrival; delivers {tx if tx is not None else '?'} tx bytes on completion"
        if expect is not None:
            text += f" towards the {expect.declared} expected at line {expect.line}"
        else:
            text += " (no barrier_expect found before it)"
        return text
    if u.mechanism in (Mechanism.NVWS_TOKEN, Mechanism.AREF):
        side = "full (data ready)" if u.role in (Role.COMMIT, Role.PUT_EXIT) else "empty (slot free)"
        return f"signals the slot's {side} side; the lowering turns it into one arrival"
    if u.mechanism is Mechanism.NAMED_BARRIER:
        return f"arrives with {arrivals if arrivals is not None else '?'} threads"
    n = "?" if arrivals is None else str(arrivals)
    when = {
        Mechanism.MMA_BARRIER: " when the MMA and earlier tcgen05 ops finish",
        Mechanism.TCGEN05_COMMIT: " when earlier tcgen05 ops finish",
        Mechanism.ASYNC_COPY_ARRIVE: " when the thread's earlier cp.async copies finish",
        Mechanism.TMA_STORE_WAIT_ARRIVE: " when the TMA store has read shared memory",
    }.get(u.mechanism, "")
    text = f"{n} arrival{'s' if arrivals != 1 else ''}{of}{when}"
    if arrivals is not None and init is not None:
        text += " (completes the phase alone)" if arrivals >= init else f" ({init - arrivals} more needed per phase)"
    return text


def _merged(b: Barrier, merged: list[MergedBarrier], expects: Iterable[ExpectCheck],
            labels: dict[str, str]) -> Merged | None:
    found = next((m for m in merged if m.name == b.name and m.line == b.line), None)
    if found is None:
        return None
    mine = [e for e in expects if e.barrier is not None and e.barrier.name == b.name and e.barrier.line == b.line]
    per_member: dict[str, int | None] = {}
    for c in found.copies:
        if c.member is not None and c.member not in per_member:
            per_member[c.member] = c.bytes
    statuses = {e.status for e in mine}
    status = statuses.pop() if len(statuses) == 1 else ("mismatched" if "mismatched" in statuses else "unknown")
    delivered = mine[0].delivered if mine else None
    return Merged(tuple((labels.get(m, m), n) for m, n in per_member.items()),
                  tuple(sorted({e.declared for e in mine if e.declared is not None})), delivered, status,
                  tuple(e.line for e in mine))


def _stagger_groups(barriers: list[BarrierPhases]) -> tuple[StaggerGroup, ...]:
    by_id: dict[int, list[BarrierPhases]] = {}
    for b in barriers:
        for bid in b.buffer_ids:
            by_id.setdefault(bid, []).append(b)
    out = []
    for bid, group in sorted(by_id.items()):
        if len(group) < 2:
            continue
        out.append(StaggerGroup(bid, tuple((b.barrier.id, b.wait_offsets) for b in group)))
    return tuple(out)


__all__ = [
    "Advance",
    "ArrivePhase",
    "BarrierPhases",
    "DataItem",
    "Merged",
    "Offset",
    "PhaseReport",
    "Sample",
    "StaggerGroup",
    "WaitPhase",
    "depth_word",
    "flip_period",
    "phase_report",
]
