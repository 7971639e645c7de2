"""TMEM accesses for the coverage tables: every read and write of a TMEM allocation, with the
columns it touches (through views and slot indices), its label and partitions, and the state of
an MMA's useD flag (false, false on the first iteration, true, or dynamic).
"""

from __future__ import annotations

from functools import cached_property

from ....facts.buffers import parse_memdesc
from ....facts.trace import VIEW_OPS
from ....facts.values import OpResult
from ....ir.model import BlockArgument, Operation
from ....ir.types import tmem_columns
from .common import TMEM_ALLOC, _TAccess, _alloc_columns, _columns, _tmem_roles, _value_type


class _TmemAccesses:
    """Every TMEM read and write: its allocation (root), columns, view label and partitions, and
    the state of an MMA's useD flag."""

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
