"""`phases`: report section 3, index and phase analysis, one block per logical barrier.

The text form follows the skill's Section 3 block (Barrier / Depth / Index / Phase / Merged /
Stagger), extended with what a reader needs to check a hang by hand: each wait's slot and phase
formula with the parity it polls at its first uses, the counter behind them, and what every
arrive site contributes. The JSON form carries the same facts plus each formula's machine form
(the expression tree of `analyses.symbolic`), so scripts need not parse the readable formulas.
"""

from __future__ import annotations

from typing import Any, Optional

from pydantic import ConfigDict, Field

from ..analyses.structure.phase_model import (
    ArrivePhase,
    BarrierPhases,
    PhaseReport,
    Sample,
    WaitPhase,
    depth_word,
    flip_period,
)
from ..analyses.structure.phases import phase_report
from ..analyses.symbolic import SymbolicValue, render, to_json
from ..analysis import Analysis
from ..render.console import print_lines
from ..schemas import InputRef, _Model
from ..session import Selection


OUTSIDE = "outside partitions"


class CounterDoc(_Model):
    name: str
    kind: str = Field(description="additive | wrap | toggle")
    description: str = Field(description="where it starts and which loops advance it")
    root_loop: int = Field(description="line of the outermost loop carrying it")


class FormulaDoc(_Model):
    formula: str = Field(description="readable normalized formula")
    expr: dict[str, Any] = Field(description="machine form: the expression tree")
    constant: Optional[int] = Field(None, description="its value when the formula is a constant")
    counters: list[CounterDoc] = []
    unknowns: list[str] = Field([], description="unknown(<op> at line N) leaves it depends on; empty when resolved")
    verified: bool = Field(True, description="the normalized form was checked against the traced one by evaluation")


class SampleDoc(_Model):
    i: int = Field(description="use number of the formula's counter, from its start")
    n: dict[str, int] = Field(description="counter values bound for this sample")
    slot: Optional[int]
    parity: Optional[int]


class AdvanceDoc(_Model):
    loop: int = Field(description="line of the loop")
    level: str = Field(description="inner | outer")
    amount: Optional[int] = Field(None, description="step per iteration; null for a loop variable read directly")
    condition: Optional[str] = None


class OffsetDoc(_Model):
    counter: str
    offset: int
    modulus: int
    lines: list[int] = []


class WaitDoc(_Model):
    line: int
    op: str
    role: str
    partition: Optional[str]
    slot: Optional[FormulaDoc] = Field(description="slot index formula; null for named barriers")
    phase: Optional[FormulaDoc] = Field(description="parity formula; null for named barriers")
    cadence: str = Field(description="inner | outer | constant | implicit (no stage/phase operands) | none (named)")
    advanced_by: list[AdvanceDoc] = []
    offset: Optional[OffsetDoc] = None
    side: Optional[str] = Field(None, description="producer: first use passes on a fresh slot (pre-inverted); "
                                                  "consumer: first use blocks until the slot completes")
    predicate: Optional[str] = None
    samples: list[SampleDoc] = []
    samples_note: Optional[str] = None


class ExpectDoc(_Model):
    line: int
    declared: Optional[int]
    delivered: Optional[int]
    status: str = Field(description="matched | mismatched | unknown")
    copy_lines: list[int] = []


class ArriveDoc(_Model):
    line: int
    op: str
    role: str
    mechanism: str
    partition: Optional[str]
    slot: Optional[FormulaDoc] = None
    cadence: str
    advanced_by: list[AdvanceDoc] = []
    offset: Optional[OffsetDoc] = None
    arrivals: Optional[int] = Field(None, description="arrivals towards the init count (0: TMA bytes only)")
    init_count: Optional[int] = None
    tx_bytes: Optional[int] = Field(None, description="bytes expected (barrier_expect) or delivered (TMA copy)")
    expect: Optional[ExpectDoc] = None
    predicate: Optional[str] = None
    contributes: str


