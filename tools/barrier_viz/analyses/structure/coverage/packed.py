"""Table 1, column-packed TMEM overwrite (ir-semantics §7.1): per owner allocation, every
aliased column range an overwrite rewrites, one row per range, judged against each
other-partition reader at its cadence; and its findings (`race.packed_tmem_overwrite`).
"""

from __future__ import annotations

from collections import Counter as Tally
from typing import Iterator

from ....ir.model import Operation
from ...model.findings import Finding, Kind, Severity, finding
from .common import (MMA_OPS, _TAccess, _WAITS, _alloc_columns, _before, _cadence, _columns, _depth, _int_attr, _label,
                     _loops, _overlaps, _span)
from .rows import ConsumerInfo, PackedRow, PackedTable, WriterInfo


class _PackedTables:
    """Table 1: per packed TMEM owner, every aliased column range its full writers overwrite,
    each judged ordered or missing against every other-partition reader."""

    # -- table 1: packed TMEM ------------------------------------------------------------------
    def packed_tables(self) -> Iterator[PackedTable]:
        for owner, members in self._packed_owners():
            yield self._packed_table(owner, members)

    def _packed_owners(self) -> list[tuple[Operation, list[Operation]]]:
        """Owners with aliased column ranges: `buffer.offset` siblings in the owner's
        `buffer.id` group (memory-planner form), or `tmem_subslice` views of it (after code
        partitioning the siblings are views)."""
        out: list[tuple[Operation, list[Operation]]] = []
        for g in self.a.buffers.groups:
            if g.space != "tmem" or not g.packed:
                continue
            siblings = [m.op for m in g.members if m.offset is not None]
            for m in g.members:
                if m.offset is None:
                    out.append((m.op, siblings))
        seen = {id(o) for o, _ in out}
        for acc in self.accesses:
            if acc.cols is not None and id(acc.root) not in seen:
                seen.add(id(acc.root))
                out.append((acc.root, []))
        out.sort(key=lambda x: x[0].line)
        return out

    def _full_writers(self, owner: Operation) -> list[_TAccess]:
        """Writes that replace every column they cover: a useD=false MMA, a tmem_store or
        tmem_copy, of the whole allocation, or of a view whose columns are exact (a view at a
        `tmem_subslice` offset inside a dynamic slot is not placed, so it is not one)."""
        out = []
        for acc in self.accesses:
            if acc.root is not owner or acc.kind != "write" or (acc.cols is not None and not acc.exact):
                continue
            if acc.op.name in MMA_OPS and self.use_d_state(acc.op) not in ("false", "false-first"):
                continue
            out.append(acc)
        return out

    def _packed_table(self, owner: Operation, siblings: list[Operation]) -> PackedTable:
        width = _columns(owner.result_types[0] if owner.result_types else None) or 1
        if any(a.exact for a in self.accesses if a.root is owner):
            width = _alloc_columns(owner, self.a.sel.ir.aliases) or width
        writers = self._full_writers(owner)
        regions = self._regions(owner, siblings, width)
        rows = [self._packed_row(label, cols, line, accs, [w for w in writers if _overlaps(w, cols, is_owner)], is_owner)
                for label, cols, line, accs, is_owner in regions]
        winfo = [WriterInfo(op=w.op.name, line=w.op.line, partition=w.parts[0],
                            use_d=self.use_d_state(w.op) if w.op.name in MMA_OPS else "store",
                            loop_line=_loops(w.op)[0].line if _loops(w.op) else None, columns=w.cols or (0, width - 1))
                 for w in writers]
        return PackedTable(buffer_id=_int_attr(owner, "buffer.id"), owner=_label(owner), owner_line=owner.line,
                           owner_type=owner.result_types[0] if owner.result_types else "?", stage=self.stage,
                           writers=winfo, rows=rows)

    def _regions(self, owner: Operation, siblings: list[Operation], width: int):
        """(label, columns, line, accesses, is_owner) for the owner's own data and each aliased range."""
        own = [a for a in self.accesses if a.root is owner and a.cols is None]
        out = [(_label(owner), (0, width - 1), owner.line, own, True)]
        for sib in sorted(siblings, key=lambda s: (_int_attr(s, "buffer.offset") or 0, s.line)):
            off = _int_attr(sib, "buffer.offset") or 0
            w = _columns(sib.result_types[0] if sib.result_types else None) or 1
            out.append((_label(sib), (off, off + w - 1), sib.line, [a for a in self.accesses if a.root is sib], False))
        views: dict[tuple[int, int], list[_TAccess]] = {}
        for a in self.accesses:
            if a.root is owner and a.cols is not None:
                views.setdefault(a.cols, []).append(a)
        for cols in sorted(views):
            accs = views[cols]
            labels = Tally(a.label for a in accs if a.label)
            label = labels.most_common(1)[0][0] if labels else f"cols {cols[0]}-{cols[1]}"
            out.append((label, cols, min(a.op.line for a in accs), accs, False))
        return out

    def _packed_row(self, label: str, cols: tuple[int, int], line: int, accs: list[_TAccess],
                    writers: list[_TAccess], is_owner: bool) -> PackedRow:
        readers = [a for a in accs if a.kind == "read"]
        row = dict(label=label, owner=is_owner, columns=cols, line=line)
        if not writers:
            return PackedRow(**row, consumers=self._consumers(readers, None), cadence=None, status="no_overwrite",
                             ok=True, reason="no full-overwrite writer of the owner")
        results = []
        for w in writers:
            wpart = w.parts[0]
            others = [r for r in readers if wpart not in r.parts]
            if not readers:
                results.append(("no_reader", True, "nothing reads these columns", [], None, w))
                continue
            if not others:
                results.append(("same_partition", True, f"read only by the writer's partition {self.plabel(wpart)} "
                                "(program order)", [], None, w))
                continue
            for r in others:
                for c in r.parts:
                    if c != wpart:
                        results.append((*self._judge(w, r, c, accs), w))
        worst = max(results, key=lambda x: _RANK[x[0]])
        row["writer_line"] = worst[5].op.line
        main = max(writers, key=lambda x: _depth(x.op))
        consumers = self._consumers([r for r in readers if main.parts[0] not in r.parts] or readers, main)
        cadences = {c.cadence for c in consumers if c.partition != main.parts[0]}
        cadence = "outer" if "outer" in cadences else ("inner" if cadences else None)
        return PackedRow(**row, consumers=consumers, cadence=cadence, status=worst[0], ok=worst[1], reason=worst[2],
                         evidence=sorted(set(worst[3])))

    def _consumers(self, readers: list[_TAccess], writer: _TAccess | None) -> list[ConsumerInfo]:
        out, seen = [], set()
        for r in readers:
            for p in r.parts:
                key = (p, r.op.line)
                if key in seen:
                    continue
                seen.add(key)
                cad = _cadence(writer.op, r.op) if writer is not None else "-"
                out.append(ConsumerInfo(partition=p, line=r.op.line, loop_depth=_depth(r.op), cadence=cad))
        return out

    def _judge(self, w: _TAccess, r: _TAccess, c: str, accs: list[_TAccess]):
        """Is reader `r` (partition `c`) ordered before the next overwrite by `w`?"""
        wpart = w.parts[0]
        cadence = _cadence(w.op, r.op)
        d_req = min(_depth(w.op), _depth(r.op))
        if d_req == 0:
            return ("no_overwrite", True, "no loop runs both the read and a later overwrite", [r.op.line], cadence)
        scope = list(reversed(_loops(w.op)))[d_req - 1]
        inner = _loops(w.op)[0]
        where = (f"before the inner loop at line {inner.line}, once per iteration of the loop at line {scope.line}"
                 if cadence == "outer" else f"inside the writer's loop at line {scope.line}")
        need = (f"{self.plabel(wpart)} must wait for {self.plabel(c)}'s release of these columns (read at line "
                f"{r.op.line}) {where}, with that loop's phase")
        if self.stage == "pre-partition":
            return self._judge_pre(w, r, c, scope, cadence, need)
        # The reader's iteration at the scope's level: a read inside an inner loop is released by
        # what its partition arrives on after that loop too (a commit once the K loop is done).
        up = max(0, _depth(r.op) - d_req)
        own = self._own_releases(r, c, accs, w, up)
        direct = [(k, a, u) for k, a in self.releases_after(r.op, c) if k in own
                  for u in self._waits_by_key.get(k, []) if wpart in self.parts(u.op) and scope in u.op.ancestors()]
        good = [(k, a, u) for k, a in self.releases_after(r.op, c, up) if k in own
                for u in self._waits_by_key.get(k, [])
                if wpart in self.parts(u.op) and scope in u.op.ancestors() and _depth(u.op) == _depth(a)]
        if good:
            k, a, u = good[0]
            return ("ordered", True, f"backward edge: {self.plabel(wpart)} waits on {k[0]} at line {u.line}, "
                    f"released by {self.plabel(c)} at line {a.line} ({cadence} cadence)", [r.op.line, a.line, u.line], cadence)
        if direct:
            k, a, u = direct[0]
            return ("cadence_mismatch", False, f"the wait on {k[0]} at line {u.line} (loop depth {_depth(u.op)}) does not "
                    f"match the cadence of its release at line {a.line} (loop depth {_depth(a)}): a wait at the wrong "
                    "loop level deadlocks or orders only some iterations", [r.op.line, a.line, u.line], cadence)
        # A chain of releases and waits through other partitions orders the read before the next
        # overwrite when its last wait runs, in the writer's partition, before the writer in the
        # writer's iteration of `scope` (read → ... → wait → write). A chain whose last wait comes
        # after the writer only orders a later overwrite (or the next one in a rotated loop).
        before_w = {id(x) for x in _before(w.op, stop=scope)}
        strict = self.happens_before(r.op, c, lambda op, q, _a: q == wpart and id(op) in before_w, levels=up)
        if strict is not None:
            via = "; ".join(f"{e.barrier}: line {e.arrive.line} → line {e.wait.line}" for e in strict)
            lines = [r.op.line] + [x for e in strict for x in (e.arrive.line, e.wait.line)]
            return ("ordered_by_channel", True, f"ordered via {via}; the last wait comes before the overwrite at "
                    f"line {w.op.line} in its iteration", lines, cadence)
        # A chain of consumer-side (forward) waits orders the read before what follows its last
        # wait in the same iteration, hence before the next iteration's overwrite even when that
        # wait comes after the writer in program order (a rotated wait at the end of the tile).
        rotated = self.happens_before(r.op, c, lambda op, q, _a: q == wpart and scope in op.ancestors(),
                                      forward_only=True, levels=up)
        if rotated is not None:
            via = "; ".join(f"{e.barrier}: line {e.arrive.line} → line {e.wait.line}" for e in rotated)
            lines = [r.op.line] + [x for e in rotated for x in (e.arrive.line, e.wait.line)]
            return ("ordered_by_channel", True, f"ordered via {via}: consumer-side waits of the same iteration, so "
                    f"the next iteration's overwrite at line {w.op.line} comes after them", lines, cadence)
        chain = self.happens_before(r.op, c, lambda op, q, _a: q == wpart and scope in op.ancestors(), levels=up)
        if chain is not None:
            via = "; ".join(f"{e.barrier}: line {e.arrive.line} → line {e.wait.line}" for e in chain)
            lines = [r.op.line] + [x for e in chain for x in (e.arrive.line, e.wait.line)]
            if cadence == "inner":
                return ("ordered_by_channel", True, f"own per-iteration channel; ordered via {via}", lines, cadence)
            return ("missing_incidental", False, f"MISSING backward edge: no wait on this range's own release; the "
                    f"only ordering found ({via}) ends at line {chain[-1].wait.line}, after the overwrite at line "
                    f"{w.op.line} in its iteration, so the next tile's first overwrite is not ordered after the read — "
                    + need, lines, cadence)
        return ("missing", False, "MISSING backward edge: " + need, [r.op.line, w.op.line], cadence)

    def _judge_pre(self, w: _TAccess, r: _TAccess, c: str, scope: Operation, cadence: str, need: str):
        wpart = w.parts[0]
        if cadence == "inner":
            chain = self.dataflow_before(r.op, c, lambda op, q: q == wpart and scope in op.ancestors())
            if chain is not None:
                via = " → ".join(f"{o.name.split('.')[-1]}@{o.line}" for o in chain)
                return ("ordered_by_channel", True, f"no back-edge needed: ordered by per-iteration channel {via}",
                        [r.op.line] + [o.line for o in chain], cadence)
        return ("required", True, "REQUIRED back-edge: " + need, [r.op.line, w.op.line, scope.line], cadence)

    def _own_releases(self, r: _TAccess, c: str, accs: list[_TAccess], w: _TAccess,
                      levels: int = 0) -> set[tuple[str, str]]:
        """The barriers that release *this* range: arrived by the reader after the read and
        waited on by a writer of the range before writing it (its channel's empty barrier)."""
        after = {k for k, _ in self.releases_after(r.op, c, levels)}
        writers = [a for a in accs if a.kind == "write"] or [w]
        own: set[tuple[str, str]] = set()
        for x in writers:
            p = x.parts[0]
            for y in _before(x.op):
                if p in self.parts(y):
                    own.update(k for k, _ in self._events(y, _WAITS) if k in after)
        return own or after


