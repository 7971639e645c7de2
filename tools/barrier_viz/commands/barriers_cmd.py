"""`barriers`: report section 5, the SSA value to barrier map.

One entry per logical barrier (allocation, named-barrier id, aref or NVWS token): where it is
allocated, every SSA name that refers to it, and every use with its role, partition and line.
Operands that cannot be followed to a barrier are listed as unresolved, never dropped, so an
empty `unresolved` list is a claim the reader can rely on.
"""

from __future__ import annotations

from typing import Any, Optional

from pydantic import ConfigDict, Field

from .. import limits
from ..facts.barriers import Barrier, BarrierFacts, BarrierKind, BarrierUse, Role, collect_barriers, remote_uses
from ..facts.partitions import PartitionMap, module_warps
from ..facts.trace import Tracer
from ..render.console import print_lines
from ..schemas import InputRef, _Model
from ..session import Selection

OUTSIDE = "outside partitions"
# How each hop kind defines its name, for the alias lines ("%arg35 = block argument (line 45)").
_ALIAS_KIND = {
    "capture": "partition block argument",
    "iter_arg": "scf.for block argument",
    "loop_argument": "scf.while block argument",
    "function_argument": "function argument",
    "argument": "block argument",
    "for_result": "scf.for result",
    "while_result": "scf.while result",
    "if_result": "scf.if result",
    "constant": "arith.constant",
    "aref_buffer": "nvws.aref.buffer",
    "tmem_subslice": "ttng.tmem_subslice",
}


class AllocInfo(_Model):
    name: str = Field(description="SSA name of the allocation (or the constant, for a named barrier)")
    line: int
    op: Optional[str] = Field(description="defining op; null for a barrier passed in as a function argument")
    loc_name: Optional[str] = None
    type: Optional[str] = None


class AliasInfo(_Model):
    name: str
    line: int = Field(description="line where the name is defined")
    via: str = Field(description="hop that makes it an alias: memdesc_index, capture, iter_arg, loop_argument, "
                                 "for_result, if_result, while_result, function_argument, constant, ...")
    region: Optional[str] = Field(None, description="the partition region the name is defined in; null outside "
                                                    "every partition region")


class SlotInfo(_Model):
    value: str = Field(description="index SSA value (memdesc_index index, or token/aref stage operand)")
    line: int
    constant: Optional[int] = Field(description="its value when it is an arith.constant")


class UseInfo(_Model):
    op: str
    role: str
    mechanism: str
    partition: Optional[str] = Field(description="primary partition; null outside every partition")
    line: int
    slot: list[SlotInfo] = Field(description="slot indices from the allocation outwards; empty when none")
    operand: str = Field(description="the SSA name the op uses for the barrier")
    partitions: list[str] = []
    loop_depth: int = 0
    count: Optional[int] = None
    bytes: Optional[int] = None
    phase: Optional[str] = None
    predicate: Optional[str] = None
    op_predicate: Optional[str] = Field(None, description="an MMA's own pred, which also gates its arrivals")
    constraints: Optional[dict[str, Any]] = None


class BarrierInfo(_Model):
    id: str
    kind: str = Field(description="mbarrier | named | aref | nvws_token")
    alloc: AllocInfo
    slots: Optional[int]
    init_counts: list[int]
    mechanisms: list[str]
    aliases: list[AliasInfo]
    uses: list[UseInfo]


class UnresolvedInfo(_Model):
    op: str
    line: int
    operand: str
    role: str
    reason: str


class RemoteUseInfo(_Model):
    op: str
    line: int
    operand: str
    role: str
    barrier: str = Field(description="id of the barrier whose peer-CTA copy the op uses")
    rank: str = Field(description="the rank operand of the map_to_remote_buffer: the CTA whose copy it is")
    view_line: int = Field(description="line of the map_to_remote_buffer")
    partition: Optional[str] = None
    slot: list[SlotInfo] = Field(default_factory=list, description="slot indices from the allocation outwards")


