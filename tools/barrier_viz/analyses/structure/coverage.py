"""Coverage tables: the barriers that *should* exist, enumerated, each marked present or missing.

Per-barrier checks only see barriers that exist. Two hazard classes are an *absent* barrier
(ir-semantics §7.1, §7.2), so they are invisible to arrive/wait balancing:

* **Column-packed TMEM overwrite.** The memory planner packs small TMEM buffers (alpha, m_ij,
  l_i0) into spare columns of a larger allocation (the *owner*). An MMA with `useD = false` (or a
  full-tile `tmem_store`) rewrites every column of the owner, so before it runs again the writer's
  partition must wait for every other-partition reader of every aliased column range — at that
  reader's cadence. One row per aliased range, ✓ or ✗, so an omission is visible.
* **Operand-D accumulator init.** An accumulator the MMA already zeroes (`useD = false` on the
  first iteration) needs no explicit zero `tmem_store`; one surviving in another partition of a
  persistent loop is a redundant cross-partition channel that races the MMA across tiles unless
  barriers order it. One row per accumulator, clean or not.

Both tables work on pre-code-partition IR (task ids, no barriers: the rows say which back-edges
the partitioner must create) and on post-partition IR (regions and barriers: the rows say whether
the wait exists in the writer's partition, at the right loop cadence).

Ordering is decided from program order inside a partition plus barrier edges between
partitions: partition C *releases* after an op when it arrives on a barrier later in the same
iteration; partition W *waits* for it when it waits on that barrier (same full/empty side of a
token) at the same loop depth (same cadence). Chains of such edges through other partitions are
followed (bounded search). Slot indices and exact phases are not compared here; the phase
evaluator and the deadlock simulation check those.

`token.not_loop_carried` is deliberately not reported: in real compiler output (the FA
memory-planner snapshot) every persistent tile re-seeds the inner loop's TMEM tokens from the
allocation's token (`iter_args(%s_31 = %s_6, ...)`) and drops the tile's last token; the code
partitioner orders cross-tile reuse with explicit back-edges instead, which this module and the
missing-acquire rule check. A token that is not carried is the normal form, not evidence of a race.
"""

from __future__ import annotations

from collections import Counter as Tally
from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Iterator

from pydantic import BaseModel, ConfigDict, Field

from ...facts.barriers import Barrier, BarrierKind, BarrierUse, Role
from ...facts.buffers import element_bits, parse_memdesc
from ...ir.types import tmem_columns
from ...facts.trace import VIEW_OPS
from ...facts.values import OpResult
from ...ir.model import BlockArgument, Operation
from ...ir.vocab import LOOP_OPS
from ..model.findings import Finding, Kind, Severity, finding
from ..program.order import following_in_iteration

MMA_OPS = frozenset({"ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled"})
TMEM_ALLOC = "ttng.tmem_alloc"
_BOUNDARY = frozenset({"ttg.warp_specialize", "nvws.warp_group", "tt.func", "func.func", "builtin.module"})
_ARRIVES = frozenset({Role.ARRIVE, Role.EXPECT, Role.TMA_ARRIVE, Role.MMA_ARRIVE, Role.COMMIT, Role.RELEASE,
                      Role.PUT_EXIT, Role.GET_EXIT})
_WAITS = frozenset({Role.WAIT, Role.ACQUIRE, Role.PUT_ENTER, Role.GET_ENTER})
_MAX_SEARCH = 256


# -- JSON-ready results ---------------------------------------------------------------------------
class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ConsumerInfo(_Frozen):
    partition: str
    line: int
    loop_depth: int
    cadence: str = Field(description="inner (the writer's loop) | outer (a loop around the writer's)")


class PackedRow(_Frozen):
    """One aliased column range the owner's writer overwrites."""

    label: str
    owner: bool
    columns: tuple[int, int]
    line: int
    consumers: list[ConsumerInfo]
    cadence: str | None
    status: str = Field(description="same_partition | ordered | ordered_by_channel | no_reader | no_overwrite | "
                                    "required | missing | missing_incidental | cadence_mismatch")
    ok: bool
    reason: str
    evidence: list[int] = Field(default_factory=list, description="IR lines of the edge (or of the reads)")
    writer_line: int | None = Field(None, description="the overwrite this row's verdict is about")