class DataDoc(_Model):
    name: str
    shape: str
    space: Optional[str] = None
    buffer_id: Optional[int] = None


class MergedDoc(_Model):
    members: list[dict[str, Any]] = Field(description="[{name, bytes}] the buffers the barrier's TMA copies fill")
    expect_bytes: list[int]
    delivered: Optional[int]
    status: str
    expect_lines: list[int]


class BarrierDoc(_Model):
    id: str
    kind: str
    name: str
    line: int
    loc_name: Optional[str] = None
    depth: Optional[int]
    init_counts: list[int] = []
    mechanisms: list[str] = []
    cadence: str = Field(description="inner | outer | constant | mixed | implicit | none")
    cadence_lines: dict[str, list[int]] = {}
    constant_phase: bool
    data: list[DataDoc] = []
    buffer_ids: list[int] = []
    merged: Optional[MergedDoc] = None
    offsets: list[OffsetDoc] = Field([], description="every (counter + offset) % modulus slot form the uses take")
    stagger: list[OffsetDoc] = Field([], description="offsets of counters used at more than one offset on this barrier")
    waits: list[WaitDoc]
    arrives: list[ArriveDoc]
    notes: list[str] = []


class StaggerMemberDoc(_Model):
    barrier: str
    offsets: list[OffsetDoc]


class StaggerDoc(_Model):
    buffer_id: int
    staggered: bool
    barriers: list[StaggerMemberDoc]


class PhasesSummary(_Model):
    barriers: int
    waits: int
    wait_barrier_ops: int = Field(description="waits that are ttng.wait_barrier")
    resolved: int = Field(description="ttng.wait_barrier waits whose slot and phase have no unknown leaf")
    unresolved: int


class PhasesDoc(_Model):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")
    schema_: str = Field("barrier-viz/phases/v1", alias="schema")
    input: InputRef
    summary: PhasesSummary
    barriers: list[BarrierDoc]
    stagger_groups: list[StaggerDoc] = []
    warnings: list[str] = []


# -- building ---------------------------------------------------------------------------------
def phases_document(sel: Selection, *, warnings: list[str] | None = None, analysis: Analysis | None = None) -> PhasesDoc:
    report = phase_report(analysis or Analysis.of(sel))
    return phases_doc_from_report(report, InputRef(**sel.input_ref()), warnings or [])


def phases_doc_from_report(report: PhaseReport, input_ref: InputRef, warnings: list[str]) -> PhasesDoc:
    waits = list(report.waits())
    wb = [w for w in waits if w.use.op.name == "ttng.wait_barrier"]
    resolved = sum(1 for w in wb if w.resolved)
    return PhasesDoc(
        input=input_ref,
        summary=PhasesSummary(barriers=len(report.barriers), waits=len(waits), wait_barrier_ops=len(wb),
                              resolved=resolved, unresolved=len(wb) - resolved),
        barriers=[_barrier_doc(b) for b in report.barriers],
        stagger_groups=[StaggerDoc(buffer_id=g.buffer_id, staggered=g.staggered,
                                   barriers=[StaggerMemberDoc(barrier=bid, offsets=[_offset_doc(o) for o in offs])
                                             for bid, offs in g.members])
                        for g in report.stagger_groups],
        warnings=warnings,
    )


def _formula(v: SymbolicValue | None) -> FormulaDoc | None:
    if v is None:
        return None
    return FormulaDoc(formula=v.formula, expr=to_json(v.expr), constant=v.constant,
                      counters=[CounterDoc(name=c.name, kind=c.kind, description=c.describe(), root_loop=c.root_loop)
                                for c in v.counters],
                      unknowns=[render(u) for u in v.unknowns], verified=v.verified)


def _offset_doc(o, lines: tuple[int, ...] = ()) -> OffsetDoc:
    return OffsetDoc(counter=o.counter, offset=o.offset, modulus=o.modulus, lines=list(lines))


