"""Input units: what a path, a directory, a gzip file or stdin holds, found by scanning text.

Users hand us final `.ttgir` files, lit files with `// -----` splits, `MLIR_ENABLE_DUMP` logs with
a hundred pass snapshots, WarpSpec internal dumps, Triton dump folders, and IR on stdin. Listing
the units must be fast on a 40 MB dump, so this module never parses: it streams lines, cuts units
at split markers and dump headers, and reads each unit's functions and flavour flags with regular
expressions over its non-comment lines. Only the unit an analysis asks for is parsed
(`load_unit`), and parsed units are cached by content hash for the life of the process.

The unit model (`Source`, `Unit`, `InputSet`) and the function-name and flag scans live in
`input_units`, below both this module and the input adapters it calls; they are re-exported here.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import sys
import zlib
from pathlib import Path
from typing import Callable

from . import limits
from .errors import InputError
from .input_units import _TTGIR, InputSet, Source, Unit, _flags, _function_names
from .ir.model import ParsedIR

__all__ = ["IR_SUFFIXES", "InputSet", "Source", "Unit", "default_unit", "gunzip_capped", "load_unit", "open_input",
           "read_capped", "scan_units", "select_unit"]

IR_SUFFIXES = (".ttgir", ".ttir", ".mlir", ".txt", ".ttgir.gz", ".ttir.gz", ".mlir.gz", ".txt.gz")
LIT_SPLIT = b"// -----"
_DUMP_HEADER = re.compile(
    rb"^// -----// (?:(?P<who>[\w ]*?) ?internal IR Dump (?P<iwhen>Before|After):? ?(?P<istep>.*?)"
    # The symbol may itself contain parentheses (`@cdiv__i32__(1,)cconstexpr_128_`): take it
    # greedily up to the `)` that closes the operation clause.
    rb"|IR Dump (?P<when>Before|After) (?P<pass>.*?)(?: \('(?P<optype>[\w.]+)' operation(?:: @(?P<sym>.*))?\))?"
    rb"(?: //----- //)?)\s*$"
)
_MODULE_LINE = re.compile(rb"^module\b|^\"builtin\.module\"")
_MODULE_START = re.compile(rb"(?m)^(?:module\b|\"builtin\.module\")")
_TRAILING_LOC = re.compile(rb"^#loc\d+ = ")
# A line MLIR could have printed: results assigned an operation, a dialect-qualified operation
# (custom or generic form), a module, or an attribute/type alias. A unit with none is notes or
# prose (a `.txt` next to the IR in a dump folder), not IR: listing it would promise a unit that
# every analysing command then rejects. Dialects and ops are lowercase (`e.g.`, `README.md` are not).
_IR_LINE = re.compile(
    rb'(?m)^[ \t]*(?:%[^\s=,]+(?:[ \t]*,[ \t]*%[^\s=,]+)*[ \t]*=[ \t]*["a-z_]'
    rb'|"?[a-z_][a-z0-9_]+\.[a-z_][\w$.]*"?(?:[ \t(<{"]|$)'
    rb'|(?:module|"builtin\.module")(?:[ \t]*[@{(]|[ \t]+attributes\b|[ \t]*$)'
    rb'|[#!][\w$.-]+[ \t]*=)'
)
_PROGRESS_CHUNK = 4 << 20  # bytes scanned between two progress ticks


# -- discovery ------------------------------------------------------------------------------------
def open_input(spec: str, stdin: Callable[[], bytes] | None = None) -> InputSet:
    """Resolve INPUT (a path, a directory, `-` for stdin) to its units.

    Every input is read once: a pipe, a FIFO, process substitution (`<(cmd)`) or `/dev/stdin`
    is read into memory (within the caps of `limits`) and scanned there, since reading it again
    would find it empty (or block). Devices, sockets and terminals are refused."""
    if spec == "-":
        return _in_memory("<stdin>", "stdin", (stdin or _read_stdin)())
    path = Path(spec)
    try:
        if not path.exists():
            raise InputError(spec, "no such file or directory", 1, 1)
        if path.is_dir():
            return _open_directory(spec, path)
        st = path.stat()
    except (OSError, ValueError) as exc:  # a name too long, a permission problem, a NUL byte
        raise InputError(spec, f"cannot open: {exc}", 1, 1) from None
    if stat.S_ISFIFO(st.st_mode):
        try:
            with open(path, "rb") as fh:
                data = read_capped(fh, spec)
        except OSError as exc:
            raise InputError(spec, f"cannot read: {exc.strerror or exc}", 1, 1) from None
        return _in_memory(spec, "file", data)
    if not stat.S_ISREG(st.st_mode):
        what = "a character device" if stat.S_ISCHR(st.st_mode) else "a block device" if stat.S_ISBLK(st.st_mode) \
            else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file"
        raise InputError(spec, f"is {what}, not an IR file: refused (pipe its contents into `-` if that is what you mean)", 1, 1)
    source = Source(spec, path=path)
    if _is_trace(source):
        return _open_trace(spec, "trace", source, st.st_size)
    units = scan_units(source)
    defaults = _cache_entry_defaults(path)
    for u in units:
        u.module_defaults = {**defaults, **u.module_defaults}
    return InputSet(spec, "file", units, st.st_size, compressed=source.compressed)


def _in_memory(display: str, kind: str, data: bytes) -> InputSet:
    """An input read once into memory (stdin, a pipe): gunzipped within the caps, then scanned."""
    compressed = data[:2] == b"\x1f\x8b"
    if compressed:
        data = gunzip_capped(data, display)
    source = Source(display, data=data)
    if _is_trace(source):
        return _open_trace(display, "stdin" if kind == "stdin" else "trace", source, len(data))
    return InputSet(display, kind, scan_units(source), len(data), compressed=compressed)


_CHUNK = 1 << 20


def read_capped(fh, display: str) -> bytes:
    """All of `fh`, read in chunks: past INPUT_BYTES it stops with the cap error, and a NUL byte
    (binary data, `/dev/zero`) stops it at once, not after the whole stream is in memory."""
    cap = limits.INPUT_BYTES.value
    chunks: list[bytes] = []
    total = 0
    lines = 0
    while True:
        chunk = fh.read(_CHUNK)
        if not chunk:
            return b"".join(chunks)
        if not chunks and chunk[:2] == b"\x1f\x8b":
            pass  # gzip data: binary by nature; its text is checked once decompressed
        elif b"\x00" in chunk and not (chunks and chunks[0][:2] == b"\x1f\x8b"):
            at = chunk.index(b"\x00")
            line_start = chunk.rfind(b"\n", 0, at) + 1
            column = at - line_start + 1 if line_start or not chunks else None
            raise InputError(display, "binary data (NUL byte): not IR text", lines + chunk.count(b"\n", 0, at) + 1,
                             column or 1)
        total += len(chunk)
        if total > cap:
            raise limits.INPUT_BYTES.error(display, "the input is larger than the limit", 1, 1)
        lines += chunk.count(b"\n")
        chunks.append(chunk)


def gunzip_capped(data: bytes, display: str) -> bytes:
    """Decompress gzip `data` (every member) without ever holding more than the caps allow:
    INPUT_BYTES in all and GZIP_RATIO times the compressed size (a bomb stops at the cap)."""
    cap = min(limits.INPUT_BYTES.value, max(limits.GZIP_RATIO.value * len(data), limits.GZIP_RATIO_FLOOR))
    out: list[bytes] = []
    total = 0
    rest = data
    try:
        while rest:
            d = zlib.decompressobj(wbits=31)
            buf = rest
            while buf:
                piece = d.decompress(buf, _CHUNK)
                total += len(piece)
                if total > cap:
                    which = limits.INPUT_BYTES if cap == limits.INPUT_BYTES.value else limits.GZIP_RATIO
                    raise which.error(display, "the gzip data expands past the limit (a decompression bomb?)", 1, 1)
                out.append(piece)
                buf = d.unconsumed_tail
            if not d.eof:
                raise EOFError("compressed data ended before the end-of-stream marker was reached")
            rest = d.unused_data.lstrip(b"\x00")  # members may be padded with NULs
    except (EOFError, zlib.error) as exc:
        raise InputError(display, f"corrupt or truncated gzip data: {exc}", 1, 1) from None
    return b"".join(out)


def _is_trace(source: Source) -> bool:
    """A tritonparse NDJSON trace (adapters/tritonparse_trace.py), told by its first line."""
    for raw in source.lines():
        if raw.strip():
            from .adapters.tritonparse_trace import looks_like_trace

            return looks_like_trace(raw)
    return False


def _open_trace(spec: str, kind: str, source: Source, size: int) -> InputSet:
    from .adapters.tritonparse_trace import read_trace

    units, launches, events = read_trace(source)
    return InputSet(spec, kind, units, size, compressed=source.compressed, launches=launches, events=events)


def _cache_entry_defaults(path: Path) -> dict[str, str]:
    """A `.ttgir` in a Triton cache entry sits next to `<kernel>.json`, the compile metadata:
    its warps, CTAs, cluster shape and target fill what the IR's module leaves unsaid."""
    if not path.name.endswith(".ttgir"):
        return {}
    from .adapters.triton_cache import read_metadata

    meta = read_metadata(path.with_name(path.name[: -len(".ttgir")] + ".json"))
    if not meta:
        return {}
    from .adapters.tritonparse_trace import module_defaults

    return module_defaults(meta)


