"""Oracle: our reader and Triton's own C++ parser must build the same operations.

For every checked corpus unit (see `corpus_units`) that Triton's C++ parser accepts, the
per-name operation counts of our model must equal the counts of `module.walk` in C++, and so
must the counts per `name|#operands|#results` (operands: SSA values), except for
operations the MLIR printer does not write, which our reader (by design: `ops --all` lists what
the text says) never sees. Each of those is predicted from the structure we did read, so the
comparison stays exact:

* `builtin.module`, once, when the text has no top-level `module` (MLIR wraps it in one);
* `ttg.warp_specialize.partitions`, once per `ttg.warp_specialize`: the custom printer writes
  the partition regions inline after `default`, but they belong to this nested op;
* `scf.yield`, once per `scf.for` / `scf.if` region whose block does not end in one: these ops
  have an implicit terminator, which the printer elides when it yields nothing.

The `ttg.warp_specialize` captures are written in its operand list, and our model keeps them
there (ir-semantics.md 1.2); in C++ they are operands of the hidden partitions op.

The C++ parser runs in a side interpreter with triton installed (`bench/triton_side.py`), found
through BARRIER_VIZ_TRITON_PYTHON, or the current interpreter when it can import triton. The
test skips otherwise. BARRIER_VIZ_ORACLE_ALL_SNAPSHOTS=1 adds every dump snapshot up to 1.5 MB
(about 1,200 units instead of 500; minutes, not seconds). Units the C++ parser rejects (mostly lit files written for a newer
compiler than the installed wheel) are counted and printed, not compared.
"""

from __future__ import annotations

import collections
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from barrier_viz.errors import InputError
from barrier_viz.inputs import Unit

from corpus_units import (
    CORPUS,
    REPO,
    UnitCounts,
    checked_units,
    corpus_files,
    corpus_present,
    file_id,
    is_dump,
    open_file,
    signature,
    unit_counts,
)

SIDE_SCRIPT = REPO / "bench" / "triton_side.py"


def triton_python() -> str | None:
    """The interpreter that can import triton, if any."""
    configured = os.environ.get("BARRIER_VIZ_TRITON_PYTHON")
    if configured:
        return configured if Path(configured).exists() else None
    if importlib.util.find_spec("triton") is not None:
        return sys.executable
    return None


pytestmark = [
    pytest.mark.skipif(not corpus_present(), reason=f"corpus not found at {CORPUS} (set BARRIER_VIZ_CORPUS)"),
    pytest.mark.skipif(triton_python() is None, reason="no triton: set BARRIER_VIZ_TRITON_PYTHON to a python with fbtriton"),
]


def expected_cpp_counts(ours: UnitCounts) -> dict[str, int]:
    """Our per-name counts plus the operations the printer hides (see the module docstring)."""
    expected = collections.Counter(ours.counts)
    if not ours.top_level_module:
        expected["builtin.module"] += 1
    expected["ttg.warp_specialize.partitions"] += ours.warp_specialize_ops
    expected["scf.yield"] += ours.implicit_yields
    return {k: v for k, v in expected.items() if v}


def expected_cpp_signatures(ours: UnitCounts) -> dict[str, int]:
    """Our `name|operands|results` counts as C++ would see them. Besides the hidden ops, the
    captures we list as `ttg.warp_specialize` operands are, in C++, the operands of its hidden
    `ttg.warp_specialize.partitions` op (the op itself has none)."""
    expected: collections.Counter[str] = collections.Counter()
    for sig, n in ours.signatures.items():
        name, operands, results = sig.split("|")
        if name == "ttg.warp_specialize":
            expected[signature(name, 0, int(results))] += n
            expected[signature("ttg.warp_specialize.partitions", int(operands), 0)] += n
        else:
            expected[sig] += n
    if not ours.top_level_module:
        expected[signature("builtin.module", 0, 0)] += 1
    expected[signature("scf.yield", 0, 0)] += ours.implicit_yields
    return {k: v for k, v in expected.items() if v}


