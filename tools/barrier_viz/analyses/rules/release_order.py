"""`race.use_after_release`: a partition touches a buffer after it has already released it.

A consumer gives a slot back by arriving on the slot's "empty" barrier; the producer waits on
that barrier and then overwrites the slot. Every read (or write) of the slot that the consumer
issues *after* its arrive is therefore unordered with the producer's overwrite: it can see the
next tile's data, or have its own store clobbered. The fix a kernel engineer makes is to move
the arrive after the last access (facebookexperimental/triton bee3ddcb2 and bccf37d6b: the FA
forward epilogue read `m` from the QK TMEM tile after arriving on `qk_empties`).

The rule, without running the kernel:

* a *release* is a synchronous `arrive_barrier` by partition P on barrier slot B;
* the slot's *guarded writes* are what another partition Q writes after waiting on B, in the
  same iteration of that wait's loop (nested loops included): what B hands back to Q;
* P's accesses after the release, in the same iteration and before P's next wait of any kind
  (a wait may be the acquire of the next fill, after which reading again is correct), that
  overlap a guarded write are reported.

Overlap is decided on the allocation the views lead to, as a fraction of it: a `memdesc_index`
with a constant index selects slot i of N, `memdesc_reinterpret` / `memdesc_trans` /
`memdesc_reshape` keep the extent. A view this cannot place (a runtime index, a subslice, a
loop-carried view) is not compared, so the rule stays silent rather than guess.
"""

from __future__ import annotations

from fractions import Fraction

from ...facts.barriers import BarrierKind, Role, constant_value
from ...facts.values import OpResult, captured_operand
from ...ir.model import Operation
from ...ir.types import parse_memdesc
from ..model.findings import Finding, Kind, Severity, finding
from ..model.kinds import KindDoc, Rule
from ..program.order import following_in_iteration, loop_depth, preceding_in_iteration

# Positional operands an op writes / reads as memory.
_WRITES = {
    "ttng.tc_gen5_mma": (2,),
    "ttng.tc_gen5_mma_scaled": (2,),
    "ttng.tmem_store": (1,),
    "ttg.local_store": (1,),
    "ttng.async_tma_copy_global_to_local": (1,),
    "ttng.tmem_copy": (1,),
}
_READS = {
    "ttng.tmem_load": (0,),
    "ttg.local_load": (0,),
    "ttng.tc_gen5_mma": (0, 1),
    "ttng.tc_gen5_mma_scaled": (0, 1),
    "ttng.warp_group_dot": (0, 1),
    "tt.dot": (0, 1),
    "ttng.async_tma_copy_local_to_global": (1,),
    "ttng.tmem_copy": (0,),
}
_KEEP_EXTENT = {"ttg.memdesc_reinterpret", "ttg.memdesc_trans", "ttg.memdesc_reshape"}
_WAIT_ROLES = frozenset({Role.WAIT, Role.ACQUIRE, Role.PUT_ENTER, Role.GET_ENTER})
_ARRIVE_ROLES = frozenset({Role.ARRIVE, Role.EXPECT, Role.MMA_ARRIVE, Role.COMMIT, Role.RELEASE, Role.PUT_EXIT,
                           Role.GET_EXIT})

# (id of the allocation op, ring slot, lo, hi): with `ring` None, lo/hi are fractions of the
# allocation; with `ring` = (definition of a runtime slot index, number of slots), they are
# fractions of that slot (the ring dimension indexed at run time, as barrier rings are).
Extent = tuple[int, object, Fraction, Fraction]


