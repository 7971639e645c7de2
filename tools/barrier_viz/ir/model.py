"""The IR model: operations, regions, blocks and values, each with the line it was written on.

The model is deliberately small. It records what the text says (names, operands, attributes,
regions) and nothing it would have to guess; the facts and analyses layers interpret it. Every
walk over it is iterative, so IR nested 10,000 regions deep is as fine as IR nested three deep.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator


@dataclass(eq=False, slots=True)
class BlockArgument:
    """A value defined by a block header: a function argument, a loop induction variable or
    iter_arg, a partition capture, or a `^bb(...)` argument."""

    name: str
    type: str | None
    line: int
    column: int
    loc_name: str | None = None
    block: "Block | None" = field(default=None, repr=False)
    index: int = 0


@dataclass(eq=False, slots=True)
class Block:
    """A list of operations with optional arguments; `label` is `^bb0` style or None for an
    entry block written without a label."""

    label: str | None = None
    arguments: list[BlockArgument] = field(default_factory=list)
    operations: list["Operation"] = field(default_factory=list)
    region: "Region | None" = field(default=None, repr=False)


@dataclass(eq=False, slots=True)
class Region:
    """One region of an operation. `label` is the keyword written before it, when there is one
    (`default`, `partition0`, `do`, `else`), and `header` the text between that keyword and the
    opening brace other than the arguments (e.g. `num_warps(4)`)."""

    label: str | None = None
    header: str = ""
    line: int = 0
    end_line: int = 0
    blocks: list[Block] = field(default_factory=list)
    parent: "Operation | None" = field(default=None, repr=False)
    index: int = 0

    @property
    def entry(self) -> Block | None:
        return self.blocks[0] if self.blocks else None

    @property
    def arguments(self) -> list[BlockArgument]:
        return self.blocks[0].arguments if self.blocks else []

    def operations(self) -> Iterator["Operation"]:
        for block in self.blocks:
            yield from block.operations


@dataclass(eq=False, slots=True)
class Operation:
    """One operation as written: custom or generic form read alike.

    `results` hold SSA names as uses will spell them: `%r:2` becomes `%r#0`, `%r#1`.
    `operands` are the SSA values the operation uses, in written order, excluding values it
    defines for its own regions (loop induction variables, iter_args, partition captures).
    `attributes` map a name to its raw text; `attrs` gives parsed values (see `ir.attrs`).
    """

    name: str
    line: int
    column: int
    end_line: int = 0
    results: list[str] = field(default_factory=list)
    result_types: list[str] = field(default_factory=list)
    operands: list[str] = field(default_factory=list)
    operand_tokens: list[str] = field(default_factory=list)
    # Where each operand is written, (line, column), parallel to `operands`: diagnostics about a
    # use (an undefined value) point at the use itself.
    operand_positions: list[tuple[int, int]] = field(default_factory=list)
    # Bracket/paren depth each operand was written at (parallel to `operands`): 0 = positional,
    # 1 = inside `[...]` (TMA coordinates, `%d[%token]`, `%bar[%pred]`). Lets facts pick
    # positional operands without re-reading the text.
    operand_depths: list[int] = field(default_factory=list)
    # Bare literals written at depth 0 of the header (e.g. `16384` in `barrier_expect %b, 16384`),
    # in written order; literals are not operands.
    literals: list[str] = field(default_factory=list)
    # Bare literals written inside `[...]` (the static offsets of `memdesc_subslice %b[0, 64]`).
    index_literals: list[str] = field(default_factory=list)
    # Bare identifiers written at depth 0 of the header (e.g. `slt` in `arith.cmpi slt, %a, %b`).
    keywords: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    attributes: dict[str, str] = field(default_factory=dict)
    regions: list[Region] = field(default_factory=list)
    successors: list[str] = field(default_factory=list)
    loc: str | None = None
    loc_name: str | None = None
    generic: bool = False
    text: str = ""
    start_byte: int = 0
    end_byte: int = 0
    block: Block | None = field(default=None, repr=False)
    _attr_cache: dict[str, Any] | None = None
    # Top-level `builtin.module` ops only: the unit's `#alias = ...` definitions, so that an
    # analysis holding just an op (the interpreter) can read layouts (CGA layouts of types).
    aliases: dict[str, str] | None = field(default=None, repr=False)

    # -- navigation -------------------------------------------------------------------------
    @property
    def parent_op(self) -> "Operation | None":
        block = self.block
        if block is None or block.region is None:
            return None
        return block.region.parent

    @property
    def parent_region(self) -> Region | None:
        return self.block.region if self.block is not None else None

    def ancestors(self) -> Iterator["Operation"]:
        op = self.parent_op
        while op is not None:
            yield op
            op = op.parent_op

    def walk(self) -> Iterator["Operation"]:
        """This operation and every operation nested in it, in written order (pre-order)."""
        stack: list[Iterator[Operation]] = [iter((self,))]
        while stack:
            op = next(stack[-1], None)
            if op is None:
                stack.pop()
                continue
            yield op
            if op.regions:
                stack.append(_nested(op))

    # -- attributes -------------------------------------------------------------------------
    @property
    def attrs(self) -> dict[str, Any]:
        """Parsed attribute values (ints, bools, strings, lists, dicts; raw text otherwise)."""
        if self._attr_cache is None:
            from .attrs import parse_attribute_value

            self._attr_cache = {k: parse_attribute_value(v) for k, v in self.attributes.items()}
        return self._attr_cache

    def attr(self, key: str, default: Any = None) -> Any:
        if key not in self.attributes:
            return default
        return self.attrs[key]

    @property
    def positional(self) -> list[str]:
        """Operands written outside brackets: `%d` of `%d[%token]`, `%bar` of `%bar[%pred]`."""
        depths = self.operand_depths
        operands = self.operands
        if len(depths) != len(operands) or not any(depths):  # (the interpreter asks on every step)
            return list(operands)
        return [v for v, d in zip(operands, depths) if d == 0]

    @property
    def dialect(self) -> str:
        return self.name.split(".", 1)[0]

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        res = ", ".join(self.results)
        return f"<{(res + ' = ') if res else ''}{self.name} @L{self.line}>"


def _nested(op: Operation) -> Iterator[Operation]:
    for region in op.regions:
        for block in region.blocks:
            yield from block.operations


@dataclass(eq=False, slots=True)
class Diagnostic:
    """A problem found while reading: `severity` is "error" (fatal) or "warning" (recovered)."""

    severity: str
    message: str
    line: int
    column: int


@dataclass(eq=False, slots=True)
class ParsedIR:
    """The result of parsing one unit: its top-level operations (usually one `module`), the
    `#alias = ...` definitions, and what the reader recovered from."""

    operations: list[Operation]
    aliases: dict[str, str]
    diagnostics: list[Diagnostic]
    line_offset: int = 0

    def walk(self) -> Iterator[Operation]:
        for top in self.operations:
            yield from top.walk()

    def functions(self) -> list[Operation]:
        return [op for op in self.walk() if op.name in FUNCTION_OPS]

    def function(self, name: str) -> Operation | None:
        name = name.lstrip("@")
        for fn in self.functions():
            if function_name(fn) == name:
                return fn
        return None

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning"]


FUNCTION_OPS = frozenset({"tt.func", "func.func", "llvm.func"})


def function_name(op: Operation) -> str | None:
    """The symbol a function op defines (without `@`)."""
    return op.attributes.get("sym_name", "").strip('"') or None