def _diff(expected: dict[str, int], actual: dict[str, int]) -> dict[str, tuple[int, int]]:
    keys = sorted(set(expected) | set(actual))
    return {k: (expected.get(k, 0), actual.get(k, 0)) for k in keys if expected.get(k, 0) != actual.get(k, 0)}


def run_cpp_counts(requests: list[dict[str, str]]) -> dict[str, dict]:
    python = triton_python()
    assert python is not None
    proc = subprocess.run(
        [python, str(SIDE_SCRIPT), "counts"],
        input=json.dumps({"units": requests}),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)["results"]


def _oracle_units(path: Path) -> list[Unit]:
    """The checked units; with BARRIER_VIZ_ORACLE_ALL_SNAPSHOTS=1, every snapshot of every dump
    up to 1.5 MB too (TTIR, cf-based TTGIR and LLVM-dialect stages: slow, so opt-in)."""
    units = checked_units(path)
    if os.environ.get("BARRIER_VIZ_ORACLE_ALL_SNAPSHOTS") == "1" and is_dump(path):
        extra = [u for u in open_file(path).units if u not in units and u.bytes <= 1_500_000]
        units = units + extra
    return units


def test_op_counts_equal_triton_cpp_parser(tmp_path: Path) -> None:
    ours: dict[str, UnitCounts] = {}
    requests: list[dict[str, str]] = []
    unreadable: list[str] = []
    for path in corpus_files():
        for unit in _oracle_units(path):
            uid = f"{file_id(path)}#{unit.index} ({unit.label})"
            text_path = tmp_path / f"{len(requests)}.mlir"
            text_path.write_bytes(unit.text())
            requests.append({"id": uid, "path": str(text_path)})
            try:
                ours[uid] = unit_counts(path, unit)
            except InputError:
                unreadable.append(uid)
    results = run_cpp_counts(requests)

    accepted = {uid: r for uid, r in results.items() if r["ok"]}
    rejected = len(results) - len(accepted)
    mismatches: list[str] = []
    for uid, cpp in accepted.items():
        if uid in unreadable:
            mismatches.append(f"{uid}: C++ reads it, we refuse it")
            continue
        names = _diff(expected_cpp_counts(ours[uid]), cpp["counts"])
        signatures = _diff(expected_cpp_signatures(ours[uid]), cpp["signatures"])
        if names or signatures:
            mismatches.append(f"{uid}: (ours+hidden, C++) names {names}; name|operands|results {signatures}")
    agree = len(accepted) - len(mismatches)
    print(f"\noracle: {agree}/{len(accepted)} units agree with Triton's C++ parser; "
          f"C++ rejected {rejected} of {len(results)} units; we refused {len(unreadable)}")
    for reason, n in _rejection_reasons(results).most_common(3):
        print(f"  C++ rejected {n}: {reason}")
    assert accepted, "the C++ parser accepted no unit: is the side interpreter's triton broken?"
    assert not mismatches, "\n".join(mismatches[:20])


def _rejection_reasons(results: dict[str, dict]) -> collections.Counter[str]:
    """First diagnostic of each rejected unit, without its temp-file location."""
    reasons: collections.Counter[str] = collections.Counter()
    for r in results.values():
        if not r["ok"]:
            reasons[re.sub(r'loc\("[^"]*":\d+:\d+\):\s*', "", r["error"])[:100]] += 1
    return reasons


def test_hidden_op_rules_are_exercised() -> None:
    """The corrections above must each be needed somewhere in the corpus: a rule nothing uses
    would hide a disagreement instead of explaining one."""
    seen = collections.Counter()
    for path in corpus_files():
        for unit in checked_units(path):
            try:
                counts = unit_counts(path, unit)
            except InputError:
                continue
            seen["module"] += not counts.top_level_module
            seen["partitions"] += counts.warp_specialize_ops
            seen["yield"] += counts.implicit_yields
    assert seen["module"] and seen["partitions"] and seen["yield"], seen
