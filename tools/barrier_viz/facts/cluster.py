"""The CTA cluster a kernel runs in, and integer values that depend on a CTA's rank in it.

Two ways to write a cluster kernel reach TTGIR:

* TLX (and hand-written kernels in general) keep `"ttg.num-ctas" = 1` and set
  `"ttg.cluster-dim-x/y/z"`: every CTA runs the same per-CTA program, and the IR asks for its
  rank with `nvg.cluster_id` (peer = `rank ^ 1`, leader = `rank == 0`, multicast masks built
  with `shli`/`ori`). Such values can be computed for each rank.
* Triton's CGA form (`"ttg.num-ctas" = N > 1`) writes one program for the whole cluster with
  distributed layouts: tensor and buffer types are cluster-wide, so per-CTA byte counts are not
  the types' sizes. `Cluster.cga` says so; `cga.py` gives each CTA's share from the layouts.

`RankEvaluator` computes an i1/i32/i64 value for a given rank by following the arithmetic the IR
writes (constants, `nvg.cluster_id`, the `arith` integer ops, `select`, casts); anything else
(a function argument, a loaded value, a loop-carried value) is unknown, and callers must then
state a limit instead of guessing.

`cta_reach` / `cta_targets` are the one answer to "which CTAs does this op's arrival or
transaction bytes reach" (a remote view, a multicast mask, a paired 2-CTA MMA or commit, a remote
copy, a CLC multicast), read from the op's form and the fork's lowering: the expect-bytes rule
(`transactions.Counter.reached`), the partition summary and the graph use it, and the interpreter
can evaluate `Reach.value` with its own runtime values and call `Reach.targets`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from math import prod

from ..ir.model import Operation, ParsedIR
from .values import OpResult, ValueIndex, captured_operand

RANK_OPS = frozenset({"nvg.cluster_id", "ttng.cluster_cta_id", "nvgpu.cluster_id"})
TWO_CTAS_ATTR = "ttng.two-ctas"
TLX_PAIRED_ATTR = "tlx.enable_paired_cta_mma"
MMA_OPS = frozenset({"ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled"})
_MAX_DEPTH = 64
REMOTE_VIEW = "ttng.map_to_remote_buffer"
# Views a barrier operand may go through after (or before) its remote view.
_VIEWS = frozenset({"ttg.memdesc_index", "ttg.memdesc_subview", "ttg.memdesc_reinterpret"})


@dataclass(frozen=True, slots=True)
class Cluster:
    """Cluster shape from the module attributes.

    `paired`: the module runs its tensor-core work as 2-CTA pairs (`"ttng.two-ctas" = true`, which
    the compiler sets from the matmuls' `two_ctas`, or TLX's `tlx.enable_paired_cta_mma`): the
    lowering (MMAv5.cpp) then issues every `tc_gen5_mma` and `tc_gen5_commit` from the even CTA of
    each pair only, and their barrier arrivals go to both CTAs of the pair (see `cta_reach`)."""

    num_ctas: int
    dims: tuple[int, int, int]
    paired: bool = False

    @property
    def size(self) -> int:
        """CTAs that run this per-CTA program together (1: no cluster)."""
        return prod(self.dims) if self.num_ctas == 1 else self.num_ctas

    @property
    def cga(self) -> bool:
        """Triton's cluster-wide (CGA) form: types describe the whole cluster."""
        return self.num_ctas > 1

    @property
    def form(self) -> str:
        """`single` (one CTA), `per-cta` (TLX: every CTA runs this program, `nvg.cluster_id` is
        its rank) or `cga` (Triton's cluster-wide program, `ttg.num-ctas` > 1)."""
        return "cga" if self.cga else ("per-cta" if self.size > 1 else "single")


def cluster_of(ir: ParsedIR) -> Cluster:
    modules = [top for top in ir.operations if top.name == "builtin.module"]
    return cluster_of_module(modules[-1]) if modules else Cluster(1, (1, 1, 1))