class WriterInfo(_Frozen):
    op: str
    line: int
    partition: str
    use_d: str
    loop_line: int | None
    columns: tuple[int, int]


class PackedTable(_Frozen):
    buffer_id: int | None
    owner: str
    owner_line: int
    owner_type: str
    stage: str = Field(description="pre-partition (edges to create) | post-partition (edges verified) | single")
    writers: list[WriterInfo]
    rows: list[PackedRow]


class AccumulatorRow(_Frozen):
    buffer_id: int | None
    name: str
    line: int
    type: str
    mma_lines: list[int]
    mma_partitions: list[str]
    use_d: str = Field(description="false | false-first | true | dynamic (of the MMA writers, joined)")
    self_zeroing: bool
    zero_store_lines: list[int]
    store_partitions: list[str]
    same_partition: bool | None
    persistent_loop: str | None
    persistent_loop_line: int | None
    barriers: int | None
    commits: int | None
    status: str = Field(description="clean | explicit_init | redundant_same_partition | redundant_ordered | "
                                    "redundant_unordered | redundant_single_tile | redundant_pre_partition")
    ok: bool
    verdict: str
    evidence: list[int] = Field(default_factory=list)
    init_condition: str | None = Field(None, description="when the self-zeroing MMA runs in a tile (None: always); "
                                                         "without it the zero store is the accumulator's only init")


@dataclass(frozen=True)
class Coverage:
    """Both tables of one selection."""

    packed: tuple[PackedTable, ...]
    accumulators: tuple[AccumulatorRow, ...]


# -- internal facts -------------------------------------------------------------------------------
@dataclass(frozen=True)
class _TAccess:
    """One TMEM read or write: which allocation (root), which columns, by which partitions."""

    op: Operation
    kind: str  # "read" | "write"
    root: Operation
    cols: tuple[int, int] | None  # None: the whole allocation
    label: str | None
    parts: tuple[str, ...]
    exact: bool = False  # columns absolute in the allocation (constant slots all the way)


@dataclass(frozen=True)
class _Edge:
    """A release→wait edge: `arrive` (in one partition) completes what `wait` (in another) awaits."""

    arrive: Operation
    wait: Operation
    barrier: str


def coverage(analysis) -> Coverage:
    """Both coverage tables of `analysis` (an `Analysis`)."""
    cov = _Coverage(analysis)
    return Coverage(tuple(cov.packed_tables()), tuple(cov.accumulator_rows()))


def happens_before(analysis, start: Operation, part: str, accept, **kw) -> list | None:
    """The coverage tables' release -> wait chain search (`_Coverage.happens_before`), shared
    with the release rules (release_order): one place decides "ordered through other barriers"."""
    cov = getattr(analysis, "_hb_coverage", None)
    if cov is None or cov.a is not analysis:
        cov = _Coverage(analysis)
        analysis._hb_coverage = cov
    return cov.happens_before(start, part, accept, **kw)


def coverage_findings(analysis) -> list[Finding]:
    """`race.packed_tmem_overwrite`, `race.redundant_zero_store` and `buffer.single_copy`."""
    cov = coverage(analysis)
    packed = [f for t in cov.packed for f in _packed_findings(t)]
    out = _cluster_limit(packed) if analysis.num_ctas > 1 else packed
    out += [f for r in cov.accumulators for f in _accumulator_findings(r)]
    out += single_copy_findings(analysis)
    return out


