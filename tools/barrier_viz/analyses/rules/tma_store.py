"""`race.tma_store_reuse`: a TMA store's shared-memory source is rewritten before the store has
finished reading it, or the program exits while stores still read shared memory.

A bulk tensor store (`ttng.async_tma_copy_local_to_global`, Gluon's
`tma.async_copy_shared_to_global`, TLX's `async_descriptor_store`, and the reduce / scatter
forms) reads its SMEM source asynchronously. The read ends only at a store wait that retires
it: `async_tma_store_wait {pendings = N}` (`cp.async.bulk.wait_group.read N`: at most the N
most recent stores of the thread still read) or `async_tma_store_token_wait` on the store's
token (AutoWS). So the thread that stores a staging buffer may rewrite it (`local_store`, a TMA
load into it) only after such a wait: otherwise the store may send the next tile's data
(ir-semantics §3.14). The same holds at exit: the SMEM of a program that exits is handed to the
next program the SM runs.

This rule reads the partition's program order (the interpreter models the same thing
dynamically: the store is an async agent whose read ends at the retiring wait, so the
happens-before check sees a rewrite by any partition). From each store it follows what runs
next, counting the stores issued since, until a wait retires it:

* on to the end of the loop iteration and around the loop to the store again (the next
  iteration's rewrite of the same buffer): a write to the same view first is a race. Views are
  compared by allocation and slot; a slot given by a runtime index is compared only within one
  iteration (across iterations the same SSA name holds another slot);
* out of every loop to the end of the partition: a store still unretired there is in flight at
  exit. That is a race when the program's SMEM can go to another program of the grid (one tile
  per program); in a persistent kernel (a tile loop stepping by the program count, or a `while`
  over a scheduler / CLC) no program of the grid follows it on the SM, and the rule says so as
  a `model.limit` note, not a verdict.

Conservative where the IR is not straight-line: ops inside an `scf.if` or an inner loop count
as executed once (a wait there retires, a store there counts), so branches never add findings.
Unstructured control flow (SCF lowered to `cf.br` blocks, late dumps) is not followed: a
`model.limit` note says so.
"""

from __future__ import annotations

from typing import Iterator

from ...facts.barriers import Role
from ...facts.values import OpResult
from ...ir.model import Operation
from ...ir.vocab import LOOP_OPS
from ..model.findings import Finding, Kind, Severity, finding
from ..model.kinds import KindDoc, Rule
from ..program.operands import TMA_STORE_OPS, slot_key, traced_root
from ..program.order import following_in_iteration, innermost_loop, loop_depth, same_iteration

_STORE_WAIT = "ttng.async_tma_store_wait"
_RELEASES = frozenset({Role.ARRIVE, Role.RELEASE})
_WAITS = frozenset({Role.WAIT, Role.ACQUIRE})
_TOKEN_WAIT = "ttng.async_tma_store_token_wait"
# Ops that write shared memory, with the position of the written operand.
_WRITES = {"ttg.local_store": 1, "ttng.async_tma_copy_global_to_local": 1, "ttng.async_tma_gather": 1,
           "ttg.async_copy_global_to_local": 1}


def tma_store_reuses(analysis) -> list[Finding]:
    out: list[Finding] = []
    stores = [op for op in analysis.ops if op.name in TMA_STORE_OPS and len(op.positional) > 1]
    if not stores:
        return out
    exits: list[Operation] = []
    seen: set[tuple[int, int]] = set()
    unstructured = [s for s in stores if _in_cfg(s)]
    if unstructured:
        lines = sorted({s.line for s in unstructured})
        out.append(finding(
            Kind.MODEL_LIMIT, Severity.info,
            f"TMA store retirement not judged for the store(s) at line(s) {', '.join(map(str, lines))}: they sit in "
            "unstructured control flow (blocks joined by cf.br), whose paths this rule does not follow.",
            lines=lines, evidence={"rule": Kind.RACE_TMA_STORE_REUSE.value, "store_lines": lines}))
    for s in stores:
        if _in_cfg(s):
            continue
        src = _view(analysis, s.positional[1], s)
        if src is None:
            continue
        for w, release in _rewrites(analysis, s, src):
            if (id(s), id(w)) in seen:
                continue
            seen.add((id(s), id(w)))
            out.append(_rewrite_finding(analysis, s, w, release))
        if _in_flight_at_exit(analysis, s):
            exits.append(s)
    if exits:
        out += _exit_findings(analysis, exits)
    return out


