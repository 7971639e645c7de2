"""`phase.counter_restart`: a ring counter restarts in one partition while its peer carries it.

What it does
    Every wait and arrive on a ring of mbarriers indexes its slot (and polls its parity) with a
    loop counter (`analyses.symbolic`: `cnt % depth`, `(cnt / depth) & 1`, or a wrap-around
    (stage, phase) pair). For each counter it reads where the counter starts (the loop whose
    entry initialises it) and which loop advances it. When two partitions that synchronise on
    the same ring (one waits, the other arrives) advance their counters in loops at the same
    nesting depth, but one partition initialises its counter at every entry of that loop (a
    restart per segment, tile or group) while the other carries it from an enclosing loop, the
    rule reports it. It needs no trip count and no simulation, so it runs when the simulation
    stopped at a limit (a segment length loaded from memory).
    It stays silent when the restart is harmless: the loop's trip count is a constant that
    brings the counter back to the same slot and parity (a multiple of twice the ring depth),
    or the barriers are initialised again inside the enclosing loop (the ring itself restarts).

Why is this bad
    After a segment whose trip count is not a multiple of the ring depth, the restarting side
    goes back to slot 0, parity 0 while the carrying side moves on: the two disagree on which
    slot and which parity come next. The waiter polls a slot its peer did not fill, or a parity
    that already passed: it hangs, or passes on a stale phase and the engine writes into a slot
    already read (a fault or corrupted data). On the H200 the jagged column norm hung when its
    reducer restarted the ring per segment and faulted when its loader did; the MoE grouped
    GEMM hung both ways. Only launches whose every segment length is a multiple of the ring
    depth escape it.

Example
    The loader carries (idx, phase) across segments, the reducer restarts them:

        // partition0 (loader)
        scf.for %s = ... iter_args(%idx = %c0, %ph = %c0) {
          scf.for %r = %c0 to %seg_len step %c64 iter_args(%i = %idx, %p = %ph) { wait empty[%i] ... }
        }
        // default (reducer)
        scf.for %s = ... {
          scf.for %r = %c0 to %seg_len step %c64 iter_args(%i = %c0, %p = %c0) { wait ready[%i], %p ... }
        }
"""

from __future__ import annotations

from dataclasses import dataclass

from ...facts.barriers import Role
from ...ir.model import Operation
from ...ir.vocab import LOOP_OPS
from ..model.findings import Finding, Kind, Severity, finding
from ..model.kinds import KindDoc, Rule
from ..model.outcome import HANG_OR_FAULT
from ..symbolic import Const, SymbolicAnalysis
from ..program.order import loop_depth

_WAITS = (Role.WAIT, Role.ACQUIRE)
_ARRIVES = (Role.ARRIVE, Role.EXPECT, Role.TMA_ARRIVE, Role.MMA_ARRIVE, Role.COMMIT)


@dataclass(frozen=True)
class _Use:
    """How one barrier use's counter moves: advanced by the loop at `step_line` (nesting depth
    `depth` in its partition), started at the entry of the loop at `root_line`."""

    line: int
    partition: str
    waits: bool
    counter: str
    step_line: int
    root_line: int
    depth: int
    restarts: bool  # started at every entry of the advancing loop, which is itself nested
    modulus: int | None


def counter_restarts(analysis) -> list[Finding]:
    loops = {op.line: op for op in analysis.ops if op.name in LOOP_OPS}
    sym: SymbolicAnalysis | None = None
    # (restarting partition, its loop, carrying partition, its loop) -> [(barrier, restarting use, carrying use)]
    pairs: dict[tuple, list] = {}
    for b in analysis.barriers.barriers:
        if b.alloc is None or (b.slots or 0) < 2:
            continue
        if not any(u.role in _WAITS for u in b.uses) or not any(u.role in _ARRIVES for u in b.uses):
            continue
        inits = [u.op for u in b.uses if u.role is Role.INIT]
        if sym is None:
            sym = SymbolicAnalysis(analysis.sel.ir, None, analysis.values)
        uses = [x for u in b.uses if u.partition and u.role in (*_WAITS, *_ARRIVES)
                for x in [_classify(sym, u, loops)] if x is not None]
        for a in uses:
            for c in uses:
                if not (a.restarts and not c.restarts) or a.partition == c.partition or a.waits == c.waits:
                    continue  # the two sides of one hand-off: a waiter and an arriver
                if a.depth != c.depth:
                    continue
                loop = loops[a.step_line]
                enclosing = next((x for x in loop.ancestors() if x.name in LOOP_OPS), None)
                if enclosing is None or any(enclosing in i.ancestors() for i in inits) \
                        or enclosing in b.alloc.ancestors():
                    continue  # the ring itself is initialised again each time: restarting is right
                if _harmless_trips(sym, a.step_line, a.modulus or b.slots):
                    continue
                found = pairs.setdefault((a.partition, a.step_line, c.partition, c.step_line), [])
                if all(x[0] is not b for x in found):
                    found.append((b, a, c))
    return [_finding(key, found) for key, found in pairs.items()]


