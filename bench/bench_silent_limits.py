"""Count the units where `check` says nothing although it judged nothing (issue 21).

    nice -n 10 .venv/bin/python bench/bench_silent_limits.py [--corpus DIR ...] [--json OUT]

For every unit with a function of every `.ttgir`/`.mlir`/`.gz` file under the given directories
(default: `../shared/corpus`, which holds `families/`), runs `check` as the CLI does and sorts the
unit into one row:

* `silent_limit`: no error, some simulation run or input point ended in `limit` (a hang it
  could not turn into a verdict), and the headline did not say "not judged";
* `silent_bound`: no error, no limit, but some run or point stopped at its step or time bound
  (`bound_reached`; input points have a step budget by design) and no "not judged";
* `not_judged`: the headline says so (`summary.verdict == "not judged"`);
* `findings` / `clean` / `warnings`: the rest, by the worst severity reported.

It prints the counts per top-level folder and the silent files, so a change can be measured
before and after (the issue's acceptance: no silent unit). Works on trees without the
`verdict` field (older commits): there every limited unit without an error is silent.
No assertion: it reports. Each row also carries the unit's error kinds (`error_kinds`), so one
sweep measures precision too.

Measured (2 December 2026, `../shared/corpus` all folders + `evals/gen/out_dd`: 372 files, 1,259 units):

* before issue 21's verdict work (cc58a5f, main before the merge of i21b; the run reached 320 of
  the 372 files: out_dd, families, gpu, lit and 88 of real's 140): 4 silent limits, hangs the
  model could not relate: the three TLX HSTU attention kernels of out_dd (`_attn_fwd_pipeline`
  x2, `_attn_fwd_single_q`) and the TLX 2-CTA matmul of families (`matmul_kernel_tlx_ws ...
  cga2x1x1`); 7 silent bounds (input points of clean AutoWS/TLX attention kernels at their step
  budget, listed by design). No file of real had a limit in any run.
* after it (d6f052c, all units): 0 silent limits; those 4 say `not judged` with the reason (none
  became judged: each stays a hang the model cannot relate); clean 1136, findings 68,
  warnings 44, not_judged 4, silent_bound 7.
* branch i21n (values named as the IR computes them, race.predicated_wait, one cause one
  finding): every unit in the same row as d6f052c, 0 silent limits; no unit has a
  race.predicated_wait, deadlock.predicate_mismatch or phase.counter_restart error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT = Path(os.environ.get("BARRIER_VIZ_CORPUS", HERE.parent.parent / "shared" / "corpus"))
SUFFIXES = (".ttgir", ".mlir", ".gz", ".llir", ".txt")


def _stopped(doc) -> list[str]:
    """Every run or input point that ended without a conclusion, as `where: outcome (reason)`."""
    out = []
    sim = doc.simulation or {}
    for r in sim.get("runs") or []:
        if r["outcome"] in ("limit", "bound_reached"):
            out.append(f"{r['policy']}: {r['outcome']} ({(r.get('reason') or '')[:120]})")
    for p in (doc.input_points or {}).get("points") or []:
        if p["outcome"] in ("limit", "bound_reached"):
            out.append(f"point {p['input']}: {p['outcome']}")
    return out


def classify(path: Path) -> list[dict]:
    from barrier_viz.commands.check_cmd import check_document
    from barrier_viz.inputs import open_input
    from barrier_viz.session import select

    rows = []
    try:
        units = len(open_input(str(path)).units)
    except Exception as exc:  # noqa: BLE001 - a file the CLI rejects is not a row
        return [{"file": str(path), "unit": 0, "row": "input_error", "why": str(exc)[:100]}]
    for u in range(units):
        try:
            sel = select(str(path), unit=str(u) if units > 1 else None, require_function=True)
        except Exception:  # noqa: BLE001 - invalid units (lit invalid.mlir) are the CLI's exit 2
            continue
        if sel.function is None:
            continue
        doc, _ = check_document(sel)
        stopped = _stopped(doc)
        verdict = getattr(doc.summary, "verdict", None)
        rows.append({"file": str(path), "unit": u, "stopped": stopped, "verdict": verdict,
                     "errors": doc.summary.errors, "warnings": doc.summary.warnings,
                     "error_kinds": sorted({getattr(f.kind, "value", f.kind) for f in doc.findings
                                             if getattr(f.severity, "value", f.severity) == "error"})})
        rows[-1]["row"] = row_of(rows[-1])
    return rows


def row_of(r: dict) -> str:
    if r.get("row") == "input_error":
        return "input_error"
    if r["errors"]:
        return "findings"
    if r["verdict"] == "not judged":
        return "not_judged"
    if any(": limit" in s for s in r["stopped"]):
        return "silent_limit"
    if r["stopped"]:
        return "silent_bound"
    return "clean" if not r["warnings"] else "warnings"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", action="append", type=Path, help="directory to scan (repeatable)")
    ap.add_argument("--json", type=Path, help="write every row here")
    ap.add_argument("--rows", type=Path, help="summarize rows an earlier run wrote with --json (no checking)")
    args = ap.parse_args()
    roots = [r.resolve() for r in (args.corpus or [DEFAULT])]
    rows: list[dict] = json.loads(args.rows.read_text()) if args.rows else []
    for r in rows:
        r["row"] = row_of(r)
    for root in roots if not args.rows else []:
        files = sorted(p.resolve() for p in root.rglob("*") if p.is_file() and p.name.endswith(SUFFIXES)
                       and "manifest" not in p.name)
        for f in files:
            rows += classify(f)
            for r in rows[-1:]:
                print(f"{r['row']:>11}  {f}  {'; '.join(r.get('stopped') or [])[:160]}", file=sys.stderr, flush=True)
    by_dir: dict[str, Counter] = {}
    for r in rows:
        top = Path(r["file"]).parent.name
        by_dir.setdefault(top, Counter())[r["row"]] += 1
    total = Counter(r["row"] for r in rows)
    print("units by row (silent_limit: a limit run with no error and no 'not judged'):")
    for top, c in sorted(by_dir.items()):
        print(f"  {top:<12} " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())))
    print(f"  {'total':<12} " + ", ".join(f"{k} {v}" for k, v in sorted(total.items())))
    for r in rows:
        if r["row"] == "silent_limit":
            print(f"silent: {r['file']} unit {r['unit']}: {'; '.join(r['stopped'])[:200]}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
