"""Build the IR model from tree-sitter atoms (see `ir.lexer` for why the structure is ours).

Rules, all taken from how MLIR prints IR:

* An operation starts at the first atom of a line when that atom is an operation name, a
  string followed by `(` (generic form), or result names followed by `=`.
* A `{` opens a region when the line ends after it (or a block label or `}` follows); otherwise
  it is an attribute dictionary, which tree-sitter sometimes fails to recognise as one.
* A `}` closes the innermost open region; the operation that owns it continues after it
  (`} do {`, `} else {`, `} {attrs} loc(..)`, `} : (types) -> ()`).
* Values an operation defines for its own regions (`%i = %lb`, `iter_args(%x = %init)`,
  `partition0(%a: type)`, `@f(%arg: type)`) become the arguments of the next region it opens.

The loop is iterative: nesting depth is bounded by memory, not by Python's recursion limit.

The checks of the raw text live in `text_checks` (with `IRSyntaxError`, re-exported here) and
the reading of operation headers (results, block labels, types) in `headers`.

`_Structurer` is the state machine that turns the atoms into operations, regions and blocks;
its states (the open frames, the operation being built, the pending region arguments)
are shared by every transition, so it stays one class in this module.
"""

from __future__ import annotations

import re

from .. import limits
from .attrs import parse_dictionary
from .headers import _assign_types, _expand_result, _parse_block_label, _unclosed_bracket
from .lexer import Atom, lex
from .locs import resolve_loc_name
from .model import Block, BlockArgument, Diagnostic, FUNCTION_OPS, Operation, ParsedIR, Region
from .text_checks import IRSyntaxError, _check_nesting, _first_unterminated_string, _reject_line_continuations


_LABEL = re.compile(r"^[A-Za-z_][\w.]*$")
_STRAY = re.compile(r"[^\w\s\"()\[\]{},:=>-]+|[<>]{2,}")


class _Builder:
    """Collects the atoms of one operation's header (everything outside its regions)."""

    __slots__ = (
        "op",
        "header",
        "depth",
        "def_mode",
        "pending_args",
        "pending_label",
        "label_end",
        "after_close",
        "last_kind",
    )

    def __init__(self, op: Operation):
        self.op = op
        self.header: list[tuple[str, str, int]] = []  # (kind, text, paren depth)
        self.depth = 0
        self.def_mode: list[bool] = []
        self.pending_args: list[BlockArgument] = []
        self.pending_label: str | None = None
        self.label_end = 0
        self.after_close = False
        self.last_kind = ""


class _Frame:
    __slots__ = ("region", "block", "builder", "parent_builder", "open_atom")

    def __init__(self, region: Region | None, block: Block, parent_builder: _Builder | None, open_atom: Atom | None):
        self.region = region
        self.block = block
        self.builder: _Builder | None = None
        self.parent_builder = parent_builder
        self.open_atom = open_atom


def parse_ir(source: bytes | str, line_offset: int = 0) -> ParsedIR:
    """Parse one unit of IR text. Raises `IRSyntaxError` for input that has no usable structure
    (unbalanced braces, truncation, no operations); recovered syntax errors become warnings."""
    data = source.encode("utf-8") if isinstance(source, str) else source
    _reject_line_continuations(data, line_offset)
    _check_nesting(data, line_offset)
    atoms, diagnostics = lex(data, line_offset)
    try:
        return _Structurer(data, atoms, diagnostics).run()
    except IRSyntaxError as exc:
        # An unterminated string swallows the lines after it (braces included), and the structure
        # error shows up far away, even before it: MLIR strings end on their line, so the string
        # is what is wrong.
        string = _first_unterminated_string(data, line_offset)
        if string is not None:
            raise IRSyntaxError("unterminated string literal (strings end on the line they start)", *string) from None
        raise


