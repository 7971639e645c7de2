"""Kernels in Triton's cache and dump folders, looked up by name (`--kernel NAME`).

Triton writes every compile to `$TRITON_CACHE_DIR` (default `~/.triton/cache`) as
`<hash>/<kernel>.ttgir` next to `<kernel>.json`, the compile metadata (`name`, `hash`,
`num_warps`, `num_stages`, `num_ctas`, `cluster_dims`, `target`, ...). With `TRITON_KERNEL_DUMP=1`
it also writes `$TRITON_DUMP_DIR` (default `~/.triton/dump`) as `<source hash>/<kernel>.ttgir`,
without metadata. Autotuning compiles one entry per config, so one name usually has several
entries; tools that keep dumps per config nest them one folder deeper. Both trees are searched
a few levels down (a `.ttgir` file anywhere up to MAX_DEPTH folders below a root).

A name picks the newest entry (by the `.ttgir`'s modification time) and says how many others
there are; `NAME@HASH` (a hash prefix) picks one; `inputs --kernels [NAME]` lists them with
their config. A name that matches nothing, or only parts of several kernel names, is an error.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError

MAX_DEPTH = 3  # <root>/<hash>/<kernel>.ttgir, and one more level for per-config subfolders


@dataclass
class KernelEntry:
    """One compile of a kernel found on disk."""

    name: str
    ttgir: Path
    root: str  # "cache" | "dump"
    hash: str
    mtime: float
    config: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        cfg = ", ".join(f"{k}={_short(v)}" for k, v in self.config.items()) or "no metadata"
        return f"{self.name}@{self.hash[:12]} ({self.root}: {cfg})"


def _short(v: Any) -> str:
    return "x".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v)


def roots() -> list[tuple[str, Path]]:
    """The folders searched, in order: the cache, then the dump folder (if it exists)."""
    home = Path(os.path.expanduser("~"))
    cache = Path(os.environ.get("TRITON_CACHE_DIR") or home / ".triton" / "cache")
    dump = Path(os.environ.get("TRITON_DUMP_DIR") or home / ".triton" / "dump")
    return [("cache", cache), ("dump", dump)]


def read_metadata(path: Path) -> dict[str, Any]:
    """A cache entry's `<kernel>.json` (Triton's compile metadata), or {} when absent or not
    that (a `__grp__` group file, a foreign JSON)."""
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return meta if isinstance(meta, dict) and "num_warps" in meta else {}


def find_entries(name: str | None = None) -> list[KernelEntry]:
    """Every `.ttgir` under the roots (all of them, or those of kernels whose name contains
    `name`), newest first."""
    from .tritonparse_trace import config_of

    found: list[KernelEntry] = []
    for kind, root in roots():
        if not root.is_dir():
            continue
        for path in _ttgir_files(root):
            kernel = path.name[: -len(".ttgir")]
            if name is not None and name.lower() not in kernel.lower():
                continue
            meta = read_metadata(path.with_name(kernel + ".json"))
            try:
                mtime = path.stat().st_mtime
            except OSError:
                continue
            h = str(meta.get("hash") or path.parent.name)
            found.append(KernelEntry(str(meta.get("name") or kernel), path, kind, h, mtime, config_of(meta)))
    found.sort(key=lambda e: (-e.mtime, str(e.ttgir)))
    return found


def _ttgir_files(root: Path):
    base = len(root.parts)
    for folder, dirs, files in os.walk(root):
        depth = len(Path(folder).parts) - base
        if depth >= MAX_DEPTH:
            dirs[:] = []
        dirs.sort()
        for f in sorted(files):
            if f.endswith(".ttgir"):
                yield Path(folder) / f


def resolve(spec: str) -> tuple[KernelEntry, list[KernelEntry]]:
    """`NAME` or `NAME@HASH` to one entry, and the other entries of that kernel (newest first).
    InputError when nothing matches, or when NAME only matches parts of several kernel names."""
    name, _, want_hash = spec.partition("@")
    name = name.strip()
    if not name:
        raise InputError(f"--kernel {spec!r}", "expected a kernel name (NAME or NAME@HASH)")
    entries = find_entries(name)
    where = " and ".join(f"{p} (${'TRITON_CACHE_DIR' if k == 'cache' else 'TRITON_DUMP_DIR'})" for k, p in roots())
    if not entries:
        raise InputError(f"--kernel {spec}", f"no kernel named {name!r} in {where}")
    exact = [e for e in entries if e.name == name]
    if not exact:
        names = sorted({e.name for e in entries})
        if len(names) > 1:
            raise InputError(f"--kernel {spec}", f"ambiguous: it matches {len(names)} kernels "
                             f"({', '.join(names[:8])}{', ...' if len(names) > 8 else ''}); give the full name")
        exact = entries
    if want_hash:
        picked = [e for e in exact if e.hash.startswith(want_hash)]
        if len(picked) != 1:
            listing = "; ".join(e.describe() for e in exact[:8])
            what = "no entry" if not picked else f"{len(picked)} entries"
            raise InputError(f"--kernel {spec}", f"{what} of {exact[0].name} with that hash prefix "
                             f"(entries: {listing})")
        return picked[0], [e for e in exact if e is not picked[0]]
    return exact[0], exact[1:]
