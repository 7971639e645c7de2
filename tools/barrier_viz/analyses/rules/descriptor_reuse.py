"""`race.tensormap_rewrite`: a device-side TMA descriptor is rewritten while copies through it
may still be in flight.

A kernel that builds its TMA descriptors on the device (`tl.make_tensor_descriptor`: a
`ttg.global_scratch_alloc`, `ttng.tensormap_create` into it, `reinterpret_tensor_descriptor`)
inside a loop rewrites the *same* scratch bytes every iteration: the allocation is static.
TMA copies are asynchronous and read the descriptor when the TMA unit executes them, so the
next iteration's `tensormap_create` must not run until the copies issued through the old
descriptor have completed. The only thing that says so is a wait, in the issuing partition,
after its last copy through the descriptor (or before the rewrite): on a barrier the copies
complete (a load's full barrier) or `async_tma_store_wait` for stores.
facebookexperimental/triton cd2de6835 fixed exactly this in the TLX grouped GEMM: the producer
waited for the last pair of loads of a problem before building the next problem's descriptors.

Any wait of the issuing partition in that window is accepted (it may order the rewrite after
the copies through another partition), so the rule only fires when nothing can.
"""

from __future__ import annotations

from ...facts.values import OpResult, captured_operand
from ...ir.model import Operation
from ..model.findings import Finding, Kind, Severity, finding
from ..model.kinds import KindDoc, Rule
from ..program.order import following_in_iteration, innermost_loop, loop_depth, preceding_in_iteration

_COPIES = {"ttng.async_tma_copy_global_to_local", "ttng.async_tma_copy_local_to_global",
           "ttng.async_tma_prefetch", "ttng.async_tma_gather", "ttng.async_tma_scatter",
           "ttng.async_tma_reduce"}
_WAITS = {"ttng.wait_barrier", "ttng.async_tma_store_wait"}
_DESC_VIEWS = {"ttng.reinterpret_tensor_descriptor", "tt.reinterpret_tensor_descriptor"}


def _scratch(analysis, name: str, at: Operation, budget: int = 32) -> Operation | None:
    """The `global_scratch_alloc` a descriptor value (or scratch pointer) comes from."""
    while budget > 0:
        budget -= 1
        defn = analysis.values.lookup(name, at)
        if isinstance(defn, OpResult):
            if defn.op.name == "ttg.global_scratch_alloc":
                return defn.op
            if defn.op.name in _DESC_VIEWS and defn.op.operands:
                name, at = defn.op.operands[0], defn.op
                continue
            return None
        cap = captured_operand(defn)
        if cap is not None:
            name, at = cap
            continue
        return None
    return None


def tensormap_rewrites(analysis) -> list[Finding]:
    creates: dict[int, Operation] = {}
    for op in analysis.ops:
        if op.name == "ttng.tensormap_create" and op.operands:
            alloc = _scratch(analysis, op.operands[0], op)
            if alloc is not None and innermost_loop(op) is not None:
                creates[id(alloc)] = op
    if not creates:
        return []
    out: list[Finding] = []
    for create in creates.values():
        loop = innermost_loop(create)
        alloc = _scratch(analysis, create.operands[0], create)
        copies = [op for op in loop.walk() if op.name in _COPIES and op.operands
                  and _scratch(analysis, op.operands[0], op) is alloc
                  and analysis.partition_name(op) == analysis.partition_name(create)]
        if not copies:
            continue
        last = copies[-1]
        up = max(0, loop_depth(last) - loop_depth(create))
        after = any(o.name in _WAITS for o in following_in_iteration(last, up) if o is not last)
        before = any(o.name in _WAITS for o in preceding_in_iteration(create))
        if after or before:
            continue
        part = analysis.partition_name(create)
        out.append(finding(
            Kind.RACE_TENSORMAP_REWRITE, Severity.error,
            f"{part or 'the kernel'} rewrites the TMA descriptor in {create.operands[0]} at line {create.line} every "
            f"iteration of the loop at line {loop.line}, and nothing waits for the copies issued through it "
            f"(last at line {last.line}) before the next rewrite: an in-flight copy can read the new descriptor.",
            lines=[create.line, last.line], partitions=[part] if part else [],
            evidence={"loop_line": loop.line, "copy_lines": [c.line for c in copies]},
            suggestion="Wait for the last copy through the descriptor (its full barrier, or async_tma_store_wait) "
                       "before building the next one."))
    return out


RULE = Rule("descriptor_reuse", __name__, tensormap_rewrites, docs=(KindDoc(
    Kind.RACE_TENSORMAP_REWRITE,
    "A device-side TMA descriptor is rewritten while copies through it may still be in flight.",
    "Finds a `tensormap_create` in a loop that rewrites the same scratch descriptor bytes every "
    "iteration, with no wait of the issuing partition between its last copy through the old "
    "descriptor and the rewrite.",
    "TMA copies read the descriptor when the TMA unit executes them, not when they are issued. "
    "Rewriting it too early sends the previous problem's copies to the next problem's tensor "
    "(fixed in the TLX grouped GEMM by waiting for the last loads first).",
    "scf.for %g = ... {\n"
    "  ttng.tensormap_create %scratch, ...      // next problem's descriptor\n"
    "  ttng.async_tma_copy_global_to_local %desc ... %slot, %full\n"
    "}                                          // no wait on %full before the next tensormap_create",
    "Wait on the copies' barrier (or `async_tma_store_wait` for stores) before rewriting.",
    (Severity.error,), "Always an error (outcome: wrong results)."),))