# -- the analysis ---------------------------------------------------------------------------------
class _Coverage:
    def __init__(self, analysis):
        self.a = analysis
        self._traces: dict[tuple[int, str], object] = {}

    # -- stage and partitions -------------------------------------------------------------------
    @cached_property
    def stage(self) -> str:
        src = self.a.partitions.derived_from
        if src in ("warp_specialize", "nvws.warp_group"):
            return "post-partition"
        if src in ("async_task_id", "ttg.partition"):
            return "pre-partition"
        return "single"

    def parts(self, op: Operation) -> tuple[str, ...]:
        found = self.a.partitions.of(op)
        if not found:
            return ("main",)
        if self.stage == "post-partition":
            return (found[0].name,)
        return tuple(p.name for p in found)

    def plabel(self, name: str) -> str:
        """`partition0 (task 1, gemm)` / `task1 (gemm)`: the name a reader finds in the IR, plus
        the task id and role the skill's tables use."""
        p = self.a.partitions.by_name(name)
        if p is None:
            return name
        bits = []
        if p.task_id is not None and not name.startswith("task"):
            bits.append(f"task {p.task_id}")
        if p.type:
            bits.append(p.type)
        return f"{name} ({', '.join(bits)})" if bits else name

    # -- TMEM accesses -------------------------------------------------------------------------
    def _trace(self, name: str, at: Operation):
        key = (id(at), name)
        t = self._traces.get(key)
        if t is None:
            t = self.a.tracer.trace(name, at)
            self._traces[key] = t
        return t

    @cached_property
    def accesses(self) -> list[_TAccess]:
        out: list[_TAccess] = []
        for op in self.a.ops:
            for index, kind in _tmem_roles(op, self.use_d_state):
                pos = op.positional
                if index >= len(pos):
                    continue
                t = self._trace(pos[index], op)
                root = getattr(t, "root", None)
                if root is None or root.name != TMEM_ALLOC:
                    continue
                cols, exact = self._columns_of(t, pos[index], op, root)
                out.append(_TAccess(op, kind, root, cols, self._view_label(pos[index], op), self.parts(op), exact))
        return out

    def _columns_of(self, t, name: str, at: Operation, root: Operation) -> tuple[tuple[int, int] | None, bool]:
        """(columns, exact) of one access. With constant slot indices all the way (`exact`),
        the columns are absolute in the allocation: slot i of N columns starts at i*N, through
        reinterpretations (TLX storage aliases place several buffers in one allocation that way);
        a view covering the whole allocation is the allocation (None). Otherwise the columns are
        the `tmem_subslice` offset inside whichever slot (None: the whole slot)."""
        if t.slot_dynamic or t.slot_columns is None:
            if t.column_offset is None:
                return None, False
            width = self._view_width(name, at) or 1
            return (t.column_offset, t.column_offset + width - 1), False
        width = tmem_columns(_value_type(self.a.values, name, at), self.a.sel.ir.aliases) or self._view_width(name, at)
        total = _alloc_columns(root, self.a.sel.ir.aliases)
        if width is None or total is None:
            return None, False
        lo = t.slot_columns + (t.column_offset or 0)
        if lo == 0 and width >= total:
            return None, True
        return (lo, lo + width - 1), True

    def _view_width(self, name: str, at: Operation) -> int | None:
        """Columns of the `tmem_subslice` nearest the use (its result type is exact; a 16-bit
        reinterpretation of it is not)."""
        cur, where = name, at
        for _ in range(64):
            d = self.a.values.lookup(cur, where)
            if isinstance(d, OpResult) and d.op.name in VIEW_OPS and d.op.operands:
                if d.op.name == "ttng.tmem_subslice":
                    text = d.op.result_types[0] if d.op.result_types else None
                    return tmem_columns(text, self.a.sel.ir.aliases) or _columns(text)
                cur, where = d.op.operands[0], d.op
                continue
            if isinstance(d, BlockArgument) and d.block is not None and d.block.region is not None:
                owner = d.block.region.parent
                if owner is not None and owner.name == "ttg.warp_specialize" and d.index < len(owner.operands):
                    cur, where = owner.operands[d.index], owner
                    continue
            return None
        return None

    def _view_label(self, name: str, at: Operation) -> str | None:
        """What a column view holds: its shape and element type (`128x128xf16 view`), with the
        loc name the compiler kept (`loc acc_1`). Names alone mislead: a view of the QK
        accumulator may carry the loc or SSA name of another variable (`%acc_1_149`)."""
        d = self.a.values.lookup(name, at)
        md = parse_memdesc(d.type) if isinstance(d, (OpResult, BlockArgument)) else None
        loc = d.op.loc_name if isinstance(d, OpResult) else None
        if md is not None and md.shape:
            what = "x".join(str(n) for n in md.shape[-2:]) + f"x{md.dtype} view"
            return what + (f" (loc {loc})" if loc else "")
        return loc

    def use_d_state(self, op: Operation) -> str:
        """`false`, `false-first` (a loop-carried flag that starts false), `true` or `dynamic`."""
        pos = op.positional
        k = 5 if op.name == "ttng.tc_gen5_mma_scaled" else 3
        return self._bool_state(pos[k], op, 0) if k < len(pos) else "dynamic"

    def _bool_state(self, name: str, at: Operation, depth: int) -> str:
        if depth > 16:
            return "dynamic"
        d = self.a.values.lookup(name, at)
        if isinstance(d, OpResult):
            if d.op.name == "arith.constant" and d.op.literals[:1] in (["true"], ["false"]):
                return d.op.literals[0]
            return "dynamic"
        if not isinstance(d, BlockArgument) or d.block is None or d.block.region is None:
            return "dynamic"
        owner = d.block.region.parent
        if owner is None:
            return "dynamic"
        if owner.name == "ttg.warp_specialize" and d.index < len(owner.operands):
            return self._bool_state(owner.operands[d.index], owner, depth + 1)
        if owner.name == "scf.for" and d.index >= 1 and 3 + d.index - 1 < len(owner.operands):
            init = self._bool_state(owner.operands[3 + d.index - 1], owner, depth + 1)
            return "false-first" if init in ("false", "false-first") else "dynamic"
        if owner.name == "scf.while" and d.block.region.index == 0 and d.index < len(owner.operands):
            init = self._bool_state(owner.operands[d.index], owner, depth + 1)
            return "false-first" if init in ("false", "false-first") else "dynamic"
        return "dynamic"

    # -- barrier events ------------------------------------------------------------------------
    def _events(self, op: Operation, roles: frozenset[Role]) -> list[tuple[tuple[str, str], BarrierUse]]:
        """`op`'s uses of barriers with one of `roles`, its arrivals on a peer CTA's copy
        (`map_to_remote_buffer`) included: every CTA runs the same code, so the waiter on that
        copy is the same partition as in its own CTA (the 2-CTA leader's MMA partition waiting
        for both CTAs' releases), the ordering the cluster simulator follows."""
        uses = list(self.a.barriers.uses_at(op)) + self._remote_uses.get(id(op), [])
        return [((b.id, _side(b, u)), u) for b, u in uses if u.role in roles or _bar_sync_arrives(b, u, roles)]

    @cached_property
    def _remote_uses(self) -> dict[int, list[tuple[Barrier, BarrierUse]]]:
        out: dict[int, list[tuple[Barrier, BarrierUse]]] = {}
        for r in self.a.barriers.remote:
            out.setdefault(id(r.use.op), []).append((r.barrier, r.use))
        return out

    @cached_property
    def _waits_by_key(self) -> dict[tuple[str, str], list[BarrierUse]]:
        out: dict[tuple[str, str], list[BarrierUse]] = {}
        for b in self.a.barriers.barriers:
            for u in b.uses:
                if u.role in _WAITS:
                    out.setdefault((b.id, _side(b, u)), []).append(u)
        return out

    def releases_after(self, op: Operation, part: str, levels: int = 0) -> list[tuple[tuple[str, str], Operation]]:
        """Barriers `part` arrives on after `op` in the same iteration (the op's own arrivals
        included: an MMA's barrier list fires once it has read its operands); with `levels`, in
        the iteration of the loop that many levels further out (a release after the inner loop
        the op sits in, e.g. a `tc_gen5_commit` once the K loop's MMAs are done)."""
        out = []
        for x in following_in_iteration(op, levels):
            if part in self.parts(x):
                out += [(k, x) for k, _ in self._events(x, _ARRIVES)]
        if op.name in MMA_OPS:
            # tcgen05 ops complete in issue order: the arrivals of the tcgen05 ops this partition
            # issues in the next iteration (the loop body before `op`) fire after `op` has read.
            loop = next((a for a in op.ancestors() if a.name in LOOP_OPS or a.name in _BOUNDARY), None)
            if loop is not None and loop.name in LOOP_OPS:
                for x in _before(op, stop=loop):
                    if part in self.parts(x) and (x.name in MMA_OPS or x.name == "ttng.tc_gen5_commit"):
                        out += [(k, x) for k, _ in self._events(x, frozenset({Role.MMA_ARRIVE, Role.COMMIT}))]
        return out

    def happens_before(self, start: Operation, part: str, accept: Callable[[Operation, str, Operation], bool],
                       forward_only: bool = False, levels: int = 0, hop=None) -> list[_Edge] | None:
        """A chain of release→wait edges from `start` (run by `part`) to a wait `accept` takes
        (called with the wait op, its partition and the matching arrive op). By default each hop
        needs the wait at the arrive's loop depth (same cadence). `forward_only` keeps only
        consumer-side waits (paired with the arrive of the same iteration), so the chain orders
        `start` before the target *in the same iteration*; loop depths may then differ (a
        peeled first iteration waits outside the loop its partner arrives in). `hop(arrive op,
        wait use)` may refuse an edge (release_order asks for the same ring slot)."""
        frontier: list[tuple[Operation, str, list[_Edge]]] = [(start, part, [])]
        seen: set[tuple[int, str]] = {(id(start), part)}
        budget = _MAX_SEARCH
        while frontier and budget > 0:
            op, p, path = frontier.pop(0)
            for key, arrive in self.releases_after(op, p, levels if op is start else 0):
                for w in self._waits_by_key.get(key, []):
                    budget -= 1
                    if forward_only and not self._forward(w.op):
                        continue
                    if not forward_only and _depth(w.op) != _depth(arrive):
                        continue
                    if hop is not None and not hop(arrive, w):
                        continue
                    for q in self.parts(w.op):
                        if q == p:
                            continue
                        step = path + [_Edge(arrive, w.op, key[0] + (f" ({key[1]})" if key[1] else ""))]
                        if accept(w.op, q, arrive):
                            return step
                        if (id(w.op), q) not in seen:
                            seen.add((id(w.op), q))
                            frontier.append((w.op, q, step))
        return None

    # -- pre-partition data flow ---------------------------------------------------------------
    @cached_property
    def _users(self) -> dict[int, list[Operation]]:
        out: dict[int, list[Operation]] = {}
        for op in self.a.ops:
            for name in op.operands:
                d = self.a.values.lookup(name, op)
                if isinstance(d, OpResult):
                    out.setdefault(id(d.op), []).append(op)
        return out

    @cached_property
    def _buffer_readers(self) -> dict[int, list[Operation]]:
        out: dict[int, list[Operation]] = {}
        for op in self.a.ops:
            for name, kind in _memory_operands(op):
                t = self._trace(name, op)
                root = getattr(t, "root", None)
                if kind == "read" and root is not None:
                    out.setdefault(id(root), []).append(op)
        return out

    def _written_roots(self, op: Operation) -> list[Operation]:
        roots = []
        for name, kind in _memory_operands(op):
            if kind == "write":
                root = getattr(self._trace(name, op), "root", None)
                if root is not None:
                    roots.append(root)
        return roots

    def dataflow_before(self, start: Operation, part: str, accept: Callable[[Operation, str], bool]) -> list[Operation] | None:
        """Pre-partition: a chain of cross-task data channels (an SSA value, or a buffer written
        by one task and read by another) from what `part` does after `start` in the same
        iteration to an op `accept` takes. Each channel becomes a forward barrier."""
        frontier: list[tuple[Operation, str, list[Operation]]] = [(start, part, [])]
        seen: set[tuple[int, str]] = {(id(start), part)}
        budget = _MAX_SEARCH
        while frontier and budget > 0:
            op, p, path = frontier.pop(0)
            for x in following_in_iteration(op):
                if p not in self.parts(x):
                    continue
                targets = list(self._users.get(id(x), []))
                for root in self._written_roots(x):
                    targets += self._buffer_readers.get(id(root), [])
                for u in targets:
                    budget -= 1
                    for q in self.parts(u):
                        if q in self.parts(x):
                            continue
                        step = path + [x, u]
                        if accept(u, q):
                            return step
                        if (id(u), q) not in seen:
                            seen.add((id(u), q))
                            frontier.append((u, q, step))
        return None

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
        from ..launch.run_condition import describe, run_condition

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
        from ..symbolic import SymbolicAnalysis

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


