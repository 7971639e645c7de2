"""Explaining the harmless: info findings that say why an odd-looking pattern is (or is not) fine.

A reader who sees an arrive nobody waits for, a barrier nothing uses, or a wait only its own
partition satisfies cannot tell from the shape alone whether the kernel is wrong. Each rule here
answers with the ordering facts that decide it:

* `arrive.unpaired`: an arrive with no waiter (a release nobody waits for, usually a dropped
  wait). Harmless (info) when every access another partition makes to what this partition
  touched before the arrive is still ordered after it through some other release→wait chain
  (the dropped wait is covered transitively). Otherwise it is what it causes, never an info: a
  race when the dropped wait was the only guard (`race.unsynchronized_read` for a read not
  ordered after its write, `race.missing_acquire` for an overwrite; a warning, an error where a
  simulated schedule shows the two accesses unordered), a hang (warning) when a wait on the same
  barrier gets no arrival its slots could meet.
* `barrier.unused`: allocated and initialised, never waited on or arrived on: harmless.
* `channel.same_partition` (raised by `same_partition.py`) gets its consequence here: whether
  that wait is the only guard of an access another partition makes to what its partition
  touches after it.

The chains come from the coverage analysis's happens-before search (`_Coverage.happens_before`),
the same one the coverage tables use, so an explanation never disagrees with those tables.
"""

from __future__ import annotations

from ...facts.barriers import Role
from ...ir.model import Operation
from ..structure.coverage import _Coverage, _memory_operands
from ..model.findings import Finding, Kind, Severity, finding
from ..model.kinds import KindDoc, Rule
from ..model.outcome import HANG, HARMLESS, WRONG
from ..program.order import following_in_iteration, loop_depth, preceding_in_iteration

_QUIET = frozenset({Role.INIT, Role.INVAL})
_WAITS = frozenset({Role.WAIT, Role.ACQUIRE, Role.GET_ENTER, Role.PUT_ENTER})
_SETUP_OPS = frozenset({"ttg.memdesc_index", "ttng.init_barrier", "ttng.inval_barrier", "ttg.warp_specialize",
                        "ttg.local_dealloc"})


def explanation_findings(analysis, found: list[Finding]) -> list[Finding]:
    """The info findings of this module; also settles the consequence of every
    `channel.same_partition` finding in `found` (in place)."""
    ex = _Explainer(analysis)
    out = ex.unpaired_arrives() + ex.unused_barriers()
    for f in found:
        if f.kind == Kind.CHANNEL_SAME_PARTITION.value:
            ex.same_partition_consequence(f)
    return out