# -- paths --------------------------------------------------------------------------------------
def _in_cfg(op: Operation) -> bool:
    """Is `op` in a region of several blocks (SCF lowered to `cf.br`), up to its partition?"""
    cur = op
    while cur is not None and cur.block is not None and cur.block.region is not None:
        region = cur.block.region
        if len(region.blocks) > 1:
            return True
        cur = region.parent
        if cur is None or cur.name in ("ttg.warp_specialize", "tt.func", "func.func"):
            break
    return False


def _rewrites(analysis, store: Operation, src: tuple) -> Iterator[tuple[Operation, Operation | None]]:
    """Writes to `src` before a wait retires `store`: by the storing thread around its loop,
    and by another partition that waits, before its write, on a barrier the storing thread
    arrives on while the store is still in flight (a release of the buffer before its store
    wait)."""
    released: dict[tuple, Operation] = {}
    for w in _own_rewrites(analysis, store, src, released):
        yield w, None
    if released:
        yield from _released_rewrites(analysis, store, src, released)


def _own_rewrites(analysis, store: Operation, src: tuple, released: dict) -> Iterator[Operation]:
    loop = innermost_loop(store)
    part = analysis.partition_name(store)
    rest = list(following_in_iteration(store))[1:]
    wrap: list[Operation] = []
    if loop is not None and _inside_partition(store, loop):
        body = loop.regions[-1].blocks[0].operations if loop.regions and loop.regions[-1].blocks else []
        for top in body:
            if top is store or store in list(top.walk()):
                break
            wrap.extend(top.walk())
    issued = 0
    for k, op in enumerate(rest + wrap):
        if analysis.partition_name(op) != part:
            continue
        if _retires(analysis, op, store, issued):
            return
        if op.name in TMA_STORE_OPS:
            issued += 1
        if op.name == _TOKEN_WAIT:
            continue  # its arrivals follow the retirement of its own store: that store's release
        for b, u in analysis.barriers.uses_at(op):
            if u.role in _RELEASES:
                released.setdefault((b.id, slot_key(u)), op)
        at = _WRITES.get(op.name)
        if at is None or at >= len(op.positional):
            continue
        dst = _view(analysis, op.positional[at], op)
        if dst is not None and _overlap(src, dst, same_iteration=k < len(rest)):
            yield op


def _released_rewrites(analysis, store: Operation, src: tuple,
                       released: dict) -> Iterator[tuple[Operation, Operation]]:
    """Writes to `src` by other partitions ordered after the storing thread only by an
    arrival it makes while the store still reads (slots compared when both are constants)."""
    part = analysis.partition_name(store)
    for w in analysis.ops:
        at = _WRITES.get(w.name)
        if at is None or at >= len(w.positional) or analysis.partition_name(w) in (part, None):
            continue
        dst = _view(analysis, w.positional[at], w)
        if dst is None or dst[0] != src[0] or any(
                isinstance(x, int) and isinstance(y, int) and x != y for x, y in zip(src[1], dst[1])):
            continue
        # The writer's acquire on each barrier is its nearest wait on it (before the write in the
        # iteration, else the rotated one after it): farther waits guard other slots or uses.
        nearest: set[str] = set()
        for p in same_iteration(w, loop_depth(w)):
            waits = [(b, u) for b, u in analysis.barriers.uses_at(p) if u.role in _WAITS and b.id not in nearest]
            nearest.update(b.id for b, _ in waits)
            hit = next((key for b, u in waits for key in released
                        if key[0] == b.id and _same_slot(key[1], slot_key(u))), None)
            if hit is not None:
                yield w, released[hit]
                break


def _same_slot(a: tuple, b: tuple) -> bool:
    """Slots of one barrier array that may be the same: constants must be equal (a runtime
    index in another partition is another SSA name: it may be any slot)."""
    return all(not (isinstance(x, int) and isinstance(y, int)) or x == y for x, y in zip(a, b))


