"""One analysis request: the input, the chosen unit, its parsed IR and the function in scope.

Every command starts here, so unit and function selection behave the same everywhere (and
`check --launch N` selects its unit here too: `select_launch`).
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


def select_launch(input_spec: str, number: int, unit: str | None, func: str | None):
    """`check --launch N`: the trace's N-th launch, the compilation it ran (selected like
    `--unit`), and its values mapped onto that compilation's TTGIR function.

    Returns (Selection, TraceLaunch, MappedLaunch). InputError when INPUT is not a trace with
    launches, N is out of range, or `--unit` names another compilation than the launch ran."""
    from .adapters.tritonparse_trace import map_launch

    found = open_input(input_spec)
    if not found.launches:
        if not found.events:
            what = "is not a tritonparse trace"
        else:
            what = "records no launch (trace with tritonparse.structured_logging.init(..., enable_trace_launch=True))"
        raise InputError(found.display, f"--launch needs a tritonparse trace with launch events; INPUT {what}", 1, 1)
    if not 0 <= number < len(found.launches):
        raise InputError(found.display, f"--launch {number}: no such launch (the trace records {len(found.launches)}, "
                         f"0..{len(found.launches) - 1}; see `barrier-viz inputs`)", 1, 1)
    launch = found.launches[number]
    ran = [u for u in found.units if launch.hash and launch.hash in u.keys]
    if not ran:
        raise InputError(found.display, f"--launch {number} ran compilation {launch.hash[:12] or '(no hash)'} of "
                         f"{launch.kernel}, which this trace does not hold (traced after the compile?)", launch.line, 1)
    if unit is not None and select_unit(found, unit) is not ran[0]:
        raise InputError(found.display, f"--launch {number} ran unit {ran[0].index} ({ran[0].label}), not --unit {unit}",
                         launch.line, 1)
    sel = select(found, str(ran[0].index), func, require_function=True)
    fn = sel.function
    arg_types: dict[str, str] = {}
    if fn is not None and fn.regions and fn.regions[0].blocks:
        arg_types = {a.name.lstrip("%"): a.type or "" for a in fn.regions[0].blocks[0].arguments}
    return sel, launch, map_launch(launch, arg_types)