def _read_stdin() -> bytes:
    """All of standard input, within the caps. A terminal is refused rather than waited on: an
    agent or a script that forgot the pipe should get an error, not a hang."""
    stream = sys.stdin
    if stream is None or not hasattr(stream, "buffer"):
        raise InputError("<stdin>", "no standard input to read (pipe IR into `-`, or name a file)", 1, 1)
    if stream.isatty():
        raise InputError("<stdin>", "standard input is a terminal (pipe IR into `-`, or name a file)", 1, 1)
    return read_capped(stream.buffer, "<stdin>")


def _open_directory(spec: str, path: Path) -> InputSet:
    """A folder such as `~/.triton/dump/<hash>/`: every IR file in it (by suffix; `.llir`, `.ptx`
    and `.json` are not MLIR), sorted by name. Unreadable files are skipped, since a dump folder
    may hold logs; if none is readable the first reason is reported."""
    files = sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(IR_SUFFIXES))
    if not files:
        raise InputError(spec, "directory has no IR files (" + ", ".join(IR_SUFFIXES) + ")", 1, 1)
    units: list[Unit] = []
    total = 0
    skipped: list[InputError] = []
    for f in files:
        display = os.path.join(spec, f.name)
        source = Source(display, path=f)
        try:
            found = scan_units(source)
        except InputError as exc:
            skipped.append(exc)  # a non-IR file in a dump folder (e.g. a .txt log) is skipped
            continue
        for u in found:
            u.label = f.name if u.kind == "file" else f"{f.name}: {u.label}"
            u.index = len(units)
            units.append(u)
        total += f.stat().st_size
    if not units:
        raise InputError(spec, f"directory has no readable IR files (first: {skipped[0]})", 1, 1)
    return InputSet(spec, "directory", units, total)


