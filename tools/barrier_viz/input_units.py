"""Input units as data: where a unit's bytes come from (`Source`, streamed within the input caps
of `limits`), one analysable piece of IR (`Unit`), everything one INPUT names (`InputSet`), and
the two cheap scans every reader applies to a unit's text (`_function_names`, `_flags`).

`inputs` finds and cuts the units of a path, a directory or stdin; the input adapters
(`adapters.tritonparse_trace`, `adapters.listener`) build units of their own forms. Both sides
import this module, which imports neither, so discovery can call the adapters.
"""

from __future__ import annotations

import gzip
import io
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from . import limits
from .errors import InputError

# Function names in custom form (`tt.func public @name`, `@"quoted(name)"`) and in generic form
# (`"tt.func"() <{function_type = ..., sym_name = "name"}>`).
_FUNC = re.compile(
    rb"\b(?:tt|func|llvm)\.func\s+(?:(?:public|private|nested|internal|external|weak|linkonce|linkonce_odr|available_externally)\s+)*"
    rb"@(?:\"((?:[^\"\\\n]|\\.)*)\"|([\w$.\-]+))"
    rb"|\"(?:tt|func|llvm)\.func\"\(\)[^\n]*?\bsym_name = \"((?:[^\"\\\n]|\\.)*)\""
)
# Each flag: a literal that every match contains (a fast `in` test that skips the regex on the
# many snapshots that lack it) and the exact pattern, or None when the literal is the test.
# Patterns start with a literal so that `re` scans for it quickly: `inputs` on a 40 MB dump runs
# them over every snapshot.
_FLAG_PATTERNS: dict[str, tuple[bytes, re.Pattern[bytes] | None]] = {
    # `ttg.warp_specialize(` or generic `"ttg.warp_specialize"(`, not the `.tag` loop attribute.
    "warp_specialize": (b"ttg.warp_specialize", re.compile(rb"ttg\.warp_specialize(?:\s*\(|\")")),
    "async_task_id": (b"async_task_id", None),
    "ttg_partition": (b"ttg.partition", re.compile(rb"ttg\.partition\s*=")),
    "nvws_tokens": (b"nvws.", re.compile(rb"nvws\.(?:create_token|producer_acquire|producer_commit|consumer_wait|consumer_release)\b")),
    "aref": (b"nvws.aref.", None),
    "llvm": (b"llvm.func", re.compile(rb"llvm\.func\b")),
}
_TTGIR = re.compile(rb"\b(?:ttg|ttng)\.[a-z_]+|#ttg\.|\btt\.func\b")


@dataclass
class Source:
    """Where a unit's bytes come from: a file on disk (re-read on demand) or bytes in memory."""

    display: str
    path: Path | None = None
    data: bytes | None = None

    @property
    def compressed(self) -> bool:
        """A `.gz` name, or gzip's magic bytes (tritonparse's gzip traces are `*.bin.ndjson`)."""
        if self.path is None:
            return False
        if self.path.name.endswith(".gz"):
            return True
        try:
            with open(self.path, "rb") as fh:
                return fh.read(2) == b"\x1f\x8b"
        except OSError:
            return False

    def open(self) -> io.BufferedIOBase:
        if self.data is not None:
            return io.BytesIO(self.data)
        assert self.path is not None
        if self.compressed:
            return gzip.open(self.path, "rb")  # type: ignore[return-value]
        return open(self.path, "rb")

    def lines(self) -> Iterator[bytes]:
        """The raw lines, each with its newline, streamed within the input caps (`limits`): a
        line longer than LINE_BYTES, more than INPUT_BYTES in all, or a gzip file expanding past
        GZIP_RATIO is refused at the line where reading stopped, before it costs memory. A
        truncated or corrupt .gz fails mid-stream (EOFError, zlib.error): an InputError there too."""
        lineno = 0
        total = 0
        line_cap, input_cap = limits.LINE_BYTES.value, limits.INPUT_BYTES.value
        ratio_cap = None
        if self.compressed and self.path is not None:
            ratio_cap = max(limits.GZIP_RATIO.value * self.path.stat().st_size, limits.GZIP_RATIO_FLOOR)
        try:
            with self.open() as fh:
                while True:
                    raw = fh.readline(line_cap + 1)
                    if not raw:
                        break
                    lineno += 1
                    if len(raw) > line_cap and not (len(raw) == line_cap + 1 and raw.endswith(b"\n")):
                        raise limits.LINE_BYTES.error(self.display, f"line {lineno} is longer than the limit", lineno, 1)
                    total += len(raw)
                    if total > input_cap:
                        raise limits.INPUT_BYTES.error(self.display, f"the input is larger than the limit at line {lineno}", lineno, 1)
                    if ratio_cap is not None and total > ratio_cap:
                        raise limits.GZIP_RATIO.error(
                            self.display, f"the gzip data expands more than {limits.GZIP_RATIO.value}x by line {lineno} "
                            "(a decompression bomb?)", lineno, 1)
                    yield raw
        except (OSError, EOFError, zlib.error) as exc:
            what = "corrupt or truncated gzip data" if self.compressed and lineno else "cannot read"
            raise InputError(self.display, f"{what}: {exc}", lineno + 1, 1) from None