class _Structurer:
    def __init__(self, source: bytes, atoms: list[Atom], diagnostics: list[Diagnostic]):
        self.source = source
        self.atoms = atoms
        self.diagnostics = diagnostics
        self.op_count = 0
        self.op_cap = limits.OPERATIONS.value
        # Lines where tree-sitter skipped text it could not read (what follows may be its echo).
        self.lexer_lines = {d.line for d in diagnostics if d.message.startswith("syntax error")}
        self.aliases: dict[str, str] = {}
        self.top = Block()
        self.frames: list[_Frame] = [_Frame(None, self.top, None, None)]
        self.ops: list[Operation] = []
        # The first region whose `}` is not indented like the line that opened it: in printed
        # IR they always match, so when the braces do not balance this is where they went wrong.
        self.misnested: tuple[Atom, Atom] | None = None

    # -- driver -------------------------------------------------------------------------------
    def run(self) -> ParsedIR:
        atoms = self.atoms
        n = len(atoms)
        i = 0
        prev_line = -1
        while i < n:
            atom = atoms[i]
            kind, text, line = atom[0], atom[1], atom[2]
            first_on_line = line != prev_line
            prev_line = line
            frame = self.frames[-1]
            builder = frame.builder

            if kind == "D":
                self._alias(text)
                opener = _unclosed_bracket(text)
                if opener is not None:
                    col = atom[3] + opener
                    if i == n - 1:  # the input ends inside the alias: truncated IR
                        raise IRSyntaxError(f"unexpected end of input: '{text[opener]}' of the attribute alias "
                                            f"is not closed", line, col)
                    self.diagnostics.append(Diagnostic("warning", f"'{text[opener]}' of the attribute alias is not "
                                                       "closed on its line", line, col))
                i += 1
                continue
            if kind == "}":
                i = self._close_region(i)
                continue
            if kind == "B" and (builder is None or builder.depth == 0):
                self._finish(frame)
                self._new_block(frame, atom)
                i += 1
                continue
            if (builder is None or (first_on_line and builder.depth == 0)) and self._starts_op(i):
                self._finish(frame)
                i = self._start_op(frame, i)
                continue
            if builder is None:
                self.diagnostics.append(
                    Diagnostic("warning", f"unexpected '{text[:40]}' outside an operation", line, atom[3])
                )
                i += 1
                continue
            if (first_on_line and builder.depth == 0 and kind == "X" and _STRAY.fullmatch(text)
                    and not self.lexer_lines & {line - 2, line - 1, line}):
                # A line may continue the header above it (lit tests wrap long ones), but never
                # with bare punctuation: `<<<` or `!!` there is junk, and this is where it is
                # (unless it is the echo of a syntax error just above).
                self.diagnostics.append(Diagnostic("warning", f"unexpected '{text[:40]}' at the start of a line",
                                                   line, atom[3]))
            i = self._header_atom(builder, i)

        if len(self.frames) > 1:
            frame = self.frames[-1]
            opener = frame.open_atom
            last = atoms[-1] if atoms else ("", "", 1, 1, 0, 0)
            if self.misnested is not None:
                opened, closed = self.misnested
                self._raise_cause_within(opened, closed)
                raise IRSyntaxError(
                    f"the region opened here is not closed: the '}}' at line {closed[2]} is indented like an "
                    f"enclosing region's, and input ends with regions open", opened[2], opened[3])
            where = f" (opened at line {opener[2]})" if opener else ""
            raise IRSyntaxError(
                f"unexpected end of input: region{where} is not closed", last[2], last[3] + len(last[1])
            )
        self._finish(self.frames[-1])
        builder_open = [op for op in self.top.operations if not op.name]
        if builder_open:
            op = builder_open[0]
            raise IRSyntaxError("operation without a name", op.line, op.column)
        if not self.top.operations and not self.aliases:
            # Only attribute/type alias definitions is valid MLIR (an empty module); text with
            # neither operations nor aliases is not IR.
            line, col = (atoms[0][2], atoms[0][3]) if atoms else (1, 1)
            raise IRSyntaxError("no IR operations found", line, col)
        result = ParsedIR(self.top.operations, self.aliases, self.diagnostics)
        for top in result.operations:
            if top.name == "builtin.module":
                top.aliases = self.aliases
        self._resolve_locations(result)
        return result

    # -- recognisers --------------------------------------------------------------------------
    def _starts_op(self, i: int) -> bool:
        atoms = self.atoms
        kind = atoms[i][0]
        n = len(atoms)
        if kind == "N":
            if i + 1 < n and atoms[i + 1][0] == "=":
                return False
            # Outside every region only dialect-qualified names and `module` are operations
            # (MLIR resolves a bare name against the enclosing op's default dialect, and there
            # is none at top level); this keeps plain prose from reading as IR.
            return len(self.frames) > 1 or "." in atoms[i][1] or atoms[i][1] == "module"
        if kind == "S":
            return i + 1 < n and atoms[i + 1][0] == "(" and atoms[i + 1][2] == atoms[i][2]
        if kind == "V":
            j = i
            while j < n and atoms[j][0] == "V":
                if j + 1 < n and atoms[j + 1][0] == "=":
                    return True
                if j + 1 < n and atoms[j + 1][0] == ",":
                    j += 2
                    continue
                return False
        return False

    # -- operations ---------------------------------------------------------------------------
    def _start_op(self, frame: _Frame, i: int) -> int:
        atoms = self.atoms
        first = atoms[i]
        self.op_count += 1
        if self.op_count > self.op_cap:
            raise IRSyntaxError(limits.OPERATIONS.message(f"more than {self.op_cap:,} operations by this line"),
                                first[2], first[3])
        op = Operation(name="", line=first[2], column=first[3], start_byte=first[4], end_byte=first[5])
        op.end_line = first[2]
        results: list[str] = []
        while atoms[i][0] == "V":
            results.extend(_expand_result(atoms[i][1]))
            i += 1
            if atoms[i][0] == ",":
                i += 1
        if atoms[i][0] == "=":
            i += 1
        if i < len(atoms) and atoms[i][0] in ("N", "S"):
            name_atom = atoms[i]
            if name_atom[0] == "S":
                op.name = name_atom[1].strip('"')
                op.generic = True
            else:
                op.name = "builtin.module" if name_atom[1] == "module" else name_atom[1]
            op.end_line = name_atom[2]
            op.end_byte = name_atom[5]
            i += 1
        else:
            where = atoms[i] if i < len(atoms) else first
            # A syntax error recovered just before (on this line or the two above) is why the
            # name is missing here: tree-sitter's recovery consumed it. Report that place.
            for d in reversed(self.diagnostics):
                if where[2] - 2 <= d.line and (d.line, d.column) < (where[2], where[3]) and (d.line, d.column) != (1, 1):
                    raise IRSyntaxError(f"{d.message}; the operation after it has no name", d.line, d.column)
            raise IRSyntaxError("expected an operation name after '='", where[2], where[3])
        op.results = results
        op.block = frame.block
        frame.block.operations.append(op)
        frame.builder = _Builder(op)
        return i

    def _header_atom(self, b: _Builder, i: int) -> int:
        atoms = self.atoms
        atom = atoms[i]
        kind, text = atom[0], atom[1]
        op = b.op
        op.end_line = atom[2]
        op.end_byte = atom[5]
        after_close = b.after_close
        b.after_close = False
        if kind == "{":
            if self._is_region(i, b):
                self._open_region(b, atom, i)
                b.last_kind = "{"
                return i + 1
            j = self._matching_brace(i)
            raw = self.source[atom[4] : atoms[j][5]].decode("utf-8", "replace")
            op.attributes.update(parse_dictionary(raw))
            op.end_line = atoms[j][2]
            op.end_byte = atoms[j][5]
            b.last_kind = "A"
            return j + 1
        if kind == "(":
            b.def_mode.append(b.last_kind in ("I", "@"))
            b.depth += 1
        elif kind == ")":
            if b.def_mode:
                b.def_mode.pop()
            b.depth = max(0, b.depth - 1)
            if b.pending_label is not None and b.depth == 0 and not b.label_end:
                b.label_end = atom[5]
        elif kind == "[":
            b.depth += 1
        elif kind == "]":
            b.depth = max(0, b.depth - 1)
        elif kind == "V":
            nxt = atoms[i + 1] if i + 1 < len(atoms) else None
            if nxt is not None and nxt[0] == "=":
                b.pending_args.append(BlockArgument(text, None, atom[2], atom[3]))
            elif nxt is not None and nxt[0] == ":" and b.def_mode and b.def_mode[-1]:
                arg = BlockArgument(text, None, atom[2], atom[3])
                if i + 2 < len(atoms) and atoms[i + 2][0] == "T":
                    arg.type = atoms[i + 2][1]
                b.pending_args.append(arg)
            else:
                op.operands.append(text)
                op.operand_depths.append(b.depth)
                op.operand_positions.append((atom[2], atom[3]))
        elif kind == "X":
            if b.depth == 0:
                op.literals.append(text)
            elif b.depth == 1:
                op.index_literals.append(text)
        elif kind == "L":
            if b.def_mode and b.def_mode[-1] and b.pending_args:
                b.pending_args[-1].loc_name = text  # resolved later
            elif b.depth == 0:
                op.loc = text
        elif kind == "A" or kind == "P":
            op.attributes.update(parse_dictionary(text))
        elif kind == "I":
            if b.depth == 0:
                op.keywords.append(text)
            if (after_close or (i > 0 and atoms[i - 1][2] != atom[2])) and _LABEL.match(text):
                b.pending_label = text
                # With an argument list (`partition0(%a: T)`), the header starts after its `)`;
                # without one (`partition0 num_warps(8)`), right after the label.
                has_args = i + 1 < len(atoms) and atoms[i + 1][0] == "(" and atoms[i + 1][4] == atom[5]
                b.label_end = 0 if has_args else atom[5]
            elif text in ("public", "private", "nested") and op.name in FUNCTION_OPS:
                op.attributes.setdefault("sym_visibility", f'"{text}"')
        elif kind == "@":
            if "sym_name" not in op.attributes and (op.name in FUNCTION_OPS or op.name == "builtin.module"):
                op.attributes["sym_name"] = f'"{text[1:]}"'
            else:
                op.operands.append(text)
                op.operand_depths.append(b.depth)
                op.operand_positions.append((atom[2], atom[3]))
        elif kind == "C":
            op.successors.append(text)
        b.header.append((kind, text, b.depth))
        b.last_kind = kind
        return i + 1

    def _is_region(self, i: int, b: _Builder) -> bool:
        atoms = self.atoms
        here = atoms[i]
        if i + 1 >= len(atoms):
            return True
        nxt = atoms[i + 1]
        if nxt[2] != here[2] or nxt[0] == "B":
            return True
        if nxt[0] == "}":
            return b.last_kind in ("I", ")", "(") and b.pending_label is not None or b.last_kind == "("
        return False

    def _matching_brace(self, i: int) -> int:
        atoms = self.atoms
        depth = 0
        for j in range(i, len(atoms)):
            k = atoms[j][0]
            if k == "{":
                depth += 1
            elif k == "}":
                depth -= 1
                if depth == 0:
                    return j
        atom = atoms[i]
        raise IRSyntaxError("unbalanced '{' in attribute dictionary", atom[2], atom[3])

    # -- regions and blocks -------------------------------------------------------------------
    def _open_region(self, b: _Builder, atom: Atom, i: int) -> None:
        op = b.op
        region = Region(label=b.pending_label, line=atom[2], parent=op, index=len(op.regions))
        if b.pending_label is not None:
            start = b.label_end or atom[4]
            region.header = self.source[start : atom[4]].decode("utf-8", "replace").strip()
            if region.header.startswith(b.pending_label):
                region.header = region.header[len(b.pending_label) :].strip()
        op.regions.append(region)
        block = Block(region=region)
        for idx, arg in enumerate(b.pending_args):
            arg.block = block
            arg.index = idx
        block.arguments = b.pending_args
        b.pending_args = []
        b.pending_label = None
        b.label_end = 0
        region.blocks.append(block)
        self.frames.append(_Frame(region, block, b, atom))

    def _close_region(self, i: int) -> int:
        atom = self.atoms[i]
        if len(self.frames) == 1:
            if self.misnested is not None:
                opened, closed = self.misnested
                self._raise_cause_within(opened, closed)
                raise IRSyntaxError(
                    f"unbalanced '}}': this one closes the region opened at line {opened[2]}, which is indented "
                    f"differently, so every later '}}' closes one region too many", closed[2], closed[3])
            raise IRSyntaxError("unbalanced '}': no region is open here", atom[2], atom[3])
        frame = self.frames.pop()
        if self.misnested is None and frame.open_atom is not None:
            if self._indent(frame.open_atom) != self._indent(atom):
                self.misnested = (frame.open_atom, atom)
        self._finish(frame)
        region = frame.region
        assert region is not None
        region.end_line = atom[2]
        # An empty entry block that was never written (e.g. `{}` or a region starting with a
        # label) does not count as a block.
        if len(region.blocks) > 1 and not region.blocks[0].operations and not region.blocks[0].arguments:
            region.blocks.pop(0)
        parent = self.frames[-1]
        parent.builder = frame.parent_builder
        if parent.builder is not None:
            parent.builder.after_close = True
            parent.builder.last_kind = "}"
            parent.builder.op.end_line = atom[2]
            parent.builder.op.end_byte = atom[5]
        return i + 1

    def _raise_cause_within(self, opened: Atom, closed: Atom) -> None:
        """A syntax error the reader recovered from inside the misnested region (`{{`, a stray
        token) is why the braces stopped matching: report it, where it is, as the error."""
        for d in self.diagnostics:
            if (opened[2], opened[3]) < (d.line, d.column) < (closed[2], closed[3]):
                raise IRSyntaxError(f"{d.message}, and the region braces do not balance after it", d.line, d.column)

    def _indent(self, atom: Atom) -> int:
        """Columns of leading whitespace on the line of `atom`."""
        src = self.source
        start = src.rfind(b"\n", 0, atom[4]) + 1
        k = start
        while k < atom[4] and src[k] in (0x20, 0x09):
            k += 1
        return k - start

    def _new_block(self, frame: _Frame, atom: Atom) -> None:
        region = frame.region
        if region is None:
            self.diagnostics.append(Diagnostic("warning", "block label outside a region", atom[2], atom[3]))
            return
        label, args = _parse_block_label(atom)
        if len(region.blocks) == 1 and not region.blocks[0].operations and not region.blocks[0].arguments:
            block = region.blocks[0]
            block.label = label
        else:
            block = Block(label=label, region=region)
            region.blocks.append(block)
        for idx, arg in enumerate(args):
            arg.block = block
            arg.index = idx
        block.arguments = args
        frame.block = block

    # -- finishing ----------------------------------------------------------------------------
    def _finish(self, frame: _Frame) -> None:
        b = frame.builder
        if b is None:
            return
        frame.builder = None
        op = b.op
        _assign_types(op, b.header)
        if b.pending_args:
            # Definitions with no region to receive them (malformed); keep them visible as uses.
            op.operands.extend(a.name for a in b.pending_args)
            op.operand_depths.extend(0 for _ in b.pending_args)
            op.operand_positions.extend((a.line, a.column) for a in b.pending_args)

    def _alias(self, text: str) -> None:
        name, _, value = text.partition("=")
        self.aliases[name.strip()] = value.strip()

    def _resolve_locations(self, parsed: ParsedIR) -> None:
        aliases = self.aliases
        resolved: dict[str, str | None] = {}  # most ops share a few hundred `loc(#locN)` texts

        def name_of(text: str) -> str | None:
            if text not in resolved:
                resolved[text] = resolve_loc_name(text, aliases)
            return resolved[text]

        for op in parsed.walk():
            if op.loc:
                op.loc_name = name_of(op.loc)
            for region in op.regions:
                for block in region.blocks:
                    for arg in block.arguments:
                        if arg.loc_name and arg.loc_name.startswith("loc("):
                            arg.loc_name = name_of(arg.loc_name)
