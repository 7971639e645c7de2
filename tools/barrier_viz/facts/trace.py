"""SSA tracing: from a barrier or buffer operand back to the allocation it views.

An engineer following `%arg35` by hand hops through memdesc views, warp_specialize captures,
loop iter_args and yields, `scf.while` arguments and `scf.if` results; one wrong hop and the
analysis is wrong. `Tracer.trace` makes every hop explicit and keeps it (`Trace.hops`), records
the slot indices applied on the way (`Trace.indices`), and never drops a value silently: a chain
it cannot follow ends with `unresolved` saying where and why.

Remote views are views too: `ttng.map_to_remote_buffer %v, %rank` is `%v` in the CTA `%rank`
names (cluster shared memory, PTX `mapa`). The tracer follows it to the allocation and records
the view in `Trace.remote`, so every fact (barrier uses, buffers, expect bytes, the graph) sees
the same storage the interpreter does (`cluster_sim.h_map_to_remote`) and the CTA it addresses.
`Trace.resolved` means "this CTA's own allocation" (what per-CTA rules may count as local);
`Trace.found` also accepts a peer CTA's copy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..ir.model import BlockArgument, Operation, ParsedIR
from ..ir.types import parse_memdesc, tmem_columns
from .values import OpResult, ValueIndex

# Operations that create the storage a barrier or buffer lives in: the roots of a trace.
ALLOCATION_OPS = frozenset(
    {
        "ttg.local_alloc",
        "ttng.tmem_alloc",
        "nvws.create_token",
        "nvws.aref.create",
        "ttg.global_scratch_alloc",
        "arith.constant",  # named barrier ids
    }
)
# Views: result aliases operand 0 (a slot of it, a sub-range, or another type over it).
VIEW_OPS = {
    "ttg.memdesc_index": "memdesc_index",
    "ttg.memdesc_subview": "memdesc_subview",
    "ttg.memdesc_subslice": "memdesc_subslice",
    "ttng.tmem_subslice": "tmem_subslice",
    "ttg.memdesc_reinterpret": "memdesc_reinterpret",
    "ttg.memdesc_trans": "memdesc_trans",
    "ttg.memdesc_reshape": "memdesc_reshape",
    "nvws.aref.buffer": "aref_buffer",
}
REMOTE_VIEW_OP = "ttng.map_to_remote_buffer"
_MAX_BRANCH_DEPTH = 64


@dataclass(frozen=True, slots=True)
class Hop:
    """One step of a trace: the value `name` (at `line`) was reached `via` this kind of hop."""

    name: str
    line: int
    via: str


@dataclass(frozen=True, slots=True)
class SlotIndex:
    """A `memdesc_index` applied on the way: the index value and where it was applied."""

    value: str
    line: int
    op: Operation = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class RemoteView:
    """A `map_to_remote_buffer` on the way: the storage of the CTA whose rank is `rank` (an SSA
    value, evaluated per CTA by `facts.cluster.RankEvaluator`)."""

    rank: str
    line: int
    op: Operation = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Trace:
    """Where a value comes from. `root` is the allocation op (or None), `root_arg` a function
    argument when the chain ends at one; `unresolved` says why a chain stopped early."""

    start: str
    root: Operation | None
    root_result: int = 0
    root_arg: BlockArgument | None = None
    hops: tuple[Hop, ...] = ()
    indices: tuple[SlotIndex, ...] = ()
    column_offset: int | None = None
    unresolved: str | None = None
    # The op (and which of its results) that ended an unresolved chain because it is not a view:
    # lets callers continue through ops they understand (e.g. `nvws.aref.put.enter` buffers).
    stop_op: Operation | None = field(default=None, compare=False, repr=False)
    stop_result: int = 0
    # TMEM slots: columns from the allocation's start that constant `memdesc_index`es add (a slot
    # of N columns at index i starts at column i*N, through reinterpretations of the allocation:
    # TLX storage aliases), and whether an index on the way was not a constant.
    slot_columns: int | None = None
    slot_dynamic: bool = False
    # The `map_to_remote_buffer` the value goes through (the peer CTA's copy), if any.
    remote: RemoteView | None = None

    @property
    def found(self) -> bool:
        """The allocation is known (in this CTA or, through a remote view, in another)."""
        return self.unresolved is None and (self.root is not None or self.root_arg is not None)

    @property
    def resolved(self) -> bool:
        """This CTA's own allocation: found, and not through a remote view."""
        return self.found and self.remote is None

    @property
    def root_name(self) -> str | None:
        if self.root is not None and self.root.results:
            return self.root.results[self.root_result]
        return self.root_arg.name if self.root_arg is not None else None

    @property
    def root_line(self) -> int | None:
        if self.root is not None:
            return self.root.line
        return self.root_arg.line if self.root_arg is not None else None

    @property
    def key(self) -> tuple[int, int] | None:
        """Identity of the allocation (same key = same logical barrier/buffer)."""
        if self.root is not None:
            return (id(self.root), self.root_result)
        if self.root_arg is not None:
            return (id(self.root_arg), -1)
        return None