class BarriersDoc(_Model):
    schema_: str = Field("barrier-viz/barriers/v1", alias="schema")
    input: InputRef
    barriers: list[BarrierInfo]
    unresolved: list[UnresolvedInfo]
    remote_uses: list[RemoteUseInfo] = Field(
        default_factory=list, description="uses of a peer CTA's copy of a barrier (through ttng.map_to_remote_buffer)")
    warnings: list[str] = []

    model_config = ConfigDict(populate_by_name=True, extra="forbid")


def barrier_facts(sel: Selection) -> BarrierFacts:
    """Barrier facts of the function (or unit) in `sel`, with partition membership."""
    ops = list(sel.operations())
    partitions = PartitionMap(ops, module_warps(ops))
    facts = collect_barriers(ops, Tracer(sel.ir), partitions)
    limits.check_barrier_slots(facts, sel.unit.path)
    return facts


def barriers_document(sel: Selection, *, warnings: list[str] | None = None) -> BarriersDoc:
    ops = list(sel.operations())
    partitions = PartitionMap(ops, module_warps(ops))
    tracer = Tracer(sel.ir)
    facts = collect_barriers(ops, tracer, partitions)
    limits.check_barrier_slots(facts, sel.unit.path)
    return BarriersDoc(
        input=InputRef(**sel.input_ref()),
        barriers=[_barrier_info(b, partitions) for b in facts.barriers],
        unresolved=[UnresolvedInfo(op=u.op.name, line=u.line, operand=u.operand, role=u.role.value, reason=u.reason)
                    for u in facts.unresolved],
        # A use through `map_to_remote_buffer` is a peer CTA's copy: say whose (facts.barriers.RemoteUse).
        remote_uses=[RemoteUseInfo(op=r.use.op.name, line=r.use.line, operand=r.use.operand, role=r.use.role.value,
                                   barrier=r.barrier.id, rank=r.view.operands[1], view_line=r.view.line,
                                   partition=r.use.partition,
                                   slot=[SlotInfo(value=s.value, line=s.line, constant=s.constant) for s in r.use.slots])
                     for r in remote_uses(facts)],
        warnings=warnings or [],
    )


def region_of(line: int, partitions: PartitionMap) -> str | None:
    """The partition region whose lines hold `line` (the innermost one), or None. The same SSA
    name is captured once per partition, so an alias list reads right only grouped by region."""
    holding = [p for p in partitions.partitions if p.region is not None and p.start_line <= line <= p.end_line]
    return min(holding, key=lambda p: p.end_line - p.start_line).name if holding else None


def _barrier_info(b: Barrier, partitions: PartitionMap | None = None) -> BarrierInfo:
    alloc_op = None
    if b.alloc is not None:
        alloc_op = b.alloc.name
    return BarrierInfo(
        id=b.id,
        kind=b.kind.value,
        alloc=AllocInfo(name=b.name, line=b.line, op=alloc_op, loc_name=b.loc_name, type=b.type),
        slots=b.slots,
        init_counts=list(b.init_counts),
        mechanisms=[m.value for m in b.mechanisms],
        aliases=[AliasInfo(name=a.name, line=a.line, via=a.via,
                           region=region_of(a.line, partitions) if partitions is not None else None) for a in b.aliases],
        uses=[_use_info(u) for u in b.uses],
    )


def _use_info(u: BarrierUse) -> UseInfo:
    return UseInfo(
        op=u.op.name,
        role=u.role.value,
        mechanism=u.mechanism.value,
        partition=u.partition,
        line=u.line,
        slot=[SlotInfo(value=s.value, line=s.line, constant=s.constant) for s in u.slots],
        operand=u.operand,
        partitions=list(u.partitions),
        loop_depth=u.loop_depth,
        count=u.count,
        bytes=u.bytes,
        phase=u.phase,
        predicate=u.predicate,
        op_predicate=u.op_predicate,
        constraints=u.constraints,
    )


