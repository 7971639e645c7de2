"""Audit results cached by content, so a rerun on an unchanged tree costs a scan.

The key is a hash of the unit's bytes and first line (findings cite absolute lines), the tool
version, the options that change results (simulation, time budget) and a digest of the
package's own source, so editing a rule invalidates old entries without a version bump. One
small JSON file per entry, written atomically (a crashed or parallel run never leaves half a
file for the next to read). The path of the input is not part of the key: a moved or copied
file is still a hit; the row's path comes from the current run.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

from .. import __version__


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "barrier-viz" / "audit"


@lru_cache(maxsize=1)
def code_digest() -> str:
    """A digest of the installed package's Python source: results depend on every rule."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for p in sorted(root.rglob("*.py")):
        h.update(str(p.relative_to(root)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def cache_key(text: bytes, start_line: int, options: dict[str, Any]) -> str:
    h = hashlib.sha256()
    h.update(f"barrier-viz {__version__} {code_digest()} {json.dumps(options, sort_keys=True)} {start_line}\n".encode())
    h.update(text)
    return h.hexdigest()


class ResultCache:
    """get/put of result dicts by key under `root`; a disabled cache (root None) misses."""

    def __init__(self, root: Path | None):
        self.root = root
        self.hits = 0
        self.misses = 0

    def _path(self, key: str) -> Path:
        assert self.root is not None
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        if self.root is None:
            self.misses += 1
            return None
        try:
            with open(self._path(key), encoding="utf-8") as fh:
                value = json.load(fh)
        except (OSError, ValueError):
            self.misses += 1
            return None
        self.hits += 1
        return value

    def put(self, key: str, value: dict[str, Any]) -> None:
        if self.root is None:
            return
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(value, fh)  # key order is the output order
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only or full cache dir costs speed, never a result
