"""What each synchronizing operation does, read from its written form (step 1 of `barriers`):
which operand is a barrier, the role the op plays on it (`Role`: init, expect, arrive, wait,
...), the mechanism of the skill's table it belongs to (`Mechanism`), its count or bytes, phase
and predicate operands (`BarrierOperand`, `barrier_operands`). Operand positions follow the
printed formats of `docs/ir-semantics.md` section 3; bracketed operands (`%d[%token]`,
`%bar[%pred]`, TMA coordinates) are told apart by `Operation.operand_depths`, so the MMA barrier
list is found after the fixed operands whatever the token and scale operands are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Callable

from ..ir.model import Operation
from ..ir.types import is_barrier_type, memdesc_bytes


class Mechanism(str, Enum):
    """The skill's barrier mechanism table (plus the TMA-store wait that arrives on barriers).

    `MBARRIER` marks ops that belong to every mbarrier mechanism alike (init, inval, wait): which
    mechanism a wait waits for is decided by who arrives on its barrier."""

    MBARRIER_TMA = "mbarrier_tma"
    MBARRIER_EXPLICIT = "mbarrier_explicit"
    TCGEN05_COMMIT = "tcgen05_commit"
    MMA_BARRIER = "mma_barrier"
    NAMED_BARRIER = "named_barrier"
    NVWS_TOKEN = "nvws_token"
    AREF = "aref"
    ASYNC_COPY_ARRIVE = "async_copy_mbarrier_arrive"
    TMA_STORE_WAIT_ARRIVE = "tma_store_wait_arrive"
    CLC_RESPONSE = "clc_response"
    REMOTE_COPY = "remote_copy"
    MBARRIER = "mbarrier"


class Role(str, Enum):
    """What one operation does to one barrier."""

    INIT = "init"
    INVAL = "inval"
    EXPECT = "expect"
    ARRIVE = "arrive"
    WAIT = "wait"
    COMMIT = "commit"
    ACQUIRE = "acquire"
    RELEASE = "release"
    PUT_ENTER = "put_enter"
    PUT_EXIT = "put_exit"
    GET_ENTER = "get_enter"
    GET_EXIT = "get_exit"
    TMA_ARRIVE = "tma_arrive"
    MMA_ARRIVE = "mma_arrive"


class BarrierKind(str, Enum):
    """What a logical barrier is made of, which decides how it is identified."""

    MBARRIER = "mbarrier"
    NAMED = "named"
    AREF = "aref"
    NVWS_TOKEN = "nvws_token"


# Hop kinds (`Hop.via`) this module treats specially: the root itself is not an alias, and
# a named barrier's rematerialised constants are.
ALLOCATION_HOP = "allocation"
CONSTANT_HOP = "constant"
LOCAL_ALLOC = "ttg.local_alloc"
CONSTANT = "arith.constant"
CREATE_TOKEN = "nvws.create_token"
AREF_CREATE = "nvws.aref.create"
# Fixed operands of the MMAs before their `, %bar[%pred]` list: A, B, D, (scale A, scale B),
# useD, pred (ir-semantics 3.6).
_MMA_FIXED = {"ttng.tc_gen5_mma": 5, "ttng.tc_gen5_mma_scaled": 7}
_INT = re.compile(r"^-?\d+$")


# -- classification ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class BarrierOperand:
    """One barrier operand of one operation, as the operation's written form says.

    `stage` is a slot operand written on the op itself (NVWS tokens, arefs); mbarrier slots come
    from the `memdesc_index` ops met while tracing. `op_predicate` is an MMA's own `pred`, which
    gates its barrier arrivals together with the per-barrier `predicate`."""

    op: Operation = field(compare=False, repr=False)
    operand: str
    role: Role
    mechanism: Mechanism
    kind: BarrierKind
    count: int | None = None
    bytes: int | None = None
    phase: str | None = None
    predicate: str | None = None
    op_predicate: str | None = None
    stage: str | None = None
    count_operand: str | None = None


def _items(op: Operation) -> list[tuple[str, list[str]]]:
    """Positional operands, each with the operands written in brackets right after it
    (`%d[%tok]` -> ("%d", ["%tok"]); `%bar[%pred]` -> ("%bar", ["%pred"]))."""
    depths = op.operand_depths if len(op.operand_depths) == len(op.operands) else [0] * len(op.operands)
    items: list[tuple[str, list[str]]] = []
    for name, depth in zip(op.operands, depths):
        if depth == 0 or not items:
            items.append((name, []))
        else:
            items[-1][1].append(name)
    return items


def _int_literal(op: Operation, k: int = 0) -> int | None:
    """The k-th integer literal written in the op's header (`init_barrier %b, 1`)."""
    ints = [int(t) for t in op.literals if _INT.match(t)]
    return ints[k] if k < len(ints) else None


