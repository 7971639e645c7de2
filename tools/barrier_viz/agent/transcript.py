"""The JSONL transcript of an agent run: every request's new messages, every response, every
tool call and its result, so a run can be replayed and audited.

It must never contain the API key. Headers are never recorded, and as a second line of defence
every line is scrubbed of the key's text before it is written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TextIO

from ..safe_io import open_new

REDACTED = "[REDACTED]"


class Transcript:
    """Appends one JSON object per event to a file; usable as a context manager."""

    def __init__(self, path: Path, secrets: list[str]):
        self.path = path
        self._secrets = [s for s in secrets if s]
        self._file: TextIO = open_new(path.parent, path.name)  # never through a planted link

    def event(self, kind: str, **data: Any) -> None:
        line = json.dumps({"event": kind, **data}, ensure_ascii=False, default=str)
        for secret in self._secrets:
            line = line.replace(secret, REDACTED)
        self._file.write(line + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> "Transcript":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
