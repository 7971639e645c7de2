"""Tree-sitter front end: turn MLIR text into a flat list of atoms.

tree-sitter-mlir recognises every lexical shape of MLIR (types with nested brackets, attribute
dictionaries, locations, block labels, generic and custom forms) and recovers from errors, but
its rule for custom operations is a loose token bag: it sometimes reads an attribute dictionary
as a region or gives the next line's result names to the previous operation. So we keep what it
is reliable at, the atoms and their positions, and rebuild operations and regions ourselves in
`ir.parse` from the atoms and the line structure of printed IR.

An atom is a tuple `(kind, text, line, column, start_byte, end_byte)` with 1-based line and
column. Kinds:

    V value use (`%x`, `%r#1`, `%r:2`)      N operation name            S string literal
    T type                                  A attribute dictionary      P properties `<{...}>`
    L trailing location `loc(...)`          B block label `^bb0(...):`  C successor `^bb1`
    @ symbol reference                      D alias definition          I bare identifier
    X any other leaf (literals, keywords)   and the punctuation itself: { } ( ) [ ] , = : ->
"""

from __future__ import annotations

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


@lru_cache(maxsize=1)
def _parser():
    import tree_sitter
    import tree_sitter_mlir

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_mlir.language()))


def lex(source: bytes, line_offset: int = 0) -> tuple[list[Atom], list[Diagnostic]]:
    """Parse `source` with tree-sitter and return its atoms and the syntax errors it recovered from.

    `line_offset` is added to every line so that positions refer to the enclosing file.
    """
    tree = _parser().parse(source)
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
            diagnostics.append(
                Diagnostic("warning", f"missing '{ntype}'", row + 1 + line_offset, col + 1)
            )
        elif ntype in atomic:
            sb, eb = node.start_byte, node.end_byte
            row, col = node.start_point
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
                if ntype == "module" and text == "module":
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
                return atoms, diagnostics
