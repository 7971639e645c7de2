"""`inputs`: the units an input holds."""

from __future__ import annotations

from ..inputs import default_unit, open_input
from ..render.console import console, table as make_table
from ..schemas import InputsDoc, InputSummary, UnitInfo


def inputs_document(spec: str) -> InputsDoc:
    found = open_input(spec)
    chosen = default_unit(found.units)
    units = [
        UnitInfo(
            index=u.index,
            kind=u.kind,
            label=u.label,
            path=u.path,
            start_line=u.start_line,
            end_line=u.end_line,
            bytes=u.bytes,
            functions=u.functions,
            flags=u.flags,
            default=u is chosen,
        )
        for u in found.units
    ]
    summary = InputSummary(path=found.display, kind=found.kind, bytes=found.total_bytes, compressed=found.compressed)
    return InputsDoc(input=summary, units=units)


def render_inputs_text(doc: InputsDoc) -> None:
    out = console()
    table = make_table(f"{doc.input.path}: {len(doc.units)} unit(s)",
                       ("#", "kind", "label", "lines", "bytes", "functions", "flags"), keep=("#", "kind", "lines", "bytes"))
    for u in doc.units:
        mark = "*" if u.default else ""
        table.add_row(
            f"{u.index}{mark}",
            u.kind,
            u.label,
            f"{u.start_line}-{u.end_line}",
            str(u.bytes),
            ", ".join("@" + f for f in u.functions[:4]) + (" …" if len(u.functions) > 4 else ""),
            ", ".join(u.flags),
        )
    out.print(table)
    out.print("* = the unit analysed when --unit is not given")