def single_copy_findings(analysis) -> list[Finding]:
    """`buffer.single_copy` (info): a buffer reused in a loop, written by one partition and
    read by another, with one slot — producer and consumer cannot overlap on it."""
    out = []
    for g in analysis.buffers.groups:
        if any(m.copies != 1 for m in g.members) or any(m.offset is not None for m in g.members):
            continue
        wparts = {p for a in g.writers for p in a.partitions}
        rparts = {p for a in g.readers for p in a.partitions}
        cross = sorted(rparts - wparts)
        if not wparts or not cross:
            continue
        sites = {(a.line, a.op) for a in (*g.writers, *g.readers)}
        if not any(_depth(o) > 0 for o in analysis.ops if (o.line, o.name) in sites):
            continue  # written and read once: nothing to pipeline
        label = g.members[0].label
        out.append(finding(
            Kind.BUFFER_SINGLE_COPY, Severity.info,
            f"{label} ({g.key}) has a single copy but crosses partitions ({', '.join(sorted(wparts))} → "
            f"{', '.join(cross)}): the producer waits for every release before refilling it (no pipelining).",
            lines=[m.line for m in g.members], partitions=sorted(wparts) + cross, buffer_id=g.buffer_id,
            evidence={"copies": 1, "writers": sorted(wparts), "readers": cross}))
    return out