# -- scanning -------------------------------------------------------------------------------------
class _Pending:
    __slots__ = ("kind", "label", "start", "end", "nbytes", "body")

    def __init__(self, kind: str, label: str, start: int):
        self.kind = kind
        self.label = label
        self.start = start
        self.end = start - 1
        self.nbytes = 0
        self.body: list[bytes] = []


def scan_units(source: Source) -> list[Unit]:
    """Stream `source` once and cut it into units. Raises InputError for binary, non-UTF-8 or
    empty input."""
    from .progress import tick

    pending: list[_Pending] = []
    cur = _Pending("file", Path(source.display).name, 1)
    saw_split = saw_header = False
    total = 0
    lineno = 0
    size = source.path.stat().st_size if source.path is not None and not source.compressed else None
    reported = 0
    for lineno, raw in enumerate(source.lines(), 1):
        total += len(raw)
        if total - reported >= _PROGRESS_CHUNK:  # a 200 MB file: one tick per scanned chunk
            tick(f"scanning {Path(source.display).name}", n=total - reported, total=size)
            reported = total
        if b"\x00" in raw:
            raise InputError(source.display, "binary data (NUL byte): not IR text", lineno, raw.index(b"\x00") + 1)
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(source.display, "bytes that are not UTF-8: not IR text", lineno, exc.start + 1) from None
        if raw.startswith(b"// -----"):
            stripped = raw.rstrip()
            if stripped == LIT_SPLIT:
                cur.end = lineno - 1
                pending.append(cur)
                cur = _Pending("split", "", lineno + 1)
                saw_split = True
                continue
            m = _DUMP_HEADER.match(stripped)
            if m:
                cur.end = lineno - 1
                pending.append(cur)
                cur = _Pending("snapshot", _header_label(m), lineno + 1)
                saw_header = True
                continue
        cur.nbytes += len(raw)
        cur.end = lineno
        s = raw.lstrip()
        if s and not s.startswith(b"//"):
            cur.body.append(raw)
    pending.append(cur)
    if total == 0:
        raise InputError(source.display, "empty file", 1, 1)

    units: list[Unit] = []
    split_no = -1  # labels count from 0, like unit indices: "split N" is the file's N-th piece
    for p in pending:
        body = b"".join(p.body)
        if p.kind == "split" or (saw_split and p.kind == "file"):
            split_no += 1
        if not body.strip() or not _IR_LINE.search(body):
            continue  # comments, blank lines, or prose: no unit
        if saw_header and p.kind == "file" and not _TTGIR.search(body) and b"module" not in body:
            continue  # stderr noise before the first dump header
        kind = p.kind
        label = p.label
        if saw_split and kind in ("file", "split"):
            kind = "split"
            label = f"split {split_no}"
        functions = _function_names(body)
        flags = _flags(body)
        if kind == "split" and functions:
            label += " (@" + ", @".join(functions[:3]) + (", ..." if len(functions) > 3 else "") + ")"
        unit = Unit(len(units), kind, label, source, p.start, max(p.end, p.start), p.nbytes, functions, flags)
        if source.data is not None and not saw_split and not saw_header:
            unit._text = source.data
        units.extend(_split_modules(unit, body) if kind == "file" else [unit])
    if not units:
        raise InputError(source.display, "no IR found (no MLIR operation: only comments, prose or blank lines)", 1, 1)
    for i, u in enumerate(units):
        u.index = i
    return units