def cluster_of_module(module: Operation) -> Cluster:
    """`ttg.num-ctas`, `ttg.cluster-dim-x/y/z` and the 2-CTA pairing of one module (absent: one CTA)."""
    num_ctas, dims = 1, [1, 1, 1]
    n = _int(module.attr("ttg.num-ctas"))
    if n is not None and n > 0:
        num_ctas = n
    for k, axis in enumerate("xyz"):
        d = _int(module.attr(f"ttg.cluster-dim-{axis}"))
        if d is not None and d > 0:
            dims[k] = d
    return Cluster(num_ctas, (dims[0], dims[1], dims[2]), _paired(module))


def _paired(module: Operation) -> bool:
    """The lowering asks the module (`ttng.two-ctas`, or TLX's `tlx.enable_paired_cta_mma`); in
    TTGIR before `make_llir`'s CheckMatmulTwoCTAs pass sets `ttng.two-ctas` from the matmuls
    (which must all agree), the first MMA's `two_ctas` tells."""
    if module.attr(TWO_CTAS_ATTR) is True or module.attr(TLX_PAIRED_ATTR) is True:
        return True
    if module.attr(TWO_CTAS_ATTR) is False:
        return False
    first = next((op for op in module.walk() if op.name in MMA_OPS), None)
    return first is not None and "two_ctas" in first.attributes


class RankEvaluator:
    """Integer values as a function of the CTA rank (None when the IR does not determine them)."""

    def __init__(self, values: ValueIndex):
        self.values = values

    def value(self, name: str, at: Operation, rank: int) -> int | None:
        return self._eval(name, at, rank, 0)

    def _eval(self, name: str, at: Operation, rank: int, depth: int) -> int | None:
        if depth > _MAX_DEPTH:
            return None
        defn = self.values.lookup(name, at)
        if not isinstance(defn, OpResult):
            return self._capture(defn, rank, depth)
        op = defn.op
        if op.name in RANK_OPS:
            return rank
        if op.name == "arith.constant":
            return _constant(op)
        args = [self._eval(o, op, rank, depth + 1) for o in op.positional]
        if any(a is None for a in args):
            return None
        return _apply(op, args)  # type: ignore[arg-type]

    def _capture(self, defn, rank: int, depth: int) -> int | None:
        """A partition capture is the value passed to `ttg.warp_specialize`."""
        cap = captured_operand(defn)
        return self._eval(cap[0], cap[1], rank, depth + 1) if cap is not None else None


# -- which CTAs an op reaches ---------------------------------------------------------------------
class ReachKind(str, Enum):
    """Where the arrival (or the transaction bytes) an op puts on a barrier lands in a cluster."""

    OWN = "own"              # the issuing CTA's copy of the barrier
    REMOTE = "remote"        # the copy of the CTA a rank operand names (a remote view, a remote copy)
    MULTICAST = "multicast"  # the copy of every CTA whose bit is set in a mask operand (TMA multicast)
    PAIR = "pair"            # both CTAs of the issuer's 2-CTA pair (tcgen05 cta_group::2 commit)
    CLUSTER = "cluster"      # every CTA of the cluster (CLC try-cancel multicast)
    LAYOUT = "layout"        # CGA form: the receivers follow the operands' CGA layouts (not computed here)


class Issuer(str, Enum):
    """Which CTAs the lowering lets issue the op at all (independent of the IR's own predicates)."""

    EVERY = "every"
    PAIR_LEADER = "pair_leader"  # the even CTA of each pair (`(rank & 1) == 0`, MMAv5.cpp)
    FIRST_X = "first_x"          # the first CTA along x of the cluster row (TLX CLC try-cancel)


