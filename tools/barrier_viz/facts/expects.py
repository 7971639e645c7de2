"""The expect check of `buffers`: every TMA copy (and every other op that completes transaction
bytes on a barrier: CLC responses, remote and bulk copies) with the bytes it delivers, grouped
by the barrier slot it signals, and each `barrier_expect` compared with the bytes delivered in
its window (a mismatch hangs, or completes a phase early); barriers several copies signal are
merged barriers.
"""

from __future__ import annotations

from dataclasses import replace

from ..ir.model import BlockArgument, Operation
from ..ir.types import memdesc_bytes, parse_memdesc
from .buffer_model import (BarrierRef, EXPECT, ExpectCheck, Member, MergedBarrier, TX_DELIVERY_OPS, TmaCopy,
                           Unresolved, WAIT)
from .cga import CgaUnknown, bytes_per_cta
from .transactions import (BULK_COPY, Counter, Delivery, NO_TX, REMOTE_COPY_OPS, TX_OPS, Tally, bulk_copy_operands,
                           remote_copy_bytes, remote_copy_operands)
from .values import OpResult


class _ExpectChecks:
    """TMA copies, the `barrier_expect` byte check and merged barriers, mixed into the collector
    (`buffers._Collector`), whose members, traces and partitions it reads."""

    def _tma_copies(self, by_op: dict[int, Member]) -> list[TmaCopy]:
        """Every op that delivers transaction bytes to a barrier: TMA loads, CLC try-cancel
        (its 16-byte response), remote copies (the source's bytes, in the peer CTA)."""
        out: list[TmaCopy] = []
        for op in self.ops:
            if op.name not in TX_DELIVERY_OPS:
                continue
            pos = op.positional
            if op.name in REMOTE_COPY_OPS:
                rc = remote_copy_operands(op)
                if rc is None:
                    continue
                member = self._lookup_member(pos[2], op, by_op)
                out.append(TmaCopy(op, op.line, member.name if member else None, remote_copy_bytes(op),
                                   self._barrier(rc[2], op), self._parts(op)))
                continue
            bulk = bulk_copy_operands(op)
            if op.name == BULK_COPY:
                if bulk is not None:
                    member = self._lookup_member(bulk[0], op, by_op)
                    out.append(TmaCopy(op, op.line, member.name if member else None, self._bulk_bytes(op, bulk),
                                       self._barrier(bulk[2], op), self._parts(op)))
                continue
            bar_at, data_at, fixed = TX_OPS[op.name]
            member = self._lookup_member(pos[data_at], op, by_op) if data_at < len(pos) else None
            nbytes = fixed if fixed is not None else self._copy_bytes(op, member)
            out.append(TmaCopy(op, op.line, member.name if member else None, nbytes,
                               self._barrier(pos[bar_at], op) if bar_at < len(pos) else None, self._parts(op)))
        return out

    def _copy_bytes(self, op: Operation, member: Member | None) -> int | None:
        """Bytes one copy delivers: its destination view as typed on the op (a split copy
        writes a sub-view), else the destination slot. In CGA form: one CTA's share of it."""
        for text in reversed(op.types):
            dst = parse_memdesc(text, self.ir.aliases)
            if dst is not None and dst.dtype != "i64" and dst.bytes is not None:
                if self.cga is not None:
                    try:
                        return bytes_per_cta(text, self.ir.aliases, self.cga.num_ctas)
                    except CgaUnknown:
                        return None
                return dst.bytes
        return member.slot_bytes if member is not None else None

    def _lookup_member(self, value: str, at: Operation, by_op: dict[int, Member]) -> Member | None:
        root, _ = self._root(value, at)
        return by_op.get(id(root)) if root is not None else None

    def _barrier(self, value: str, at: Operation) -> BarrierRef | None:
        trace = self._trace(value, at)
        if not trace.found:
            self.unresolved.append(Unresolved(at.name, at.line, value, trace.unresolved or "no allocation"))
            return None
        return BarrierRef(trace.root_name, trace.root_line, tuple(i.value for i in trace.indices),
                          trace.remote.rank if trace.remote is not None else None)

    def _barrier_key(self, op: Operation, index: int) -> tuple | None:
        pos = op.positional
        if index >= len(pos):
            return None
        trace = self._trace(pos[index], op)
        if not trace.resolved:
            return None
        return (trace.key, tuple(i.value for i in trace.indices))

    def _expect_checks(self, copies: list[TmaCopy]) -> tuple[list[ExpectCheck], set[int]]:
        """Pair each `barrier_expect` with the ops on the same barrier slot that follow it in
        its block (nested regions included), up to the next expect on that slot or a wait on it
        (the wait ends the phase the expect armed), and count the bytes each CTA receives."""
        by_copy = {id(c.op): c for c in copies}
        counter = Counter(self.tracer.values, self.cluster, self.cga)
        covered: set[int] = set()
        checks: list[ExpectCheck] = []
        for op in self.ops:
            if op.name != EXPECT:
                continue
            pos = op.positional
            barrier = self._barrier(pos[0], op) if pos else None
            key = self._barrier_key(op, 0)
            found: list[TmaCopy] = []
            tally = Tally(None, "its barrier operand is not resolved to an allocation")
            if key is None and barrier is not None and barrier.cta is not None:
                tally = Tally(None, f"it arms the copy of the barrier in the CTA {barrier.cta} names "
                                    "(map_to_remote_buffer): a remote expect is not counted per CTA")
            if key is not None:
                found, deliveries, blockers = self._window(op, key, by_copy, counter)
                if not deliveries and not blockers:
                    elsewhere = self._deliveries_elsewhere(op, key, by_copy)
                    if elsewhere:
                        blockers = [f"the bytes on this barrier come from ops outside the expect's block (line(s) "
                                    f"{', '.join(str(c.line) for c in elsewhere)}), which are not paired with it"]
                tally = counter.tally(op, deliveries, blockers)
                if tally.per_cta is not None and len(tally.per_cta) > 1:
                    unwaited = tuple(c for c in range(len(tally.per_cta)) if self._never_waited(op, key, c, counter))
                    tally = replace(tally, idle=tuple(sorted(set(tally.idle) | set(unwaited))))
            covered.update(id(c.op) for c in found)
            checks.append(ExpectCheck(op, op.line, barrier, _int_literal(op), tuple(found), self._parts(op),
                                      tally.per_cta, tally.reason, tally.expected, tally.idle))
        return checks, covered

    def _window(self, expect: Operation, key: tuple, by_copy: dict[int, TmaCopy], counter: Counter):
        """(copies, deliveries, blockers) of the ops after `expect` that act on its slot."""
        found: list[TmaCopy] = []
        deliveries: list[Delivery] = []
        blockers: list[str] = []
        for top in self._window_ops(expect, counter):
            for op in top.walk():
                if op.name in (EXPECT, WAIT) and self._barrier_key(op, 0) == key:
                    return found, deliveries, blockers
                pos = op.positional
                for name in dict.fromkeys(op.operands):
                    hit = self._slot_of(name, op)
                    if hit is None or hit[0][0] != key[0]:
                        continue
                    remote = hit[1]
                    k = pos.index(name) if name in pos else -1
                    same = self._same_slot(hit[0][1], op, key[1], expect, counter)
                    if same is False:
                        continue
                    d = self._delivery(op, k, remote, counter)
                    if d is not None and same is None:
                        blockers.append(f"{op.name} at line {op.line} completes bytes on a slot of the barrier array "
                                        "whose index is not computable per CTA")
                    elif d is not None:
                        if same is not True:  # a per-rank index: only the ranks that name this slot
                            d = replace(d, issues=lambda s, _d=d, _m=same: _m(s) and _d.issues(s))
                        deliveries.append(d)
                        if id(op) in by_copy:
                            found.append(by_copy[id(op)])
                    elif hit[0] != key:
                        continue  # another slot of the array, used in a way that delivers nothing
                    elif op.name not in NO_TX and op.name not in TX_OPS:
                        blockers.append(f"{op.name} at line {op.line} uses the barrier and is not modelled")
        return found, deliveries, blockers

    def _never_waited(self, expect: Operation, key: tuple, cta: int, counter: Counter) -> bool:
        """No wait on the expect's slot runs in CTA `cta` (every wait on the barrier array sits
        under a rank test that excludes it, or names another slot there). mbarrier waits are
        CTA-local, so a phase that CTA arms and never waits on stalls nothing (TLX's remote-store
        reduction: every CTA arms the slots, only CTA 0 waits). Unknown: False."""
        waits = [w for w in self.ops if w.name == WAIT and w.positional
                 and (hit := self._slot_of(w.positional[0], w)) is not None and hit[0][0] == key[0]]
        for w in waits:
            hit = self._slot_of(w.positional[0], w)
            same = self._same_slot(hit[0][1], w, key[1], expect, counter)
            if same is None:
                return False
            if same is False or (same is not True and not same(cta)):
                continue
            if counter.executes(w, None, cta) is not False:
                return False
        return True

    def _window_ops(self, expect: Operation, counter: Counter) -> list[Operation]:
        """The ops after `expect` in its block; in a cluster, when that block is the body of an
        `scf.if` on the CTA rank (one CTA arms the barrier, e.g. `if rank == 1: expect`), also
        the ops after that `scf.if`: the copies that complete the phase are issued there, often
        by a peer under its own rank test, and run after the expect in program order."""
        out: list[Operation] = []
        op = expect
        while op.block is not None:
            ops = op.block.operations
            out.extend(ops[next(i for i, o in enumerate(ops) if o is op) + 1:])
            parent = op.parent_op
            if (self.cluster.size <= 1 or parent is None or parent.name != "scf.if" or not parent.operands
                    or not counter.depends_on_rank(parent.operands[0], parent)):
                break
            op = parent
        return out

    @staticmethod
    def _same_slot(idx: tuple[str, ...], at: Operation, want: tuple[str, ...], expect: Operation,
                   counter: Counter):
        """Is the slot `idx` (indices at `at`) the expect's slot `want`? True / False for every
        CTA alike (other index values: another slot, as before), a per-rank predicate when an
        index depends on the CTA rank (TLX `barriers[cluster_cta_rank()]`), None when such an
        index cannot be computed."""
        if idx == want:
            return True
        if len(idx) != len(want) or not any(counter.depends_on_rank(a, at) for a in idx):
            return False  # another slot (an index that is the same in every CTA names it apart)
        n = max(1, counter.cluster.size)
        per_rank = []
        for s in range(n):
            got = [counter.ranks.value(a, at, s) for a in idx]
            exp = [counter.ranks.value(b, expect, s) for b in want]
            if any(v is None for v in got + exp):
                return None
            per_rank.append(got == exp)
        if all(per_rank):
            return True
        if not any(per_rank):
            return False
        return lambda s: 0 <= s < n and per_rank[s]

    def _delivery(self, op: Operation, k: int, remote: tuple[str, Operation] | None,
                  counter: Counter) -> Delivery | None:
        """The bytes `op` completes on the barrier it takes as positional operand `k`, if any."""
        spec = TX_OPS.get(op.name)
        # A remote view (`map_to_remote_buffer`) is the peer's copy: `counter.reached` names the
        # CTA it reaches (the 2-CTA TMA load completing on the pair leader's barrier).
        if spec is not None and k == spec[0]:
            bar_at, data_at, fixed = spec
            if fixed is not None:
                nbytes: int | None = fixed
            else:
                pos = op.positional
                member = self._lookup_member(pos[data_at], op, self._by_op) if data_at < len(pos) else None
                nbytes = self._copy_bytes(op, member)
            return Delivery(op, nbytes, *counter.reached(op, op.positional[bar_at]))
        rc = remote_copy_operands(op)
        if rc is not None and k == len(op.positional) - 1 and remote is None:
            return Delivery(op, remote_copy_bytes(op), *counter.reached(op, rc[2]))
        bulk = bulk_copy_operands(op)
        if bulk is not None and k == len(op.positional) - 1:
            return Delivery(op, self._bulk_bytes(op, bulk), *counter.reached(op, bulk[2]))
        return None

    def _bulk_bytes(self, op: Operation, bulk: tuple[str, str, str]) -> int | None:
        """A bulk copy's `bulk_size` (a constant), else its destination view's bytes."""
        defn = self.tracer.values.lookup(bulk[1], op)
        if isinstance(defn, OpResult) and defn.op.name == "arith.constant":
            value = next((int(t) for t in defn.op.literals if t.lstrip("-").isdigit()), None)
            if value is not None:
                return value
        return next((b for b in (memdesc_bytes(t) for t in op.types) if b is not None), None)

    def _slot_of(self, value: str, at: Operation) -> tuple[tuple, tuple[str, Operation] | None] | None:
        """(barrier slot key, remote view) of an operand that is a barrier (None otherwise); a
        `map_to_remote_buffer` view names the slot of its source and the rank operand."""
        defn = self.tracer.values.lookup(value, at)
        type_text = defn.type if isinstance(defn, (OpResult, BlockArgument)) else None
        if type_text is not None and ("i64" not in type_text or "memdesc" not in type_text):
            return None
        trace = self._trace(value, at)
        if not trace.found:
            return None
        # slot indices from the allocation outwards, as the expect's key lists them
        key = (trace.key, tuple(i.value for i in trace.indices))
        return key, ((trace.remote.rank, trace.remote.op) if trace.remote is not None else None)

    def _deliveries_elsewhere(self, expect: Operation, key: tuple, by_copy: dict[int, TmaCopy]) -> list[TmaCopy]:
        """TMA/CLC ops on the same barrier allocation (any slot) that are not in the window."""
        out = []
        for c in by_copy.values():
            spec = TX_OPS.get(c.op.name)
            pos = c.op.positional
            if spec is None or spec[0] >= len(pos):
                continue
            hit = self._slot_of(pos[spec[0]], c.op)
            if hit is not None and hit[0][0] == key[0]:
                out.append(c)
        return out

    def _merged_barriers(self, copies: list[TmaCopy]) -> tuple[MergedBarrier, ...]:
        by_barrier: dict[tuple[str | None, int | None], list[TmaCopy]] = {}
        for c in copies:
            if c.barrier is not None:
                by_barrier.setdefault((c.barrier.name, c.barrier.line), []).append(c)
        out = []
        for (name, line), group in by_barrier.items():
            members = tuple(dict.fromkeys(c.member for c in group if c.member is not None))
            if len(members) > 1:
                out.append(MergedBarrier(name, line, members, tuple(group)))
        return tuple(out)


def _int_literal(op: Operation) -> int | None:
    for lit in op.literals:
        try:
            return int(lit, 0)
        except ValueError:
            continue
    return None