def _advances(use) -> list[AdvanceDoc]:
    return [AdvanceDoc(loop=a.loop, level=a.level, amount=a.amount, condition=a.condition) for a in use.advances]


def _wait_doc(w: WaitPhase) -> WaitDoc:
    u = w.use
    return WaitDoc(line=u.line, op=u.op.name, role=u.role.value, partition=u.partition, slot=_formula(w.slot),
                   phase=_formula(w.phase), cadence=w.cadence, advanced_by=_advances(w),
                   offset=_offset_doc(w.offset) if w.offset else None, side=w.side, predicate=u.predicate,
                   samples=[_sample_doc(s) for s in w.samples], samples_note=w.samples_note)


def _sample_doc(s: Sample) -> SampleDoc:
    return SampleDoc(i=s.i, n=dict(s.n), slot=s.slot, parity=s.parity)


def _arrive_doc(a: ArrivePhase) -> ArriveDoc:
    u = a.use
    expect = None
    if a.expect is not None:
        e = a.expect
        expect = ExpectDoc(line=e.line, declared=e.declared, delivered=e.delivered, status=e.status,
                           copy_lines=[c.line for c in e.copies])
    return ArriveDoc(line=u.line, op=u.op.name, role=u.role.value, mechanism=u.mechanism.value, partition=u.partition,
                     slot=_formula(a.slot), cadence=a.cadence, advanced_by=_advances(a),
                     offset=_offset_doc(a.offset) if a.offset else None, arrivals=a.arrivals, init_count=a.init_count,
                     tx_bytes=a.tx_bytes, expect=expect, predicate=u.predicate, contributes=a.contributes)


def _barrier_doc(bp: BarrierPhases) -> BarrierDoc:
    b = bp.barrier
    merged = None
    if bp.merged is not None:
        m = bp.merged
        merged = MergedDoc(members=[{"name": n, "bytes": nb} for n, nb in m.members], expect_bytes=list(m.expect_bytes),
                           delivered=m.delivered, status=m.status, expect_lines=list(m.expect_lines))
    return BarrierDoc(
        id=b.id, kind=b.kind.value, name=b.name, line=b.line, loc_name=b.loc_name, depth=bp.depth,
        init_counts=list(b.init_counts), mechanisms=[m.value for m in b.mechanisms], cadence=bp.cadence,
        cadence_lines={k: list(v) for k, v in bp.cadence_lines.items()}, constant_phase=bp.constant_phase,
        data=[DataDoc(name=d.name, shape=d.shape, space=d.space, buffer_id=d.buffer_id) for d in bp.data],
        buffer_ids=list(bp.buffer_ids), merged=merged,
        offsets=[_offset_doc(o, lines) for o, lines in bp.offsets],
        stagger=[_offset_doc(o, lines) for o, lines in bp.stagger],
        waits=[_wait_doc(w) for w in bp.waits], arrives=[_arrive_doc(a) for a in bp.arrives], notes=list(bp.notes),
    )


# -- text ---------------------------------------------------------------------------------------
def render_phases_text(doc: PhasesDoc) -> None:
    """Plain lines; only a line wider than the terminal (COLUMNS) is wrapped, between words, so
    sample columns stay aligned."""
    print_lines(phases_text_lines(doc))