def extent(analysis, name: str, at: Operation, budget: int = 64) -> Extent | None:
    """The part of its allocation that memdesc `name` (used at `at`) covers, or None."""
    chain: list[Operation] = []
    cur, where = name, at
    while budget > 0:
        budget -= 1
        defn = analysis.values.lookup(cur, where)
        if isinstance(defn, OpResult):
            op = defn.op
            if op.name in ("ttg.local_alloc", "ttng.tmem_alloc"):
                lo, hi = Fraction(0), Fraction(1)
                ring = None
                for k, view in enumerate(reversed(chain)):  # from the allocation towards the access
                    if view.name == "ttg.memdesc_index":
                        placed = _slot_fraction(analysis, view)
                        if placed is None:
                            if k != 0 or (dyn := _runtime_slot(analysis, view)) is None:
                                return None
                            ring = dyn  # the access is in slot `index` of the ring: place within it
                            continue
                        i, n = placed
                        width = (hi - lo) / n
                        lo, hi = lo + i * width, lo + (i + 1) * width
                    elif view.name not in _KEEP_EXTENT:
                        return None
                return (id(op), ring, lo, hi)
            if op.name == "ttg.memdesc_index" or op.name in _KEEP_EXTENT:
                chain.append(op)
                cur, where = op.operands[0], op
                continue
            return None
        cap = captured_operand(defn)
        if cap is not None:
            cur, where = cap
            continue
        return None
    return None


def _runtime_slot(analysis, view: Operation):
    """(definition of the index, slots) of a `memdesc_index` whose index is a runtime value."""
    if len(view.operands) < 2 or not view.types:
        return None
    src = parse_memdesc(view.types[0])
    defn = analysis.values.lookup(view.operands[1], view)
    if src is None or not src.shape or defn is None:
        return None
    return defn, src.shape[0]


def _slot_fraction(analysis, view: Operation) -> tuple[int, int] | None:
    """(index, slots) of a `memdesc_index` with a constant index over a known leading dim."""
    pos = view.operands  # the index is written in brackets: not a positional operand
    if len(pos) < 2 or not view.types:
        return None
    src = parse_memdesc(view.types[0])
    defn = analysis.values.lookup(pos[1], view)
    index = constant_value(defn.op) if isinstance(defn, OpResult) else None
    if src is None or not src.shape or index is None or not 0 <= index < src.shape[0]:
        return None
    return index, src.shape[0]


def memory_accesses(analysis, op: Operation, kind: str) -> list[tuple[str, Extent]]:
    """(operand, extent) of each buffer `op` reads (`kind` "reads") or writes ("writes")."""
    return _accesses(analysis, op, _READS if kind == "reads" else _WRITES)


def _accesses(analysis, op: Operation, table: dict[str, tuple[int, ...]]) -> list[tuple[str, Extent]]:
    out = []
    pos = op.positional
    for k in table.get(op.name, ()):
        if k < len(pos):
            ext = extent(analysis, pos[k], op)
            if ext is not None:
                out.append((pos[k], ext))
    return out


def _overlap(a: tuple, b: tuple) -> bool:
    """`a`, `b`: (extent, definition of the barrier slot index it was reached with or None)."""
    (ea, bar_a), (eb, bar_b) = a, b
    if ea[0] != eb[0]:
        return False
    ring_a, ring_b = ea[1], eb[1]
    if ring_a is None and ring_b is None:
        pass
    elif ring_a is None or ring_b is None:
        return False  # one constant slot, one runtime slot: not compared
    else:
        # Runtime slots are the same slot when each side indexes the buffer ring with the index
        # of the barrier slot it synchronizes on, over rings of the same size.
        if ring_a[1] != ring_b[1] or bar_a is None or bar_b is None:
            return False
        if ring_a[0] != bar_a[0] or ring_b[0] != bar_b[0] or bar_a[1] != ring_a[1] or bar_b[1] != ring_b[1]:
            return False
    return ea[2] < eb[3] and eb[2] < ea[3]


def _barrier_slot(analysis, b, use):
    """(definition of a runtime slot index, slots of the barrier) of a barrier use, or None."""
    if not use.slots or use.slots[-1].constant is not None or not b.slots:
        return None
    ix = use.trace.indices[0] if use.trace is not None and use.trace.indices else None
    at = ix.op if ix is not None else use.op
    defn = analysis.values.lookup(use.slots[-1].value, at)
    return (defn, b.slots) if defn is not None else None