def _at(values: list[str], k: int) -> str | None:
    return values[k] if k < len(values) else None


def _read_init(op: Operation) -> list[BarrierOperand]:
    pos = op.positional
    count = _int_literal(op)
    if count is None:
        count = _attr_int(op, "count")
    return [BarrierOperand(op, pos[0], Role.INIT, Mechanism.MBARRIER, BarrierKind.MBARRIER, count=count)] if pos else []


def _read_inval(op: Operation) -> list[BarrierOperand]:
    pos = op.positional
    return [BarrierOperand(op, pos[0], Role.INVAL, Mechanism.MBARRIER, BarrierKind.MBARRIER)] if pos else []


def _read_wait(op: Operation) -> list[BarrierOperand]:
    """`$alloc, $phase (, $pred)? (deps $deps)?`: one type per barrier and per dep, so the
    operands past `len(types) - 1` deps from the end are alloc, phase, pred."""
    pos = op.positional
    deps = max(0, len(op.types) - 1)
    own = pos[: len(pos) - deps] if deps else pos
    if not own:
        return []
    return [BarrierOperand(op, own[0], Role.WAIT, Mechanism.MBARRIER, BarrierKind.MBARRIER,
                           phase=_at(own, 1), predicate=_at(own, 2))]


def _read_arrive(op: Operation) -> list[BarrierOperand]:
    """`$alloc, $count (, $pred)?` with `count` an integer literal."""
    pos = op.positional
    count = _int_literal(op)
    if count is None:
        count = _attr_int(op, "count")
    return [BarrierOperand(op, pos[0], Role.ARRIVE, Mechanism.MBARRIER_EXPLICIT, BarrierKind.MBARRIER,
                           count=count, predicate=_at(pos, 1))] if pos else []


def _read_expect(op: Operation) -> list[BarrierOperand]:
    """`$alloc, $size attr-dict, $pred`: one arrival plus a transaction-byte expectation."""
    pos = op.positional
    size = _int_literal(op)
    if size is None:
        size = _attr_int(op, "size")
    return [BarrierOperand(op, pos[0], Role.EXPECT, Mechanism.MBARRIER_TMA, BarrierKind.MBARRIER,
                           count=1, bytes=size, predicate=_at(pos, 1))] if pos else []


def _read_tma_load(op: Operation) -> list[BarrierOperand]:
    """`$desc[$coord] $result, $barrier, $pred (, $multicast)?`: the barrier is the third
    positional operand (coordinates are bracketed); the bytes it delivers are the destination's."""
    pos = op.positional
    if len(pos) < 3:
        return []
    dst_type = op.result_types[0] if op.result_types else None
    return [BarrierOperand(op, pos[2], Role.TMA_ARRIVE, Mechanism.MBARRIER_TMA, BarrierKind.MBARRIER,
                           bytes=memdesc_bytes(dst_type), predicate=_at(pos, 3))]


def _read_clc(bar_at: int) -> Callable[[Operation], list[BarrierOperand]]:
    """Cluster launch control try-cancel (`async_clc_try_cancel %bar, %resp` in TLX,
    `clc_try_cancel %resp, %bar` upstream): no arrival; the hardware completes 16 transaction
    bytes (its b128 response) on the barrier."""

    def read(op: Operation) -> list[BarrierOperand]:
        pos = op.positional
        if bar_at >= len(pos):
            return []
        return [BarrierOperand(op, pos[bar_at], Role.TMA_ARRIVE, Mechanism.CLC_RESPONSE, BarrierKind.MBARRIER,
                               bytes=16)]

    return read


