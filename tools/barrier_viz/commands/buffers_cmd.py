"""`buffers`: the Shared Data Map (report section 4) for people, and its facts as JSON for agents.

One entry per `buffer.id` group (or per allocation without one): its members with storage,
slot bytes and copies, the column-packed owner and siblings, the partitions that write and read
it, the barriers several buffers share, and whether each `barrier_expect` declares exactly
the bytes its TMA copies deliver.
"""

from __future__ import annotations

from collections import OrderedDict

from pydantic import ConfigDict, Field

from ..facts.buffers import Access, BufferFacts, BufferGroup, ExpectCheck, Member, TmaCopy, buffer_facts
from ..facts.partitions import PartitionMap, module_warps
from ..render.console import print_lines
from ..schemas import InputRef, _Model
from ..session import Selection


# -- JSON shapes ------------------------------------------------------------------------------
class BufferMemberInfo(_Model):
    name: str
    loc_name: str | None
    label: str
    space: str | None
    type: str
    shape: list[int] = Field(description="shape of one slot")
    alloc_shape: list[int]
    dtype: str
    bytes: int | None = Field(description="bytes per slot")
    copies: int
    copies_from: str
    offset: int | None
    owner: bool
    share_group: int | None
    tma_staging: bool
    line: int


class AccessInfo(_Model):
    member: str
    partitions: list[str]
    op: str
    role: str
    line: int


class BarrierRefInfo(_Model):
    name: str | None
    line: int | None
    slot: list[str]
    cta: str | None = Field(None, description="through map_to_remote_buffer: the rank naming the CTA whose copy it is")


class CopyInfo(_Model):
    line: int
    member: str | None
    bytes: int | None
    barrier: BarrierRefInfo | None
    partitions: list[str]


class ExpectInfo(_Model):
    line: int
    partitions: list[str]
    barrier: BarrierRefInfo | None
    declared: int | None
    delivered: int | None
    status: str
    copies: list[CopyInfo]
    reason: str | None = Field(None, description="why the bytes are not counted (status unknown)")


class BufferExpect(_Model):
    status: str = Field(description="matched | mismatched | unknown | none (no barrier_expect covers it)")
    checks: list[ExpectInfo]


class MergedBarrierInfo(_Model):
    name: str | None
    line: int | None
    members: list[str]
    copies: list[CopyInfo]


class BufferGroupInfo(_Model):
    key: str
    buffer_id: int | None
    space: str | None
    slot_bytes: int | None
    packed: bool
    merged: bool
    merged_by: list[str] = Field(description="'buffer.id' (several whole buffers share the id) and/or 'barrier'")
    members: list[BufferMemberInfo]
    writers: list[AccessInfo]
    readers: list[AccessInfo]
    barriers: list[MergedBarrierInfo]
    expect: BufferExpect


class UnresolvedInfo(_Model):
    op: str
    line: int
    operand: str
    reason: str


class BuffersSummary(_Model):
    groups: int
    members: int
    expects: int
    matched: int
    mismatched: int
    unknown: int
    uncovered_copies: int
    unresolved: int


class BuffersDoc(_Model):
    schema_: str = Field("barrier-viz/buffers/v1", alias="schema")
    input: InputRef
    summary: BuffersSummary
    buffers: list[BufferGroupInfo]
    merged_barriers: list[MergedBarrierInfo]
    expects: list[ExpectInfo]
    uncovered_copies: list[CopyInfo]
    unresolved: list[UnresolvedInfo]
    warnings: list[str] = []

    model_config = ConfigDict(populate_by_name=True, extra="forbid")


# -- building ---------------------------------------------------------------------------------
def buffers_document(sel: Selection, *, warnings: list[str]) -> BuffersDoc:
    ops = list(sel.operations())
    facts = buffer_facts(sel.ir, ops, PartitionMap(ops, module_warps(ops)))
    return facts_document(facts, InputRef(**sel.input_ref()), warnings)


def facts_document(facts: BufferFacts, input_ref: InputRef, warnings: list[str]) -> BuffersDoc:
    expects = [_expect(e) for e in facts.expects]
    return BuffersDoc(
        input=input_ref,
        summary=BuffersSummary(
            groups=len(facts.groups),
            members=sum(len(g.members) for g in facts.groups),
            expects=len(expects),
            matched=sum(1 for e in expects if e.status == "matched"),
            mismatched=sum(1 for e in expects if e.status == "mismatched"),
            unknown=sum(1 for e in expects if e.status == "unknown"),
            uncovered_copies=len(facts.uncovered_copies),
            unresolved=len(facts.unresolved),
        ),
        buffers=[_group(g, facts) for g in facts.groups],
        merged_barriers=[_merged(b.name, b.line, b.members, b.copies) for b in facts.merged_barriers],
        expects=expects,
        uncovered_copies=[_copy(c) for c in facts.uncovered_copies],
        unresolved=[UnresolvedInfo(op=u.op, line=u.line, operand=u.operand, reason=u.reason) for u in facts.unresolved],
        warnings=warnings,
    )


