"""A Triton compilation listener that collects warp-specialized kernels, chained to another one.

Triton calls `triton.knobs.compilation.listener(src=, metadata=, metadata_group=, times=,
cache_hit=)` after every `triton.compile`, cache hits included; `metadata_group` maps each stage's
file name (`<kernel>.ttgir`, ...) to its path in the cache. The knob is a single slot that
tritonparse and others also use, so `install` keeps whatever listener was there and calls it
first, on every compile, exactly as before; ours then reads the TTGIR and keeps it when it has
warp specialization (the flags `inputs` computes) and its content was not seen yet. A failure of
ours is counted, never raised into the compile. The checking itself happens later (the pytest
plugin at session end, `barrier_viz.check_ttgir` for the API), so a compile pays one file read.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable


@dataclass
class CompiledKernel:
    """One distinct warp-specialized TTGIR seen by the listener."""

    name: str
    digest: str
    text: bytes
    ttgir_path: str
    config: dict[str, Any] = field(default_factory=dict)
    compiles: int = 1  # times it was compiled or loaded from the cache


@dataclass
class Collector:
    """The listener: call the previous one, then keep each new warp-specialized TTGIR."""

    previous: Callable[..., Any] | None = None
    kernels: dict[str, CompiledKernel] = field(default_factory=dict)
    compiles: int = 0
    not_ws: int = 0
    failures: list[str] = field(default_factory=list)

    def __call__(self, *, src=None, metadata=None, metadata_group=None, times=None, cache_hit=False, **extra):
        try:
            if self.previous is not None:
                self.previous(src=src, metadata=metadata, metadata_group=metadata_group, times=times,
                              cache_hit=cache_hit, **extra)
        finally:
            try:
                self.collect(metadata or {}, metadata_group or {})
            except Exception as exc:  # noqa: BLE001 - never break the user's compile
                self.failures.append(f"{type(exc).__name__}: {exc}")

    def collect(self, metadata: dict, metadata_group: dict) -> None:
        from ..input_units import _flags
        from .tritonparse_trace import config_of

        self.compiles += 1
        path = next((p for name, p in metadata_group.items() if str(name).endswith(".ttgir")), None)
        if path is None:
            self.not_ws += 1  # no TTGIR stage (an AMD or IR-source compile): nothing of ours to read
            return
        text = Path(path).read_bytes()
        flags = _flags(text)
        if not any(f in flags for f in ("warp_specialize", "async_task_id", "ttg_partition")):
            self.not_ws += 1
            return
        digest = hashlib.sha256(text).hexdigest()
        seen = self.kernels.get(digest)
        if seen is not None:
            seen.compiles += 1
            return
        name = str(metadata.get("name") or Path(path).name[: -len(".ttgir")])
        self.kernels[digest] = CompiledKernel(name, digest, text, str(path), config_of(dict(metadata)))


def install(knobs) -> Collector:
    """Put a Collector in `knobs.compilation.listener`, chained to the listener already there."""
    collector = Collector(previous=knobs.compilation.listener)
    knobs.compilation.listener = collector
    return collector


def uninstall(knobs, collector: Collector) -> bool:
    """Put the previous listener back if ours is still installed; False when someone replaced
    ours meanwhile (then theirs stays)."""
    if knobs.compilation.listener is collector:
        knobs.compilation.listener = collector.previous
        return True
    return False
