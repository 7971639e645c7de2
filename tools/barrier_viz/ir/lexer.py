"""Tree-sitter front end: turn MLIR text into a flat list of atoms.

tree-sitter-mlir recognises every lexical shape of MLIR (types with nested brackets, attribute
dictionaries, locations, block labels, generic and custom forms) and recovers from errors, but
its rule for custom operations is a loose token bag: it sometimes reads an attribute dictionary
as a region or gives the next line's result names to the previous operation. So we keep what it
is reliable at, the atoms and their positions, and rebuild operations and regions ourselves in
`ir.parse` from the atoms and the line structure of printed IR.

Before tree-sitter reads the text, the bodies of `!dialect.type<...>` are blanked with spaces
(`mask_type_bodies`): its grammar is ambiguous on comma lists and slow on them, types are single
atoms to us, and atom texts are always cut from the original bytes, so nothing we read changes
(the corpus test checks atom-for-atom equality) while tree-sitter's parse gets ~1.5-2x faster.

An atom is a tuple `(kind, text, line, column, start_byte, end_byte)` with 1-based line and
column. Kinds:

    V value use (`%x`, `%r#1`, `%r:2`)      N operation name            S string literal
    T type                                  A attribute dictionary      P properties `<{...}>`
    L trailing location `loc(...)`          B block label `^bb0(...):`  C successor `^bb1`
    @ symbol reference                      D alias definition          I bare identifier
    X any other leaf (literals, keywords)   and the punctuation itself: { } ( ) [ ] , = : ->
"""

from __future__ import annotations

import re
from functools import lru_cache

from .model import Diagnostic

Atom = tuple[str, str, int, int, int, int]

_ATOMIC = {
    "value_use": "V",
    "custom_op_name": "N",
    "string_literal": "S",
    "type": "T",
    "properties": "P",
    "trailing_location": "L",
    "block_label": "B",
    "caret_id": "C",
    "symbol_ref_id": "@",
    "attribute_alias_def": "D",
    "type_alias_def": "D",
    "bare_id": "I",
}
_PUNCT = frozenset({"{", "}", "(", ")", "[", "]", ",", "=", ":", "->"})
_ATTRIBUTE_NODES = frozenset({"attribute", "dictionary_attribute"})
_CLOSERS = {")": "(", "]": "[", ">": "<", "}": "{"}


_DIALECT_TYPE = re.compile(rb"![A-Za-z_][\w$]*\.[\w$.]*<")
_TYPE_BODY_TOKEN = re.compile(rb'->|[<>"\n]')


def mask_type_bodies(source: bytes) -> bytes:
    """`source` with the inside of every `!dialect.type<...>` blanked out, byte for byte.

    Why: tree-sitter-mlir's grammar is ambiguous on comma lists, and its GLR parser pays about
    quadratically for them: one `!llvm.struct<(f32 x 128)>` line costs ~15 ms, a partition
    header with 40 `%a: !ttg.memdesc<...>` arguments ~10 ms. A type is one atom to us (we take
    its text from the original bytes, never from inside the node), so its body need not be read
    by tree-sitter. Spaces keep every byte offset, line and column where it was. A body that is
    not closed on its own line, or that starts inside a string literal, is left alone.
    """
    out: bytearray | None = None
    pos = 0
    search = _DIALECT_TYPE.search
    while True:
        m = search(source, pos)
        if m is None:
            return source if out is None else bytes(out)
        start = m.end()
        end = -1 if _inside_string(source, m.start()) else _type_body_end(source, start)
        if end < 0:
            pos = start
            continue
        if end > start:
            if out is None:
                out = bytearray(source)
            out[start:end] = b" " * (end - start)
        pos = end + 1


def _inside_string(source: bytes, index: int) -> bool:
    """Whether `index` lies inside a string literal (strings never span lines in printed IR)."""
    prefix = source[source.rfind(b"\n", 0, index) + 1 : index]
    if b'"' not in prefix:
        return False
    return (prefix.count(b'"') - prefix.count(b'\\"')) % 2 == 1


def _type_body_end(source: bytes, start: int) -> int:
    """Index of the `>` closing the type body that starts at `start`, or -1 (not on this line)."""
    depth = 1
    j = start
    search = _TYPE_BODY_TOKEN.search
    while True:
        t = search(source, j)
        if t is None:
            return -1
        tok = t.group()
        if tok == b"<":
            depth += 1
        elif tok == b">":
            depth -= 1
            if depth == 0:
                return t.start()
        elif tok == b'"':
            j = _string_end(source, t.end())
            if j < 0:
                return -1
            continue
        elif tok == b"\n":
            return -1
        j = t.end()


