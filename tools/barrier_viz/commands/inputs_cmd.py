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
            compilation={k: v for k, v in u.meta.items() if k != "no_ttgir" or v} or None,
        )
        for u in found.units
    ]
    summary = InputSummary(path=found.display, kind=found.kind, bytes=found.total_bytes, compressed=found.compressed)
    launches = None
    if found.events:  # a tritonparse trace (from a file or stdin)
        unit_of = {k: u.index for u in found.units for k in u.keys[1:]}
        launches = [{"index": la.index, "trace_line": la.line, "kernel": la.kernel, "hash": la.hash,
                     "unit": unit_of.get(la.hash), "grid": list(la.grid) if la.grid else None, "scalars": la.scalars()}
                    for la in found.launches]
    return InputsDoc(input=summary, units=units, launches=launches)


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
    if doc.launches is not None:
        render_trace_text(doc)


def render_trace_text(doc: InputsDoc) -> None:
    """A trace's compilations (kernel, hash, target, stages, config) and its recorded launches."""
    out = console()
    comp = make_table("compilations", ("#", "kernel", "hash", "target", "stages", "config"), keep=("#",))
    for u in doc.units:
        c = u.compilation or {}
        cfg = ", ".join(f"{k}={v}" for k, v in (c.get("config") or {}).items() if k != "target")
        note = f" ({c['no_ttgir']})" if c.get("no_ttgir") else ""
        comp.add_row(str(u.index), str(c.get("kernel", "?")), str(c.get("hash", ""))[:16], str(c.get("target", "?")),
                     ", ".join(c.get("stages") or []) + note, cfg)
    out.print(comp)
    launches = doc.launches or []
    if not launches:
        out.print("no launches recorded (tritonparse traces launches with enable_trace_launch=True)")
        return
    table = make_table(f"{len(launches)} launch(es): `barrier-viz check TRACE --launch N` simulates one",
                       ("N", "unit", "kernel", "grid", "scalar arguments"), keep=("N", "unit"))
    for la in launches:
        grid = "x".join(map(str, la["grid"])) if la["grid"] else "?"
        scalars = ", ".join(f"{k}={v}" for k, v in la["scalars"].items())
        table.add_row(str(la["index"]), "?" if la["unit"] is None else str(la["unit"]), la["kernel"], grid, scalars)
    out.print(table)


def kernels_document(name: str | None) -> dict:
    """`inputs --kernels [NAME]`: every kernel compile in the Triton cache and dump folders
    (those whose name contains NAME), newest first, with the config its metadata records."""
    from ..adapters.triton_cache import find_entries, roots

    entries = find_entries(name)
    return {"schema": "barrier-viz/kernels/v1", "roots": {k: str(p) for k, p in roots()}, "filter": name,
            "kernels": [{"name": e.name, "hash": e.hash, "root": e.root, "ttgir": str(e.ttgir), "config": e.config,
                         "select": f"--kernel {e.name}@{e.hash[:12]}"} for e in entries]}


def render_kernels_text(doc: dict) -> None:
    out = console()
    where = ", ".join(f"{k} {p}" for k, p in doc["roots"].items())
    table = make_table(f"{len(doc['kernels'])} kernel compile(s) in {where}" + (f" matching {doc['filter']!r}" if doc["filter"] else ""),
                       ("kernel", "select with", "config", "ttgir"), keep=("kernel",))
    for k in doc["kernels"]:
        cfg = ", ".join(f"{a}={'x'.join(map(str, v)) if isinstance(v, list) else v}" for a, v in k["config"].items())
        table.add_row(k["name"], k["select"], cfg or f"({k['root']}: no metadata)", k["ttgir"])
    out.print(table)
    out.print("newest first; `--kernel NAME` takes the newest, `--kernel NAME@HASH` one of them")