def _header_label(m: re.Match[bytes]) -> str:
    if m.group("iwhen"):
        who = (m.group("who") or "").strip()
        step = (m.group("istep") or b"").strip().decode("utf-8", "replace")
        return f"{who.decode() + ' ' if who else ''}{m.group('iwhen').decode()} {step}".strip()
    pass_text = (m.group("pass") or b"").decode("utf-8", "replace")
    pass_name = pass_text.split(":", 1)[0].strip()
    label = f"{m.group('when').decode()} {pass_name}"
    if m.group("sym"):
        label += f" @{m.group('sym').decode('utf-8', 'replace')}"
    return label



def _split_modules(unit: Unit, body: bytes) -> list[Unit]:
    """A plain file holding several top-level modules (e.g. `cat a.ttgir b.ttgir`) yields one
    unit per module.

    MLIR prints attribute aliases (`#blocked = ...`) before a module and most location aliases
    (`#loc12 = loc(...)`) after it, so the numbered `#locN` lines that directly follow a module's
    closing `}` stay with that module and everything after them starts the next one.
    """
    if len(_MODULE_START.findall(body)) < 2:
        return [unit]
    lines = unit.text().splitlines(keepends=True)
    module_lines = [i for i, line in enumerate(lines) if _MODULE_LINE.match(line)]
    starts = [0]
    for first in module_lines[1:]:
        close = first - 1
        while close > starts[-1] and not lines[close].startswith(b"}"):
            close -= 1
        cut = close + 1
        while cut < first and (_TRAILING_LOC.match(lines[cut]) or not lines[cut].strip()):
            cut += 1
        starts.append(cut if close > starts[-1] else first)
    units: list[Unit] = []
    for k, first in enumerate(starts):
        last = starts[k + 1] - 1 if k + 1 < len(starts) else len(lines) - 1
        chunk = b"".join(lines[first : last + 1])
        functions = _function_names(chunk)
        label = f"module {k}" + (f" (@{functions[0]})" if functions else "")  # 0-based, like indices
        u = Unit(0, "module", label, unit.source, unit.start_line + first, unit.start_line + last,
                 len(chunk), functions, _flags(chunk))
        u._text = chunk
        units.append(u)
    return units


# -- selection ------------------------------------------------------------------------------------
def default_unit(units: list[Unit]) -> Unit:
    """The last TTGIR unit with warp specialization (preferring `.ttgir` files in a directory),
    else the first non-LLVM unit, else the first unit."""
    candidates = [u for u in units if "llvm" not in u.flags]
    ttgir_files = [u for u in candidates if u.path.endswith((".ttgir", ".ttgir.gz"))]
    for pool in (ttgir_files, candidates):
        ws = [u for u in pool if u.is_warp_specialized]
        if ws:
            return ws[-1]
    if ttgir_files:
        return ttgir_files[0]
    return candidates[0] if candidates else units[0]