@dataclass(frozen=True, slots=True)
class Reach:
    """How one op's effect on one barrier operand reaches the CTAs of the cluster.

    `value` is the operand that names the receivers (a rank for REMOTE, a mask for MULTICAST),
    used by op `at`; `via` is the `map_to_remote_buffer` the barrier operand goes through, if any.
    The interpreter evaluates `value` with its own runtime values and calls `targets`; the static
    rules evaluate it with `RankEvaluator` through `cta_targets`."""

    kind: ReachKind
    issuer: Issuer = Issuer.EVERY
    value: str | None = None
    at: Operation | None = field(default=None, compare=False, repr=False)
    via: Operation | None = field(default=None, compare=False, repr=False)
    why: str = ""

    def issues(self, rank: int, cluster: Cluster) -> bool:
        if self.issuer is Issuer.PAIR_LEADER:
            return rank & 1 == 0
        if self.issuer is Issuer.FIRST_X:
            return rank % cluster.dims[0] == 0
        return True

    def targets(self, rank: int, cluster: Cluster, value: int | None = None) -> frozenset[int] | None:
        """CTAs receiving the effect when CTA `rank` issues the op; `value` is `self.value`
        evaluated for that rank. None when it cannot be told (an unknown value, the CGA layout)."""
        n = cluster.size
        if self.kind is ReachKind.OWN:
            return frozenset({rank})
        if self.kind is ReachKind.REMOTE:
            return frozenset({value}) if value is not None and 0 <= value < n else None
        if self.kind is ReachKind.MULTICAST:
            return frozenset(k for k in range(n) if (value >> k) & 1) if value is not None else None
        if self.kind is ReachKind.PAIR:
            base = rank & ~1
            return frozenset(k for k in (base, base + 1) if k < n)
        if self.kind is ReachKind.CLUSTER:
            return frozenset(range(n))
        return None


_MMA_WHY = ("in 2-CTA mode the lowering issues it from the even CTA of the pair only and its "
            "tcgen05.commit.cta_group::2 multicasts the arrival to both CTAs of the pair")


def cta_reach(op: Operation, operand: str | None, cluster: Cluster, values: ValueIndex) -> Reach:
    """Which CTAs `op`'s arrival or bytes on its barrier operand `operand` reach, by the op's form
    and its lowering (the fork's MMAv5.cpp createMMACommit, the TMA and CLC lowerings):

    * `tc_gen5_mma` / `tc_gen5_commit` in a paired (2-CTA) module: issued by the pair's even CTA,
      arriving on both CTAs of the pair (mask `3 << (rank & ~1)`); with `descs` or `multicast` in
      the CGA form the mask comes from the operands' CGA layouts (LAYOUT);
    * a TMA load with a mask operand (`..., %pred, %mask {multicast}`): every CTA of the mask;
      in the CGA form a `multicast` load without a mask is multicast by its layout (LAYOUT);
    * TLX `async_clc_try_cancel`: issued by the first CTA along x, multicast to the cluster;
      upstream `clc_try_cancel {multicast = true}`: every CTA of the cluster;
    * `async_remote_shmem_copy %src, rank %r, ... barrier %bar`: CTA `%r`;
    * any op whose barrier operand is (a slot of) `map_to_remote_buffer %bar, %r`: CTA `%r`;
    * anything else: the issuing CTA's own barrier.
    Without a cluster every op reaches its own CTA."""
    if cluster.size <= 1:
        return Reach(ReachKind.OWN)
    name = op.name
    if name in MMA_OPS or name == "ttng.tc_gen5_commit":
        descs = name == "ttng.tc_gen5_commit" and len(op.types) > 1
        if cluster.cga and (descs or "multicast" in op.attributes):
            return Reach(ReachKind.LAYOUT, Issuer.PAIR_LEADER if cluster.paired else Issuer.EVERY,
                         why="commit multicast to the CTAs the operands' CGA layouts broadcast to")
        if cluster.paired:
            return Reach(ReachKind.PAIR, Issuer.PAIR_LEADER, why=_MMA_WHY)
    if name == "ttng.async_tma_copy_global_to_local":
        mask = multicast_mask(op)
        if mask is not None:
            return Reach(ReachKind.MULTICAST, value=mask, at=op,
                         why="TMA multicast: the bytes land in every CTA of the mask, on the barrier at the same offset")
        if cluster.cga and "multicast" in op.attributes:
            return Reach(ReachKind.LAYOUT, why="CGA-form multicast load: the receivers follow the buffer's CGA layout")
    if name == "ttng.async_clc_try_cancel":
        return Reach(ReachKind.CLUSTER, Issuer.FIRST_X,
                     why="TLX try-cancel is issued by the first CTA along x and multicast to every CTA")
    if name == "ttng.clc_try_cancel" and op.attr("multicast") is True:
        return Reach(ReachKind.CLUSTER, why="multicast try-cancel: every CTA of the cluster gets a response")
    if name == "ttg.async_remote_shmem_copy":
        pos = op.positional
        if len(pos) >= 4 and operand == pos[-1]:
            return Reach(ReachKind.REMOTE, value=pos[1], at=op,
                         why="the source's bytes complete on the barrier of the CTA the rank names")
    view = remote_view(operand, op, values) if operand is not None else None
    if view is not None and len(view.operands) > 1:
        return Reach(ReachKind.REMOTE, value=view.operands[1], at=view, via=view,
                     why="the barrier operand is a peer CTA's copy (map_to_remote_buffer)")
    return Reach(ReachKind.OWN)