def phases_text_lines(doc: PhasesDoc) -> list[str]:
    """The Section 3 report as lines (also used by the agent and the report)."""
    s = doc.summary
    head = f"{doc.input.path} [unit {doc.input.unit_index}: {doc.input.unit}]" + (f" @{doc.input.function}" if doc.input.function else "")
    lines = [head, "", "Index and Phase Analysis", "========================",
             f"{s.barriers} barrier(s); {s.wait_barrier_ops} wait_barrier(s), {s.resolved} with slot and phase resolved"
             + (f", {s.unresolved} NOT resolved" if s.unresolved else "")]
    for b in doc.barriers:
        lines.append("")
        lines.extend(_block(b))
    staggered = [g for g in doc.stagger_groups if g.staggered]
    if staggered:
        lines += ["", "Stagger across barriers sharing a buffer.id:"]
        for g in staggered:
            parts = []
            for m in g.barriers:
                offs = ", ".join(_slot_form(o) for o in m.offsets) or "no counter offset"
                parts.append(f"{m.barrier}: {offs}")
            lines.append(f"  buffer.id = {g.buffer_id}: " + "; ".join(parts))
    return lines


def _block(b: BarrierDoc) -> list[str]:
    lines = [f"Barrier: {_title(b)}"]
    init = ", ".join(map(str, b.init_counts)) or "?"
    mech = "+".join(b.mechanisms) or "none"
    if b.kind == "named":
        lines.append(f"  Kind:    named barrier (hardware, no slots or phases); mechanism {mech}")
    else:
        depth = f"{b.depth} ({depth_word(b.depth)}{', no pipelining' if b.depth == 1 else ''})" if b.depth else "?"
        count = f"; init count {init}" if b.kind == "mbarrier" else ""
        lines.append(f"  Depth:   {depth}{count}; mechanism {mech}")
        lines.append(f"  Cadence: {_cadence_text(b)}")
        counters: dict[str, str] = {}
        for f in [w.slot for w in b.waits] + [w.phase for w in b.waits] + [a.slot for a in b.arrives]:
            for c in (f.counters if f is not None else []):
                counters.setdefault(c.description, c.description)  # names repeat across partitions
        for desc in counters.values():
            lines.append(f"  Counter: {desc}")
        lines.extend(_formula_lines("Index", [(w, w.slot) for w in b.waits]))
        lines.extend(_formula_lines("Phase", [(w, w.phase) for w in b.waits], phase=True))
    if b.merged is not None:
        m = b.merged
        parts = " + ".join(f"{x['name']} {x['bytes'] if x['bytes'] is not None else '?'}" for x in m.members)
        size = "/".join(map(str, m.expect_bytes)) or "?"
        lines.append(f"  Merged:  barrier_expect size = {size} ({parts}) -> {m.status}")
    if b.stagger:
        offs = "; ".join(f"{_slot_form(o)} at line{'s' if len(o.lines) > 1 else ''} {', '.join(map(str, o.lines))}"
                         for o in b.stagger)
        lines.append(f"  Stagger: {offs}")
    if b.waits:
        lines.append("  Waits:")
        shown: dict[tuple, int] = {}
        for w in b.waits:
            lines.extend(_wait_lines(w, shown))
    if b.arrives:
        lines.append("  Arrives:")
        for a in b.arrives:
            slot = f" slot {a.slot.formula}" if a.slot is not None else ""
            lines.append(f"    line {a.line} {a.partition or OUTSIDE} {_short(a.op)} [{a.mechanism}]{slot}: {a.contributes}")
    for n in b.notes:
        lines.append(f"  Note:    {n}")
    return lines


def _title(b: BarrierDoc) -> str:
    kind = {"mbarrier": "mbarrier", "named": "named barrier", "aref": "aref", "nvws_token": "NVWS token"}.get(b.kind, b.kind)
    text = f"{kind} {b.id}" + (f" \"{b.loc_name}\"" if b.loc_name else "")
    if b.data:
        spaces = {d.space for d in b.data if d.space}
        space = (spaces.pop().upper() + " ") if len(spaces) == 1 else ""
        names = ", ".join(f"{d.name} [{d.shape}]" for d in b.data)
        text += f" for {space}buffer{'s' if len(b.data) > 1 else ''} {names}"
    if b.buffer_ids:
        text += f" (buffer.id = {', '.join(map(str, b.buffer_ids))}{', merged' if b.merged else ''})"
    elif b.merged:
        text += " (merged)"
    return text


