"""Partition roles (report section 1): what each warp group does, read from its key operations.

A role is never taken from `ttg.partition.types` or from names: those are hints a compiler pass
wrote, and merged partitions ("computation") say little. The operations say what the warps do.

Role kinds and the operations that show them (the skill's rules):

* MMA: `tt.dot`, `ttng.warp_group_dot`, `ttng.tc_gen5_mma`, `ttng.tc_gen5_mma_scaled`.
* TMA loads: `ttng.async_tma_copy_global_to_local`, `nvws.descriptor_load`, and
  `tt.descriptor_load` whose result feeds a `ttg.local_alloc` or `ttg.local_store` (before code
  partitioning a TMA load is still a descriptor load staged into shared memory).
* Softmax / reduction: `tt.reduce`, with `math.exp2` and max ops (`arith.maxnumf`, ...) counted as
  its key ops. `tt.reduce` is required: upstream's correction partition computes
  `alpha = exp2(m_old - m_new)` without reducing anything, and a lone max may be a ReLU.
* Accumulator correction: `ttng.tmem_load` + `ttng.tmem_store` (load, re-scale, store back).
  A softmax partition also stores P into TMEM, so next to a reduction it is only claimed when a
  store writes back the same allocation with the same type as a load of it read.
* Epilogue / output store: `tt.descriptor_store`, `tt.store`,
  `ttng.async_tma_copy_local_to_global`, and `ttng.tmem_load` at loop exit, i.e. a partition that
  drains TMEM (tmem_load) without writing TMEM or reducing: it reads finished accumulators.
  "Epilogue" when it drains TMEM, "Output store" when it only stores.

* Reduce store: `tt.descriptor_reduce`, `ttng.async_tma_reduce`, `tt.atomic_rmw` (a partition
  that adds its tile into global memory, FA backward's dQ epilogue).
* CLC scheduler: `ttng.async_clc_try_cancel` / `ttng.clc_try_cancel` (it asks for the next tile;
  every partition reads the answer, only the scheduler asks).
* Remote copy: `ttg.async_remote_shmem_copy` / `ttg.async_remote_shmem_store` (it writes a peer
  CTA's shared memory).
* A reduction with neither `math.exp2` nor a max is "Reduction" (a row sum), not "Softmax".

Precedence (the first kind found names the role; the others follow after " + "): MMA, TMA loads,
softmax, accumulator correction, epilogue/store, reduce store, remote copy, CLC scheduler. The order runs from the op that most
identifies a warp group to the one most often merged into others: the tensor-core issuer is
unique to one partition and decides the pipeline's shape; the TMA producer is the other end of
every SMEM channel; softmax and correction are the attention-specific compute; stores are what
AutoWS folds into whichever partition has room ("merge_epi"), so they come last. A partition
with only terminators is "idle (empty)". A partition with none of the kinds above that loads
through pointers (`tt.load`, `ttg.async_copy_global_to_local`, i.e. a non-TMA producer, as in
Hopper lit tests) is "Global loads"; this kind is only a fallback, because compute partitions load
biases and scales through pointers too. Two more fallbacks name hand-written helper partitions:
one that only synchronizes (waits, arrives, fences) is a "Sync relay" ("Cross-CTA sync relay"
when it arrives on a peer CTA's barrier through `map_to_remote_buffer`), one that touches shared
memory or TMEM otherwise is "Shared-memory staging" / "TMEM access". A partition with ops but
none of these (no barrier, no memory) is "other".

Qualifiers say what a role touches, from `loc("name")` names of the values (the op's own
location name, else the names met tracing the operand back through memdesc views, partition
captures and loop iter_args to its allocation or argument), else the MMA operand the loaded buffer
feeds (A/B), else the shape. TMA loads are always qualified (what is loaded is the point of the
partition, as in the skill's "TMA loads (Q, K, V)"); other kinds only when two partitions share
them ("Softmax (qk_0)" vs "Softmax (qk_1)").
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from enum import Enum

from ..ir.model import BlockArgument, Operation, ParsedIR
from .partitions import Partition, PartitionMap
from .values import Definition, OpResult, ValueIndex


class RoleKind(str, Enum):
    """What a partition does, in precedence order (see the module docstring)."""

    MMA = "mma"
    TMA_LOAD = "tma_load"
    SOFTMAX = "softmax"
    CORRECTION = "correction"
    STORE = "store"
    REDUCE_STORE = "reduce_store"
    REMOTE_COPY = "remote_copy"
    CLC = "clc_scheduler"
    GLOBAL_LOAD = "global_load"
    SYNC = "sync"
    MEMORY = "memory"


PRECEDENCE = (
    RoleKind.MMA,
    RoleKind.TMA_LOAD,
    RoleKind.SOFTMAX,
    RoleKind.CORRECTION,
    RoleKind.STORE,
    RoleKind.REDUCE_STORE,
    RoleKind.REMOTE_COPY,
    RoleKind.CLC,
    RoleKind.GLOBAL_LOAD,
    RoleKind.SYNC,
    RoleKind.MEMORY,
)

MMA_OPS = frozenset({"tt.dot", "ttng.warp_group_dot", "ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled"})
TMA_LOAD_OPS = frozenset({"ttng.async_tma_copy_global_to_local", "nvws.descriptor_load"})
DESCRIPTOR_LOAD = "tt.descriptor_load"
STAGING_OPS = frozenset({"ttg.local_alloc", "ttg.local_store"})
REDUCE_OPS = frozenset({"tt.reduce"})
SOFTMAX_EXTRA_OPS = frozenset({"math.exp2", "arith.maxnumf", "arith.maximumf", "arith.maxf"})
STORE_OPS = frozenset({"tt.descriptor_store", "tt.store", "ttng.async_tma_copy_local_to_global"})
GLOBAL_LOAD_OPS = frozenset({"tt.load", "ttg.async_copy_global_to_local"})
REDUCE_STORE_OPS = frozenset({"tt.descriptor_reduce", "ttng.async_tma_reduce", "tt.atomic_rmw"})
REMOTE_COPY_OPS = frozenset({"ttg.async_remote_shmem_copy", "ttg.async_remote_shmem_store"})
CLC_OPS = frozenset({"ttng.async_clc_try_cancel", "ttng.clc_try_cancel"})
SYNC_OPS = frozenset({"ttng.wait_barrier", "ttng.arrive_barrier", "ttng.barrier_expect", "ttng.wait_barrier_named",
                      "ttng.arrive_barrier_named", "ttng.fence_async_shared", "ttng.fence_mbarrier_init_release_cluster",
                      "ttng.cluster_arrive", "ttng.cluster_wait", "ttng.cluster_barrier", "gpu.barrier",
                      "ttng.async_tma_store_wait", "ttng.async_tma_store_token_wait"})
MEMORY_OPS = frozenset({"ttg.local_load", "ttg.local_store", "ttg.local_alloc", "ttng.tmem_load",
                        "ttng.tmem_store", "ttng.tmem_copy"})
TMEM_LOAD = "ttng.tmem_load"
TMEM_STORE = "ttng.tmem_store"

IDLE = "idle (empty)"
OTHER = "other"

# Views of a buffer: the allocation is operand 0.
VIEW_OPS = frozenset(
    {
        "ttg.memdesc_index",
        "ttg.memdesc_subslice",
        "ttg.memdesc_subview",
        "ttg.memdesc_reinterpret",
        "ttg.memdesc_trans",
        "ttg.memdesc_reshape",
        "ttng.tmem_subslice",
    }
)

_SHAPE = re.compile(r"<(?:tensor<)?((?:\d+x)+[a-zA-Z]\w*)")


@dataclass(frozen=True)
class RoleEvidence:
    """One role kind found in a partition: the ops that show it (op name -> count) and the
    names of what those ops touch, in IR order."""

    kind: RoleKind
    key_ops: tuple[tuple[str, int], ...]
    touches: tuple[str, ...]
    drains_tmem: bool = False
    remote: bool = False  # a sync relay that arrives on a peer CTA's barrier


@dataclass(frozen=True)
class PartitionRole:
    """The role of one partition: `label` is the report's "Role" cell, `kinds` the evidence in
    precedence order, `key_ops` all key ops with counts (IR order of first appearance)."""

    partition: str
    label: str
    kinds: tuple[RoleEvidence, ...]
    key_ops: tuple[tuple[str, int], ...]
    empty: bool


def assign_roles(pm: PartitionMap, ir: ParsedIR, scope_ops: list[Operation]) -> dict[str, PartitionRole]:
    """Roles of every partition in `pm`, keyed by partition name."""
    namer = _Namer(ValueIndex(ir), scope_ops)
    found: dict[str, list[RoleEvidence]] = {}
    empties: dict[str, bool] = {}
    for part in pm.partitions:
        body = list(pm.body(part))
        empties[part.name] = not body
        found[part.name] = _evidence(body, namer)
    # A role is shared when another partition of the same region op (or, before code
    # partitioning, of the same function) has it: those run concurrently and must be told apart.
    shared = Counter((_group(part), ev.kind) for part in pm.partitions for ev in found[part.name])
    roles: dict[str, PartitionRole] = {}
    for part in pm.partitions:
        evs = found[part.name]
        if empties[part.name]:
            label = IDLE
        elif not evs:
            label = OTHER
        else:
            label = " + ".join(_label(ev, qualify=ev.kind in _ALWAYS_QUALIFIED or shared[(_group(part), ev.kind)] > 1)
                               for ev in evs)
        key_ops: Counter[str] = Counter()
        for ev in evs:
            key_ops.update(dict(ev.key_ops))
        roles[part.name] = PartitionRole(part.name, label, tuple(evs), tuple(key_ops.items()), empties[part.name])
    return roles


_BASE_LABEL = {
    RoleKind.MMA: "MMA",
    RoleKind.TMA_LOAD: "TMA loads",
    RoleKind.SOFTMAX: "Softmax",
    RoleKind.CORRECTION: "Acc correction",
    RoleKind.REDUCE_STORE: "Reduce store",
    RoleKind.REMOTE_COPY: "Remote copy",
    RoleKind.CLC: "CLC scheduler",
    RoleKind.GLOBAL_LOAD: "Global loads",
    RoleKind.SYNC: "Sync relay",
}


# What is loaded, or reduced into, is the point of these partitions ("Reduce store (dq)").
_ALWAYS_QUALIFIED = frozenset({RoleKind.TMA_LOAD, RoleKind.REDUCE_STORE})


def _group(part: Partition) -> int:
    return id(part.ws_op) if part.ws_op is not None else 0


def _label(ev: RoleEvidence, *, qualify: bool) -> str:
    if ev.kind is RoleKind.STORE:
        base = "Epilogue" if ev.drains_tmem else "Output store"
    elif ev.kind is RoleKind.SOFTMAX and not any(n in SOFTMAX_EXTRA_OPS for n, _ in ev.key_ops):
        base = "Reduction"
    elif ev.kind is RoleKind.SYNC and ev.remote:
        base = "Cross-CTA sync relay"
    elif ev.kind is RoleKind.MEMORY:
        base = "TMEM access" if any(n.startswith("ttng.tmem") for n, _ in ev.key_ops) else "Shared-memory staging"
    else:
        base = _BASE_LABEL[ev.kind]
    if qualify and ev.touches:
        return f"{base} ({', '.join(ev.touches)})"
    return base


def _evidence(body: list[Operation], namer: "_Namer") -> list[RoleEvidence]:
    """Role evidence of one partition's operations, in precedence order."""
    by_name: dict[str, list[Operation]] = {}
    for op in body:
        by_name.setdefault(op.name, []).append(op)

    def ops_in(names: frozenset[str] | set[str]) -> list[Operation]:
        return [op for op in body if op.name in names]

    def counts(ops: list[Operation]) -> tuple[tuple[str, int], ...]:
        return tuple(Counter(op.name for op in ops).items())

    out: list[RoleEvidence] = []
    mma = ops_in(MMA_OPS)
    if mma:
        out.append(RoleEvidence(RoleKind.MMA, counts(mma), _unique(namer.mma_name(op) for op in mma)))

    loads = ops_in(TMA_LOAD_OPS) + [op for op in by_name.get(DESCRIPTOR_LOAD, []) if namer.feeds_staging(op, body)]
    loads.sort(key=lambda op: (op.line, op.column))
    if loads:
        out.append(RoleEvidence(RoleKind.TMA_LOAD, counts(loads), _unique(namer.load_name(op) for op in loads)))

    reduces = ops_in(REDUCE_OPS)
    tmem_loads = by_name.get(TMEM_LOAD, [])
    tmem_stores = by_name.get(TMEM_STORE, [])
    rescaled: list[Operation] = []
    if tmem_loads and tmem_stores:
        rescaled = tmem_stores if not reduces else namer.rescaling_stores(tmem_loads, tmem_stores)
    if reduces:
        soft = ops_in(REDUCE_OPS | SOFTMAX_EXTRA_OPS | {TMEM_LOAD})
        corrected = {namer.value_name(op.operands[1], op) for op in rescaled if len(op.operands) > 1}
        touched = _unique(
            n for n in (namer.value_name(op.operands[0], op) for op in tmem_loads if op.operands) if n not in corrected
        )
        out.append(RoleEvidence(RoleKind.SOFTMAX, counts(soft), touched))

    if tmem_loads and tmem_stores:
        if rescaled:
            used = [op for op in body if op in tmem_loads or op in rescaled] if not reduces else rescaled
            touched = _unique(namer.value_name(op.operands[1], op) for op in rescaled if len(op.operands) > 1)
            out.append(RoleEvidence(RoleKind.CORRECTION, counts(used), touched))

    drains = bool(tmem_loads) and not tmem_stores and not reduces
    stores = ops_in(STORE_OPS | ({TMEM_LOAD} if drains else set()))
    if stores:
        touched = _unique(namer.value_name(op.operands[0], op) for op in stores if op.name in STORE_OPS and op.operands)
        out.append(RoleEvidence(RoleKind.STORE, counts(stores), touched, drains_tmem=drains))

    for kind, names in ((RoleKind.REDUCE_STORE, REDUCE_STORE_OPS), (RoleKind.REMOTE_COPY, REMOTE_COPY_OPS),
                        (RoleKind.CLC, CLC_OPS)):
        found = ops_in(names)
        if found:
            touched = _unique(_strip_desc(n) for n in (namer.value_name(op.operands[0], op) for op in found
                                                       if op.operands and kind is not RoleKind.CLC) if n)
            out.append(RoleEvidence(kind, counts(found), touched))

    if not out:
        plain = ops_in(GLOBAL_LOAD_OPS)
        if plain:
            touched = _unique(namer.value_name(op.operands[0], op) for op in plain if op.operands)
            out.append(RoleEvidence(RoleKind.GLOBAL_LOAD, counts(plain), touched))
    if not out:
        # Helper partitions of hand-written kernels: named by the memory they touch, else by
        # their synchronization (never "other" while they hold barrier or memory ops).
        memory = ops_in(MEMORY_OPS - {"ttg.local_alloc"})
        sync = ops_in(SYNC_OPS)
        if memory:
            touched = _unique(namer.value_name(op.operands[-1] if op.name.endswith("store") else op.operands[0], op)
                              for op in memory if op.operands)
            out.append(RoleEvidence(RoleKind.MEMORY, counts(memory), touched))
        elif sync:
            remote = any(namer.is_remote_view(name, op) for op in sync for name in op.operands[:1])
            out.append(RoleEvidence(RoleKind.SYNC, counts(sync), (), remote=remote))
    out.sort(key=lambda ev: PRECEDENCE.index(ev.kind))
    return out