def multicast_mask(op: Operation) -> str | None:
    """The CTA mask operand of a multicast TMA load (`..., %bar, %pred, %mask {multicast}`: TLX's
    `multicastTargets`, printed after the predicate)."""
    if op.name != "ttng.async_tma_copy_global_to_local":
        return None
    pos = op.positional
    return pos[4] if len(pos) > 4 else None


def remote_view(name: str, at: Operation, values: ValueIndex) -> Operation | None:
    """The `map_to_remote_buffer` that `name` (used by `at`) is, or is a view of; None otherwise."""
    for _ in range(_MAX_DEPTH):
        defn = values.lookup(name, at)
        if not isinstance(defn, OpResult):
            cap = captured_operand(defn)
            if cap is None:
                return None
            name, at = cap
            continue
        op = defn.op
        if op.name == REMOTE_VIEW:
            return op
        if op.name not in _VIEWS or not op.operands:
            return None
        name, at = op.operands[0], op
    return None


@dataclass(frozen=True, slots=True)
class CtaTargets:
    """`cta_reach` evaluated for every rank: does rank s issue the op, and which CTAs it reaches
    (None where the IR does not determine it)."""

    reach: Reach
    issues: tuple[bool, ...]
    targets: tuple[frozenset[int] | None, ...]

    @property
    def crosses(self) -> bool | None:
        """Does some issuing CTA reach another CTA's barrier (None: not computable)?"""
        if self.reach.kind is ReachKind.OWN:
            return False
        if any(t is None for s, t in enumerate(self.targets) if self.issues[s]):
            return None
        return any(t != frozenset({s}) for s, t in enumerate(self.targets) if self.issues[s] and t is not None)

    def describe(self) -> str:
        """`own CTA`, `to cta0`, `to the peer CTA (rank ^ 1)`, `to both CTAs of the pair (cta0+cta1)`,
        `multicast to cta0+cta1`, ..., and which CTAs issue it when not all do."""
        k = self.reach.kind
        n = len(self.targets)
        issuers = [s for s in range(n) if self.issues[s]]
        who = "" if len(issuers) == n else f", issued by {_ctas(issuers)} only"
        if k is ReachKind.OWN:
            return "own CTA"
        if not issuers:
            return "issued by no CTA (its predicates are false in every CTA)"
        if k is ReachKind.LAYOUT:
            return "to the CTAs its CGA layout names (not computed)" + who
        known = {s: self.targets[s] for s in issuers}
        if any(t is None for t in known.values()):
            return f"to the CTA(s) {self.reach.value} names (not computable from the IR)" + who
        sets = [t for t in known.values() if t is not None]
        every = all(t == frozenset(range(n)) for t in sets)
        if k is ReachKind.PAIR:
            return f"to both CTAs of the pair ({_ctas(range(n)) if n == 2 else 'rank & ~1 and rank | 1'})" + who
        if k is ReachKind.CLUSTER or (every and len(sets[0]) > 1):
            verb = "multicast to " if k is ReachKind.MULTICAST else "to "
            return f"{verb}every CTA of the cluster ({_ctas(range(n))})" + who
        if len(set(sets)) == 1:
            return ("to " if len(sets[0]) == 1 else "multicast to ") + _ctas(sets[0]) + who
        if all(t == frozenset({s ^ 1}) for s, t in known.items()):
            return "to the peer CTA (rank ^ 1)" + who
        if all(t == frozenset({s, s ^ 1}) for s, t in known.items()):
            return "multicast to own and peer CTA (rank, rank ^ 1)" + who
        return ", ".join(f"cta{s}->{_ctas(t or ())}" for s, t in known.items())


