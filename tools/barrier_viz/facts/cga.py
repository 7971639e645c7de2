"""Triton's cluster-wide (CGA) IR, per CTA: which part of a buffer or barrier array each CTA holds.

With `"ttg.num-ctas" = N > 1` one program describes the whole cluster: a memdesc type is the
cluster's, and its encoding carries a CGA layout, one basis per bit of the CTA index
(`CGALayout = [[1, 0]]` on shared and TMEM encodings, in units of per-CTA tiles; `block =
[[128, 0]]` on `#ttg.linear` / `#ttg.shared_linear`, in elements; the legacy `CTAsPerCGA` /
`CTASplitNum` / `CTAOrder` triple). A non-zero basis splits the tensor along its dimension
(the CTA with that bit set holds the next tile); an all-zero basis is a *broadcast* bit: the
CTAs that differ only in it hold the same data. The compiler's helpers read it that way
(`getCTASplitNum` counts the non-zero bases per dimension, `getShapePerCTA` divides the shape by
it, `getFreeVariableMasks()["block"]` is the broadcast mask), and so does this module.

What the lowering does with it (fork `BarrierOpToLLVM.cpp`, `LoadStoreOpToLLVM.cpp`,
`MMAv5.cpp`, upstream's TMA load), which is what the per-CTA byte and arrival counts follow:

* A barrier whose layout has broadcast bits is *one* mbarrier per broadcast group, living in the
  group's leader (the CTA with the broadcast bits clear: `getLeaderCTAPredicate` /
  `getLeaderAddress`). Only the leader initialises it, with `count * N / elements`; only the
  leader waits on it (the wait is predicated on the leader test); `barrier_expect %b, S` makes
  the leader expect `S * N / elements` bytes and every other CTA of the group arrive once on
  the leader's barrier; a plain `arrive_barrier` arrives on the leader's barrier. `S` is thus
  the bytes one CTA's share receives.
* A TMA load lands each CTA's share of the destination (`getShapePerCTA` of its type) in that
  CTA and completes its bytes on the barrier of the CTA's group (upstream passes the leader's
  address; with `multicast` and a broadcast destination only the group's first CTA issues and
  the bytes land in every CTA of its destination group).
* `tc_gen5_mma` / `tc_gen5_commit` in a two-CTA module (`ttng.two-ctas`, set by
  `check_matmul_two_cta` from the MMAs' `two_ctas`) are issued by the even CTA of each pair.
  The commit arrives on the barrier at the same offset in every CTA of a multicast mask: with
  `descs` (a commit's operands, an MMA's A-if-shared and B when it is `multicast`) the union over
  the descs of the CTAs that share the desc's data (its broadcast bits, plus the pair bit in
  two-CTA mode); without descs, the pair in two-CTA mode, else only the issuing CTA.
* `clc_try_cancel` with more than one CTA is issued by CTA 0; with `multicast = true` (v3.7.4's
  attribute) or no attribute (newer Triton, where num-ctas > 1 always multicasts) its 16-byte
  response completes on the barrier at the same offset in every CTA.

Known differences are stated, not guessed: the fork's v3.7.4 TMA lowering computes the leader's
barrier address but emits the CTA-local one; we follow the IR's contract (the expect counts the
whole group at the leader), which upstream's lowering implements. Anything the layout does not
determine (no CGA layout in an N-CTA module, a basis with two non-zero entries, a multicast whose
bytes would land on a barrier copy that is not its group's, a group size that disagrees with
`N / elements`) is returned as a reason, and callers state a limit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from math import prod

from ..ir.model import Operation, ParsedIR
from ..ir.types import parse_memdesc

_KEYS = ("CGALayout", "block")
_LEGACY = ("CTAsPerCGA", "CTASplitNum", "CTAOrder")
_INTS = re.compile(r"-?\d+")
CLC_RESPONSE_BYTES = 16
TMA_LOAD_OPS = frozenset({"ttng.async_tma_copy_global_to_local", "ttng.async_tma_gather"})
MMA_OPS = frozenset({"ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled"})
COMMIT = "ttng.tc_gen5_commit"


class CgaUnknown(Exception):
    """The CGA layout of a type does not determine what was asked; `str(e)` says why."""


@dataclass(frozen=True, slots=True)
class CGALayout:
    """One basis per CTA-index bit (bit 0 first); each basis has one entry per tensor dimension,
    in per-CTA tiles (`CGALayout`, the legacy triple) or in elements (`block` of linear layouts)."""

    bases: tuple[tuple[int, ...], ...]
    unit: str = "tile"

    @property
    def rank(self) -> int:
        return len(self.bases[0]) if self.bases else 0

    @property
    def num_ctas(self) -> int:
        return 1 << len(self.bases)

    @property
    def broadcast_mask(self) -> int:
        """CTA-index bits whose basis is all zero (`getFreeVariableMasks()["block"]`)."""
        return sum(1 << i for i, b in enumerate(self.bases) if not any(b))

    @property
    def shares(self) -> int:
        """Distinct parts of the tensor the cluster holds (1: every CTA holds all of it)."""
        return 1 << sum(1 for b in self.bases if any(b))

    @property
    def replicated(self) -> bool:
        return self.shares == 1

    @property
    def split(self) -> bool:
        return self.shares > 1

    def split_per_dim(self) -> tuple[int, ...]:
        """How many parts each dimension is cut into (`getCTASplitNum`)."""
        out = [1] * self.rank
        for b in self.bases:
            nonzero = [d for d, v in enumerate(b) if v]
            if len(nonzero) > 1:
                raise CgaUnknown(f"CGA basis {list(b)} moves along two dimensions")
            if nonzero:
                out[nonzero[0]] *= 2
        return tuple(out)

    def leader(self, cta: int) -> int:
        """The CTA of `cta`'s broadcast group with the broadcast bits clear."""
        return cta & ~self.broadcast_mask

    def group(self, cta: int) -> frozenset[int]:
        """The CTAs holding the same part as `cta` (same bits outside the broadcast mask)."""
        lead = self.leader(cta)
        return frozenset(c for c in range(self.num_ctas) if self.leader(c) == lead)

    def tile_index(self, cta: int) -> tuple[int, ...]:
        """Where `cta`'s part starts along each dimension, in the layout's unit."""
        idx = [0] * self.rank
        for bit, b in enumerate(self.bases):
            if (cta >> bit) & 1:
                for d, v in enumerate(b):
                    idx[d] ^= v
        return tuple(idx)