def _slot(use) -> tuple:
    return tuple(s.constant if s.constant is not None else s.value for s in use.slots)


def _same_slot(a, b) -> bool:
    """Constant slots must agree; two runtime slots may be the same slot (the buffer extents
    then decide, through the index each side uses); a constant against a runtime slot is not
    compared."""
    sa, sb = _slot(a), _slot(b)
    if len(sa) != len(sb):
        return False
    return all((isinstance(x, int) and isinstance(y, int) and x == y)
               or (not isinstance(x, int) and not isinstance(y, int)) for x, y in zip(sa, sb))


def _loosely_same(a, b) -> bool:
    """For "is this overwrite ordered after the access anyway": a runtime slot may be the same."""
    sa, sb = _slot(a), _slot(b)
    return len(sa) == len(sb) and all(not (isinstance(x, int) and isinstance(y, int)) or x == y
                                      for x, y in zip(sa, sb))


def _ordered(analysis, access: Operation, write: Operation, wait_op: Operation, uses_by_op, memo=None) -> bool:
    """Whether the overwrite is ordered after the access through another barrier: the
    releasing partition arrives on some slot after the access, and the overwriting partition
    waits on that slot in its iteration. A wait before the overwrite orders it directly. A wait
    after it orders the overwrite of the *next* iteration (the one this release lets through)
    only when it waits for the same iteration's arrival (e.g. the MMA partition waiting for P
    before the PV MMA); an acquire with the pre-inverted parity waits for the previous
    iteration's arrival and orders nothing here."""
    cache = memo.ordering if memo is not None else {}
    later = cache.get(("later", id(access)))
    if later is None:
        later = cache[("later", id(access))] = [(b, u) for op in following_in_iteration(access)
                                                for b, u in uses_by_op.get(id(op), ()) if u.role in _ARRIVE_ROLES]
    if not later:
        return False
    up = max(0, loop_depth(write) - loop_depth(wait_op))
    waits = cache.get(("waits", id(write), up))  # what is around the write depends on `up`, not on which wait
    if waits is None:
        before = [(b, u) for op in preceding_in_iteration(write, up) for b, u in uses_by_op.get(id(op), ())
                  if u.role in _WAIT_ROLES]
        after = [(b, u) for op in following_in_iteration(write, up) for b, u in uses_by_op.get(id(op), ())
                 if u.role in _WAIT_ROLES and not _inverted(analysis, u)]
        waits = cache[("waits", id(write), up)] = before + after
    if any(b1 is b2 and _loosely_same(u1, u2) for b1, u1 in later for b2, u2 in waits):
        return True
    return _ordered_by_chain(analysis, access, write, up, uses_by_op)


def _ordered_by_chain(analysis, access: Operation, write: Operation, up: int, uses_by_op) -> bool:
    """Transitively: a chain of release -> wait hops through other partitions (the coverage
    tables' happens-before search, `coverage.happens_before`) from what the releasing partition
    arrives on after the access to a wait that the overwriting partition runs before the
    overwrite in its iteration (e.g. an early K release whose refill waits for a later release
    that a third partition forwards once the K reads are done). Every hop's arrive and wait must
    be able to be the same slot (two constant slots must agree: a release of another ring slot
    orders nothing here), and no hop may be a pre-inverted acquire (it waits for the previous
    iteration's arrival, not the one after the access)."""
    from ..structure.coverage import happens_before

    mine = analysis.partitions.of(access)
    theirs = analysis.partitions.of(write)
    if not mine or not theirs:
        return False
    before = {id(x) for x in preceding_in_iteration(write, up)}
    target = theirs[0].name
    def same_slot(arrive: Operation, wait) -> bool:
        if _inverted(analysis, wait):
            return False  # a pre-inverted acquire pairs with the previous iteration's arrival
        return any(u.role in _ARRIVE_ROLES and _loosely_same(u, wait) for _, u in uses_by_op.get(id(arrive), ()))

    return happens_before(analysis, access, mine[0].name, lambda op, q, _a: q == target and id(op) in before,
                          hop=same_slot) is not None