def _group(group: BufferGroup, facts: BufferFacts) -> BufferGroupInfo:
    barriers = facts.merged_barriers_for(group)
    merged_by = (["buffer.id"] if group.shares_id else []) + (["barrier"] if barriers else [])
    checks = [_expect(e) for e in facts.expects_for(group)]
    return BufferGroupInfo(
        key=group.key,
        buffer_id=group.buffer_id,
        space=group.space,
        slot_bytes=group.slot_bytes,
        packed=group.packed,
        merged=bool(merged_by),
        merged_by=merged_by,
        members=[_member(m) for m in group.members],
        writers=[_access(a) for a in group.writers],
        readers=[_access(a) for a in group.readers],
        barriers=[_merged(b.name, b.line, b.members, b.copies) for b in barriers],
        expect=BufferExpect(status=_overall(checks), checks=checks),
    )


def _overall(checks: list[ExpectInfo]) -> str:
    statuses = {c.status for c in checks}
    for status in ("mismatched", "unknown", "matched"):
        if status in statuses:
            return status
    return "none"


def _member(m: Member) -> BufferMemberInfo:
    return BufferMemberInfo(
        name=m.name, loc_name=m.loc_name, label=m.label, space=m.space, type=m.type,
        shape=list(m.slot_shape), alloc_shape=list(m.shape), dtype=m.dtype, bytes=m.slot_bytes,
        copies=m.copies, copies_from=m.copies_from, offset=m.offset, owner=m.owner,
        share_group=m.share_group, tma_staging=m.tma_staging, line=m.line,
    )


def _access(a: Access) -> AccessInfo:
    return AccessInfo(member=a.member, partitions=list(a.partitions), op=a.op, role=a.role, line=a.line)


def _barrier_ref(ref) -> BarrierRefInfo | None:
    return None if ref is None else BarrierRefInfo(name=ref.name, line=ref.line, slot=list(ref.slot), cta=ref.cta)


def _copy(c: TmaCopy) -> CopyInfo:
    return CopyInfo(line=c.line, member=c.member, bytes=c.bytes, barrier=_barrier_ref(c.barrier), partitions=list(c.partitions))


def _expect(e: ExpectCheck) -> ExpectInfo:
    return ExpectInfo(
        line=e.line, partitions=list(e.partitions), barrier=_barrier_ref(e.barrier), declared=e.declared,
        delivered=e.delivered, status=e.status, copies=[_copy(c) for c in e.copies],
        reason=e.reason if e.status == "unknown" else None,
    )


def _merged(name, line, members, copies) -> MergedBarrierInfo:
    return MergedBarrierInfo(name=name, line=line, members=list(members), copies=[_copy(c) for c in copies])


# -- text -------------------------------------------------------------------------------------
def render_buffers_text(doc: BuffersDoc) -> None:
    print_lines(buffers_text_lines(doc))


def buffers_text_lines(doc: BuffersDoc) -> list[str]:
    """The skill's Section 4 layout: one "Buffer Group" block per member, grouped by buffer.id."""
    where = doc.input.path + (f" [unit {doc.input.unit_index}: {doc.input.unit}]" if doc.input.unit else "")
    fn = f" @{doc.input.function}" if doc.input.function else ""
    s = doc.summary
    lines = [
        "Shared Data Map",
        "===============",
        f"{where}{fn}: {s.groups} buffer group(s), {s.members} buffer(s); "
        f"expect check: {s.matched} matched, {s.mismatched} mismatched, {s.unknown} unknown",
    ]
    names = {m.name: (m.label if m.label == m.name else f"{m.label} ({m.name})") for g in doc.buffers for m in g.members}
    for group in doc.buffers:
        lines.append("")
        lines.append(_group_heading(group, names))
        # Owner(s) first, then packed siblings by column: the order the storage is laid out in.
        for member in sorted(group.members, key=lambda m: (m.offset is not None, m.offset or 0)):
            lines.extend(_member_block(group, member, names))
    lines.extend(_tail(doc, names))
    return lines


def _group_heading(group: BufferGroupInfo, names: dict[str, str]) -> str:
    space = (group.space or "?").upper()
    head = f"{group.key} ({space}"
    if group.slot_bytes is not None:
        head += f", {group.slot_bytes} bytes per slot"
    copies = sorted({m.copies for m in group.members})
    head += f", copies {'/'.join(str(c) for c in copies)}"
    if "buffer.id" in group.merged_by:
        whole = [m for m in group.members if m.offset is None]
        head += ", merged: " + " + ".join(f"{m.label} {_bytes(m.bytes)}" for m in whole)
    if "barrier" in group.merged_by:
        mine = {m.name for m in group.members}
        others = sorted({n for b in group.barriers for n in b.members if n not in mine})
        if others:
            head += ", shares a barrier with " + ", ".join(names.get(n, n) for n in others)
    if group.packed:
        head += ", column-packed"
    return head + ")"