# -- parsing ------------------------------------------------------------------------------------
def layout_of_encoding(encoding: str | None, aliases: dict[str, str]) -> CGALayout | None:
    """The CGA layout an encoding writes (alias resolved), None when it writes none (the
    one-CTA layout the printer omits)."""
    if not encoding:
        return None
    text = aliases.get(encoding.strip(), encoding.strip())
    for key in _KEYS:
        body = _bracketed_after(text, key)
        if body is not None:
            bases = _bases(body, key, text)
            if key == "block" and not text.startswith(("#ttg.linear", "#ttg.shared_linear")):
                continue
            return CGALayout(bases, "element" if key == "block" else "tile") if bases else None
    return _legacy(text)


def layout_of_type(type_text: str | None, aliases: dict[str, str]) -> CGALayout | None:
    """The CGA layout of a memdesc or tensor type (None: none written)."""
    if not type_text:
        return None
    md = parse_memdesc(type_text, aliases)
    if md is not None:
        return layout_of_encoding(md.encoding, aliases)
    m = re.search(r"#[\w.]+(?:<.*>)?", type_text)
    return layout_of_encoding(m.group(0), aliases) if m else None


def _bracketed_after(text: str, key: str) -> str | None:
    m = re.search(rf"\b{key}\s*=\s*\[", text)
    if m is None:
        return None
    start = m.end() - 1
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "[":
            depth += 1
        elif text[i] == "]":
            depth -= 1
            if depth == 0:
                return text[start + 1 : i]
    raise CgaUnknown(f"unterminated {key} in {text[:80]}")