def _inverted(analysis, use) -> bool:
    """A wait whose parity is `xori`-ed: the producer-side acquire of a pre-arrived slot."""
    if use.phase is None:
        return False
    defn = analysis.values.lookup(use.phase, use.op)
    for _ in range(4):  # through an extui/trunci of an i1 parity
        if not isinstance(defn, OpResult):
            return False
        if defn.op.name == "arith.xori":
            return True
        if defn.op.name not in ("arith.extui", "arith.trunci", "arith.extsi") or not defn.op.operands:
            return False
        defn = analysis.values.lookup(defn.op.operands[0], defn.op)
    return False


class _Memo:
    """Per-call caches, so the rule costs (releases x ops after each) rather than (arrives x
    waits x ops x guarded writes): each wait's guarded writes, each op's accesses and each
    access's later arrivals are computed once. (The uncached rule ran past 120 s on a 436 KB
    kernel with many arrives and waits per barrier.)"""

    def __init__(self, analysis):
        self.analysis = analysis
        self.accesses: dict[tuple[int, str], list] = {}
        self.guarded: dict[int, list] = {}
        self.ordering: dict[tuple, list] = {}  # `_ordered`'s arrivals after an access, waits around a write
        self.hits: dict[tuple, tuple | None] = {}  # first unordered overlapping write, per access and guard set
        self.included: dict[tuple, tuple] = {}  # the waits a release hands back to, per partition and slot shape
        self.groups: dict[tuple, dict[int, list]] = {}  # the guarded writes of a set of waits, by allocation

    def access(self, op: Operation, kind: str) -> list[tuple[str, Extent]]:
        key = (id(op), kind)
        found = self.accesses.get(key)
        if found is None:
            found = self.accesses[key] = _accesses(self.analysis, op, _READS if kind == "reads" else _WRITES)
        return found

    def guarded_by(self, b, w) -> list[tuple]:
        """What partition `w.partition` writes after wait `w`, in the same iteration."""
        found = self.guarded.get(id(w))
        if found is None:
            found = []
            slot = _barrier_slot(self.analysis, b, w)
            for op in following_in_iteration(w.op):
                if op is not w.op:
                    for _, ext in self.access(op, "writes"):
                        found.append(((ext, slot), op, w.partition, w.line, w))
            self.guarded[id(w)] = found
        return found

    def guarded_by_all(self, b, waits: list, included: tuple) -> dict[int, list]:
        """The guarded writes of the `included` waits, by allocation, each once: an entry that
        repeats an earlier one's extent, barrier slot, writing op and loop distance to its wait
        (the same write after several waits of one partition) decides overlap and ordering
        exactly as the earlier one does, so the first unordered write is the same without it.
        (Keeping every repeat made the rule arrives x waits x ops on wide kernels.)"""
        found = self.groups.get(included)
        if found is None:
            found, keys, members = {}, set(), set(included)
            for w in waits:
                if id(w) not in members:
                    continue
                for g in self.guarded_by(b, w):
                    (ext, slot), wop, wait_op = g[0], g[1], g[4].op
                    ring = ext[1]
                    key = (ext[0], None if ring is None else (id(ring[0]), ring[1]), ext[2], ext[3],
                           None if slot is None else (id(slot[0]), slot[1]), id(wop),
                           max(0, loop_depth(wop) - loop_depth(wait_op)))
                    if key not in keys:
                        keys.add(key)
                        found.setdefault(ext[0], []).append(g)
            self.groups[included] = found
        return found