def _in_flight_at_exit(analysis, store: Operation) -> bool:
    """Is `store` still unretired when its partition (or, in the default region, the function)
    ends, on the path that leaves every loop around it after this iteration?"""
    part = analysis.partition_name(store)
    path = list(following_in_iteration(store, levels=loop_depth(store)))[1:]
    path += _after_fork(store)
    issued = 0
    for op in path:
        if analysis.partition_name(op) not in (part, None):
            continue
        if _retires(analysis, op, store, issued):
            return False
        if op.name in TMA_STORE_OPS:
            issued += 1
    return True


def _after_fork(op: Operation) -> list[Operation]:
    """What the main thread runs after `ttg.warp_specialize` when `op` is in its default region
    (the default warps are the main thread's), else nothing."""
    ws = next((a for a in op.ancestors() if a.name == "ttg.warp_specialize"), None)
    if ws is None:
        return []
    region = next((r for r in ws.regions if op in _region_ops(r)), None)
    if region is None or region.label != "default" or ws.block is None:
        return []
    ops = ws.block.operations
    idx = next((i for i, o in enumerate(ops) if o is ws), len(ops))
    return [x for top in ops[idx + 1:] for x in top.walk()]


def _region_ops(region) -> list[Operation]:
    return [x for top in region.operations() for x in top.walk()]


def _inside_partition(op: Operation, loop: Operation) -> bool:
    return not any(a.name == "ttg.warp_specialize" for a in op.ancestors() if a is not loop
                   and loop in a.ancestors())


def _retires(analysis, op: Operation, store: Operation, issued: int) -> bool:
    """Does `op` end `store`'s read, with `issued` stores of the thread issued after it?"""
    if op.name == _STORE_WAIT:
        n = op.attr("pendings")
        n = n if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else 0
        return issued >= n
    if op.name == _TOKEN_WAIT:
        # The store's own token, or one this rule does not follow (carried through a loop):
        # retired. Only another store's token leaves this one in flight.
        token = op.positional[0] if op.positional else None
        if token is None or not store.results or token == store.results[0]:
            return True
        d = analysis.values.lookup(token, op)
        return not (isinstance(d, OpResult) and d.op.name in TMA_STORE_OPS)
    return False


# -- views --------------------------------------------------------------------------------------
def _view(analysis, name: str, at: Operation) -> tuple | None:
    """(allocation key, slot indices) of a shared-memory operand; a slot is an int when its
    index is a constant, else the SSA name of the index."""
    key = traced_root(analysis, name, at)
    if key is None:
        return None
    t = analysis.tracer.trace(name, at)
    slots = []
    for i in t.indices:
        d = analysis.values.lookup(i.value, i.op)
        if isinstance(d, OpResult) and d.op.name == "arith.constant" and d.op.literals:
            try:
                slots.append(int(d.op.literals[0]))
                continue
            except ValueError:
                pass
        slots.append(i.value)
    return (key, tuple(slots))


def _overlap(a: tuple, b: tuple, same_iteration: bool) -> bool:
    if a[0] != b[0]:
        return False
    for x, y in zip(a[1], b[1]):
        if isinstance(x, int) and isinstance(y, int):
            if x != y:
                return False
        elif not (same_iteration and x == y):
            return False  # a runtime slot: another value in another iteration (or unknown)
    return True


# -- findings -----------------------------------------------------------------------------------
def _name(store: Operation) -> str:
    return store.positional[1] if len(store.positional) > 1 else "its source"


def _rewrite_finding(analysis, store: Operation, write: Operation, release: Operation | None) -> Finding:
    part = analysis.partition_name(store) or "main"
    writer = analysis.partition_name(write) or "main"
    if release is None:
        where = "later in the same iteration" if write.line > store.line else "in the next iteration"
        what = (f"{part} rewrites {_name(store)} at line {write.line} ({write.name}, {where}) while its TMA store at "
                f"line {store.line} may still be reading it: no async_tma_store_wait (with few enough pendings) or "
                "store token wait retires that store first")
        fix = ("Put an async_tma_store_wait before the rewrite (pendings = the number of stores issued after this one "
               "that may stay in flight; 0 for a single staging buffer).")
    else:
        what = (f"{part} releases {_name(store)} (the arrive at line {release.line}) before a store wait retires its "
                f"TMA store at line {store.line}, and {writer} rewrites it at line {write.line} ({write.name}) after "
                "waiting for that release: the store may still be reading it")
        fix = "Move the release after an async_tma_store_wait (or the store's token wait) that retires this store."
    return finding(
        Kind.RACE_TMA_STORE_REUSE, Severity.error,
        f"{what}, so the store can send the new data instead of the old.",
        lines=[store.line, write.line] + ([release.line] if release is not None else []),
        partitions=list(dict.fromkeys([part, writer])),
        evidence={"store_line": store.line, "write_line": write.line, "buffer": _name(store),
                  "release_line": release.line if release is not None else None},
        suggestion=fix)