def _bases(body: str, key: str, text: str) -> tuple[tuple[int, ...], ...]:
    rows = re.findall(r"\[([^\[\]]*)\]", body)
    bases = tuple(tuple(int(v) for v in _INTS.findall(r)) for r in rows)
    if any(len(b) != len(bases[0]) for b in bases):
        raise CgaUnknown(f"{key} bases of different lengths in {text[:80]}")
    return bases


def _legacy(text: str) -> CGALayout | None:
    """`CTAsPerCGA = [2, 1], CTASplitNum = [2, 1], CTAOrder = [1, 0]` as `fromSplitParams` builds
    it: for each dimension in CTAOrder, log2(split) splitting bits, then the broadcast bits."""
    found = {}
    for key in _LEGACY:
        m = re.search(rf"\b{key}\s*=\s*\[([^\]]*)\]", text)
        if m is None:
            return None
        found[key] = [int(v) for v in _INTS.findall(m.group(1))]
    ctas, split, order = found["CTAsPerCGA"], found["CTASplitNum"], found["CTAOrder"]
    rank = len(order)
    if len(ctas) != rank or len(split) != rank:
        raise CgaUnknown(f"CTA layout parameters of different ranks in {text[:80]}")
    bases: list[tuple[int, ...]] = []
    for dim in order:
        tile = 1
        for _ in range(_log2(split[dim])):
            bases.append(tuple(tile if d == dim else 0 for d in range(rank)))
            tile *= 2
        for _ in range(_log2(ctas[dim] // max(1, split[dim]))):
            bases.append((0,) * rank)
    return CGALayout(tuple(bases)) if bases else None


def _log2(n: int) -> int:
    if n < 1 or n & (n - 1):
        raise CgaUnknown(f"CTA count {n} is not a power of two")
    return n.bit_length() - 1


# -- per-CTA shares -----------------------------------------------------------------------------
def shape_per_cta(shape: tuple[int, ...], layout: CGALayout | None) -> tuple[int, ...]:
    """`getShapePerCTA`: the layout's split aligned to the trailing dimensions (a leading
    pipelining dimension is not split; a layout of higher rank drops its leading entries)."""
    if layout is None:
        return shape
    split = list(layout.split_per_dim())
    rank = len(shape)
    split = [1] * (rank - len(split)) + split if len(split) <= rank else split[len(split) - rank:]
    return tuple(s // max(1, min(s, k)) for s, k in zip(shape, split))


def bytes_per_cta(type_text: str | None, aliases: dict[str, str], num_ctas: int) -> int:
    """Bytes one CTA holds of a cluster-wide memdesc (the cluster's bytes over its distinct
    shares)."""
    md = parse_memdesc(type_text, aliases)
    if md is None or md.bits is None:
        raise CgaUnknown(f"the type {type_text} has no known element width")
    layout = _layout_for(md.encoding, aliases, num_ctas, type_text)
    per = shape_per_cta(md.shape, layout)
    return (prod(per) * md.bits + 7) // 8


def _layout_for(encoding: str | None, aliases: dict[str, str], num_ctas: int, what: str | None) -> CGALayout:
    layout = layout_of_encoding(encoding, aliases)
    if layout is None:
        if num_ctas == 1:
            return CGALayout(())
        raise CgaUnknown(f"{what} has no CGA layout in a {num_ctas}-CTA module")
    if layout.num_ctas != num_ctas:
        raise CgaUnknown(f"{what} has a CGA layout of {layout.num_ctas} CTAs in a {num_ctas}-CTA module")
    return layout


@dataclass(frozen=True, slots=True)
class BarrierHome:
    """Where the mbarrier(s) of a barrier view live: one per broadcast group, in its leader."""

    layout: CGALayout
    elements: int
    local: bool = False  # a CTA-local lowering (CgaModule.local_barriers): every CTA its own copy

    def home(self, cta: int) -> int:
        """The CTA whose copy of the barrier `cta`'s arrivals, waits and bytes use."""
        return cta if self.local else self.layout.leader(cta)

    def group_size(self) -> int:
        return 1 if self.local else self.layout_group()

    def layout_group(self) -> int:
        """CTAs sharing one barrier by the layout's broadcast bits."""
        return 1 << bin(self.layout.broadcast_mask).count("1")

    def is_home(self, cta: int) -> bool:
        return self.home(cta) == cta

    def elements_by_cta(self) -> dict[int, tuple[int, ...]]:
        """For a 1-D barrier array: the element indices (of the cluster-wide view) held by
        each CTA (`memdesc<2xi64, CGALayout = [[1]]>`: element k in CTA k; broadcast
        CTAs hold the same element, whose only initialised copy is the leader's)."""
        n = self.layout.num_ctas
        per = max(1, self.elements // max(1, self.layout.shares))
        out = {}
        for c in range(n):
            start = self.layout.tile_index(c)[-1] if self.layout.rank else 0
            start *= per if self.layout.unit == "tile" else 1
            out[c] = tuple(range(start, start + per))
        return out


def barrier_home(type_text: str | None, aliases: dict[str, str], num_ctas: int, local: bool = False) -> BarrierHome:
    """The CGA placement of a barrier view (`local`: under a CTA-local lowering); raises when the
    lowering's `N / elements` group size and the layout's broadcast groups disagree (then the IR
    means something we do not model)."""
    md = parse_memdesc(type_text, aliases)
    if md is None or md.dtype != "i64":
        raise CgaUnknown(f"{type_text} is not a barrier view")
    layout = _layout_for(md.encoding, aliases, num_ctas, type_text)
    elements = prod(md.shape) if md.shape else 1
    home = BarrierHome(layout, elements, local)
    if elements * home.layout_group() != num_ctas:
        raise CgaUnknown(f"barrier view {md.text} holds {elements} barrier(s) for {num_ctas} CTAs but its layout "
                         f"groups them by {home.group_size()}")
    return home


# -- the module ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class CgaModule:
    """What the lowering of a CGA-form module depends on besides the types."""

    num_ctas: int
    two_ctas: bool
    aliases: dict[str, str]
    local_barriers: bool = False  # see `_local_lowering`

    def home(self, barrier_type: str | None) -> BarrierHome:
        return barrier_home(barrier_type, self.aliases, self.num_ctas, self.local_barriers)


def cga_module(ir: ParsedIR) -> CgaModule | None:
    """None unless the module is in CGA form (`ttg.num-ctas` > 1)."""
    modules = [top for top in ir.operations if top.name == "builtin.module"]
    return cga_module_of(modules[-1], ir.aliases) if modules else None


def cga_module_of(module: Operation, aliases: dict[str, str] | None = None) -> CgaModule | None:
    """`cga_module` of one module op (aliases: the unit's, which the parser keeps on the op)."""
    n = module.attr("ttg.num-ctas")
    num = n if isinstance(n, int) and not isinstance(n, bool) else 1
    if num <= 1:
        return None
    t = module.attr("ttng.two-ctas")
    two = module.attr("tlx.enable_paired_cta_mma") is True
    if isinstance(t, bool):
        two = two or t
    else:
        # make_llir's check_matmul_two_cta sets the module flag from the MMAs' `two_ctas`.
        two = two or any(op.name in MMA_OPS and op.attr("two_ctas") is True for op in module.walk())
    aliases = aliases if aliases is not None else (module.aliases or {})
    return CgaModule(num, two, aliases, not two and _local_lowering(module, aliases, num))


def _local_lowering(module: Operation, aliases: dict[str, str], num_ctas: int) -> bool:
    """Is this IR valid only under a CTA-local barrier lowering? A TMA load that completes on a
    barrier with broadcast bits, outside a two-CTA module, is rejected by newer Triton's verifier
    (a TMA barrier there must have the per-CTA layout), and the fork's v3.7.4 would complete the
    bytes on a non-leader's copy it never initialised; Triton 3.6 accepts it and lowers every
    barrier op of the module CTA-locally (each CTA inits, expects, waits on and receives bytes on
    its own copy: its PTX, and the H200 runs of evals/cases/gpu-h200.gluon-cluster-copy*). So the
    only compiler whose output this can be defines it per CTA, and it is read that way."""
    for op in module.walk():
        if op.name not in TMA_LOAD_OPS:
            continue
        try:
            if barrier_home(barrier_type_of(op), aliases, num_ctas).layout.broadcast_mask:
                return True
        except CgaUnknown:
            continue
    return False


def multicast_group(broadcast_bits: int, cta: int, num_ctas: int) -> frozenset[int]:
    """`createTMAMulticastMask`: the CTAs that agree with `cta` outside `broadcast_bits`."""
    fixed = ~broadcast_bits & (num_ctas - 1)
    return frozenset(c for c in range(num_ctas) if c & fixed == cta & fixed)


# -- what one op does, per CTA (for the expect rule and the interpreter) -------------------------
def tma_barrier_bytes(op: Operation, barrier_type: str | None, m: CgaModule, cta: int,
                      dst_type: str | None = None) -> dict[int, int]:
    """Bytes a TMA load issued in CTA `cta` completes on each CTA's copy of its barrier
    ({} when `cta` does not issue it: a multicast is issued by its group's first CTA)."""
    dst = dst_type or (op.result_types[0] if op.result_types else None)
    md = parse_memdesc(dst, m.aliases)
    if md is None:
        raise CgaUnknown(f"the destination type of {op.name} at line {op.line} is not a memdesc")
    if len(op.positional) > 4:
        raise CgaUnknown(f"{op.name} at line {op.line} names its multicast CTAs (a per-CTA program's form) in "
                         "CGA IR")
    d_layout = _layout_for(md.encoding, m.aliases, m.num_ctas, dst)
    nbytes = bytes_per_cta(dst, m.aliases, m.num_ctas)
    home = m.home(barrier_type)
    if op.attr("multicast") is True and d_layout.broadcast_mask:
        if cta & d_layout.broadcast_mask:
            return {}
        lands = multicast_group(d_layout.broadcast_mask, cta, m.num_ctas)
    else:
        lands = frozenset({cta})
    out: dict[int, int] = {}
    for d in sorted(lands):
        h = home.home(d)
        # The bytes landing in CTA d may signal a barrier outside d only as a two-CTA copy
        # (`cta_group::2`), and then only the pair peer's.
        if h != d and not (m.two_ctas and h == d & ~1):
            raise CgaUnknown(f"{op.name} at line {op.line} lands bytes in CTA {d} whose barrier copy is in CTA {h}, "
                             "which a TMA signal cannot reach" + ("" if m.two_ctas else " outside a two-CTA module"))
        out[h] = out.get(h, 0) + nbytes
    return out


def clc_barrier_bytes(op: Operation, barrier_type: str | None, m: CgaModule, cta: int) -> dict[int, int]:
    """`clc_try_cancel`: CTA 0 issues; its response completes 16 bytes on the barrier at the
    same offset in every CTA (multicast) or only in CTA 0 (`multicast = false`)."""
    if cta != 0:
        return {}
    home = m.home(barrier_type)
    mc = op.attr("multicast")
    targets = range(m.num_ctas) if mc is None or mc is True else (0,)
    out: dict[int, int] = {}
    for d in targets:
        if not home.is_home(d):
            raise CgaUnknown(f"{op.name} at line {op.line} multicasts to CTA {d}, which holds no copy of the "
                             "barrier of its group")
        out[d] = out.get(d, 0) + CLC_RESPONSE_BYTES
    return out


def commit_descs(op: Operation) -> list[str]:
    """Types whose broadcast bits make the commit's multicast mask (see the module docstring)."""
    if op.name == COMMIT:
        return list(op.types[1:])
    if op.name == "ttng.tc_gen5_mma" and op.attr("multicast") is True:
        a, b = (op.types + [None, None])[:2]
        return ([a] if a and "#ttng.tensor_memory" not in a else []) + ([b] if b else [])
    return []


def issues_commit(op: Operation, m: CgaModule, cta: int) -> bool:
    """Two-CTA MMAs and commits are issued by the even CTA of each pair."""
    return not m.two_ctas or cta % 2 == 0


def commit_targets(op: Operation, m: CgaModule, cta: int) -> frozenset[int]:
    """CTAs on whose barrier copy (same offset) an MMA's barrier list / a `tc_gen5_commit`
    issued by CTA `cta` arrives once (empty when `cta` does not issue it)."""
    if not issues_commit(op, m, cta):
        return frozenset()
    descs = commit_descs(op)
    if descs:
        out: set[int] = set()
        for desc in descs:
            md = parse_memdesc(desc, m.aliases)
            layout = _layout_for(md.encoding if md is not None else None, m.aliases, m.num_ctas, desc)
            bits = layout.broadcast_mask | (1 if m.two_ctas else 0)
            out |= multicast_group(bits, cta, m.num_ctas) if bits else {cta}
        return frozenset(out)
    if m.two_ctas:
        base = cta & ~1
        return frozenset({base, base + 1})
    return frozenset({cta})


def expect_bytes_at_home(declared: int, barrier_type: str | None, m: CgaModule) -> dict[int, int]:
    """What `barrier_expect %b, declared` arms, per CTA holding a copy of the barrier: the
    leader expects `declared` for each CTA of its group."""
    home = m.home(barrier_type)
    g = home.group_size()
    return {c: declared * g for c in range(m.num_ctas) if home.is_home(c)}


# -- arrivals and waits on a CGA barrier (for the interpreter) --------------------------------------
def arrival_home(barrier_type: str | None, m: CgaModule, cta: int) -> int:
    """The CTA whose copy of the barrier an `arrive_barrier` / `barrier_expect` of CTA `cta`
    arrives on (its group's leader)."""
    return m.home(barrier_type).home(cta)


def waits_on(barrier_type: str | None, m: CgaModule, cta: int) -> bool:
    """`wait_barrier` is predicated on the leader test: only a copy's own CTA waits on it."""
    return m.home(barrier_type).is_home(cta)


def init_count(count: int, barrier_type: str | None, m: CgaModule) -> int:
    """`init_barrier %b, count` arms the leader's copy for every CTA of its group."""
    return count * m.home(barrier_type).group_size()


_BARRIER_TYPE_AT = {"ttng.async_tma_copy_global_to_local": 1, "ttng.async_tma_gather": 1,
                    "ttng.clc_try_cancel": 1, COMMIT: 0, "ttng.barrier_expect": 0,
                    "ttng.arrive_barrier": 0, "ttng.wait_barrier": 0, "ttng.init_barrier": 0}


def barrier_type_of(op: Operation) -> str | None:
    """The barrier operand's type as written in the op's trailing types (MMAs: the first of
    their barrier list)."""
    if op.name in MMA_OPS:
        return next((t for t in op.types[3:] if "xi64" in t and "#ttng.tensor_memory" not in t), None)
    k = _BARRIER_TYPE_AT.get(op.name)
    return op.types[k] if k is not None and k < len(op.types) else None


def tx_bytes_by_cta(op: Operation, m: CgaModule, cta: int) -> dict[int, int]:
    """Bytes `op` issued in CTA `cta` completes on each CTA's copy of its barrier (TMA loads and
    CLC try-cancel); raises `CgaUnknown` for anything else or what the layout does not fix."""
    if op.name in TMA_LOAD_OPS:
        return tma_barrier_bytes(op, barrier_type_of(op), m, cta)
    if op.name == "ttng.clc_try_cancel":
        return clc_barrier_bytes(op, barrier_type_of(op), m, cta)
    raise CgaUnknown(f"{op.name} at line {op.line} completes no modelled transaction bytes in CGA form")



def commit_arrivals(op: Operation, m: CgaModule, cta: int, barrier_type: str | None = None) -> frozenset[int]:
    """`commit_targets` checked against the barrier: the commit arrives at the same offset in
    each target CTA, so each target must hold its own copy (a broadcast barrier's non-leader
    slot is never initialised: not modelled, raises)."""
    targets = commit_targets(op, m, cta)
    home = m.home(barrier_type or barrier_type_of(op))
    stray = sorted(t for t in targets if not home.is_home(t))
    if stray:
        raise CgaUnknown(f"{op.name} at line {op.line} arrives in CTA {stray[0]}, whose slot of this barrier is "
                         "not its group's copy")
    return targets
