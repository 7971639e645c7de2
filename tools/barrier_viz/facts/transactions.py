"""Transaction bytes: which ops complete tx-bytes on an mbarrier, and how many land in each CTA.

A `barrier_expect` phase completes when its arrival count is reached *and* its transaction count
returns to zero, so the expect check must see every op that completes transaction bytes on the
barrier, not only TMA loads:

* TMA loads and gathers (`async_tma_copy_global_to_local`, `async_tma_gather`): the bytes of the
  destination view; with a multicast mask each CTA named in the mask gets them, on the barrier at
  the same offset in its own shared memory;
* cluster launch control (`async_clc_try_cancel` in TLX, `clc_try_cancel` upstream): the hardware
  writes its 16-byte response and completes 16 bytes on the barrier (PTX
  `clusterlaunchcontrol.try_cancel ... complete_tx::bytes.b128`; with multicast every CTA of the
  cluster gets its own response and its own 16 bytes). TLX's op is lowered to a multicast issued
  by the first CTA (along x) of the cluster only; the upstream op is issued by every CTA;
* remote copies (`ttg.async_remote_shmem_copy %src, rank %r, %dst barrier %bar`): the bytes of
  the source land in CTA `r`, on its barrier at `%bar`'s offset;
* bulk copies (`ttg.async_copy_global_to_local %ptr, %dst bulk_size %n barrier %bar`,
  `cp.async.bulk ... mbarrier::complete_tx::bytes`): `%n` bytes, as the interpreter counts them.

In Triton's CGA form (`ttg.num-ctas` > 1, one cluster-wide program) the types are the cluster's:
`cga.py` gives each CTA's share of a copy, the CTA whose copy of the barrier it completes on (a
barrier with broadcast bits is one mbarrier per group, in the group's leader, which expects the
declared bytes once per CTA of the group), multicast and CLC targets; the tally is then per
barrier copy: received against `declared * group size` in each leader, 0 elsewhere.

In a TLX-style cluster (one per-CTA program, `nvg.cluster_id` for the rank) every CTA runs the same
window of ops after the expect, so CTA `d` receives, from each rank `s`, the bytes of each op of
that window that rank `s` executes and that targets `d` (which CTAs an op targets is
`cluster.cta_reach`, shared with the graph). Ranks, masks and branch conditions are
computed per rank (`cluster.RankEvaluator`); when one cannot be, or when an op of the window
touches the barrier in a way not listed here, the expect is *not checked* and the reason says why
(a stated limit, never a verdict).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..ir.model import Operation
from ..ir.types import parse_memdesc
from . import cga
from .cluster import RANK_OPS, Cluster, RankEvaluator, cta_reach, multicast_mask  # noqa: F401 (re-exported)
from .values import OpResult, ValueIndex, captured_operand, reaches_back

CLC_RESPONSE_BYTES = 16
# op -> (barrier operand, data operand, fixed byte count or None: the data view's bytes)
TX_OPS: dict[str, tuple[int, int, int | None]] = {
    "ttng.async_tma_copy_global_to_local": (2, 1, None),
    "ttng.async_tma_gather": (2, 1, None),
    "ttng.async_clc_try_cancel": (0, 1, CLC_RESPONSE_BYTES),
    "ttng.clc_try_cancel": (1, 0, CLC_RESPONSE_BYTES),
}
REMOTE_COPY = "ttg.async_remote_shmem_copy"
REMOTE_STORE = "ttg.async_remote_shmem_store"  # `st.async`: a register tensor into the peer's buffer
REMOTE_COPY_OPS = frozenset({REMOTE_COPY, REMOTE_STORE})
REMOTE_VIEW = "ttng.map_to_remote_buffer"
BULK_COPY = "ttg.async_copy_global_to_local"  # with `barrier`: a bulk copy completing bytes on it
# Ops that use a barrier without completing transaction bytes on it (arrivals, waits, views and
# the structure that carries values around).
NO_TX = frozenset({
    "ttng.init_barrier", "ttng.inval_barrier", "ttng.wait_barrier", "ttng.arrive_barrier", "ttng.barrier_expect",
    "ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled", "ttng.tc_gen5_commit", "ttng.async_copy_mbarrier_arrive",
    "ttng.async_tma_store_token_wait", "ttng.fence_mbarrier_init_release_cluster", REMOTE_VIEW,
    "ttg.memdesc_index", "ttg.memdesc_subview", "ttg.memdesc_subslice", "ttg.memdesc_reinterpret",
    "scf.yield", "scf.condition", "scf.for", "scf.while", "scf.if", "ttg.warp_specialize", "ttg.warp_yield",
    "ttg.warp_return", "ttg.local_dealloc",
})


@dataclass(frozen=True, slots=True)
class Delivery:
    """One op of an expect's window that completes bytes on the expected barrier."""

    op: Operation
    bytes: int | None
    # Ranks receiving the bytes when rank s issues it (None: cannot be computed), per issuing rank.
    targets: Callable[[int], frozenset[int] | None]
    # Does rank s issue it at all (the lowering may elect one CTA)?
    issues: Callable[[int], bool] = lambda s: True