def _may_run(op: Operation, predicates: tuple[str | None, ...], rank: int, ev: RankEvaluator) -> bool:
    """False only when a predicate of `op` or an enclosing `scf.if` is known false for `rank`."""
    for name in predicates:
        if name is not None and ev.value(name, op, rank) == 0:
            return False
    child = op
    for anc in op.ancestors():
        if anc.name == "scf.if" and anc.operands and child.block is not None and child.block.region is not None:
            v = ev.value(anc.operands[0], anc, rank)
            if v is not None and bool(v) != (child.block.region.index == 0):
                return False
        child = anc
    return True


def _ctas(ranks) -> str:
    return "+".join(f"cta{r}" for r in sorted(ranks))


def cta_targets(op: Operation, operand: str | None, cluster: Cluster, values: ValueIndex,
                ranks: "RankEvaluator | None" = None, predicates: tuple[str | None, ...] = ()) -> CtaTargets:
    """`cta_reach` of `op` on `operand`, evaluated statically for every rank of the cluster with
    `RankEvaluator` (one answer for the static rules, the report and the graph). A rank issues the
    op unless the lowering elects other CTAs, one of `predicates` (the op's own predicate operands)
    or an enclosing `scf.if` condition is false for that rank; a condition the IR does not
    determine counts as "may issue"."""
    reach = cta_reach(op, operand, cluster, values)
    ev = ranks or RankEvaluator(values)
    n = max(cluster.size, 1)
    issues, targets = [], []
    for s in range(n):
        issues.append(reach.issues(s, cluster) and _may_run(op, predicates, s, ev))
        value = ev.value(reach.value, reach.at, s) if reach.value is not None and reach.at is not None else None
        targets.append(reach.targets(s, cluster, value))
    return CtaTargets(reach, tuple(issues), tuple(targets))


def _apply(op: Operation, a: list[int]) -> int | None:
    n = op.name
    binary = {
        "arith.addi": lambda x, y: x + y, "arith.subi": lambda x, y: x - y, "arith.muli": lambda x, y: x * y,
        "arith.andi": lambda x, y: x & y, "arith.ori": lambda x, y: x | y, "arith.xori": lambda x, y: x ^ y,
        "arith.shli": lambda x, y: x << y, "arith.shrui": lambda x, y: x >> y, "arith.shrsi": lambda x, y: x >> y,
        "arith.maxsi": max, "arith.minsi": min, "arith.maxui": max, "arith.minui": min,
    }
    if n in binary and len(a) == 2:
        return binary[n](a[0], a[1])
    if n in ("arith.divsi", "arith.divui") and len(a) == 2 and a[1] != 0:
        return int(a[0] / a[1])
    if n in ("arith.remsi", "arith.remui") and len(a) == 2 and a[1] != 0:
        return a[0] - int(a[0] / a[1]) * a[1]
    if n in ("arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast", "arith.bitcast") and len(a) == 1:
        return a[0]
    if n == "arith.select" and len(a) == 3:
        return a[1] if a[0] else a[2]
    if n == "arith.cmpi" and len(a) == 2 and op.keywords:
        pred = op.keywords[0]
        x, y = a
        table = {"eq": x == y, "ne": x != y, "slt": x < y, "sle": x <= y, "sgt": x > y, "sge": x >= y,
                 "ult": x < y, "ule": x <= y, "ugt": x > y, "uge": x >= y}
        return int(table[pred]) if pred in table else None
    return None


def _constant(op: Operation) -> int | None:
    for text in op.literals:
        if text in ("true", "false"):
            return int(text == "true")
        try:
            return int(text, 0)
        except ValueError:
            continue
    return _int(op.attr("value"))


def _int(v) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None