def _finding(key: tuple, found: list) -> Finding:
    restarting, loop, carrying, carried_in = key
    names = ", ".join(b.name for b, _, _ in found)
    depth = found[0][0].slots
    a, c = found[0][1], found[0][2]
    lines = sorted({x.line for _, a_, c_ in found for x in (a_, c_)} | {loop, carried_in})
    return finding(
        Kind.PHASE_COUNTER_RESTART, Severity.error,
        f"{restarting} restarts the counter that indexes {names} ({a.counter}, line {a.line}) at every entry of the "
        f"loop at line {loop}, while {carrying} carries its counter ({c.counter}, line {c.line}) across the iterations "
        f"of its enclosing loop (it advances in the loop at line {carried_in}): after a pass whose trip count is not a "
        f"multiple of the ring depth ({depth}) the two disagree on which slot and parity come next, so a wait polls a "
        "slot its peer did not fill or a parity that already passed (a hang, or a fault when it passes on a stale "
        "phase). This holds whatever the trip counts are, except when every pass is a multiple of the depth.",
        lines=lines, partitions=[restarting, carrying], barrier=found[0][0].name,
        evidence={"consequence": HANG_OR_FAULT, "barriers": [b.name for b, _, _ in found],
                  "restarting": {"partition": restarting, "line": a.line, "loop_line": loop},
                  "carrying": {"partition": carrying, "line": c.line, "loop_line": carried_in,
                               "from_loop_line": c.root_line},
                  "ring_depth": depth, "trip_independent": True},
        suggestion=f"Carry {restarting}'s slot index and phase through the loop at line {loop} (pass them in as "
                   f"iter_args from the enclosing loop and yield them back), as {carrying} does.")


def _classify(sym: SymbolicAnalysis, u, loops: dict[int, Operation]) -> _Use | None:
    if u.op.name == "ttng.wait_barrier":
        slot, _ = sym.wait(u.op)
    else:
        slot = sym.slot(u.operand, u.op)
    if slot is None or not slot.counters:
        return None
    if len(slot.counters) != 1:
        return None
    c = slot.counters[0]
    steps = [s for s in c.steps if s.amount and s.via is None]
    if len(steps) != 1:
        return None
    step_loop, root_loop = loops.get(steps[0].loop), loops.get(c.root_loop)
    if step_loop is None or root_loop is None:
        return None
    if root_loop is not step_loop and root_loop not in step_loop.ancestors():
        return None
    depth = loop_depth(step_loop)
    restarts = root_loop is step_loop and depth > 0
    return _Use(u.line, u.partition, u.role in _WAITS, c.name, step_loop.line, root_loop.line, depth, restarts,
                c.modulus)


def _harmless_trips(sym: SymbolicAnalysis, line: int, depth: int | None) -> bool:
    """A loop whose trip count is a constant multiple of twice the ring depth brings a counter
    back to slot 0, parity 0: restarting it changes nothing."""
    info = sym.loop(line)
    if info is None or info.kind != "for" or not all(isinstance(x, Const) for x in (info.lb, info.ub, info.step)):
        return False
    step = info.step.value
    if not step or not depth:
        return False
    trips = max(0, -(-(info.ub.value - info.lb.value) // step))
    return trips % (2 * depth) == 0


RULE = Rule("counter_restart", __name__, counter_restarts, docs=(
    KindDoc(
        Kind.PHASE_COUNTER_RESTART,
        'A ring counter restarts in one partition while its peer carries it.',
        "Reads each ring use's slot/phase counter (analyses.symbolic): where it starts and which loop advances it. Reports two partitions that synchronise on one ring at the same loop depth, one initialising its counter at every entry of that loop while the other carries it. Silent when the trip count is a constant multiple of twice the ring depth, or the ring is re-initialised.",
        'After a segment whose length is not a multiple of the ring depth the two sides disagree on the next slot and parity: the waiter polls a slot its peer did not fill or a parity that already passed (a hang, or a stale phase and a fault / corrupted data). The H200 showed both.',
        '// loader carries (idx, phase) across segments, the reducer restarts them\nscf.for %r = %c0 to %seg_len step %c64 iter_args(%i = %c0, %p = %c0) { ttng.wait_barrier %ready[%i], %p ... }',
        'Carry the counter across segments in both partitions (or restart it in both).',
        (Severity.error,), 'An error; the outcome depends on timing (hang, or a fault / corruption if a wait passes early).'),
))
