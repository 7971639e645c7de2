"""The plain Python API, for notebooks and other tools: check a TTGIR text or a compiled kernel.

    import barrier_viz
    report = barrier_viz.check_ttgir(open("k.ttgir").read(), args={"K": 0})
    report = barrier_viz.check_compiled(my_kernel.warmup(..., grid=(1,)))   # Triton's CompiledKernel
    report.verdict, report.errors, report.findings

Both run what `barrier-viz check` runs (static rules, the schedules, the input points) on the
unit `inputs` would pick, and return a CheckReport: the `check --format json` document plus a
one-word verdict that never says clean about a kernel it did not judge.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable


@dataclass
class CheckReport:
    """`verdict`: "clean" (judged, no finding), "findings", or "not judged" (`reason` says why)."""

    verdict: str
    reason: str
    errors: int
    warnings: int
    findings: list[dict[str, Any]]
    document: dict[str, Any]

    @property
    def ok(self) -> bool:
        """No error finding (a kernel that was not judged is not ok)."""
        return self.verdict != "not judged" and self.errors == 0


def check_ttgir(text: str | bytes, *, name: str = "kernel.ttgir", args: dict[str, int] | None = None,
                grid: Iterable[int] | None = None, pid: Iterable[int] | None = None, unit: str | None = None,
                func: str | None = None, simulate: bool = True, metadata: dict[str, Any] | None = None) -> CheckReport:
    """Check TTGIR text. `args`/`grid`/`pid`: a launch to simulate (as `check --args/--grid/--pid`);
    `metadata`: Triton's compile metadata (num_warps, num_ctas, cluster_dims, target) for what the
    IR's module does not state. Raises barrier_viz.errors.InputError for text that is not IR."""
    from .analyses.launch.input_points import Launch, LaunchError
    from .commands.check_cmd import check_document
    from .errors import InputError
    from .inputs import InputSet, Source, scan_units
    from .session import select

    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    source = Source(name, data=data)
    units = scan_units(source)
    if metadata:
        from .adapters.tritonparse_trace import module_defaults

        for u in units:
            u.module_defaults = module_defaults(metadata)
    sel = select(InputSet(name, "file", units, len(data)), unit, func, require_function=True)
    launch = None
    if args or grid or pid:
        launch = Launch(args=dict(args or {}), pids=tuple(pid) if pid else None, grid=tuple(grid) if grid else None)
    try:
        doc, _ = check_document(sel, simulate=simulate, launch=launch)
    except LaunchError as exc:
        raise InputError(name, str(exc)) from None
    document = doc.model_dump(mode="json", by_alias=True)
    verdict, reason = _verdict(sel, doc, simulate)
    return CheckReport(verdict, reason, doc.summary.errors, doc.summary.warnings, document["findings"], document)


def check_compiled(kernel, **kwargs) -> CheckReport:
    """Check a Triton `CompiledKernel` (what `triton.compile` or `fn.warmup(...)` returns): its
    TTGIR (`kernel.asm["ttgir"]`) with its metadata. Keyword arguments as check_ttgir."""
    asm = getattr(kernel, "asm", None)
    if not isinstance(asm, dict) or "ttgir" not in asm:
        raise TypeError("check_compiled needs a Triton CompiledKernel with a TTGIR stage (kernel.asm['ttgir'])")
    meta = kernel.metadata._asdict() if hasattr(kernel.metadata, "_asdict") else dict(kernel.metadata or {})
    kwargs.setdefault("name", f"{meta.get('name', 'kernel')}.ttgir")
    kwargs.setdefault("metadata", meta)
    return check_ttgir(asm["ttgir"], **kwargs)


def _verdict(sel, doc, simulate: bool) -> tuple[str, str]:
    if doc.findings:
        return "findings", ""
    if not sel.unit.is_warp_specialized:
        return "not judged", "no warp specialization in the IR: no partitions to synchronise"
    if simulate:
        runs = (doc.simulation or {}).get("runs") or []
        if not runs or all(r.get("outcome") in ("not_simulated", "bound_reached") for r in runs):
            why = "; ".join(sorted({r.get("reason") or r.get("outcome", "") for r in runs})) or "no schedule ran"
            return "not judged", f"the barrier program was not simulated to an end ({why})"
    return "clean", ""