def use_after_release(analysis) -> list[Finding]:
    wait_ops = {id(u.op) for b in analysis.barriers.barriers for u in b.uses if u.role in _WAIT_ROLES}
    uses_by_op: dict[int, list] = {}
    for b in analysis.barriers.barriers:
        for u in b.uses:
            uses_by_op.setdefault(id(u.op), []).append((b, u))
    out: list[Finding] = []
    seen: set[tuple[int, int]] = set()
    memo = _Memo(analysis)
    for b in analysis.barriers.barriers:
        if b.kind is not BarrierKind.MBARRIER:
            continue  # a named barrier's arrive is a rendezvous of warps, not a slot's release
        waits = [u for u in b.uses if u.role is Role.WAIT and u.partition is not None]
        for rel in b.uses:
            if rel.role is not Role.ARRIVE or rel.partition is None:
                continue
            # (extent, barrier slot), writer op, partition, wait line, wait use; by allocation
            rel_slot = _barrier_slot(analysis, b, rel)
            shape = (id(b), rel.partition, tuple(x if isinstance(x, int) else None for x in _slot(rel)))  # what _same_slot reads
            included = memo.included.get(shape)
            if included is None:
                included = memo.included[shape] = tuple(id(w) for w in waits if w.partition != rel.partition
                                                        and _same_slot(w, rel))
            guarded = memo.guarded_by_all(b, waits, included)
            group = (included, id(rel_slot[0]) if rel_slot else None, rel_slot[1] if rel_slot else None)
            if not guarded:
                continue
            for op in following_in_iteration(rel.op):
                if op is rel.op:
                    continue
                if id(op) in wait_ops:
                    break
                if (id(rel.op), id(op)) in seen:
                    continue
                for kind in ("reads", "writes"):
                    for operand, ext in memo.access(op, kind):
                        key = (group, id(op), kind, operand)
                        if key not in memo.hits:
                            memo.hits[key] = next((g for g in guarded.get(ext[0], ()) if _overlap((ext, rel_slot), g[0])
                                                   and not _ordered(analysis, op, g[1], g[4].op, uses_by_op, memo)), None)
                        hit = memo.hits[key]
                        if hit is None or (id(rel.op), id(op)) in seen:
                            continue
                        seen.add((id(rel.op), id(op)))
                        gext, wop, wpart, wline, wuse = hit
                        label = _label(b, rel)
                        out.append(finding(
                            Kind.RACE_USE_AFTER_RELEASE, Severity.error,
                            f"{rel.partition} releases {label} at line {rel.line} and then {kind} {operand} at line "
                            f"{op.line}; {wpart} waits on {_label(b, wuse)} (line {wline}) and then overwrites the same storage "
                            f"at line {wop.line}: the {kind[:-1]} is not ordered before that overwrite.",
                            lines=[rel.line, op.line, wop.line], partitions=[rel.partition, wpart], barrier=label,
                            evidence={"release_line": rel.line, "access_line": op.line, "overwrite_line": wop.line,
                                      "acquire_line": wline},
                            suggestion=f"Arrive on {label} after the last access to the buffer it releases."))
    return out


def _label(b, use) -> str:
    return b.name + "".join(f"[{s.constant if s.constant is not None else s.value}]" for s in use.slots)


RULE = Rule("release_order", __name__, use_after_release, docs=(KindDoc(
    Kind.RACE_USE_AFTER_RELEASE,
    "A partition touches a buffer after it has already released it.",
    "Finds a read or write of a slot that a partition issues after its `arrive_barrier` on the "
    "slot's empty barrier (before its next wait), overlapping what the partition that waits on "
    "that barrier writes next.",
    "The arrive hands the slot back; the producer may overwrite it at once. An access after the "
    "arrive can see the next tile's data or have its own store clobbered: wrong results (the TLX "
    "FA forward epilogue read `m` from the QK tile after arriving on `qk_empties`).",
    "ttng.arrive_barrier %qk_empty, 1\n"
    "%m = ttng.tmem_load %qk_tile               // after the release",
    "Move the arrive after the last access to the slot.",
    (Severity.error,), "Always an error (outcome: wrong results)."),))