# -- helpers --------------------------------------------------------------------------------------
def _tmem_roles(op: Operation, use_d: Callable[[Operation], str]) -> list[tuple[int, str]]:
    if op.name == "ttng.tmem_load":
        return [(0, "read")]
    if op.name == "ttng.tmem_store":
        return [(1, "write")]
    if op.name == "ttng.tmem_copy":
        return [(1, "write")]
    if op.name in MMA_OPS:
        roles = [(0, "read"), (2, "write")]
        if op.name == "ttng.tc_gen5_mma_scaled":
            roles += [(3, "read"), (4, "read")]
        if use_d(op) != "false":
            roles.append((2, "read"))
        return roles
    return []


_MEM_ROLES = {
    "ttng.tmem_load": ((0, "read"),),
    "ttng.tmem_store": ((1, "write"),),
    "ttng.tmem_copy": ((0, "read"), (1, "write")),
    "ttg.local_load": ((0, "read"),),
    "ttg.local_store": ((1, "write"),),
    "ttng.async_tma_copy_global_to_local": ((1, "write"),),
    "nvws.descriptor_load": ((1, "write"),),
    "ttng.async_tma_copy_local_to_global": ((1, "read"),),
    "ttng.tc_gen5_mma": ((0, "read"), (1, "read"), (2, "write"), (2, "read")),
    "ttng.tc_gen5_mma_scaled": ((0, "read"), (1, "read"), (2, "write"), (2, "read")),
    "ttng.warp_group_dot": ((0, "read"), (1, "read")),
}