def _read_remote_copy(op: Operation) -> list[BarrierOperand]:
    """`async_remote_shmem_copy %src, rank %r, %dst barrier %bar`: no arrival; the source's bytes
    complete on the barrier at `%bar`'s offset in CTA `%r` (a peer's copy of this barrier)."""
    pos = op.positional
    if len(pos) < 4:
        return []
    from .transactions import remote_copy_bytes

    return [BarrierOperand(op, pos[-1], Role.TMA_ARRIVE, Mechanism.REMOTE_COPY, BarrierKind.MBARRIER,
                           bytes=remote_copy_bytes(op))]


def _read_mma(op: Operation) -> list[BarrierOperand]:
    """`A, B, D[tok], (scaleA, scaleB,) useD, pred (, %bar[%pred])*`: every positional operand
    after the fixed ones is a barrier, its bracketed operand its predicate."""
    items = _items(op)
    fixed = _MMA_FIXED[op.name]
    mma_pred = items[fixed - 1][0] if len(items) >= fixed else None
    out = []
    for name, bracketed in items[fixed:]:
        out.append(BarrierOperand(op, name, Role.MMA_ARRIVE, Mechanism.MMA_BARRIER, BarrierKind.MBARRIER,
                                  count=1, predicate=_at(bracketed, 0), op_predicate=mma_pred))
    return out


def _read_commit(op: Operation) -> list[BarrierOperand]:
    """`$barrier (, $pred)? (descs $descs)?`: one type per barrier and per desc."""
    pos = op.positional
    descs = max(0, len(op.types) - 1)
    own = pos[: len(pos) - descs] if descs else pos
    if not own:
        return []
    return [BarrierOperand(op, own[0], Role.COMMIT, Mechanism.TCGEN05_COMMIT, BarrierKind.MBARRIER,
                           count=1, predicate=_at(own, 1))]


def _read_async_copy_arrive(op: Operation) -> list[BarrierOperand]:
    """Counts as one arrival only with `noIncrement` (ir-semantics 3.12); otherwise net zero."""
    pos = op.positional
    count = 1 if "noIncrement" in op.attributes else 0
    return [BarrierOperand(op, pos[0], Role.ARRIVE, Mechanism.ASYNC_COPY_ARRIVE, BarrierKind.MBARRIER,
                           count=count)] if pos else []


def _read_store_wait(op: Operation) -> list[BarrierOperand]:
    """`TOKEN (, %bar[%pred])* (nvws_token %tok[%idx])*`: the barriers (one i64 memdesc type
    each) arrive once the store has read SMEM; the `nvws_token` entries after them release a
    token slot (token lowering turns them into such barriers)."""
    items = _items(op)[1:]
    n_barriers = sum(1 for t in op.types if is_barrier_type(t))
    out = []
    for k, (name, bracketed) in enumerate(items):
        if k < n_barriers:
            out.append(BarrierOperand(op, name, Role.ARRIVE, Mechanism.TMA_STORE_WAIT_ARRIVE, BarrierKind.MBARRIER,
                                      count=1, predicate=_at(bracketed, 0)))
        else:
            out.append(BarrierOperand(op, name, Role.RELEASE, Mechanism.NVWS_TOKEN, BarrierKind.NVWS_TOKEN,
                                      stage=_at(bracketed, 0)))
    return out


def _read_named(role: Role) -> Callable[[Operation], list[BarrierOperand]]:
    """`$id, $numThreads`, both i32 values; the thread count is the barrier's count."""

    def read(op: Operation) -> list[BarrierOperand]:
        pos = op.positional
        return [BarrierOperand(op, pos[0], role, Mechanism.NAMED_BARRIER, BarrierKind.NAMED,
                               count_operand=_at(pos, 1))] if pos else []

    return read


