"""tritonparse traces (NDJSON, optionally gzipped) as an input form.

tritonparse (meta-pytorch/tritonparse) writes one JSON object per line. Two event types matter:

* `compilation` — `payload.metadata` holds Triton's compile metadata (`name`, `hash`, `target`,
  `num_warps`, `num_ctas`, `num_stages`, `cluster_dims`, ...) and `payload.file_content` the text
  of each stage by file name (`<kernel>.ttgir`, `.ttir`, `.llir`, `.ptx`, ...). A compile that
  hit Triton's cache is logged again with `metadata.cache_hit = true` and the same hash.
* `launch` — `grid`, `compilation_metadata` (the launched compilation's metadata, hash included)
  and `extracted_args`: every bound argument by name, a scalar as `{"type": "int", "value": 4096}`,
  a tensor as `{"type": "tensor", "shape": ..., ...}`.

Each distinct compilation (by hash) becomes one unit whose text is its TTGIR; the launches are
kept on the input set, numbered in trace order, so `check --launch N` can simulate one
(`session.select_launch` picks it and maps its arguments with `map_launch`). Other
event types (`tritonparse parse` output, `*_mapped.ndjson.gz`, adds `ir_analysis` and
`launch_diff` summaries and keeps both of these) are counted, not read. Nothing here imports tritonparse: the trace is plain JSON.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from ..input_units import Source, Unit, _flags, _function_names

# Module attributes the compile metadata can supply where a TTGIR lacks them (Triton 3.6 prints
# no cluster shape in the TTGIR, for one): the analysis reads CTAs and the cluster there. Not
# `num_warps`: for a warp-specialized kernel the metadata counts every partition's warps (8 for
# a 4-warp default partition and a 1-warp worker), the module's `ttg.num-warps` only the default's.
META_TO_MODULE_ATTR = {
    "num_ctas": ("ttg.num-ctas", "{} : i32"),
}


@dataclass
class TraceLaunch:
    """One recorded launch: its index in the trace, the compilation it ran, grid and arguments."""

    index: int
    line: int
    kernel: str
    hash: str
    grid: tuple[int, ...] | None
    args: dict[str, dict[str, Any]] = field(default_factory=dict)

    def scalars(self) -> dict[str, Any]:
        """`name -> value` of the arguments recorded with a value (ints, floats, bools)."""
        return {k: v.get("value") for k, v in self.args.items() if isinstance(v, dict) and "value" in v}

    def summary(self) -> str:
        grid = "x".join(map(str, self.grid)) if self.grid else "?"
        ints = ", ".join(f"{k}={v}" for k, v in self.scalars().items())
        return f"grid {grid}" + (f"; {ints}" if ints else "")


def looks_like_trace(first_line: bytes) -> bool:
    """A tritonparse trace starts with a JSON object that has an `event_type` (IR never starts
    with `{`)."""
    s = first_line.lstrip()
    if not s.startswith(b"{"):
        return False
    try:
        obj = json.loads(s)
    except ValueError:
        return b'"event_type"' in s[:4096]  # a first line too long to have been read whole
    return isinstance(obj, dict) and "event_type" in obj


def read_trace(source: Source) -> tuple[list[Unit], list[TraceLaunch], dict[str, int]]:
    """The compilations (as units, in first-seen order), the launches, and a count of the events
    by type. InputError (with the line) for a line that is not JSON, or a trace without any
    compilation that has a TTGIR."""
    units: list[Unit] = []
    by_hash: dict[str, Unit] = {}
    launches: list[TraceLaunch] = []
    counts: dict[str, int] = {}
    for lineno, raw in enumerate(source.lines(), 1):
        if not raw.strip():
            continue
        try:
            event = json.loads(raw)
        except ValueError as exc:
            raise InputError(source.display, f"not a tritonparse trace line (invalid JSON: {exc.msg})", lineno,
                             exc.colno) from None
        if not isinstance(event, dict):
            raise InputError(source.display, "not a tritonparse trace line (a JSON object was expected)", lineno, 1)
        kind = str(event.get("event_type", "?"))
        counts[kind] = counts.get(kind, 0) + 1
        if kind == "compilation":
            _add_compilation(event, lineno, source, units, by_hash)
        elif kind == "launch":
            launches.append(_launch(event, lineno, len(launches)))
    if not units:
        what = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "no events"
        raise InputError(source.display, f"tritonparse trace without a compilation event ({what}): "
                         "trace the compile too (tritonparse.structured_logging.init before the first launch)", 1, 1)
    for i, u in enumerate(units):
        u.index = i
    return units, launches, counts


def _add_compilation(event: dict, lineno: int, source: Source, units: list[Unit], by_hash: dict[str, Unit]) -> None:
    payload = event.get("payload") or {}
    meta = payload.get("metadata") or {}
    h = str(meta.get("hash") or "")
    if h and h in by_hash:
        by_hash[h].meta["events"] = by_hash[h].meta.get("events", 1) + 1  # a cache hit of the same compile
        return
    name = str(meta.get("name") or "?")
    files = payload.get("file_content") or {}
    stages = sorted({k.rsplit(".", 1)[-1] for k in list(files) + list(payload.get("file_path") or {}) if "." in k})
    ttgir_key = next((k for k in files if k.endswith(".ttgir")), None)
    text = files.get(ttgir_key, "") if ttgir_key else ""
    target_text = config_of(meta).get("target", "?")
    data = text.encode("utf-8")
    display = f"{source.display}[{name} {h[:12]}].ttgir"
    body = b"\n".join(line for line in data.splitlines() if line.strip() and not line.lstrip().startswith(b"//"))
    unit = Unit(0, "compilation", f"{name} [{h[:12] or 'no hash'}] {target_text}", Source(display, data=data), 1,
                max(1, data.count(b"\n") + (0 if data.endswith(b"\n") else 1)), len(data),
                _function_names(body), _flags(body) if data else [])
    unit._text = data
    unit.keys = [name] + ([h] if h else [])
    unit.meta = {"kernel": name, "hash": h, "target": target_text, "stages": stages, "trace_line": lineno,
                 "events": 1, "config": config_of(meta),
                 "no_ttgir": "" if text.strip().startswith(("#", "module", "\"builtin.module\""))
                 else ("the trace has no TTGIR for this compilation (stages: " + (", ".join(stages) or "none") + ")"
                       if not text else f"its TTGIR in the trace is not IR ({text[:60]!r})")}
    unit.module_defaults = module_defaults(meta)
    by_hash[h or f"line{lineno}"] = unit
    units.append(unit)


def config_of(meta: dict) -> dict[str, Any]:
    """The launch configuration a compile's metadata records (absent keys left out)."""
    out: dict[str, Any] = {}
    for key in ("num_warps", "num_stages", "num_ctas", "cluster_dims", "ctas_per_cga", "maxnreg", "shared"):
        if meta.get(key) is not None:
            out[key] = meta[key]
    target = meta.get("target")
    if isinstance(target, (list, tuple)) and len(target) >= 2:  # a GPUTarget serialised as a list
        target = {"backend": target[0], "arch": target[1]}
    elif target is not None and hasattr(target, "backend"):  # Triton's GPUTarget, before serialising
        target = {"backend": target.backend, "arch": getattr(target, "arch", "?")}
    if isinstance(target, dict):
        out["target"] = f"{target.get('backend', '?')}:{target.get('arch', '?')}"
    elif target is not None:
        out["target"] = str(target)
    return out