def _memory_operands(op: Operation) -> list[tuple[str, str]]:
    roles = _MEM_ROLES.get(op.name)
    if not roles:
        return []
    pos = op.positional
    return [(pos[i], kind) for i, kind in roles if i < len(pos) and pos[i].startswith("%")]


def _bar_sync_arrives(b: Barrier, u: BarrierUse, roles: frozenset[Role]) -> bool:
    """A named barrier's `bar.sync` (`wait_barrier_named`) arrives with its threads as well as
    waiting: it releases what its partition read before it to the partitions syncing after."""
    return b.kind is BarrierKind.NAMED and u.role is Role.WAIT and bool(roles & _ARRIVES)


def _side(b: Barrier, u: BarrierUse) -> str:
    """Tokens and arefs stand for two barriers: `full` (commit → wait) and `empty` (release →
    acquire). An mbarrier is one."""
    if b.kind is BarrierKind.NVWS_TOKEN:
        return "empty" if u.role in (Role.ACQUIRE, Role.RELEASE) else "full"
    if b.kind is BarrierKind.AREF:
        return "empty" if u.role in (Role.PUT_ENTER, Role.GET_EXIT) else "full"
    return ""


def _loops(op: Operation) -> list[Operation]:
    """Enclosing loops, innermost first."""
    return [a for a in op.ancestors() if a.name in LOOP_OPS]