class _Explainer:
    def __init__(self, analysis):
        self.a = analysis
        self.cov = _Coverage(analysis)
        self._index: dict[tuple, list[tuple[Operation, str, str]]] | None = None

    # -- facts -----------------------------------------------------------------------------
    def part(self, op: Operation) -> str:
        return self.cov.parts(op)[0]

    def accesses(self, op: Operation) -> list[tuple[tuple, str, str]]:
        """(buffer key, access kind, operand) of every memory operand `op` touches. A column view
        of packed TMEM is its own buffer (root and column offset): sibling ranges do not conflict."""
        out = []
        for name, kind in _memory_operands(op):
            t = self.a.tracer.trace(name, op)
            if t.resolved:
                out.append(((t.key, getattr(t, "column_offset", None)), kind, name))
        return out

    @property
    def index(self) -> dict[tuple, list[tuple[Operation, str, str]]]:
        """Buffer root -> (op, kind, partition) of every access in scope."""
        if self._index is None:
            self._index = {}
            for op in self.a.ops:
                for key, kind, _ in self.accesses(op):
                    self._index.setdefault(key, []).append((op, kind, self.part(op)))
        return self._index

    def ordered(self, first: Operation, first_part: str, second: Operation, second_part: str,
                exclude: Operation | None = None):
        """A release→wait chain from `first` (in `first_part`) to a wait `second_part` passes
        before `second` (anywhere earlier in its program), `exclude` aside; None if there is none."""
        before = {id(p) for p in preceding_in_iteration(second, loop_depth(second))}
        return self.cov.happens_before(
            first, first_part, lambda w, q, _a: q == second_part and id(w) in before and w is not exclude)

    def cross_waits_before(self, op: Operation, part: str, exclude: Operation) -> bool:
        """Does `part` pass, before `op` in its iteration, a wait (other than `exclude`) on a
        barrier another partition arrives on? Then that wait may be what orders `op`, even where
        the chain search cannot follow it (a different loop level): not provably unguarded."""
        for prev in preceding_in_iteration(op, loop_depth(op)):
            if prev is exclude:
                continue
            for b, u in self.a.barriers.uses_at(prev):
                if u.role in _WAITS and b.alloc is not None and self.a.arrivers.get(id(b.alloc), set()) - {part}:
                    return True
        return False

    def conflicts(self, ops: list[Operation], part: str):
        """(own op, own kind, buffer, other op, other kind, other partition) for every access
        another partition makes to a buffer `ops` touch, at least one side writing."""
        seen: set[tuple] = set()
        for op in ops:
            for key, kind, name in self.accesses(op):
                for other, okind, q in self.index.get(key, []):
                    if q == part or q == "main" or "write" not in (kind, okind) or (key, q, other.line) in seen:
                        continue
                    seen.add((key, q, other.line))
                    yield op, kind, name, other, okind, q

    # -- rules -----------------------------------------------------------------------------
    def unpaired_arrives(self) -> list[Finding]:
        from ..structure.graph import build_graph

        out: list[Finding] = []
        by_id = {b.id: b for b in self.a.barriers.barriers}
        unmatched = build_graph(self.a).unmatched
        for u in unmatched:
            if u.kind != "arrive without wait" or u.partition == "main" or u.barrier not in by_id:
                continue
            b = by_id[u.barrier]
            arrives = [x for x in b.uses if x.line in u.lines and x.role not in _QUIET | _WAITS]
            if not arrives:
                continue
            last = max(arrives, key=lambda x: x.line).op
            scope = [x.op for x in arrives] + [p for p in preceding_in_iteration(last) if self.part(p) == u.partition]
            covered, open_ = [], []
            for own, kind, name, other, okind, q in self.conflicts(scope, u.partition):
                chain = self.ordered(own, u.partition, other, q)
                what = f"{q}'s {okind} of {name} at line {other.line} after {u.partition}'s {kind} at line {own.line}"
                if chain is None:
                    open_.append((what, own, other, q, kind, okind))
                else:
                    via = "; ".join(f"{e.barrier}: line {e.arrive.line} → line {e.wait.line}" for e in chain)
                    covered.append(f"{what} (via {via})")
            head = (f"The arrive at line(s) {', '.join(map(str, u.lines))} on {u.barrier_name} in {u.partition} has no "
                    "waiter (an arrival nobody waits for).")
            starved = [w for w in unmatched if w.kind == "wait without arrive" and w.barrier == u.barrier]
            if starved:
                # The arrival is meant for a wait that no arrive reaches: that wait hangs where it runs (the
                # hang comes first: a race the missing order would allow is never reached).
                waits = sorted({ln for w in starved for ln in w.lines})
                out.append(finding(
                    Kind.ARRIVE_UNPAIRED, Severity.warning,
                    f"{head} Not harmless: the wait(s) on the same barrier at line(s) {', '.join(map(str, waits))} "
                    f"({', '.join(sorted({w.partition for w in starved}))}) get no arrival this arrive could give "
                    "(their slots never meet): a hang wherever such a wait runs.",
                    lines=[*u.lines, *waits], partitions=[u.partition, *(w.partition for w in starved)],
                    barrier=u.barrier_name, evidence={"consequence": HANG, "waits": waits},
                    suggestion="Make the arrive and the wait use the same barrier slot (index and phase)."))
                continue
            if open_:
                # What it is: a race (severity follows outcome; `check` makes it an error where one of
                # its runs shows the same two accesses unordered: verdicts._reported).
                what, own, other, q, kind, okind = open_[0]
                race = Kind.RACE_UNSYNCHRONIZED_READ if (kind, okind) == ("write", "read") else Kind.RACE_MISSING_ACQUIRE
                out.append(finding(
                    race, Severity.warning,
                    f"{head} Nothing orders {what}; the wait this arrive was meant for is its only guard"
                    + (f" (and {len(open_) - 1} more unordered access(es))" if len(open_) > 1 else "")
                    + ": a race (no chain of release and wait orders the two accesses).",
                    lines=[*u.lines, own.line, other.line], partitions=[u.partition, q], barrier=u.barrier_name,
                    evidence={"arrive_unpaired": list(u.lines), "covered": covered,
                              "unordered": [w for w, *_ in open_]},
                    suggestion=f"Wait on {u.barrier_name} in the partition that accesses the data next, or order "
                               f"line {other.line} after line {own.line} through another barrier."))
                continue
            if covered:
                msg = f"{head} Harmless: another wait orders the reuse: {'; '.join(covered[:3])}."
                lines, parts, consequence = list(u.lines), [u.partition], HARMLESS
            else:
                msg = f"{head} Harmless: nothing {u.partition} touches before it is accessed by another partition."
                lines, parts, consequence = list(u.lines), [u.partition], HARMLESS
            out.append(finding(Kind.ARRIVE_UNPAIRED, Severity.info, msg, lines=lines, partitions=parts,
                               barrier=u.barrier_name, evidence={"consequence": consequence, "covered": covered}))
        return out

    def unused_barriers(self) -> list[Finding]:
        out: list[Finding] = []
        for b in self.a.barriers.barriers:
            if b.alloc is None or any(x.role not in _QUIET for x in b.uses):
                continue
            names = {b.name, *(a.name for a in b.aliases)}
            if any(op.name not in _SETUP_OPS and names & set(op.operands) for op in self.a.ops):
                continue  # passed to an op the barrier facts do not model: not provably unused
            inits = sorted({x.line for x in b.uses if x.role is Role.INIT})
            out.append(finding(
                Kind.BARRIER_UNUSED, Severity.info,
                f"{b.name} is allocated at line {b.line}" + (f" and initialised at line(s) {', '.join(map(str, inits))}"
                                                           if inits else "")
                + ", but nothing waits on it or arrives on it: harmless (it only occupies its shared-memory slot).",
                lines=[b.line, *inits], barrier=b.name, evidence={"consequence": HARMLESS}))
        return out

    def same_partition_consequence(self, f: Finding) -> None:
        """Whether the same-partition wait of `f` is the only guard of a cross-partition access."""
        at = sorted(set(f.lines) - set(f.evidence.get("arrive_lines") or []))
        wait = next((op for op in self.a.ops if at and op.line == at[0] and op.name == "ttng.wait_barrier"), None)
        if wait is None:
            return
        part = self.part(wait)
        after = [op for op in _following(wait) if self.part(op) == part]
        for own, kind, name, other, okind, q in self.conflicts(after, part):
            if self.ordered(other, q, own, part, exclude=wait) is None and not self.cross_waits_before(own, part, wait):
                f.message += (f" It is the only wait before {part}'s {kind} of {name} at line {own.line}, which {q} "
                              f"{'writes' if okind == 'write' else 'reads'} at line {other.line}: that access is unordered.")
                f.evidence["consequence"] = WRONG
                f.lines = sorted(set(f.lines) | {own.line, other.line})
                if f.severity is Severity.info:
                    f.severity = Severity.warning  # wrong results are never an info
                f.settle_outcome()
                return
        f.message += (" It is not the only guard of anything another partition touches: harmless, but it orders "
                      "nothing.")
        f.evidence["consequence"] = HARMLESS
        f.settle_outcome()