@dataclass
class Unit:
    """One analysable piece of IR: a whole file, a lit split, a dump snapshot or a module."""

    index: int
    kind: str
    label: str
    source: Source
    start_line: int
    end_line: int
    bytes: int
    functions: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    _text: bytes | None = None
    # Input adapters (adapters/): names `--unit` matches exactly (a kernel name, a hash, matched
    # by prefix), what the adapter knows about the unit (a trace's compile metadata), and module
    # attributes that metadata supplies where the IR's module lacks them (see load_unit).
    keys: list[str] = field(default_factory=list)
    meta: dict = field(default_factory=dict)
    module_defaults: dict[str, str] = field(default_factory=dict)

    @property
    def path(self) -> str:
        return self.source.display

    @property
    def is_warp_specialized(self) -> bool:
        """Partitions exist (`ttg.warp_specialize`, `nvws.warp_group`) or are assigned
        (`async_task_id`, or upstream's `ttg.partition` before regions exist)."""
        return any(f in self.flags for f in ("warp_specialize", "async_task_id", "ttg_partition"))

    def text(self) -> bytes:
        """The unit's bytes (lines start_line..end_line of its file)."""
        if self._text is None:
            chunks: list[bytes] = []
            for lineno, raw in enumerate(self.source.lines(), 1):
                if lineno > self.end_line:
                    break
                if lineno >= self.start_line:
                    chunks.append(raw)
            self._text = b"".join(chunks)
        return self._text


@dataclass
class InputSet:
    """Everything one INPUT argument names."""

    display: str
    kind: str  # "file" | "directory" | "stdin"
    units: list[Unit]
    total_bytes: int
    compressed: bool = False
    launches: list = field(default_factory=list)  # a tritonparse trace's recorded launches
    events: dict[str, int] = field(default_factory=dict)  # a trace's events by type


def _function_names(body: bytes) -> list[str]:
    """Names of the functions defined in `body`, in order, without duplicates.

    Only the lines that contain `.func` are searched: a regex over a whole 300 KB snapshot is
    several times slower than `bytes.find`, and `inputs` on a 40 MB dump must stay fast.
    """
    names: list[str] = []
    start = body.find(b".func")
    while start >= 0:
        line_start = body.rfind(b"\n", 0, start) + 1
        line_end = body.find(b"\n", start)
        if line_end < 0:
            line_end = len(body)
        for groups in _FUNC.findall(body, line_start, line_end):
            names.append(b"".join(groups).decode("utf-8", "replace"))
        start = body.find(b".func", line_end)
    return list(dict.fromkeys(names))


def _flags(body: bytes) -> list[str]:
    """Flavour flags of a unit's non-comment text (see ir-semantics.md §1.1)."""
    flags = [name for name, (literal, pat) in _FLAG_PATTERNS.items() if literal in body and (pat is None or pat.search(body))]
    if "warp_specialize" not in flags and b"nvws.warp_group" in body:
        # upstream's partitions before NVWSLowerWarpGroup turns them into ttg.warp_specialize
        flags.insert(0, "warp_specialize")  # first, as in the table
    if "llvm" not in flags and _TTGIR.search(body):
        flags.insert(0, "ttgir")
    return flags
