"""The mutation engine's parts every operator shares: `Source` (the IR text, its parsed facts and
byte-level edits), `Mutant` (one edited kernel with what it must and must not produce) and the
vocabulary of expectations (`HANG`, the read/write op sets).

The operators live in `mutate_ops` (generic edits), `mutate_handwritten` (hand-written idioms),
`mutate_cluster` (cluster operators) and `mutate_data` (data-dependent edits); they import this
module, and `mutate` joins their tables into one `OPERATORS` and runs them (`mutants()`). Why
each operator's truth holds is explained in `mutate`.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..analysis import Analysis
from ..facts.barriers import Barrier, BarrierKind, BarrierUse, Role, constant_value
from ..ir.model import Operation
from ..session import select

# Roles that count one arrival against a barrier's pending count (a TMA copy only delivers
# transaction bytes; its arrival is the `barrier_expect`).
ARRIVALS = frozenset({Role.ARRIVE, Role.EXPECT, Role.COMMIT, Role.MMA_ARRIVE})
# Expected-kind group: any finding whose kind is one of the hang kinds (findings.HANG_KINDS).
HANG = "hang"
# What a dropped wait cannot cause: it makes no phase operand constant and changes no byte count.
# (It can cause a hang through parity aliasing, so hangs are not listed.)
NOT_FROM_DROPPED_WAIT = ["phase.constant_in_loop", "expect.bytes_mismatch"]
NO_ERRORS_BENIGN = ["deadlock.*", "phase.constant_in_loop", "expect.bytes_mismatch", "race.*"]
GPU_NOTE = "observed on H200 for this operator in ../shared/corpus/gpu/gemm_ws_sm90_stages4"
READ_OPS = frozenset({"ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled", "ttng.warp_group_dot", "ttg.local_load",
                      "ttng.tmem_load", "ttng.async_tma_copy_local_to_global"})
WRITE_OPS = frozenset({"ttng.barrier_expect", "ttng.async_tma_copy_global_to_local", "ttg.local_store",
                       "ttng.tmem_store", "ttg.async_copy_global_to_local"})


@dataclass
class Mutant:
    """One edited kernel with what it must and must not produce."""

    name: str
    operator: str
    text: str
    findings: list[dict]
    absent: list[str]
    why: str
    line: int
    edit: str = ""
    extra: dict = field(default_factory=dict)

    def describe(self) -> dict:
        return {"operator": self.operator, "line": self.line, "edit": self.edit, **self.extra}


def _original_line(text: str, line: int) -> str:
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return ""
    one = " ".join(lines[line - 1].split())
    return one[:200]


class Source:
    """The IR text as bytes plus its parsed facts; builds edited copies without touching it."""

    def __init__(self, text: str):
        self.text = text
        self.raw = text.encode()
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "input.ttgir"
            path.write_bytes(self.raw)
            self.sel = select(str(path), require_function=True)
            self.analysis = Analysis(self.sel)
            self.barriers: list[Barrier] = [b for b in self.analysis.barriers.barriers
                                            if b.kind is BarrierKind.MBARRIER and b.alloc is not None]
            _ = self.analysis.partitions  # computed while the file exists (lazy facts read nothing else)
        self.ops = list(self.analysis.ops)

    # -- byte-level edits -----------------------------------------------------------------
    def op_bytes(self, op: Operation) -> bytes:
        return self.raw[op.start_byte:op.end_byte]

    def line_span(self, op: Operation) -> tuple[int, int]:
        """Byte span of the whole source lines the op occupies (with the newline)."""
        start = self.raw.rfind(b"\n", 0, op.start_byte) + 1
        end = self.raw.find(b"\n", op.end_byte)
        return start, (len(self.raw) if end < 0 else end + 1)

    def indent(self, op: Operation) -> bytes:
        start, _ = self.line_span(op)
        return self.raw[start:op.start_byte]

    def alone_on_line(self, op: Operation) -> bool:
        start, end = self.line_span(op)
        rest = self.raw[op.end_byte:end].strip()
        return not self.raw[start:op.start_byte].strip() and (not rest or rest.startswith(b"loc("))

    def splice(self, edits: list[tuple[int, int, bytes]]) -> str:
        out = self.raw
        for start, end, new in sorted(edits, reverse=True):
            out = out[:start] + new + out[end:]
        return out.decode()

    def delete_op(self, op: Operation) -> str | None:
        if not self.alone_on_line(op):
            return None
        start, end = self.line_span(op)
        return self.splice([(start, end, b"")])

    def duplicate_op(self, op: Operation) -> str | None:
        if not self.alone_on_line(op):
            return None
        start, end = self.line_span(op)
        return self.splice([(end, end, self.raw[start:end])])

    def replace_in_op(self, op: Operation, old: str, new: str, before: list[str] = ()) -> str | None:
        """Replace the single occurrence of `old` in the op's text; optionally insert lines
        (same indentation) before the op. None when `old` is not there exactly once."""
        seg = self.op_bytes(op)
        if seg.count(old.encode()) != 1:
            return None
        k = seg.index(old.encode())
        edits = [(op.start_byte + k, op.start_byte + k + len(old.encode()), new.encode())]
        if before:
            start, _ = self.line_span(op)
            ind = self.indent(op)
            edits.append((start, start, b"".join(ind + line.encode() + b"\n" for line in before)))
        return self.splice(edits)

    def insert_after(self, op: Operation, lines: list[str]) -> str:
        _, end = self.line_span(op)
        ind = self.indent(op)
        return self.splice([(end, end, b"".join(ind + line.encode() + b"\n" for line in lines))])

    # -- facts ------------------------------------------------------------------------------
    def defining_op(self, name: str) -> Operation | None:
        for op in self.ops:
            if name in op.results:
                return op
        return None

    def constant_of(self, name: str | None) -> int | None:
        return constant_value(self.defining_op(name)) if name else None

    def arrivals(self, b: Barrier) -> list[BarrierUse]:
        return [u for u in b.uses if u.role in ARRIVALS]

    def waits(self, b: Barrier) -> list[BarrierUse]:
        return [u for u in b.uses if u.role is Role.WAIT]

    def needs_completion(self, b: Barrier) -> bool:
        """Some wait on `b` cannot pass without a phase completing: one inside a loop (its
        parity alternates, so within two iterations it awaits a fresh phase), or one outside
        loops awaiting parity 0 of a freshly initialized barrier."""
        for w in self.waits(b):
            if w.loop_depth >= 1 and self.constant_of(w.phase) is None:
                return True
            if self.constant_of(w.phase) == 0:
                return True
        return False

    def partitions_of(self, uses: list[BarrierUse]) -> set[str]:
        return {p for u in uses for p in (u.partitions or ((u.partition,) if u.partition else ("main",)))}

    def next_sync_or_memory_op(self, op: Operation) -> Operation | None:
        """The first later op in the same block that is a barrier op or a memory access."""
        block = op.block
        if block is None:
            return None
        ops = block.operations
        k = ops.index(op)
        for nxt in ops[k + 1:]:
            for inner in nxt.walk():
                if inner.name in READ_OPS or inner.name in WRITE_OPS or self.analysis.barriers.uses_at(inner):
                    return inner
        return None


def _parses_cleanly(text: str) -> bool:
    from ..ir.parse import parse_ir

    return not parse_ir(text).diagnostics