def _string_end(source: bytes, j: int) -> int:
    """Index just past the `"` closing a string whose body starts at `j`, or -1."""
    while True:
        q = source.find(b'"', j)
        if q < 0:
            return -1
        backslashes = 0
        while source[q - 1 - backslashes] == 0x5C:
            backslashes += 1
        if backslashes % 2 == 0:
            return q + 1
        j = q + 1


@lru_cache(maxsize=1)
def _parser():
    import tree_sitter
    import tree_sitter_mlir

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_mlir.language()))


def lex(source: bytes, line_offset: int = 0, mask: bool = True) -> tuple[list[Atom], list[Diagnostic]]:
    """Parse `source` with tree-sitter and return its atoms and the syntax errors it recovered from.

    `line_offset` is added to every line so that positions refer to the enclosing file. Atom
    texts always come from `source`; `mask=False` lets tree-sitter read type bodies too (the
    result is the same, only slower: `tests/test_parse.py` checks it on the corpus).
    """
    tree = _parser().parse(mask_type_bodies(source) if mask else source)
    atoms: list[Atom] = []
    diagnostics: list[Diagnostic] = []
    append = atoms.append
    cursor = tree.walk()
    atomic = _ATOMIC
    punct = _PUNCT
    while True:
        node = cursor.node
        ntype = node.type
        descend = False
        if ntype == "comment":
            pass
        elif node.is_missing:
            row, col = node.start_point
            if ntype in _CLOSERS and node.parent is not None and node.parent.start_point[0] < row:
                # tree-sitter inserts a missing `)` where its recovery ended, often many lines
                # later; what is wrong is the construct that opened it: point there.
                row, col = node.parent.start_point
                diagnostics.append(Diagnostic("warning", f"'{_CLOSERS[ntype]}' is never closed (missing '{ntype}')",
                                              row + 1 + line_offset, col + 1))
            else:
                diagnostics.append(
                    Diagnostic("warning", f"missing '{ntype}'", row + 1 + line_offset, col + 1)
                )
        elif ntype in atomic:
            sb, eb = node.start_byte, node.end_byte
            row, col = node.start_point
            if eb == sb:
                # tree-sitter made up an empty token (`%z =` with no operation after it): we do not
                # descend into atoms, so say here that it is missing, where it should have been.
                diagnostics.append(Diagnostic("warning", f"missing {ntype.replace('_', ' ')}",
                                              row + 1 + line_offset, col + 1))
            append((atomic[ntype], source[sb:eb].decode("utf-8", "replace"), row + 1 + line_offset, col + 1, sb, eb))
        elif ntype in _ATTRIBUTE_NODES and source[node.start_byte : node.start_byte + 1] == b"{":
            sb, eb = node.start_byte, node.end_byte
            row, col = node.start_point
            append(("A", source[sb:eb].decode("utf-8", "replace"), row + 1 + line_offset, col + 1, sb, eb))
        elif ntype == "ERROR":
            row, col = node.start_point
            snippet = source[node.start_byte : min(node.end_byte, node.start_byte + 40)]
            snippet_text = snippet.decode("utf-8", "replace").split("\n")[0]
            diagnostics.append(
                Diagnostic("warning", f"syntax error near '{snippet_text}'", row + 1 + line_offset, col + 1)
            )
            descend = node.child_count > 0
            if not descend:
                sb, eb = node.start_byte, node.end_byte
                append(("X", source[sb:eb].decode("utf-8", "replace"), row + 1 + line_offset, col + 1, sb, eb))
        elif node.child_count == 0:
            sb, eb = node.start_byte, node.end_byte
            if eb > sb:
                text = source[sb:eb].decode("utf-8", "replace")
                row, col = node.start_point
                if ntype == text and ntype in ("module", "builtin.module", "func.func", "llvm.func"):  # grammar keywords that are op names
                    kind = "N"
                elif text in punct:
                    kind = text
                else:
                    kind = "X"
                append((kind, text, row + 1 + line_offset, col + 1, sb, eb))
        else:
            descend = True
        if descend and cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                if not source.isascii():
                    atoms = _character_columns(source, atoms)
                return atoms, diagnostics


def _character_columns(source: bytes, atoms: list[Atom]) -> list[Atom]:
    """tree-sitter counts columns in bytes; people and editors count characters. Only lines with
    non-ASCII text before an atom differ, so only those atoms are rewritten."""
    fixed: list[Atom] = []
    for atom in atoms:
        kind, text, line, col, sb, eb = atom
        if col > 1:
            prefix = source[sb - (col - 1) : sb]
            if not prefix.isascii():
                atom = (kind, text, line, len(prefix.decode("utf-8", "replace")) + 1, sb, eb)
        fixed.append(atom)
    return fixed