def _read_token(role: Role, has_phase: bool) -> Callable[[Operation], list[BarrierOperand]]:
    """Legacy token ops: `(token, i32 slot[, i1 phase])`."""

    def read(op: Operation) -> list[BarrierOperand]:
        pos = op.positional
        if not pos:
            return []
        return [BarrierOperand(op, pos[0], role, Mechanism.NVWS_TOKEN, BarrierKind.NVWS_TOKEN,
                               phase=_at(pos, 2) if has_phase else None, stage=_at(pos, 1))]

    return read


def _read_aref(role: Role, is_enter: bool) -> Callable[[Operation], list[BarrierOperand]]:
    """`AREF([STAGE, PHASE])?` on enter, `AREF([STAGE])?, TOKEN` on exit."""

    def read(op: Operation) -> list[BarrierOperand]:
        items = _items(op)
        if not items:
            return []
        name, bracketed = items[0]
        return [BarrierOperand(op, name, role, Mechanism.AREF, BarrierKind.AREF,
                               phase=_at(bracketed, 1) if is_enter else None, stage=_at(bracketed, 0))]

    return read


_READERS: dict[str, Callable[[Operation], list[BarrierOperand]]] = {
    "ttng.init_barrier": _read_init,
    "ttng.inval_barrier": _read_inval,
    "ttng.wait_barrier": _read_wait,
    "ttng.arrive_barrier": _read_arrive,
    "ttng.barrier_expect": _read_expect,
    "ttng.async_tma_copy_global_to_local": _read_tma_load,
    "ttng.tc_gen5_mma": _read_mma,
    "ttng.tc_gen5_mma_scaled": _read_mma,
    "ttng.tc_gen5_commit": _read_commit,
    "ttng.async_clc_try_cancel": _read_clc(0),
    "ttng.clc_try_cancel": _read_clc(1),
    "ttg.async_remote_shmem_copy": _read_remote_copy,
    "ttg.async_remote_shmem_store": _read_remote_copy,
    "ttng.async_copy_mbarrier_arrive": _read_async_copy_arrive,
    "ttng.async_tma_store_token_wait": _read_store_wait,
    "ttng.arrive_barrier_named": _read_named(Role.ARRIVE),
    "ttng.wait_barrier_named": _read_named(Role.WAIT),
    "nvws.producer_acquire": _read_token(Role.ACQUIRE, True),
    "nvws.producer_commit": _read_token(Role.COMMIT, False),
    "nvws.consumer_wait": _read_token(Role.WAIT, True),
    "nvws.consumer_release": _read_token(Role.RELEASE, False),
    "nvws.aref.put.enter": _read_aref(Role.PUT_ENTER, True),
    "nvws.aref.put.exit": _read_aref(Role.PUT_EXIT, False),
    "nvws.aref.get.enter": _read_aref(Role.GET_ENTER, True),
    "nvws.aref.get.exit": _read_aref(Role.GET_EXIT, False),
}
SYNC_OPS = frozenset(_READERS)
# Ops that create a logical barrier, with the mechanism they stand for in `ops` listings.
CREATE_MECHANISMS = {CREATE_TOKEN: Mechanism.NVWS_TOKEN, AREF_CREATE: Mechanism.AREF}


def barrier_operands(op: Operation) -> list[BarrierOperand]:
    """Every barrier operand `op` acts on (empty for ops that do not synchronize)."""
    reader = _READERS.get(op.name)
    return reader(op) if reader is not None else []


# -- types and constants ----------------------------------------------------------------------
def constant_value(op: Operation | None) -> int | None:
    """The integer an `arith.constant` defines (`true`/`false` as 1/0); None otherwise."""
    if op is None or op.name != CONSTANT:
        return None
    for text in op.literals:
        if _INT.match(text):
            return int(text)
        if text in ("true", "false"):
            return int(text == "true")
    value = op.attr("value")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _attr_int(op: Operation, key: str) -> int | None:
    value = op.attr(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None
