"""Memory descriptor types: `!ttg.memdesc<SHAPExELT, #enc, #space[, mutable][, ALLOCSHAPE]>`.

One decoder for the whole tool (barriers, buffers, the interpreter): shape, element type, memory
space (SMEM / TMEM) and the bytes a view covers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from math import prod

from .attrs import split_top_level

_MEMDESC = re.compile(r"^!ttg\.memdesc<(?P<body>.*)>$", re.S)
_DIMS_ELT = re.compile(r"^(?P<dims>(?:\d+x)*)(?P<elt>[A-Za-z][\w.]*)$")
_FLOAT_BITS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64, "tf32": 32}


@dataclass(frozen=True, slots=True)
class MemDesc:
    """A `!ttg.memdesc<SHAPExELT, #enc, #space[, mutable][, ALLOCSHAPE]>` type, decoded."""

    shape: tuple[int, ...]
    dtype: str
    space: str | None  # "smem" | "tmem" | None when the memory space is not recognised
    encoding: str | None
    mutable: bool
    text: str

    @property
    def bits(self) -> int | None:
        return element_bits(self.dtype)

    @property
    def bytes(self) -> int | None:
        """Bytes the whole view covers (rounded up for sub-byte types)."""
        bits = self.bits
        return None if bits is None else (prod(self.shape) * bits + 7) // 8


def element_bits(dtype: str) -> int | None:
    """Width of one element: `f16`/`bf16` 16, `f32` 32, every `f8*` 8, `f4*` 4, `iN` N."""
    if dtype in _FLOAT_BITS:
        return _FLOAT_BITS[dtype]
    m = re.fullmatch(r"[iu]i?(\d+)", dtype)
    if m:
        return int(m.group(1))
    m = re.fullmatch(r"f(\d+)E\w*", dtype)
    if m:
        return int(m.group(1))
    return None


def parse_memdesc(text: str | None, aliases: dict[str, str] | None = None) -> MemDesc | None:
    """Decode a memdesc type; `aliases` resolves `#smem = #ttg.shared_memory` style names.
    Without aliases the answer depends on the text alone and is remembered (the interpreter
    asks for the same few types on every TMA copy and MMA it runs; a `MemDesc` is immutable)."""
    if not text:
        return None
    if not aliases:
        if text in _PLAIN:
            return _PLAIN[text]
        if len(_PLAIN) > 4096:
            _PLAIN.clear()
        md = _PLAIN[text] = _parse_memdesc(text, None)
        return md
    return _parse_memdesc(text, aliases)


_PLAIN: dict[str, MemDesc | None] = {}  # parse_memdesc without aliases, by text


def _parse_memdesc(text: str, aliases: dict[str, str] | None) -> MemDesc | None:
    m = _MEMDESC.match(text.strip())
    if m is None:
        return None
    parts = split_top_level(m.group("body"))
    if not parts:
        return None
    head = _DIMS_ELT.match(parts[0].replace(" ", ""))
    if head is None:
        return None
    dims = tuple(int(d) for d in head.group("dims").split("x") if d)
    space: str | None = None
    encoding: str | None = None
    for part in parts[1:]:
        kind = _memory_space(part, aliases or {})
        if kind is not None:
            space = kind
        elif part.startswith("#") and encoding is None:
            encoding = part
    return MemDesc(dims, head.group("elt"), space, encoding, "mutable" in parts[1:], text.strip())


def _memory_space(part: str, aliases: dict[str, str]) -> str | None:
    value = aliases.get(part, part).strip()
    if value in ("#ttg.shared_memory", "#smem") or part == "#smem":
        return "smem"
    if value == "#ttng.tensor_memory" or part == "#tmem_space":
        return "tmem"
    return None




def is_barrier_type(text: str | None) -> bool:
    """An mbarrier allocation or view: i64 elements in shared memory."""
    md = parse_memdesc(text)
    return md is not None and md.dtype == "i64" and md.space == "smem"


def memdesc_bytes(text: str | None) -> int | None:
    """Bytes a memdesc view covers (what a TMA copy into it delivers)."""
    md = parse_memdesc(text)
    return md.bytes if md is not None else None


_TMEM_ENC = re.compile(r"#ttng\.tensor_memory_encoding<(?P<body>[^>]*)>")
_TMEM_SCALES = "#ttng.tensor_memory_scales_encoding"


def tmem_columns(text: str | None, aliases: dict[str, str] | None = None) -> int | None:
    """32-bit TMEM columns one slot of a TMEM view spans (the trailing two dimensions), as the
    allocator counts them: for `#ttng.tensor_memory_encoding<blockM, blockN, colStride>` the row
    holds N elements `colStride` element-widths apart (colStride 1 = packed: two 16-bit or four
    8-bit elements per column); scale buffers (`tensor_memory_scales_encoding`) take
    ceil(M/32) * ceil(K/4) columns (a 128x4 i8 scale slot is 4 columns). None when the encoding
    is not known or is a cluster-wide / 2-CTA layout (its per-CTA split is not computed here)."""
    md = parse_memdesc(text, aliases)
    if md is None or md.space != "tmem" or len(md.shape) < 2 or md.encoding is None:
        return None
    enc = (aliases or {}).get(md.encoding, md.encoding)
    m, n = md.shape[-2], md.shape[-1]
    if enc.startswith(_TMEM_SCALES):
        if "CGALayout" in enc:
            return None
        return -(-m // 32) * -(-n // 4)
    found = _TMEM_ENC.search(enc)
    bits = md.bits
    if found is None or bits is None or "CGALayout" in enc or "twoCTAs = true" in enc:
        return None
    params = dict(p.split("=") for p in found.group("body").replace(" ", "").split(",") if "=" in p)
    try:
        block_m, stride = int(params.get("blockM", "128")), int(params.get("colStride", "1"))
    except ValueError:
        return None
    if block_m != 128 or m > 128:
        return None
    return max(1, -(-(n * stride * bits) // 32))
