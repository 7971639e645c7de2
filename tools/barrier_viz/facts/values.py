"""SSA definitions: which operation result or block argument a name used at an op refers to.

Names are scoped by region, as in MLIR: a use sees the values of its own region and of the
regions enclosing it. Partition regions of `ttg.warp_specialize` reuse the same names (each
has its own `%acc_30`), so a flat name table would be wrong; this index never is.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.model import BlockArgument, Operation, ParsedIR, Region


@dataclass(frozen=True, slots=True)
class OpResult:
    """Result `index` of `op`."""

    op: Operation
    index: int

    @property
    def name(self) -> str:
        return self.op.results[self.index]

    @property
    def type(self) -> str | None:
        types = self.op.result_types
        return types[self.index] if self.index < len(types) else None

    @property
    def line(self) -> int:
        return self.op.line


Definition = OpResult | BlockArgument


class ValueIndex:
    """Region-scoped lookup from (name, place of use) to its definition."""

    def __init__(self, ir: ParsedIR):
        self._scopes: dict[int, dict[str, Definition]] = {}
        self._top: dict[str, Definition] = {}
        for top in ir.operations:
            for i, name in enumerate(top.results):
                self._top[name] = OpResult(top, i)
            for op in top.walk():
                for region in op.regions:
                    table = self._scopes.setdefault(id(region), {})
                    for block in region.blocks:
                        for arg in block.arguments:
                            table.setdefault(arg.name, arg)
                        for inner in block.operations:
                            for i, name in enumerate(inner.results):
                                table.setdefault(name, OpResult(inner, i))

    def lookup(self, name: str, at: Operation) -> Definition | None:
        """The definition `name` refers to when used by `at` (None when undefined)."""
        region: Region | None = at.parent_region
        while region is not None:
            found = self._scopes.get(id(region), {}).get(name)
            if found is not None:
                return found
            parent = region.parent
            region = parent.parent_region if parent is not None else None
        return self._top.get(name)

    def lookup_in_region(self, name: str, region: Region) -> Definition | None:
        """The definition `name` refers to inside `region` (for values used by a region's
        header, e.g. a loop's iter_args seen from its body)."""
        r: Region | None = region
        while r is not None:
            found = self._scopes.get(id(r), {}).get(name)
            if found is not None:
                return found
            parent = r.parent
            r = parent.parent_region if parent is not None else None
        return self._top.get(name)


def defining_op(defn: Definition | None) -> Operation | None:
    return defn.op if isinstance(defn, OpResult) else None


def captured_operand(defn) -> tuple[str, Operation] | None:
    """For a block argument of a `ttg.warp_specialize` partition region: the value the parent
    passes for it (its capture) and the warp_specialize op; None for anything else. The one
    place that hops from a partition's argument to the parent's value."""
    if not isinstance(defn, BlockArgument):
        return None
    block = defn.block
    owner = block.region.parent if block is not None and block.region is not None else None
    if owner is not None and owner.name == "ttg.warp_specialize" and defn.index < len(owner.operands):
        return owner.operands[defn.index], owner
    return None


def reaches_back(values: ValueIndex, name: str, at: Operation, visit, budget: int) -> bool:
    """Walk back from the value `name` used at `at` through the definitions it is computed from.

    `visit(defn)` sees each definition once (None for a name with no definition) and returns True
    to stop with a yes, or the (name, op) uses to follow next. The answer is True when a visit
    said yes, and also when the budget ran out: both callers ask a conservative question ("could
    it depend on the rank", "could it vary per iteration"), for which "did not finish" is yes."""
    stack = [(name, at)]
    seen: set[tuple[str, int]] = set()
    while stack and budget > 0:
        budget -= 1
        n, where = stack.pop()
        if (n, id(where)) in seen:
            continue
        seen.add((n, id(where)))
        found = visit(values.lookup(n, where))
        if found is True:
            return True
        stack.extend(found or ())
    return budget <= 0
