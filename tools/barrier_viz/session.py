"""One analysis request: the input, the chosen unit, its parsed IR and the function in scope.

Every command starts here, so unit and function selection behave the same everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from .errors import InputError
from .inputs import InputSet, Unit, load_unit, open_input, select_unit
from .ir.model import Operation, ParsedIR, function_name
from .ir.vocab import LOOP_OPS


@dataclass
class Selection:
    inputs: InputSet
    unit: Unit
    ir: ParsedIR
    function: Operation | None

    @property
    def function_name(self) -> str | None:
        return function_name(self.function) if self.function is not None else None

    def input_ref(self) -> dict:
        return {
            "path": self.inputs.display,
            "unit": self.unit.label,
            "unit_index": self.unit.index,
            "function": self.function_name,
        }

    def operations(self) -> Iterator[Operation]:
        """Every operation in scope: the chosen function's, or the whole unit's."""
        if self.function is not None:
            yield from self.function.walk()
        else:
            yield from self.ir.walk()


def select(input_spec: str | InputSet, unit: str | None = None, func: str | None = None, *,
           require_function: bool = False) -> Selection:
    """Open INPUT (or take an input already opened), pick the unit and parse it, then pick the
    function (`--func`)."""
    inputs = input_spec if isinstance(input_spec, InputSet) else open_input(input_spec)
    if unit is None and func:
        # `--func` alone picks the unit that defines it (the last one, like the default rule).
        holders = [u for u in inputs.units if func.lstrip("@") in u.functions and "llvm" not in u.flags]
        chosen = holders[-1] if holders else select_unit(inputs, None)
    else:
        chosen = select_unit(inputs, unit)
    ir = load_unit(chosen)
    functions = ir.functions()
    fn: Operation | None = None
    if func:
        fn = ir.function(func)
        if fn is None:
            names = ", ".join("@" + (function_name(f) or "?") for f in functions) or "none"
            raise InputError(chosen.path, f"--func {func}: no such function in unit {chosen.index} (functions: {names})",
                             chosen.start_line, 1)
    elif require_function and functions:
        fn = default_function(functions)
    return Selection(inputs, chosen, ir, fn)


def default_function(functions: list[Operation]) -> Operation:
    """The function an analysis looks at when none is named: the first with warp
    specialization, else the first public one, else the first."""
    for fn in functions:
        for op in fn.walk():
            if op.name == "ttg.warp_specialize" or "async_task_id" in op.attributes or "ttg.partition" in op.attributes:
                return fn
    for fn in functions:
        if fn.attributes.get("sym_visibility", '"public"') == '"public"':
            return fn
    return functions[0]


def loop_depth(op: Operation) -> int:
    """How many `scf.for` / `scf.while` loops enclose `op`."""
    return sum(1 for a in op.ancestors() if a.name in LOOP_OPS)
