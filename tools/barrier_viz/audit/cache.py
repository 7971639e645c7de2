"""Audit results cached by content, so a rerun on an unchanged tree costs a scan.

The key is a hash of the unit's bytes and first line (findings cite absolute lines), the tool
version, the options that change results (simulation, step budget) and a digest of the
package's own source, so editing a rule invalidates old entries without a version bump. The
path of the input is not part of the key: a moved or copied file is still a hit; the row's
path comes from the current run.

What the cache trusts, and why a bad entry cannot change a verdict:

* an entry is an envelope {format, version, key, digest, [signature], result}; it is used only
  if the format and tool version are this one's, the key is the one asked for, the digest
  (SHA-256 over key and result) matches, and the result has the shape `run_task` returns
  (statuses, kernels, findings with their fields and types). Anything else — a truncated
  file, `[]`, `{}`, an emptied findings list, an entry copied under another key — is a miss
  (the unit is checked again), never a crash and never a pass;
* the digest catches corruption and naive edits, not a forger: anyone who can write the cache
  folder can recompute it. For a cache shared between CI jobs, set `BARRIER_VIZ_CACHE_KEY`
  (a secret): entries are then signed (HMAC-SHA256 over key and result) and an entry that is
  unsigned, or signed with another key, is ignored;
* entries are written atomically through `safe_io` (complete or absent, never through a link).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from .. import __version__
from ..safe_io import read_text_nofollow, write_atomic

FORMAT = "barrier-viz/audit-cache/v2"
KEY_ENV = "BARRIER_VIZ_CACHE_KEY"  # HMAC secret for shared caches


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


def _canonical(key: str, result: dict[str, Any]) -> bytes:
    return (key + "\n" + json.dumps(result, sort_keys=True, separators=(",", ":"), ensure_ascii=True)).encode()


def _signing_key() -> bytes | None:
    secret = os.environ.get(KEY_ENV, "")
    return secret.encode() if secret else None


# -- the result schema (what `audit.worker.run_task` returns) ---------------------------------------
_STR_OR_NONE = (str, type(None))
_FINDING_FIELDS: dict[str, tuple[type, ...]] = {
    "kind": (str,), "severity": (str,), "message": (str,), "lines": (list,), "partitions": (list,),
    "op": _STR_OR_NONE, "barrier": _STR_OR_NONE, "fingerprint": (str,), "suggestion": _STR_OR_NONE,
}
_KERNEL_FIELDS: dict[str, tuple[type, ...]] = {
    "function": _STR_OR_NONE, "status": (str,), "note": _STR_OR_NONE, "partitions": (int,), "barriers": (int,),
    "findings": (list,),
}


def _has(d: Any, fields: dict[str, tuple[type, ...]]) -> bool:
    """`d` is a dict with every field, of its type (a bool is not an int here)."""
    return isinstance(d, dict) and all(k in d and isinstance(d[k], t) and not isinstance(d[k], bool)
                                       for k, t in fields.items())


def valid_result(r: Any) -> bool:
    """Whether `r` has the shape of a `run_task` result (types and allowed values)."""
    if not isinstance(r, dict) or r.get("status") not in ("ok", "bound_reached", "error"):
        return False
    if not isinstance(r.get("error"), _STR_OR_NONE) or not isinstance(r.get("kernels"), list):
        return False
    if r["status"] == "error" and not r.get("error"):
        return False
    for k in r["kernels"]:
        if not _has(k, _KERNEL_FIELDS) or k["status"] not in ("ok", "bound_reached"):
            return False
        for f in k["findings"]:
            if not _has(f, _FINDING_FIELDS) or f["severity"] not in ("error", "warning", "info"):
                return False
            if not all(isinstance(x, int) and not isinstance(x, bool) for x in f["lines"]):
                return False
            if not all(isinstance(x, str) for x in f["partitions"]):
                return False
    return True


class ResultCache:
    """get/put of result dicts by key under `root`; a disabled cache (root None) misses.
    `rejected` counts entries that were present but not trusted (see the module docstring)."""

    def __init__(self, root: Path | None):
        self.root = root
        self.hits = 0
        self.misses = 0
        self.rejected = 0

    def _rel(self, key: str) -> str:
        return f"{key[:2]}/{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        if self.root is None:
            self.misses += 1
            return None
        text = read_text_nofollow(self.root / self._rel(key))
        value = self._trusted(key, text) if text is not None else None
        if value is None:
            self.misses += 1
            self.rejected += text is not None
            return None
        self.hits += 1
        return value

    def _trusted(self, key: str, text: str) -> dict[str, Any] | None:
        try:
            entry = json.loads(text)
        except ValueError:
            return None
        if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("version") != __version__:
            return None
        result = entry.get("result")
        if entry.get("key") != key or not valid_result(result):
            return None
        payload = _canonical(key, result)
        if not hmac.compare_digest(str(entry.get("digest", "")), hashlib.sha256(payload).hexdigest()):
            return None
        secret = _signing_key()
        if secret is not None:
            signature = hmac.new(secret, payload, hashlib.sha256).hexdigest()
            if not hmac.compare_digest(str(entry.get("signature", "")), signature):
                return None
        return result

    def put(self, key: str, value: dict[str, Any]) -> None:
        if self.root is None:
            return
        payload = _canonical(key, value)
        entry: dict[str, Any] = {"format": FORMAT, "version": __version__, "key": key,
                                 "digest": hashlib.sha256(payload).hexdigest()}
        secret = _signing_key()
        if secret is not None:
            entry["signature"] = hmac.new(secret, payload, hashlib.sha256).hexdigest()
        entry["result"] = value  # key order is the output order
        try:
            write_atomic(self.root, self._rel(key), json.dumps(entry))
        except OSError:
            pass  # a read-only or full cache dir costs speed, never a result