class Tracer:
    """Traces SSA values of one parsed unit back to their allocations."""

    def __init__(self, ir: ParsedIR, values: ValueIndex | None = None):
        self.ir = ir
        self.values = values or ValueIndex(ir)

    def trace(self, name: str, at: Operation) -> Trace:
        """Follow `name` as used by `at` back to its allocation."""
        return self._trace(name, at, 0, frozenset())

    # -- implementation -----------------------------------------------------------------------
    def _trace(self, name: str, at: Operation, depth: int, seen: frozenset[tuple[int, str]]) -> Trace:
        start = name
        hops: list[Hop] = []
        indices: list[SlotIndex] = []
        column: int | None = None
        slots: list[int | None] = []
        remote: RemoteView | None = None
        cur_name, cur_at = name, at
        while True:
            key = (id(cur_at.parent_region), cur_name)
            if key in seen:
                return Trace(start, None, hops=tuple(hops), indices=tuple(indices),
                             unresolved=f"cycle through {cur_name} at line {cur_at.line}")
            seen = seen | {key}
            defn = self.values.lookup(cur_name, cur_at)
            if defn is None:
                return Trace(start, None, hops=tuple(hops), indices=tuple(indices),
                             unresolved=f"{cur_name} is not defined (used at line {cur_at.line})")
            if isinstance(defn, OpResult):
                op = defn.op
                if op.name in ALLOCATION_OPS:
                    hops.append(Hop(cur_name, op.line, "allocation"))
                    return self._with_slots(Trace(start, op, defn.index, None, tuple(hops), tuple(indices), column,
                                                  remote=remote), slots)
                if op.name == REMOTE_VIEW_OP and len(op.operands) > 1:
                    hops.append(Hop(cur_name, op.line, "remote_view"))
                    remote = remote or RemoteView(op.operands[1], op.line, op)
                    cur_name, cur_at = op.operands[0], op
                    continue
                via = VIEW_OPS.get(op.name)
                if via is not None and op.operands:
                    hops.append(Hop(cur_name, op.line, via))
                    if via == "memdesc_index" and len(op.operands) > 1:
                        indices.append(SlotIndex(op.operands[1], op.line, op))
                        slot = self._tmem_slot(op)
                        if slot != "smem":
                            slots.append(slot)  # type: ignore[arg-type]
                    if via == "tmem_subslice":
                        n = op.attr("N")
                        if isinstance(n, int):
                            column = (column or 0) + self._subslice_columns(op, n)
                    cur_name, cur_at = op.operands[0], op
                    continue
                if op.name in ("scf.for", "scf.while", "scf.if"):
                    hops.append(Hop(cur_name, op.line, f"{op.name.split('.')[1]}_result"))
                    return self._join(start, hops, indices, column,
                                      self._loop_result_sources(op, defn.index), depth, seen,
                                      f"result {defn.index} of {op.name} at line {op.line}", slots, remote)
                return Trace(start, None, hops=tuple(hops), indices=tuple(indices), column_offset=column,
                             unresolved=f"{cur_name} comes from {op.name} at line {op.line}, which is not a view",
                             stop_op=op, stop_result=defn.index)
            # Block argument.
            arg = defn
            block = arg.block
            region = block.region if block is not None else None
            owner = region.parent if region is not None else None
            if owner is None:
                return Trace(start, None, root_arg=arg, hops=tuple(hops + [Hop(cur_name, arg.line, "argument")]),
                             indices=tuple(indices), column_offset=column, remote=remote)
            if owner.name in ("tt.func", "func.func", "llvm.func"):
                hops.append(Hop(cur_name, arg.line, "function_argument"))
                return Trace(start, None, root_arg=arg, hops=tuple(hops), indices=tuple(indices), column_offset=column,
                             remote=remote)
            if owner.name == "ttg.warp_specialize":
                if arg.index >= len(owner.operands):
                    return Trace(start, None, hops=tuple(hops), indices=tuple(indices),
                                 unresolved=f"capture {arg.index} of warp_specialize at line {owner.line} is missing")
                hops.append(Hop(cur_name, arg.line, "capture"))
                cur_name, cur_at = owner.operands[arg.index], owner
                continue
            sources = self._block_argument_sources(owner, region.index if region else 0, block, arg)
            if sources is None:
                return Trace(start, None, hops=tuple(hops), indices=tuple(indices), column_offset=column,
                             unresolved=f"{cur_name} is an argument of {owner.name} at line {owner.line}")
            if not sources:
                return Trace(start, None, hops=tuple(hops), indices=tuple(indices), column_offset=column,
                             unresolved=f"{cur_name} is the induction variable of {owner.name} at line {owner.line}")
            hops.append(Hop(cur_name, arg.line, "iter_arg" if owner.name == "scf.for" else "loop_argument"))
            return self._join(start, hops, indices, column, sources, depth, seen,
                              f"{cur_name} (argument of {owner.name} at line {owner.line})", slots, remote)

    def _join(
        self,
        start: str,
        hops: list[Hop],
        indices: list[SlotIndex],
        column: int | None,
        sources: list[tuple[str, Operation]],
        depth: int,
        seen: frozenset[tuple[int, str]],
        what: str,
        slots: list[int | None] | None = None,
        remote: RemoteView | None = None,
    ) -> Trace:
        """Trace every value that can flow into a loop-carried or branch value; they must agree
        on one allocation (and on one remote view, if any). Branches that only lead back into
        the cycle are ignored."""
        if depth >= _MAX_BRANCH_DEPTH:
            return Trace(start, None, hops=tuple(hops), indices=tuple(indices), unresolved=f"{what}: too deep")
        found: list[Trace] = []
        cycles = 0
        for value, at in sources:
            sub = self._trace(value, at, depth + 1, seen)
            if sub.unresolved and sub.unresolved.startswith("cycle"):
                cycles += 1
                continue
            found.append(sub)
        if not found:
            # Only the cycle flows in (an scf.while after-argument fed back from the before
            # region): report it as a cycle so the enclosing join skips it too.
            reason = f"cycle through {what}" if cycles else f"{what}: no source"
            return Trace(start, None, hops=tuple(hops), indices=tuple(indices), unresolved=reason)
        resolved = [t for t in found if t.found]
        keys = {t.key for t in resolved}
        views = {t.remote for t in resolved}
        if len(keys) == 1 and len(resolved) == len(found) and len(views) > 1:
            return Trace(start, None, hops=tuple(hops), indices=tuple(indices),
                         unresolved=f"{what} is this CTA's copy on one path and a peer CTA's on another")
        if len(keys) == 1 and len(resolved) == len(found):
            first = resolved[0]
            mine = self._with_slots(Trace(start, None), slots) if slots else None
            agree = len({(t.slot_columns, t.slot_dynamic) for t in resolved}) == 1
            base, dynamic = (first.slot_columns, first.slot_dynamic) if agree else (None, True)
            if mine is not None:
                dynamic = dynamic or mine.slot_dynamic
                base = None if dynamic else (base or 0) + (mine.slot_columns or 0)
            return Trace(start, first.root, first.root_result, first.root_arg, tuple(hops) + first.hops,
                         tuple(indices) + first.indices, column if column is not None else first.column_offset,
                         slot_columns=base, slot_dynamic=dynamic, remote=remote or first.remote)
        if len(keys) > 1:
            names = ", ".join(sorted({t.root_name or "?" for t in resolved}))
            return Trace(start, None, hops=tuple(hops), indices=tuple(indices),
                         unresolved=f"{what} may be any of {names}")
        bad = next(t for t in found if not t.found)
        return Trace(start, None, hops=tuple(hops) + bad.hops, indices=tuple(indices) + bad.indices,
                     unresolved=bad.unresolved, stop_op=bad.stop_op, stop_result=bad.stop_result)

    def _tmem_slot(self, op: Operation) -> int | None | str:
        """Columns a `memdesc_index` on TMEM adds: index * columns of one slot; None when the
        index is not a constant or the slot width is not known; "smem" for other memories."""
        result = op.result_types[0] if op.result_types else None
        md = parse_memdesc(result, self.ir.aliases)
        if md is None or md.space != "tmem":
            return "smem"
        width = tmem_columns(result, self.ir.aliases)
        defn = self.values.lookup(op.operands[1], op)
        index = None
        if isinstance(defn, OpResult) and defn.op.name == "arith.constant":
            index = next((int(t) for t in defn.op.literals if t.lstrip("-").isdigit()), None)
        return None if width is None or index is None else index * width

    def _subslice_columns(self, op: Operation, n: int) -> int:
        """Columns a `tmem_subslice {N = n}` starts at: N counts elements of the row, so it is
        n * bitwidth * colStride / 32 of the sliced view (f32: n; a packed f16 P tile: n / 2)."""
        src = op.types[0] if op.types else None
        md = parse_memdesc(src, self.ir.aliases)
        if md is None or md.bits is None or md.bits >= 32:
            return n
        stride = 1
        enc = self.ir.aliases.get(md.encoding or "", md.encoding or "")
        found = re.search(r"colStride\s*=\s*(\d+)", enc)
        if found:
            stride = int(found.group(1))
        return n * md.bits * stride // 32

    @staticmethod
    def _with_slots(trace: Trace, slots: list[int | None]) -> Trace:
        if not slots:
            return trace
        dynamic = any(x is None for x in slots)
        return Trace(trace.start, trace.root, trace.root_result, trace.root_arg, trace.hops, trace.indices,
                     trace.column_offset, trace.unresolved, trace.stop_op, trace.stop_result,
                     slot_columns=None if dynamic else sum(x or 0 for x in slots), slot_dynamic=dynamic,
                     remote=trace.remote)

    def _loop_result_sources(self, op: Operation, index: int) -> list[tuple[str, Operation]]:
        """Values that can become result `index` of a loop or if."""
        out: list[tuple[str, Operation]] = []
        if op.name == "scf.for":
            init = 3 + index
            if init < len(op.operands):
                out.append((op.operands[init], op))
            out.extend(_terminator_operand(op, 0, index))
        elif op.name == "scf.while":
            # results are the scf.condition's forwarded values (operands after the condition)
            out.extend(_terminator_operand(op, 0, index + 1))
        elif op.name == "scf.if":
            for r in range(len(op.regions)):
                out.extend(_terminator_operand(op, r, index))
        return out

    def _block_argument_sources(self, owner: Operation, region_index: int, block, arg: BlockArgument):
        """Values that can flow into a loop's block argument; [] for an induction variable;
        None when the owner is not a loop we understand."""
        if owner.name == "scf.for":
            if arg.index == 0:
                return []
            k = arg.index - 1
            out: list[tuple[str, Operation]] = []
            if 3 + k < len(owner.operands):
                out.append((owner.operands[3 + k], owner))
            out.extend(_terminator_operand(owner, 0, k))
            return out
        if owner.name == "scf.while":
            k = arg.index
            if region_index == 0:
                out = []
                if k < len(owner.operands):
                    out.append((owner.operands[k], owner))
                out.extend(_terminator_operand(owner, 1, k))
                return out
            return list(_terminator_operand(owner, 0, k + 1))
        return None


def _terminator_operand(op: Operation, region_index: int, k: int) -> list[tuple[str, Operation]]:
    """Operand `k` of the terminator (last op) of each block of region `region_index`."""
    if region_index >= len(op.regions):
        return []
    out: list[tuple[str, Operation]] = []
    for block in op.regions[region_index].blocks:
        if not block.operations:
            continue
        term = block.operations[-1]
        if term.name in ("scf.yield", "scf.condition") and k < len(term.operands):
            out.append((term.operands[k], term))
    return out
