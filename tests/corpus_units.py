"""The shared corpus of real IR, seen as the units the acceptance tests check.

The corpus lives outside the repository (never copy it in): `BARRIER_VIZ_CORPUS`, defaulting to
`<repo>/../shared/corpus`. Tests that need it skip when it is absent.

Which units are checked (issue 2's acceptance, and a little more): every unit of a lit file
(LLVM-dialect splits included), every unit of
a real `.ttgir`/`.mlir` file, and of each MLIR_ENABLE_DUMP log the WarpSpec doMemoryPlanner /
doCodePartition / doTokenLowering snapshots plus the unit a user gets by default. Parsing is the
slow part, so per-unit operation counts are cached for the whole test session and shared by the
corpus and oracle tests.
"""

from __future__ import annotations

import collections
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from barrier_viz.inputs import InputSet, Unit, default_unit, load_unit, open_input
from barrier_viz.ir.model import ParsedIR

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("BARRIER_VIZ_CORPUS", REPO.parent / "shared" / "corpus"))
DUMP_SNAPSHOTS = ("doMemoryPlanner", "doCodePartition", "doTokenLowering")
_XFAIL = re.compile(rb"^//.*\bXFAIL:", re.M)


def corpus_present() -> bool:
    return (CORPUS / "lit").is_dir() and (CORPUS / "real").is_dir()


def corpus_files() -> list[Path]:
    """Every IR file of lit/ and real/ (the manifest is metadata, not IR)."""
    if not corpus_present():
        return []
    lit = sorted(p for p in (CORPUS / "lit").rglob("*") if p.is_file())
    real = sorted(p for p in (CORPUS / "real").iterdir() if p.is_file() and p.suffix != ".json")
    return lit + real


def file_id(path: Path) -> str:
    return path.relative_to(CORPUS).as_posix()


def is_dump(path: Path) -> bool:
    return path.name.endswith(".txt.gz") or path.name.endswith(".txt")


@lru_cache(maxsize=None)
def open_file(path: Path) -> InputSet:
    return open_input(str(path))


def checked_units(path: Path) -> list[Unit]:
    """The units of `path` that `ops --all` must read (see the module docstring)."""
    units = open_file(path).units
    if is_dump(path):
        chosen = [u for u in units if any(u.label.endswith(step) for step in DUMP_SNAPSHOTS)]
        default = default_unit(units)
        return chosen + ([default] if default not in chosen else [])
    return list(units)  # LLVM-dialect lit splits too: `ops --all` must read them as well


@lru_cache(maxsize=None)
def intentionally_invalid(path: Path) -> bool:
    """Lit files marked `XFAIL:` are known not to go through triton-opt as written."""
    return bool(_XFAIL.search(path.read_bytes())) if not path.name.endswith(".gz") else False


def expects_errors(unit: Unit) -> bool:
    """A lit split that carries `expected-error` is meant to be rejected (by the verifier,
    usually; only some are unreadable as text)."""
    return b"expected-error" in unit.text()


@dataclass(frozen=True)
class UnitCounts:
    """What our reader saw in one unit: per-name op counts, per-signature counts
    (`name|operands|results`, operands being SSA values, not `@symbol` references), and the
    structural facts the oracle needs to account for ops the MLIR printer hides."""

    counts: dict[str, int]
    signatures: dict[str, int]
    top_level_module: bool
    implicit_yields: int
    warp_specialize_ops: int
    warnings: int


_COUNTS: dict[tuple[Path, int], UnitCounts] = {}


def unit_counts(path: Path, unit: Unit, parsed: ParsedIR | None = None) -> UnitCounts:
    """Counts for one unit, parsed once per test session."""
    key = (path, unit.index)
    cached = _COUNTS.get(key)
    if cached is None:
        cached = _count(parsed if parsed is not None else load_unit(unit))
        _COUNTS[key] = cached
    return cached


# Ops whose regions get an implicit terminator when the printer elided it.
IMPLICIT_YIELD_PARENTS = frozenset({"scf.for", "scf.if"})


def _count(ir: ParsedIR) -> UnitCounts:
    counts: collections.Counter[str] = collections.Counter()
    signatures: collections.Counter[str] = collections.Counter()
    implicit = 0
    for op in ir.walk():
        counts[op.name] += 1
        signatures[signature(op.name, sum(1 for v in op.operands if v.startswith("%")), len(op.results))] += 1
        if op.name in IMPLICIT_YIELD_PARENTS:
            implicit += sum(1 for r in op.regions if r.blocks and _lacks_yield(r.blocks[-1].operations))
    top_module = len(ir.operations) == 1 and ir.operations[0].name == "builtin.module"
    return UnitCounts(
        dict(counts), dict(signatures), top_module, implicit, counts["ttg.warp_specialize"], len(ir.warnings)
    )


def signature(name: str, operands: int, results: int) -> str:
    return f"{name}|{operands}|{results}"


def _lacks_yield(operations: list) -> bool:
    return not operations or operations[-1].name != "scf.yield"