def _exit_findings(analysis, stores: list[Operation]) -> list[Finding]:
    lines = sorted({s.line for s in stores})
    parts = sorted({analysis.partition_name(s) or "main" for s in stores})
    persistent = _persistent(analysis, stores)
    text = (f"the TMA store(s) at line(s) {', '.join(map(str, lines))} ({', '.join(parts)}) may still be reading shared "
            "memory when the program exits: no async_tma_store_wait {pendings = 0} (or token wait) follows them")
    if persistent:
        return [finding(
            Kind.MODEL_LIMIT, Severity.info,
            f"Not judged: {text}. Harmless only if no other program of the grid starts on this SM after this one "
            f"(the loop at line {persistent.line} makes the kernel persistent: one program per SM, or a CLC / "
            "scheduler loop that runs until no tile is left); a launch with more programs than that gets its SMEM "
            "while the store reads it.",
            lines=lines, partitions=parts, evidence={"rule": Kind.RACE_TMA_STORE_REUSE.value, "store_lines": lines})]
    return [finding(
        Kind.RACE_TMA_STORE_REUSE, Severity.error,
        f"{text[0].upper()}{text[1:]}. The program handles one tile: its shared memory goes to the next program the "
        "SM runs, whose writes the store can then send.",
        lines=lines, partitions=parts, evidence={"store_lines": lines, "at_exit": True},
        suggestion="End the partition (or the kernel) with async_tma_store_wait {pendings = 0} after the last store.")]


def _persistent(analysis, stores: list[Operation]) -> Operation | None:
    """The loop around a store that makes the kernel persistent: an `scf.while` (a tile
    scheduler, CLC) or an `scf.for` whose bounds or step use a program id or count."""
    from ..launch.input_points import model_of
    from ..launch.trip_counts import variables

    model = model_of(analysis)
    sites = {id(s.op): s for s in model.sites} if model is not None else {}
    for s in stores:
        for loop in (a for a in s.ancestors() if a.name in LOOP_OPS):
            if loop.name == "scf.while":
                return loop
            site = sites.get(id(loop))
            if site is not None and any(k in ("pid", "nprog")
                                        for n in (site.lb, site.step) for k, _ in variables(n)):
                return loop
    return None


RULE = Rule("tma_store", __name__, tma_store_reuses, also_emits=(Kind.MODEL_LIMIT,), docs=(KindDoc(
    Kind.RACE_TMA_STORE_REUSE,
    "A TMA store's SMEM source is rewritten, or the program exits, before a store wait retires it.",
    "Follows each bulk tensor store (`async_tma_copy_local_to_global`, reduce, scatter) through "
    "its partition's program order until an `async_tma_store_wait` (or token wait) retires it, "
    "and reports a write to the same staging view first, or the end of the program. Runs report "
    "it too (the store is an async reader until its wait).",
    "The store reads shared memory asynchronously. A rewrite of the staging buffer before the "
    "wait may send the next tile's data to global memory; at exit, the SMEM goes to the next "
    "program on the SM while the store still reads it.",
    "scf.for ... {\n"
    "  ttg.local_store %tile, %stage\n"
    "  ttng.async_tma_copy_local_to_global %desc[...] %stage\n"
    "}                                          // no async_tma_store_wait before the next local_store",
    "Wait with `async_tma_store_wait {pendings = 0}` (or double-buffer and keep `pendings = 1`).",
    (Severity.error, Severity.warning, Severity.info),
    "An error; a warning when a run's race is not judged; info when `check` demotes it. A store "
    "in flight at the exit of a persistent kernel is a `model.limit` note, not a verdict."),))