# -- text ---------------------------------------------------------------------------------------
def render_barriers_text(doc: BarriersDoc) -> None:
    """The skill's Section 5 "Barrier Alias Map": allocation site, aliases, used-in lines."""
    where = doc.input.path + (f" [unit {doc.input.unit_index}: {doc.input.unit}]" if doc.input.unit else "")
    fn = f" @{doc.input.function}" if doc.input.function else ""
    uses = sum(len(b.uses) for b in doc.barriers)
    lines = [
        f"{where}{fn}: {len(doc.barriers)} logical barrier(s), {uses} use(s), {len(doc.unresolved)} unresolved",
        "",
        "Barrier Alias Map",
        "=================",
    ]
    for b in doc.barriers:
        lines.extend(_barrier_lines(b))
    if doc.remote_uses:
        lines += ["", "Uses of a peer CTA's copy (map_to_remote_buffer)", "================================================"]
        for r in doc.remote_uses:
            slot = "".join(f"[{s.constant if s.constant is not None else s.value}]" for s in r.slot)
            lines.append(f"  {_short(r.op)} {r.operand} ({r.role}, line {r.line}{', ' + r.partition if r.partition else ''}): "
                         f"{r.barrier}{slot} in the CTA {r.rank} names (line {r.view_line})")
    if doc.unresolved:
        lines += ["", "Unresolved barrier operands", "==========================="]
        for u in doc.unresolved:
            lines.append(f"  {_short(u.op)} {u.operand} ({u.role}, line {u.line}): {u.reason}")
    print_lines(lines)


def _barrier_lines(b: BarrierInfo) -> list[str]:
    facts = [b.kind]
    if b.slots is not None:
        facts.append(f"{b.slots} slot" + ("s" if b.slots != 1 else ""))
    if b.init_counts:
        facts.append("init count " + "/".join(str(c) for c in b.init_counts))
    if b.mechanisms and b.kind == BarrierKind.MBARRIER.value:
        facts.append(" + ".join(b.mechanisms))
    loc = f' loc("{b.alloc.loc_name}")' if b.alloc.loc_name else ""
    what = b.alloc.op or "function argument"
    out = [
        "",
        f'Logical barrier "{b.id}" ({", ".join(facts)}):',
        f"  {b.alloc.name} = {what} (line {b.alloc.line}){loc} -- allocation",
    ]
    by_region: dict[str, list[AliasInfo]] = {}
    for a in b.aliases:
        by_region.setdefault(a.region or OUTSIDE, []).append(a)
    for region, aliases in by_region.items():
        out.append(f"  aliases {'outside partitions' if region == OUTSIDE else 'in ' + region}:")
        out += [f"    {a.name} = {_alias_kind(a.via)} (line {a.line}) -- {a.via}" for a in aliases]
    if not b.uses:
        out.append("  Used in: nothing")
        return out
    out.append("  Used in:")
    for u in b.uses:
        out.append(f"    {_use_text(u)} ({u.partition or OUTSIDE}, line {u.line})")
    return out


def _use_text(u: UseInfo) -> str:
    """`barrier_expect %bar_idx, 49152` style: the op, the barrier operand, what it carries."""
    parts = [f"{_short(u.op)} {u.operand}"]
    if u.role == Role.EXPECT.value or u.role == Role.TMA_ARRIVE.value:
        if u.bytes is not None:
            parts.append(f"{u.bytes} bytes")
    elif u.count is not None:
        parts.append(f"count {u.count}")
    if u.phase is not None:
        parts.append(f"phase {u.phase}")
    text = ", ".join(parts)
    if u.slot:
        text += " [slot " + ", ".join(_slot_text(s) for s in u.slot) + "]"
    if u.predicate is not None:
        text += f" if {u.predicate}"
    return text


def _slot_text(s: SlotInfo) -> str:
    return s.value if s.constant is None else f"{s.value}={s.constant}"


def _alias_kind(via: str) -> str:
    return _ALIAS_KIND.get(via, f"ttg.{via}")


def _short(name: str) -> str:
    """`ttng.wait_barrier` -> `wait_barrier`; `nvws.aref.put.enter` -> `aref.put.enter`."""
    return name.split(".", 1)[1] if "." in name else name


__all__ = ["BarriersDoc", "barrier_facts", "barriers_document", "render_barriers_text"]