def _unique(names) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n for n in names if n))


class _Namer:
    """Names for what an op touches: loc names along the operand's definition chain, MMA operand
    letters, shapes. Traces memdesc views, `ttg.warp_specialize` captures (partition block
    argument k is capture k) and `scf.for` iter_args (block argument j + 1 is init operand
    3 + j) back to the allocation or argument that names the value."""

    MAX_HOPS = 64

    def __init__(self, values: ValueIndex, scope_ops: list[Operation]):
        self.values = values
        self.scope_ops = scope_ops
        self._operand_letters: dict[int, str] | None = None

    # -- chains -------------------------------------------------------------------------------
    def chain(self, name: str, at: Operation) -> list[Definition]:
        """Definitions from the use at `at` back to the root (allocation or argument)."""
        out: list[Definition] = []
        seen: set[int] = set()
        for _ in range(self.MAX_HOPS):
            defn = self.values.lookup(name, at)
            if defn is None or id(defn) in seen:
                break
            seen.add(id(defn))
            out.append(defn)
            nxt = _step(defn)
            if nxt is None:
                break
            name, at = nxt
        return out

    def root(self, name: str, at: Operation) -> Definition | None:
        chain = self.chain(name, at)
        return chain[-1] if chain else None

    def value_name(self, name: str, at: Operation) -> str | None:
        """The root's location name, else the nearest name along the chain, else None."""
        chain = self.chain(name, at)
        if not chain:
            return None
        root_name = _def_loc(chain[-1])
        if root_name:
            return root_name
        return next((n for n in (_def_loc(d) for d in chain) if n), None)

    def is_remote_view(self, name: str, at: Operation) -> bool:
        """Whether `name` is (a view of) a peer CTA's copy (`map_to_remote_buffer`)."""
        return any(isinstance(d, OpResult) and d.op.name == "ttng.map_to_remote_buffer" for d in self.chain(name, at))

    def value_type(self, name: str, at: Operation) -> str | None:
        defn = self.values.lookup(name, at)
        if isinstance(defn, OpResult):
            return defn.type
        if isinstance(defn, BlockArgument):
            return defn.type
        return None

    # -- per role ----------------------------------------------------------------------------
    def mma_name(self, op: Operation) -> str | None:
        """An MMA is named by its location (`loc("qk")`), else by its accumulator's name."""
        if op.loc_name:
            return op.loc_name
        if len(op.operands) > 2:  # D (tc_gen5) / C (warp_group_dot, tt.dot)
            return self.value_name(op.operands[2], op)
        return None

    def load_name(self, op: Operation) -> str | None:
        """What a TMA load loads: the descriptor's name (`a_desc` -> `a`), else the destination
        buffer's name, else the MMA operand (A/B) the buffer feeds, else its shape."""
        if not op.operands:
            return None
        desc = self.value_name(op.operands[0], op)
        if desc:
            return _strip_desc(desc)
        dest = self._destination(op)
        if dest is not None:
            name, at = dest
            buf = self.value_name(name, at)
            if buf:
                return buf
            root = self.root(name, at)
            letter = self._letters().get(id(root)) if root is not None else None
            if letter:
                return letter
            return _shape(self.value_type(name, at))
        return _shape(self.value_type(op.operands[0], op))

    def feeds_staging(self, load: Operation, body: list[Operation]) -> bool:
        """Whether a `tt.descriptor_load` result is staged into shared memory by this partition."""
        if not load.results:
            return False
        for op in body:
            if op.name in STAGING_OPS and op.operands:
                defn = self.values.lookup(op.operands[0], op)
                if isinstance(defn, OpResult) and defn.op is load:
                    return True
        return False

    def rescaling_stores(self, loads: list[Operation], stores: list[Operation]) -> list[Operation]:
        """`tmem_store`s writing back an allocation a `tmem_load` of this partition read, with
        the loaded type: a load-rescale-store of an accumulator, not a new value (P) stored."""
        read: set[tuple[int, str | None]] = set()
        for op in loads:
            if op.operands:
                root = self.root(op.operands[0], op)
                if root is not None:
                    read.add((id(root), op.result_types[0] if op.result_types else None))
        out = []
        for op in stores:
            if len(op.operands) > 1:
                root = self.root(op.operands[1], op)
                if root is not None and (id(root), self.value_type(op.operands[0], op)) in read:
                    out.append(op)
        return out

    # -- helpers -------------------------------------------------------------------------------
    def _destination(self, op: Operation) -> tuple[str, Operation] | None:
        """The buffer a load writes: for TMA copies the first non-barrier memdesc operand after
        the descriptor; for `tt.descriptor_load` the buffer it is staged into."""
        if op.name == DESCRIPTOR_LOAD:
            for user in self.scope_ops:
                if user.name in STAGING_OPS and user.operands:
                    defn = self.values.lookup(user.operands[0], user)
                    if isinstance(defn, OpResult) and defn.op is op:
                        if user.name == "ttg.local_alloc":
                            return (user.results[0], user) if user.results else None
                        return (user.operands[1], user) if len(user.operands) > 1 else None
            return None
        for name in op.operands[1:]:
            t = self.value_type(name, op) or ""
            if "memdesc" in t and "xi64" not in t:
                return name, op
        return None

    def _letters(self) -> dict[int, str]:
        """Root definition -> "A"/"B" for every buffer an MMA in scope reads as operand A or B."""
        if self._operand_letters is None:
            letters: dict[int, str] = {}
            for op in self.scope_ops:
                if op.name in MMA_OPS:
                    for idx, letter in ((0, "A"), (1, "B")):
                        if idx < len(op.operands):
                            root = self.root(op.operands[idx], op)
                            if root is not None:
                                letters.setdefault(id(root), letter)
            self._operand_letters = letters
        return self._operand_letters