def _depth(op: Operation) -> int:
    return len(_loops(op))


def _cadence(writer: Operation, reader: Operation) -> str:
    return "inner" if _depth(reader) >= _depth(writer) else "outer"


def _before(op: Operation, stop: Operation | None = None) -> Iterator[Operation]:
    """Ops before `op` in program order, nearest first, climbing out of enclosing regions (loops
    included) up to the partition or function boundary, or up to `stop`."""
    cur = op
    while True:
        block = cur.block
        if block is None:
            return
        idx = next(i for i, o in enumerate(block.operations) if o is cur)
        for prev in reversed(block.operations[:idx]):
            yield from reversed(list(prev.walk()))
        parent = block.region.parent if block.region is not None else None
        if parent is None or parent is stop or parent.name in _BOUNDARY:
            return
        cur = parent


def _after(op: Operation) -> Iterator[Operation]:
    """Ops after `op` in program order, climbing out up to the partition or function boundary."""
    cur = op
    while True:
        block = cur.block
        if block is None:
            return
        idx = next(i for i, o in enumerate(block.operations) if o is cur)
        for nxt in block.operations[idx + 1:]:
            yield from nxt.walk()
        parent = block.region.parent if block.region is not None else None
        if parent is None or parent.name in _BOUNDARY:
            return
        cur = parent


def _overlaps(w: _TAccess, cols: tuple[int, int], is_owner: bool) -> bool:
    """Does writer `w` overwrite (part of) the row at `cols`, as an aliasing hazard? A
    whole-allocation writer overwrites every row, and the owner's own data spans every column.
    A `tmem_store` of exactly the row's columns is that buffer's own producer (alpha, m, l, a
    rescaled O): its channel is the ordinary producer/consumer one the phase model and the
    simulation check, not an overwrite of another buffer's columns."""
    if w.cols is None or is_owner:
        return True
    if w.cols == cols and w.op.name not in MMA_OPS:
        return False
    return w.cols[0] <= cols[1] and cols[0] <= w.cols[1]


def _value_type(values, name: str, at: Operation) -> str | None:
    d = values.lookup(name, at)
    return d.type if isinstance(d, (OpResult, BlockArgument)) else None


def _alloc_columns(alloc: Operation, aliases: dict[str, str]) -> int | None:
    """Columns of a whole TMEM allocation: one slot's columns times the leading dimensions."""
    text = alloc.result_types[0] if alloc.result_types else None
    md = parse_memdesc(text, aliases)
    per_slot = tmem_columns(text, aliases)
    if md is None or per_slot is None:
        return None
    lead = 1
    for d in md.shape[:-2]:
        lead *= d
    return per_slot * lead


def _columns(type_text: str | None) -> int | None:
    """32-bit TMEM columns a 2-D (or slot-prefixed) view spans: the last dimension, scaled by
    element width (two 16-bit elements share a column)."""
    md = parse_memdesc(type_text)
    if md is None or not md.shape:
        return None
    bits = element_bits(md.dtype) or 32
    return max(1, (md.shape[-1] * bits + 31) // 32)


def _span(cols: tuple[int, int]) -> str:
    return f"col {cols[0]}" if cols[0] == cols[1] else f"cols {cols[0]}-{cols[1]}"


def _int_attr(op: Operation, key: str) -> int | None:
    v = op.attr(key)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _label(op: Operation) -> str:
    if op.loc_name:
        return op.loc_name
    name = op.results[0] if op.results else op.name
    bare = name.lstrip("%")
    return name if bare.isdigit() else bare


def _is_zero_literal(literals: list[str]) -> bool:
    vals = [t for t in literals if t not in ("dense", "<", ">")]
    if len(vals) != 1:
        return False
    v = vals[0]
    try:
        return float.fromhex(v) == 0.0 if v.lower().startswith("0x") else float(v) == 0.0
    except ValueError:
        return False