def _following(op: Operation) -> list[Operation]:
    return list(following_in_iteration(op))[1:]


RULE = Rule("explanations", __name__, explanation_findings, reads_findings=True,
            also_emits=(Kind.RACE_UNSYNCHRONIZED_READ, Kind.RACE_MISSING_ACQUIRE), docs=(
    KindDoc(
        Kind.ARRIVE_UNPAIRED,
        "An arrive nobody waits for, with what it means for the kernel.",
        "Finds an arrive on a barrier no wait polls (usually the release of a dropped wait) and "
        "decides, from the same release-wait chains the coverage tables use, whether every access "
        "it was meant to order is still ordered some other way.",
        "Harmless when another chain orders the reuse. Otherwise the dropped wait was the only "
        "guard: the finding becomes the race it allows (`race.unsynchronized_read` or "
        "`race.missing_acquire`), or a hang when a wait on the same barrier gets no arrival its "
        "slot could meet.",
        "ttng.arrive_barrier %empty, 1             // no partition waits on %empty",
        "Add the producer's wait on %empty before its refill, or drop the arrive if another barrier orders it.",
        (Severity.warning, Severity.info),
        "Info when harmless; a warning (outcome: hang) when a wait on the barrier starves."),
    KindDoc(
        Kind.BARRIER_UNUSED,
        "A barrier allocated and initialised but never waited on or arrived on.",
        "Finds an mbarrier whose only uses are its allocation, `init_barrier` and `inval_barrier`.",
        "Nothing is wrong at run time; it is dead code (often a channel a pass made and then "
        "bypassed) that costs shared memory and makes the barrier table harder to read.",
        "%bar = ttg.local_alloc ...\n"
        "ttng.init_barrier %bar, 1                 // and nothing else uses %bar",
        "Remove the allocation and its init.",
        (Severity.info,), "Always info (harmless)."),
))