def _member_block(group: BufferGroupInfo, m: BufferMemberInfo, names: dict[str, str]) -> list[str]:
    mine = lambda accesses: [a for a in accesses if a.member == m.name]  # noqa: E731
    shape = "x".join(str(d) for d in m.shape)
    out = [
        f'  Buffer Group: "{m.label}" ({(m.space or "?").upper()})',
        f"    Storage:   {m.type}  ({m.name}, line {m.line})",
        f"    Slot:      {shape}x{m.dtype} = {_bytes(m.bytes)} x {m.copies} cop{'y' if m.copies == 1 else 'ies'} ({m.copies_from})",
        f"    buffer.id: {_id_line(group, m)}",
    ]
    extras = [f"allocation.shareGroup = {m.share_group}"] if m.share_group is not None else []
    if m.tma_staging:
        extras.append("buffer.tmaStaging (TMA store staging)")
    if extras:
        out.append("    Attrs:     " + ", ".join(extras))
    out.append("    Writer:    " + _accesses(mine(group.writers)))
    out.append("    Reader:    " + _accesses(mine(group.readers)))
    out.append("    Barrier:   " + _barrier_line(group, m, names))
    return out


def _id_line(group: BufferGroupInfo, m: BufferMemberInfo) -> str:
    if group.buffer_id is None:
        return "none"
    text = str(group.buffer_id)
    if m.offset is not None:
        owner = next((o.label for o in group.members if o.offset is None), "?")
        return f"{text} (packed at column {m.offset} of {owner})"
    siblings = [o.label for o in group.members if o.name != m.name and o.offset is None]
    packed = [o for o in group.members if o.offset is not None]
    if packed:
        text += " (owner; packed: " + ", ".join(f"{o.label}@{o.offset}" for o in packed) + ")"
    if siblings:
        text += " (merged with " + ", ".join(siblings) + ")"
    return text


def _accesses(accesses: list[AccessInfo]) -> str:
    if not accesses:
        return "none found"
    by_part: OrderedDict[str, list[str]] = OrderedDict()
    for a in accesses:
        for part in a.partitions or ["(no partition)"]:
            by_part.setdefault(part, []).append(f"{a.role} L{a.line}")
    return "; ".join(f"{part} ({', '.join(dict.fromkeys(items))})" for part, items in by_part.items())


def _barrier_line(group: BufferGroupInfo, m: BufferMemberInfo, names: dict[str, str]) -> str:
    checks = [c for c in group.expect.checks if any(cp.member == m.name for cp in c.copies)]
    if not checks:
        roles = {w.role for w in group.writers if w.member == m.name}
        if "TMA load" in roles:
            return "TMA writes with no barrier_expect"
        if "TMA load (aref)" in roles:
            return "aref-internal (nvws.descriptor_load inside aref put)"
        return "not a TMA destination (see the barriers command)"
    parts = []
    for bar in dict.fromkeys((c.barrier.name, c.barrier.line) for c in checks if c.barrier):
        mine = [c for c in checks if c.barrier and (c.barrier.name, c.barrier.line) == bar]
        others = sorted({names.get(cp.member or "", cp.member or "?") for c in mine for cp in c.copies if cp.member != m.name})
        statuses = sorted({f"{c.declared}{'=' if c.status == 'matched' else '!='}{c.delivered}" for c in mine})
        verdict = "OK" if all(c.status == "matched" for c in mine) else "MISMATCH"
        merged = f", merged with {', '.join(others)}" if others else ""
        lines = ", ".join(f"L{c.line}" for c in mine)
        parts.append(f"mbarrier {bar[0]} (line {bar[1]}){merged}, expect {'/'.join(statuses)} {verdict} ({lines})")
    return "; ".join(parts)


def _tail(doc: BuffersDoc, names: dict[str, str]) -> list[str]:
    out: list[str] = []
    bad = [e for e in doc.expects if e.status != "matched"]
    if bad:
        out += ["", "Expect mismatches:"]
        for e in bad:
            copies = " + ".join(f"{names.get(c.member or '', c.member or '?')} {c.bytes} (L{c.line})" for c in e.copies) or "no copies"
            why = f": not counted, {e.reason}" if e.reason else ""
            out.append(f"  line {e.line}: barrier_expect {e.declared} vs delivered {e.delivered} = {copies} [{e.status}{why}]")
    if doc.uncovered_copies:
        out += ["", "TMA copies no barrier_expect covers:"]
        out += [f"  line {c.line}: into {names.get(c.member or '', c.member or '?')}, {c.bytes} bytes" for c in doc.uncovered_copies]
    if doc.unresolved:
        out += ["", "Unresolved memory operands:"]
        out += [f"  line {u.line}: {u.op} {u.operand}: {u.reason}" for u in doc.unresolved]
    return out


def _bytes(n: int | None) -> str:
    return "? bytes" if n is None else f"{n} bytes"