def _step(defn: Definition) -> tuple[str, Operation] | None:
    """One hop toward the root, as (name, place of use), or None at a root."""
    if isinstance(defn, OpResult):
        op = defn.op
        if op.name in VIEW_OPS and op.operands:
            return op.operands[0], op
        return None
    block = defn.block
    region = block.region if block is not None else None
    parent = region.parent if region is not None else None
    if parent is None or region is None or block is not region.entry:
        return None
    if parent.name == "ttg.warp_specialize" and region.label != "default":
        if defn.index < len(parent.operands):
            return parent.operands[defn.index], parent
        return None
    if parent.name == "scf.for" and defn.index >= 1:
        k = 3 + defn.index - 1
        if k < len(parent.operands):
            return parent.operands[k], parent
    return None


def _def_loc(defn: Definition) -> str | None:
    if isinstance(defn, OpResult):
        return defn.op.loc_name
    return defn.loc_name


def _strip_desc(name: str) -> str:
    """`a_desc` / `desc_q` -> `a` / `q`: a descriptor is named after the tensor it reads."""
    for prefix in ("desc_",):
        if name.startswith(prefix) and len(name) > len(prefix):
            return name[len(prefix):]
    for suffix in ("_desc",):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def _shape(type_text: str | None) -> str | None:
    if not type_text:
        return None
    m = _SHAPE.search(type_text)
    return m.group(1) if m else None