def select_unit(inputs: InputSet, selector: str | None) -> Unit:
    """Pick a unit by index, by `last-ws`, or by a label substring (exact labels win)."""
    units = inputs.units
    if selector is None or selector == "":
        return default_unit(units)
    if selector == "last-ws":
        ws = [u for u in units if u.is_warp_specialized and "llvm" not in u.flags]
        if not ws:
            raise InputError(inputs.display, "--unit last-ws: no unit has warp specialization", 1, 1)
        return ws[-1]
    if re.fullmatch(r"-?\d+", selector):
        idx = int(selector)
        if -len(units) <= idx < len(units):
            return units[idx]
        raise InputError(inputs.display, f"--unit {selector}: no such unit (there are {len(units)}, 0..{len(units) - 1})", 1, 1)
    exact = [u for u in units if u.label == selector]
    if len(exact) == 1:
        return exact[0]
    keyed = [u for u in units if selector in u.keys or (len(selector) >= 6 and any(
        k.startswith(selector) for k in u.keys[1:]))]  # a kernel name, or a hash prefix
    if len(keyed) == 1:
        return keyed[0]
    if len(keyed) > 1:
        listing = "; ".join(f"{u.index}: {u.label}" for u in keyed[:8])
        raise InputError(inputs.display, f"--unit {selector!r} names {len(keyed)} units: {listing} "
                         "(give an index or a hash prefix)", 1, 1)
    matches = [u for u in units if selector.lower() in u.label.lower()]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise InputError(inputs.display, f"--unit {selector!r} matches no unit label (see `barrier-viz inputs`)", 1, 1)
    listing = "; ".join(f"{u.index}: {u.label}" for u in matches[:8])
    more = f"; and {len(matches) - 8} more" if len(matches) > 8 else ""
    raise InputError(inputs.display, f"--unit {selector!r} is ambiguous ({len(matches)} units): {listing}{more}", 1, 1)


# -- parsing with a cache -------------------------------------------------------------------------
_CACHE: dict[str, ParsedIR] = {}


def load_unit(unit: Unit) -> ParsedIR:
    """Parse a unit (once per process per content). Raises InputError for unreadable IR."""
    from .ir.parse import IRSyntaxError, parse_ir

    if unit.bytes > limits.UNIT_BYTES.value:
        raise limits.UNIT_BYTES.error(unit.path, f"unit {unit.index} ({unit.label}) is {unit.bytes:,} bytes",
                                      unit.start_line, 1)
    text = unit.text()
    if unit.meta.get("no_ttgir"):
        raise InputError(unit.path, unit.meta["no_ttgir"], 1, 1)
    key = hashlib.sha1(text).hexdigest() + f":{unit.start_line}:{sorted(unit.module_defaults.items())}"
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    try:
        parsed = parse_ir(text, line_offset=unit.start_line - 1)
    except IRSyntaxError as exc:
        raise InputError(unit.path, exc.message, exc.line, exc.column) from None
    from .ir.ssa import ssa_problems

    # Invalid SSA (a duplicate definition, a use before its definition, an undefined value) is
    # reported like a recovered syntax error: a warning with its position, fatal with --strict.
    # After a recovered syntax error they are mostly its echo (the recovery swallowed the
    # definitions), so only the syntax error is printed; verdicts still never rest on them.
    _check_module_limits(parsed, unit.path)
    if not parsed.warnings:
        parsed.diagnostics.extend(p.diagnostic() for p in ssa_problems(parsed))
    _apply_module_defaults(parsed, unit.module_defaults)
    if len(_CACHE) > 16:
        _CACHE.clear()
    _CACHE[key] = parsed
    return parsed


def _apply_module_defaults(parsed: ParsedIR, defaults: dict[str, str]) -> None:
    """Give each top-level module the attributes an adapter's metadata supplies (warps, CTAs,
    cluster shape, target) that its own text does not state; what the IR says always wins."""
    if not defaults:
        return
    for top in parsed.operations:
        if top.name != "builtin.module":
            continue
        missing = {k: v for k, v in defaults.items() if k not in top.attributes}
        if missing:
            top.attributes.update(missing)
            top._attr_cache = None


def _check_module_limits(parsed: ParsedIR, path: str) -> None:
    """The cluster and warp counts a module asks for, against `limits.CTAS` / `limits.WARPS`:
    the interpreter keeps state per CTA and per thread, so `ttg.num-ctas = 2^128` must be
    refused here, not simulated (the hardware allows 16 CTAs per cluster and 32 warps)."""
    for op in parsed.operations:
        if op.name != "builtin.module":
            continue
        dims = 1
        for key in ("ttg.num-ctas", "ttg.cluster-dim-x", "ttg.cluster-dim-y", "ttg.cluster-dim-z", "ttg.num-warps"):
            value = op.attr(key)
            if not isinstance(value, int) or isinstance(value, bool):
                continue
            if key == "ttg.num-warps":
                if value > limits.WARPS.value:
                    raise limits.WARPS.error(path, f'"{key}" = {value}', op.line, op.column)
                continue
            if key.startswith("ttg.cluster-dim"):
                dims *= max(value, 1)
                value = dims
            if value > limits.CTAS.value:
                raise limits.CTAS.error(path, f'"{key}" makes {value} CTAs', op.line, op.column)
