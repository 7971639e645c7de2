"""Count what `report` leaves open over the families corpus (issue 23's acceptance counts).

    .venv/bin/python bench/bench_report_facts.py [DIR_OR_FILE ...] [--json OUT] [--quiet]

Default: every file under ../shared/corpus/families. For each file it builds the same `report`
the CLI prints (facts and `check`'s verdict) and prints, summed over the files and then per file:

* expect-byte checks whose status is `unknown` (with the share of all checks, and why each is);
* TMA copies no `barrier_expect` covers (`uncovered`);
* buffer and barrier operands the tracer could not follow to an allocation (`unresolved`);
* coverage ✗ rows (packed TMEM rows not ok) on kernels `check` calls clean (no error, no warning);
* partitions whose role is `other` although they hold barrier or memory operations;
* graph ends (an arrive with no wait, a wait with no arrive) left unmatched.

Targets (issue 23): unknown <= 1% each saying why; 0 uncovered; 0 unresolved or each a named
limit; 0 ✗ rows on clean kernels; 0 `other` roles with barrier/memory ops; unmatched ends only
where true. No assertion: it reports (the corpus test pins the ✗-row rule).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAMILIES = Path(os.environ.get("BARRIER_VIZ_CORPUS", ROOT.parent / "shared" / "corpus")) / "families"
COUNTS = ("expects", "unknown", "uncovered", "unresolved", "x_rows_on_clean", "other_roles", "unmatched")


def _files(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths or [str(FAMILIES)]):
        if p.is_dir():
            out += sorted(f for f in p.rglob("*") if f.is_file() and f.suffix in (".ttgir", ".mlir", ".gz", ".txt"))
        elif p.is_file():
            out.append(p)
    return out


def _barrier_or_memory_ops(sel, partition: str) -> list[str]:
    """Names of the ops of `partition` that use a barrier or a memdesc (shared memory, TMEM)."""
    from barrier_viz.facts.barriers import barrier_operands
    from barrier_viz.facts.partitions import PartitionMap, module_warps

    ops = list(sel.operations())
    pm = PartitionMap(ops, module_warps(ops))
    part = next((p for p in pm.partitions if p.name == partition), None)
    body = list(pm.body(part)) if part is not None else []
    return sorted({op.name for op in body
                   if barrier_operands(op) or any("memdesc" in t for t in op.types + op.result_types)})


def file_counts(path: Path) -> dict:
    """The open facts of one file's first function (what `report FILE` shows)."""
    from barrier_viz.commands.report_cmd import Report
    from barrier_viz.session import select

    sel = select(str(path), require_function=True)
    rep = Report(sel)
    doc = rep.document()
    buf, bars, part, graph, cov = doc.buffers, doc.barriers, doc.partitions, doc.graph, doc.coverage
    clean = doc.summary["errors"] == 0 and doc.summary["warnings"] == 0
    x_rows = [f"line {r['line']} {r['label']}: {r['status']}" for t in cov["packed_tmem"] for r in t["rows"]
              if not r["ok"]]
    unknown = [f"line {e['line']} {(e['barrier'] or {}).get('name')}: declared {e['declared']}, delivered "
               f"{e['delivered']}" + (f" ({e['reason']})" if e.get("reason") else "")
               for e in buf["expects"] if e["status"] == "unknown"]
    unresolved = [f"line {u['line']} {u['op']} {u['operand']}: {u['reason']}"
                  for u in buf["unresolved"] + bars["unresolved"]]
    other = [f"{p['name']} ({', '.join(ops)})" for p in part["partitions"]
             if p["role"] == "other" and (ops := _barrier_or_memory_ops(sel, p["name"]))]
    return {
        "file": str(path),
        "clean": clean,
        "findings": sorted(f"{f.severity.value} {f.kind} {','.join(map(str, f.lines))}" for f in rep.findings),
        "expects": len(buf["expects"]),
        "unknown": unknown,
        "uncovered": [f"line {c['line']} {c.get('member')}" for c in buf["uncovered_copies"]],
        "unresolved": unresolved,
        "x_rows_on_clean": x_rows if clean else [],
        "other_roles": other,
        "unmatched": [json.dumps(u, sort_keys=True)[:160] for u in graph["unmatched"]],
    }


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="*", help="files or folders (default: the families corpus)")
    ap.add_argument("--json", help="also write every file's counts and items to this file")
    ap.add_argument("--quiet", action="store_true", help="totals only")
    args = ap.parse_args(argv)
    files = _files(args.paths)
    if not files:
        print(f"no input under {args.paths or FAMILIES}", file=sys.stderr)
        return 2
    rows = []
    for f in files:
        try:
            rows.append(file_counts(f))
        except Exception as e:  # noqa: BLE001 - a bench reports a file it cannot read, it does not stop
            rows.append({"file": str(f), "error": f"{type(e).__name__}: {e}"})
    ok = [r for r in rows if "error" not in r]
    total = {k: sum(r[k] if isinstance(r[k], int) else len(r[k]) for r in ok) for k in COUNTS}
    share = 100.0 * total["unknown"] / total["expects"] if total["expects"] else 0.0
    print(f"{len(files)} file(s), {len(rows) - len(ok)} unreadable, {sum(r['clean'] for r in ok)} clean per check")
    print(f"expect-byte checks unknown: {total['unknown']} of {total['expects']} ({share:.1f}%)")
    print(f"uncovered TMA copies:       {total['uncovered']}")
    print(f"unresolved operands:        {total['unresolved']}")
    print(f"coverage ✗ rows on clean:   {total['x_rows_on_clean']}")
    print(f"roles `other` with ops:     {total['other_roles']}")
    print(f"unmatched graph ends:       {total['unmatched']}")
    if not args.quiet:
        for r in rows:
            if "error" in r:
                print(f"\n{r['file']}: {r['error']}")
                continue
            items = [(k, x) for k in COUNTS[1:] for x in r[k]]
            if items:
                print(f"\n{Path(r['file']).name}:")
                for k, x in items:
                    print(f"  {k}: {x}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