# -- findings -------------------------------------------------------------------------------------
_RANK = {"no_overwrite": 0, "no_reader": 0, "same_partition": 1, "ordered": 2, "ordered_by_channel": 2,
         "required": 3, "missing_incidental": 4, "cadence_mismatch": 5, "missing": 6}


def _packed_findings(t: PackedTable) -> list[Finding]:
    out = []
    for row in t.rows:
        if row.ok:
            continue
        sev = Severity.warning if row.status == "missing_incidental" else Severity.error
        writer = next((w for w in t.writers if w.line == row.writer_line), t.writers[0] if t.writers else None)
        parts = [writer.partition] + [c.partition for c in row.consumers] if writer else []
        out.append(finding(
            Kind.RACE_PACKED_TMEM_OVERWRITE, sev,
            f"{row.label} ({_span(row.columns)} of {t.owner}"
            + (f", buffer.id {t.buffer_id}" if t.buffer_id is not None else "") + ") is overwritten "
            f"by the full-overwrite writer at line {writer.line if writer else '?'}: {row.reason}",
            lines=row.evidence + ([writer.line] if writer else []), partitions=parts, buffer_id=t.buffer_id,
            evidence={"row": row.model_dump(), "owner": t.owner, "stage": t.stage},
            suggestion="Add, in the writer's partition, a wait on this range's release by its reader, placed at the "
                       "reader's loop level (before the inner loop for an outer-cadence reader) with that loop's phase."))
    return out


def _cluster_limit(found: list[Finding]) -> list[Finding]:
    """In a CTA cluster (2-CTA `tc_gen5_mma`, multicast, remote arrives) the release that orders
    a packed range before its overwrite may be a peer CTA's arrival, or the writer may be the
    leader CTA's MMA issued for both CTAs; the rows are computed for one CTA and cannot see
    either. A ✗ row there is a stated limit (one `model.limit` note), not a verdict."""
    if not found:
        return []
    rows = [f"{f.evidence['row']['label']} (lines {', '.join(map(str, f.lines))})" for f in found]
    return [finding(
        Kind.MODEL_LIMIT, Severity.info,
        f"packed-TMEM overwrite ordering not judged in a CTA cluster: {len(found)} row(s) look unordered for one "
        f"CTA ({'; '.join(rows[:4])}{'; ...' if len(rows) > 4 else ''}), but the ordering release may be a peer "
        "CTA's arrival, which the one-CTA coverage tables do not model.",
        lines=sorted({line for f in found for line in f.lines}),
        evidence={"rule": Kind.RACE_PACKED_TMEM_OVERWRITE.value, "would_report": [
            {"severity": f.severity.value, "message": f.message} for f in found]})]