def module_defaults(meta: dict) -> dict[str, str]:
    """Module attributes (MLIR attribute text) the metadata supplies: CTAs, the cluster
    shape (`cluster_dims`, or `ctas_per_cga` in newer Triton) and the target. Applied only where
    the TTGIR's module does not say (inputs.load_unit)."""
    out: dict[str, str] = {}
    for key, (attr, fmt) in META_TO_MODULE_ATTR.items():
        if isinstance(meta.get(key), int):
            out[attr] = fmt.format(meta[key])
    dims = meta.get("cluster_dims") or meta.get("ctas_per_cga")
    if isinstance(dims, (list, tuple)) and all(isinstance(d, int) for d in dims) and any(d > 1 for d in dims):
        for axis, d in zip("xyz", dims):
            out[f"ttg.cluster-dim-{axis}"] = f"{d} : i32"
    target = config_of(meta).get("target")
    if target and "?" not in target:
        out["ttg.target"] = json.dumps(target)
    return out


def _launch(event: dict, lineno: int, index: int) -> TraceLaunch:
    meta = event.get("compilation_metadata") or {}
    grid = event.get("grid")
    grid_t = tuple(int(g) for g in grid) if isinstance(grid, (list, tuple)) and all(isinstance(g, int) for g in grid) else None
    args = event.get("extracted_args") or {}
    return TraceLaunch(index, lineno, str(event.get("name") or meta.get("name") or "?"), str(meta.get("hash") or ""),
                       grid_t, args if isinstance(args, dict) else {})


# -- a recorded launch as the simulator's launch --------------------------------------------------
@dataclass
class MappedLaunch:
    """A recorded launch in the simulator's terms, and what could not be carried over (why)."""

    args: dict[str, int]
    grid: tuple[int, ...] | None
    unmapped: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {"args": self.args, "grid": list(self.grid) if self.grid else None, "unmapped": self.unmapped}


def map_launch(launch: TraceLaunch, arg_types: dict[str, str]) -> MappedLaunch:
    """Map the recorded scalar arguments to the kernel's integer arguments by name.

    `arg_types`: the TTGIR function's arguments, name -> type (`i32`, `!tt.ptr<f16>`, ...). A
    recorded value is never guessed onto an argument: each value that cannot be simulated is
    listed with the reason (a name the compiled function does not take was fixed at compile time:
    a constexpr, or a value Triton specializes such as 1; a float does not take part in the
    integer barrier program)."""
    mapped: dict[str, int] = {}
    unmapped: list[str] = []
    ints = {n for n, t in arg_types.items() if re.fullmatch(r"i\d+", t or "")}
    for name, info in launch.args.items():
        if not isinstance(info, dict):
            unmapped.append(f"{name}: recorded without a type")
            continue
        kind = info.get("type")
        if "value" not in info:
            if kind not in ("tensor", "TensorDescriptor") and not str(kind).startswith("triton_kernels"):
                unmapped.append(f"{name}: a {kind} recorded without a value")
            continue  # tensors and descriptors are memory, not values the barrier program reads
        value = info["value"]
        if name in ints and kind in ("int", "bool") and isinstance(value, (int, bool)):
            mapped[name] = int(value)
        elif not arg_types:
            unmapped.append(f"{name}={value!r}: the IR's function arguments carry no names to match")
        elif name not in arg_types:
            unmapped.append(f"{name}={value!r}: not an argument of the compiled function (a constexpr or a "
                            "specialized value, already in the IR)")
        elif name in ints:
            unmapped.append(f"{name}={value!r}: recorded as a {kind}, but the IR's {name} is {arg_types[name]}")
        else:
            unmapped.append(f"{name}={value!r}: a {kind} ({arg_types[name]} in the IR): only integer arguments "
                            "take part in the barrier program")
    return MappedLaunch(mapped, launch.grid, unmapped)