def _cadence_text(b: BarrierDoc) -> str:
    loops: dict[int, str] = {}
    for u in [*b.waits, *b.arrives]:
        for a in u.advanced_by:
            loops.setdefault(a.loop, a.level)
    what = {"inner": "per iteration of the innermost loop", "outer": "per iteration of an outer (tile) loop",
            "constant": "no loop advances its slot or phase", "mixed": "uses disagree",
            "implicit": "no stage or phase operands: a later lowering assigns them"}.get(b.cadence, b.cadence)
    where = ", ".join(f"line {ln} ({lvl})" for ln, lvl in sorted(loops.items()))
    return f"{b.cadence} ({what})" + (f"; advanced by loops at {where}" if where else "")


def _formula_lines(label: str, items: list[tuple[WaitDoc, Optional[FormulaDoc]]], phase: bool = False) -> list[str]:
    groups: dict[str, list[WaitDoc]] = {}
    for w, f in items:
        if f is not None:
            groups.setdefault(f.formula, []).append(w)
    if not groups:
        return []
    out = []
    for formula, ws in groups.items():
        extra = ""
        if phase:
            period = flip_period(tuple(Sample(s.i, s.n, s.slot, s.parity) for s in ws[0].samples))
            if ws[0].phase is not None and ws[0].phase.constant is not None:
                extra = " (constant)"
            elif period:
                extra = f" (1-bit: flips every {period} use{'s' if period > 1 else ''})"
        if len(groups) == 1:
            out.append(f"  {label + ':':<8} {formula}{extra}")
        else:
            where = ", ".join(sorted({f"{w.partition or OUTSIDE} line {w.line}" for w in ws}))
            out.append(f"  {label} ({where}): {formula}{extra}")
    return out


def _wait_lines(w: WaitDoc, shown: dict[tuple, int]) -> list[str]:
    who = w.partition or OUTSIDE
    if w.slot is None or w.phase is None:
        return [f"    line {w.line} {who} {_short(w.op)}" + (f": {w.samples_note}" if w.samples_note else "")]
    side = {"producer": "producer side: first use passes on a fresh slot",
            "consumer": "consumer side: first use blocks until the slot completes"}.get(w.side or "", "")
    tags = [t for t in (side, f"predicate {w.predicate}" if w.predicate else "") if t]
    head = f"    line {w.line} {who}: slot {w.slot.formula}, parity {w.phase.formula}" + (f"  [{', '.join(tags)}]" if tags else "")
    out = [head]
    if w.slot.unknowns or w.phase.unknowns:
        out.append(f"      unresolved: {', '.join(w.slot.unknowns + w.phase.unknowns)}")
    key = (w.slot.formula, w.phase.formula)
    if not w.samples:
        if w.samples_note:
            out.append(f"      no samples: {w.samples_note}")
        return out
    if key in shown:
        out.append(f"      samples as line {shown[key]}")
        return out
    if w.slot.constant is not None and w.phase.constant is not None:
        return out  # the same slot and parity at every use: a table would only repeat them
    shown[key] = w.line
    width = max(2, max(len(str(s.slot)) for s in w.samples))
    out.append("      i      " + " ".join(f"{s.i:>{width}}" for s in w.samples))
    out.append("      slot   " + " ".join(f"{'?' if s.slot is None else s.slot:>{width}}" for s in w.samples))
    out.append("      parity " + " ".join(f"{'?' if s.parity is None else s.parity:>{width}}" for s in w.samples))
    if w.samples_note:
        out.append(f"      ({w.samples_note})")
    return out


def _slot_form(o: OffsetDoc) -> str:
    return f"({o.counter} + {o.offset}) % {o.modulus}" if o.offset else f"{o.counter} % {o.modulus}"


def _short(op: str) -> str:
    return op.split(".", 1)[1] if "." in op else op
