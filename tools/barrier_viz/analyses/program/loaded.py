"""Values a kernel loads from memory it does not write: offsets, sizes, tile schedules.

Why: ragged, varlen, grouped and MoE kernels read their work from device arrays. Every partition
loads the same offsets and derives its own trip counts; some segments are empty and persistent
programs get unequal numbers of them. Reading such a load as "unknown" made every partition run
an assumed trip count (3), so an empty segment never happened and a partition whose count was
assumed next to one with known bounds stopped the simulation at a limit.

Here a scalar integer loaded through a pointer argument the kernel never stores to is an input:
one value per array (the pointer argument) and element index, the same in every partition that
loads it. The simulation reads it from a `Memory`: the user's arrays (`check --load
'offs=[0,0,64,64]'`), else a pattern. The default pattern gives every segment work whichever way
the array is read (as offsets, `a[i + 1] - a[i]`, or as sizes, `a[i]`): `a[i] = L * (i + 1)`, L
the run's integer-argument value. Input points (`launch.memory_points`) then empty one
segment (first, middle, last) in the way the kernel reads the array.

Loaded values stay marked (`Loaded`, an int that remembers its sources) through the integer
arithmetic, so a loop whose bounds come from memory is still a loop with an input-decided trip
count: if another partition's matching loop has known bounds, the two cannot be related and a
hang between them stays a stated limit (deadlock._unmodelled). An `i1` load (a flag) stays
opaque: both sides of the condition it decides are run, as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...ir.model import Operation

_SCALAR_PTR = re.compile(r"^!tt\.ptr<i(\d+)>$")
_STORES = ("tt.store", "tt.atomic_rmw", "tt.atomic_cas", "tt.descriptor_store", "ttng.async_tma_copy_local_to_global")


class Loaded(int):
    """An integer read from memory (or computed from such values): `keys` are the (array
    position, index) elements it came from."""

    keys: frozenset

    def __new__(cls, value: int, keys: frozenset):
        obj = super().__new__(cls, value)
        obj.keys = keys
        return obj


@dataclass(frozen=True)
class Ptr:
    """A pointer argument of scalar integers, `offset` elements in."""

    position: int
    name: str
    offset: int = 0


@dataclass(frozen=True)
class Memory:
    """What loads read. `arrays`: the user's (position, values); an index past the end reads the
    last value. Otherwise `style` and `empty`: "offsets" arrays are prefix sums of segment
    lengths, "sizes" arrays hold the lengths; segment `empty` (-1: none) has length 0, every
    other `length` (0: the run's integer-argument value). `ragged` (position -> (unit,
    multiples)) gives a styled array unequal lengths instead: segment i spans
    `multiples[i % len(multiples)] * unit` (the unit a loop's step, so each segment runs that
    many iterations)."""

    arrays: tuple[tuple[int, tuple[int, ...]], ...] = ()
    styles: tuple[tuple[int, str], ...] = ()  # position -> "offsets" | "sizes" (default: sizes)
    empty: tuple[tuple[int, int], ...] = ()  # position -> index of the empty segment
    length: int = 0
    ragged: tuple[tuple[int, tuple[int, tuple[int, ...]]], ...] = ()  # position -> (unit, multiples)

    def value(self, position: int, index: int, default_length: int) -> int | None:
        for pos, values in self.arrays:
            if pos == position:
                return values[min(index, len(values) - 1)] if values and index >= 0 else None
        if index < 0:
            return None
        length = self.length or default_length
        empty = dict(self.empty).get(position, -1)
        offsets = dict(self.styles).get(position) == "offsets"
        ragged = dict(self.ragged).get(position)
        if ragged is not None:
            unit, multiples = ragged
            if not offsets:
                return 0 if index == empty else multiples[index % len(multiples)] * unit
            cycles, rest = divmod(index, len(multiples))
            total = (cycles * sum(multiples) + sum(multiples[:rest])) * unit
            return total - (multiples[empty % len(multiples)] * unit if 0 <= empty < index else 0)
        if offsets:
            return length * index - (length if 0 <= empty < index else 0)
        return 0 if index == empty else length * (index + 1)


def written_arguments(function: Operation) -> set[int]:
    """Positions of pointer arguments the kernel stores through (their loads are not inputs)."""
    body = function.regions[0].blocks[0] if function.regions and function.regions[0].blocks else None
    if body is None:
        return set()
    args = {a.name: i for i, a in enumerate(body.arguments)}
    captured: dict[str, int] = {}  # partition block argument -> function argument position
    derived: dict[str, int] = dict(args)
    for op in function.walk():
        if op.name == "ttg.warp_specialize":
            for region in op.regions:
                if region.label != "default" and region.blocks:
                    for i, a in enumerate(region.blocks[0].arguments):
                        if i < len(op.operands) and op.operands[i] in derived:
                            captured[a.name] = derived[op.operands[i]]
            derived.update(captured)
        elif op.operands and op.operands[0] in derived and op.results:
            for r in op.results:
                derived.setdefault(r, derived[op.operands[0]])
    return {derived[op.operands[0]] for op in function.walk()
            if op.name in _STORES and op.operands and op.operands[0] in derived}


_POINTER_STEPS = ("tt.addptr", "tt.splat", "tt.broadcast", "tt.expand_dims", "ttg.convert_layout", "tt.bitcast")


def partition_arrays(function: Operation) -> dict[str, frozenset[int]]:
    """Partition label ("default", "partition0", ...) -> positions of the pointer arguments its
    `tt.load`s read through (any element, scalar or tensor), read from the IR rather than from
    a run: a partition blocked before its next load still derives its work from the array.
    Each region is traced with its own names (partitions reuse them), from its captures."""
    body = function.regions[0].blocks[0] if function.regions and function.regions[0].blocks else None
    if body is None:
        return {}
    top = {a.name: i for i, a in enumerate(body.arguments)}
    for op in body.operations:  # pointers derived before the fork
        if op.name in _POINTER_STEPS and op.operands and op.operands[0] in top:
            for r in op.results:
                top.setdefault(r, top[op.operands[0]])
    out: dict[str, frozenset[int]] = {}
    for ws in function.walk():
        if ws.name != "ttg.warp_specialize":
            continue
        for region in ws.regions:
            if region.label == "default":
                derived = dict(top)
            else:
                derived = {a.name: top[ws.operands[i]] for i, a in enumerate(region.arguments)
                           if i < len(ws.operands) and ws.operands[i] in top}
            found = set()
            for first in region.operations():
                for op in first.walk():
                    if not op.operands or op.operands[0] not in derived:
                        continue
                    if op.name == "tt.load":
                        found.add(derived[op.operands[0]])
                    elif op.name in _POINTER_STEPS:
                        for r in op.results:
                            derived[r] = derived[op.operands[0]]
            out[region.label or ""] = frozenset(found)
    return out


def argument_pointer(type_: str | None, position: int, name: str) -> Ptr | None:
    """The value a scalar-integer pointer argument starts as (None for any other argument)."""
    if type_ and _SCALAR_PTR.match(type_.strip()):
        return Ptr(position, name.lstrip("%"))
    return None


def loaded_width(op: Operation) -> int | None:
    """The integer width a `tt.load` returns, when it loads one scalar through a scalar pointer
    (`tt.load %p : !tt.ptr<i32>`; not a tensor of pointers, not a flag)."""
    m = _SCALAR_PTR.match((op.types[0] if op.types else "").strip())
    return int(m.group(1)) if m and int(m.group(1)) >= 8 else None


def parse_loads(text: str, names: dict[str, int]) -> tuple[tuple[int, tuple[int, ...]], ...]:
    """`offs=[0,0,64,64];sizes=[3,5]` -> ((position, values), ...). Raises ValueError with the
    one-line reason (unknown array, bad list)."""
    out = []
    for part in filter(None, (p.strip() for p in text.split(";"))):
        name, eq, rest = part.partition("=")
        name = name.strip().lstrip("%")
        if not eq or not rest.strip().startswith("[") or not rest.strip().endswith("]"):
            raise ValueError(f"--load expects NAME=[v0,v1,...] (several separated by ';'), got {part!r}")
        if name not in names:
            known = ", ".join(sorted(names)) or "none"
            raise ValueError(f"--load: {name!r} is not a pointer argument of scalar integers this kernel loads "
                             f"and never stores to (those are: {known})")
        try:
            values = tuple(int(v, 0) for v in rest.strip()[1:-1].replace(" ", "").split(",") if v)
        except ValueError:
            raise ValueError(f"--load: {name}'s values must be integers, got {rest.strip()!r}") from None
        if not values:
            raise ValueError(f"--load: {name} needs at least one value")
        out.append((names[name], values))
    return tuple(out)


def input_arrays(function: Operation) -> dict[str, int]:
    """Name -> position of the pointer arguments whose loads are inputs."""
    body = function.regions[0].blocks[0] if function.regions and function.regions[0].blocks else None
    if body is None:
        return {}
    written = written_arguments(function)
    return {a.name.lstrip("%"): i for i, a in enumerate(body.arguments)
            if i not in written and argument_pointer(a.type, i, a.name) is not None}