@dataclass(frozen=True, slots=True)
class Tally:
    """Bytes each CTA's barrier receives in the window, or why that cannot be counted."""

    per_cta: tuple[int, ...] | None
    reason: str | None
    # What each CTA's copy of the barrier expects, when that is not the declared bytes in every
    # CTA (CGA form: a broadcast group's leader expects them once per CTA of the group).
    expected: tuple[int, ...] | None = None
    # CTAs that do not run the expect at all (a rank test around it, or its predicate): their
    # copy of the barrier is not armed by it, so what lands there is not its concern.
    idle: tuple[int, ...] = ()


class Counter:
    """Counts the bytes of an expect's window for every CTA of the cluster."""

    def __init__(self, values: ValueIndex, cluster: Cluster, cga_module: "cga.CgaModule | None" = None):
        self.values = values
        self.cluster = cluster
        self.cga = cga_module
        self.ranks = RankEvaluator(values)

    def tally(self, expect: Operation, deliveries: list[Delivery], blockers: list[str]) -> Tally:
        """`blockers`: ops of the window that touch the barrier in a way that is not counted."""
        if blockers:
            return Tally(None, "; ".join(blockers))
        if self.cluster.cga and self.cga is not None:
            try:
                return self._cga_tally(expect, deliveries)
            except cga.CgaUnknown as e:
                return Tally(None, f"cluster-wide (CGA) IR with ttg.num-ctas = {self.cluster.num_ctas}: {e}")
        if any(d.bytes is None for d in deliveries):
            bad = next(d for d in deliveries if d.bytes is None)
            return Tally(None, f"the bytes of {bad.op.name} at line {bad.op.line} are not known from its types")
        n = self.cluster.size
        if self.cluster.cga:
            return Tally(None, f"cluster-wide (CGA) IR with ttg.num-ctas = {self.cluster.num_ctas}: its types are "
                               "the cluster's, each CTA's share of a copy is not computed")
        if n == 1:
            return Tally((sum(d.bytes or 0 for d in deliveries),), None)
        got = [0] * n
        idle = tuple(s for s in range(n) if self.executes(expect, None, s) is False)
        for d in deliveries:
            for s in range(n):
                runs = self.executes(d.op, expect, s) if d.issues(s) else False
                targets = d.targets(s) if runs else frozenset()
                if runs is None or targets is None:
                    return Tally(None, f"which CTAs of the {n}-CTA cluster {d.op.name} at line {d.op.line} "
                                       "runs in or delivers to is not computable from the IR")
                for t in targets:
                    if 0 <= t < n:
                        got[t] += d.bytes or 0
        return Tally(tuple(got), None, idle=idle)

    def _cga_tally(self, expect: Operation, deliveries: list[Delivery]) -> Tally:
        """Per barrier copy of a CGA-form module: bytes received against what it expects."""
        m = self.cga
        assert m is not None
        declared = next((int(t) for t in expect.literals if t.lstrip("-").isdigit()), None)
        if declared is None:
            raise cga.CgaUnknown(f"the bytes of barrier_expect at line {expect.line} are not a literal")
        n = m.num_ctas
        armed = cga.expect_bytes_at_home(declared, self._operand_type(expect, 0), m)
        got = [0] * n
        for d in deliveries:
            spec = TX_OPS.get(d.op.name)
            if spec is None or d.op.name == "ttng.async_clc_try_cancel":
                raise cga.CgaUnknown(f"{d.op.name} at line {d.op.line} is not modelled in CGA form")
            bar_type = self._operand_type(d.op, spec[0])
            for s in range(n):
                runs = self.executes(d.op, expect, s)
                if runs is None:
                    raise cga.CgaUnknown(f"whether CTA {s} runs {d.op.name} at line {d.op.line} is not computable")
                if not runs:
                    continue
                per = (cga.tma_barrier_bytes(d.op, bar_type, m, s, self._operand_type(d.op, spec[1], barrier=False))
                       if d.op.name in cga.TMA_LOAD_OPS
                       else cga.clc_barrier_bytes(d.op, bar_type, m, s))
                for t, b in per.items():
                    got[t] += b
        expected = tuple(armed.get(c, 0) for c in range(n))
        return Tally(tuple(got), None, expected)

    def _operand_type(self, op: Operation, index: int, barrier: bool = True) -> str | None:
        """The type of positional operand `index` (its definition's), else the op's written
        barrier type (or, for data, its result type)."""
        pos = op.positional
        if index < len(pos):
            defn = self.values.lookup(pos[index], op)
            t = getattr(defn, "type", None)
            if t:
                return t
        if not barrier:
            return op.result_types[0] if op.result_types else None
        return next((t for t in op.types if parse_memdesc(t) is not None and "xi64" in t), None)

    def executes(self, op: Operation, expect: Operation | None, rank: int) -> bool | None:
        """Does rank `rank` execute `op` (its predicate and the `scf.if`s between it and the
        expect's block; every enclosing `scf.if` when `expect` is None)? Conditions that do not
        depend on the rank are the same in every CTA."""
        pos = op.positional
        pred_at = {"ttng.async_tma_copy_global_to_local": 3, "ttng.async_tma_gather": 3,
                   "ttng.wait_barrier": 2, "ttng.barrier_expect": 1}.get(op.name)
        conds: list[tuple[str, Operation, bool]] = []
        if pred_at is not None and pred_at < len(pos):
            conds.append((pos[pred_at], op, True))
        child = op
        for anc in op.ancestors():
            if expect is not None and anc is expect.parent_op:
                break
            if anc.name == "scf.if" and anc.operands and child.block is not None:
                region = child.block.region
                conds.append((anc.operands[0], anc, region is not None and region.index == 0))
            child = anc
        for name, at, want in conds:
            v = self.ranks.value(name, at, rank)
            if v is None:
                if self.depends_on_rank(name, at):
                    return None
                continue
            if bool(v) != want:
                return False
        return True

    def depends_on_rank(self, name: str, at: Operation, budget: int = 200) -> bool:
        def visit(d):
            if isinstance(d, OpResult):
                return True if d.op.name in RANK_OPS else [(o, d.op) for o in d.op.operands]
            cap = captured_operand(d)
            return [cap] if cap is not None else None

        return reaches_back(self.values, name, at, visit, budget)

    # -- targets --------------------------------------------------------------------------------
    def reached(self, op: Operation, barrier: str) -> tuple[Callable[[int], frozenset[int] | None],
                                                             Callable[[int], bool]]:
        """(targets, issues) of `op` on its barrier operand, per issuing rank: the one answer of
        `cluster.cta_reach`, its rank or mask operand evaluated with `RankEvaluator`."""
        reach = cta_reach(op, barrier, self.cluster, self.values)

        def targets(s: int) -> frozenset[int] | None:
            value = self.ranks.value(reach.value, reach.at, s) if reach.value and reach.at is not None else None
            return reach.targets(s, self.cluster, value)

        return targets, lambda s: reach.issues(s, self.cluster)


def remote_copy_operands(op: Operation) -> tuple[str, str, str] | None:
    """(source, rank, barrier) of `async_remote_shmem_copy %src, rank %r, %dst barrier %bar` and
    of `async_remote_shmem_store %tensor, rank %r, %dst barrier %bar`."""
    pos = op.positional
    return (pos[0], pos[1], pos[-1]) if op.name in REMOTE_COPY_OPS and len(pos) >= 4 else None


def bulk_copy_operands(op: Operation) -> tuple[str, str, str] | None:
    """(destination, size, barrier) of `async_copy_global_to_local %ptr, %dst bulk_size %n
    barrier %bar`; None for a plain cp.async (no barrier)."""
    pos = op.positional
    if op.name != BULK_COPY or "barrier" not in op.keywords or len(pos) < 4:
        return None
    return pos[1], pos[2], pos[-1]


def remote_copy_bytes(op: Operation) -> int | None:
    """Bytes a remote copy or store completes on the peer's barrier: a copy's source view, a
    store's destination view (its source is a register tensor)."""
    from ..ir.types import memdesc_bytes

    return next((b for b in (memdesc_bytes(t) for t in op.types[:2]) if b is not None), None)
