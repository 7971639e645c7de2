"""Does `check` report every error race and deadlock `explore` finds, and does severity follow outcome?

    .venv/bin/python bench/bench_check_explore.py [--corpus DIR] [--evals DIR] [--timeout S] [--limit N]
                                                  [--match TEXT]... [--save OUT.json]
    .venv/bin/python bench/bench_check_explore.py --recorded DIR [--save OUT.json]

Issue 22's acceptance, over every corpus file (lit/, real/, gpu/, families/) and every eval case:

* no unit where `explore --timeout S` reports an error race (`race.*`) or deadlock (`deadlock.*`)
  that `check` does not report, within `check`'s own bound: the schedules it ran and the launch
  it ran them at (`simulation.races` of its JSON). An `explore` finding seen only on a schedule
  beyond that bound (a starved partition, a random schedule) or at another launch is counted
  apart, as "beyond check's stated bound": `check`'s output says where it stopped;
* no finding of `check` whose outcome is a hang or wrong results has severity info.

Run it once, niced (`nice -n 10`): it runs `explore` for up to S seconds per unit (its step
budget decides what is explored; S is the wall-clock backstop, and a unit it cuts says "not
judged within time"). `--recorded DIR` judges the records of `scripts/record_outputs.py`
instead (no simulation): the candidates to re-run live with `--match`. No assertion:
it reports counts and lists every disagreement. `tests/test_check_explore.py` runs the same
comparison (`compare`) on a CI-sized sample.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_CORPUS = Path(os.environ.get("BARRIER_VIZ_CORPUS", HERE.parent.parent / "shared" / "corpus"))
DEFAULT_EVALS = HERE.parent / "evals" / "cases"
SEVERE = ("hang", "wrong results", "hang or wrong results, depending on timing")


def info_with_a_severe_outcome(findings: list[dict]) -> list[dict]:
    """Findings that break "severity follows outcome": an info whose outcome is a hang or wrong results."""
    return [f for f in findings if f["severity"] == "info" and f["outcome"] in SEVERE]


def _verdict(f: dict) -> bool:
    return f["severity"] == "error" and (f["kind"].startswith("race.") or f["kind"].startswith("deadlock."))


def _schedule(f: dict) -> str | None:
    ev = f.get("evidence") or {}
    return ev.get("schedule") or ev.get("policy") or (ev.get("witness") or {}).get("policy")


def _matched(e: dict, check_findings: list[dict]) -> bool:
    """Does `check` report `explore`'s finding `e`? A happens-before race: an error race on (at
    least) the same lines. A deadlock, or a race drawn from one (its witness: a producer that
    overran its consumer): an error of a hang kind, or any error on one of its lines (`check`
    may name the cause: a missing acquire, bytes that never land, and attaches its witness to
    the static finding that names it)."""
    lines = set(e["lines"])
    errors = [c for c in check_findings if c["severity"] == "error"]
    if e["kind"].startswith("race.") and not (e.get("evidence") or {}).get("blocked"):
        return any(c["kind"].startswith("race.") and lines <= set(c["lines"]) for c in errors)
    return any(c["kind"].startswith("deadlock.") or c["outcome"] == "hang" or lines & set(c["lines"]) for c in errors)


def compare(path: Path, unit: str | None = None, timeout: float = 10.0, func: str | None = None) -> dict:
    """`check` and `explore` on one unit: explore's error verdicts that check misses (within its
    bound, and beyond it), and check's infos with a severe outcome."""
    from barrier_viz.commands.check_cmd import check_document
    from barrier_viz.commands.explore_cmd import explore_document
    from barrier_viz.session import select

    sel = select(str(path), unit=unit, func=func, require_function=True)
    t0 = time.process_time()
    cdoc, _ = check_document(sel)
    check_s = time.process_time() - t0
    cdict = json.loads(cdoc.model_dump_json(by_alias=True))
    edoc = explore_document(select(str(path), unit=unit, func=func, require_function=True), timeout=timeout)
    edict = json.loads(edoc.model_dump_json(by_alias=True))
    return {**judge(cdict, edict), "check_errors": cdoc.summary.errors, "check_cpu_s": round(check_s, 3)}


def judge(cdict: dict, edict: dict) -> dict:
    """The comparison itself, on the two JSON documents (`check --format json` or `report
    --format json`, and `explore --format json`): so recorded outputs can be judged too."""
    bound = (cdict.get("simulation") or {}).get("races") or {}
    same_launch = (bound.get("int_args") == edict["bounds"].get("int_args")
                   and {str(k): v for k, v in (bound.get("arg_values") or {}).items()}
                   == {str(k): v for k, v in (edict["bounds"].get("arg_values") or {}).items()})
    missed, beyond = [], []
    for e in edict["findings"]:
        if not _verdict(e) or _matched(e, cdict["findings"]):
            continue
        within = same_launch and _schedule(e) in (bound.get("schedules") or [])
        (missed if within else beyond).append({"kind": e["kind"], "lines": e["lines"], "schedule": _schedule(e),
                                               "message": e["message"][:300]})
    return {"missed": missed, "beyond": beyond, "bound_stated": bool(bound),
            "severity_breaks": [{"kind": f["kind"], "lines": f["lines"], "outcome": f["outcome"]}
                                for f in info_with_a_severe_outcome(cdict["findings"])],
            "explore_result": edict["result"], "explore_reason": edict.get("reason", "")}


def targets(corpus: Path, evals: Path) -> list[tuple[Path, str | None, str | None]]:
    """(file, unit, function) triples: every corpus file (every unit with a function of a lit file; of a
    compiler dump log, the unit a user gets by default) and every eval case (the unit and
    function its expected.yaml selects). Families, GPU kernels and eval cases first: the kernels
    with a barrier program."""
    from barrier_viz.evals.cases import discover
    from barrier_viz.inputs import open_input

    out: list[tuple[Path, str | None, str | None]] = []
    for sub in ("families", "gpu"):
        out += [(p, None, None) for p in sorted((corpus / sub).rglob("*")) if p.is_file() and p.suffix in (".ttgir", ".mlir")]
    out += [(c.input, c.unit, c.func) for c in discover([evals])]
    for sub in ("real", "lit"):
        for p in sorted(p for p in (corpus / sub).rglob("*") if p.is_file() and p.suffix != ".json"):
            try:
                units = open_input(str(p)).units
            except Exception:  # noqa: BLE001 - unreadable input is the CLI's one-line error, not this script's
                continue
            if len(units) == 1 or ".txt" in p.suffixes:
                out.append((p, None, None))  # a dump log: its default unit
            else:
                out += [(p, str(i), None) for i, u in enumerate(units) if u.functions]
    return out


def _stdout_json(record: Path) -> dict | None:
    text = record.read_text()
    try:
        return json.loads(text[text.index("--- stdout\n") + 11:text.rindex("--- stderr")])
    except ValueError:
        return None  # a record of an input the CLI rejects (exit 2): nothing to compare


def recorded(directory: Path) -> dict[str, dict]:
    """`judge` over the records of `scripts/record_outputs.py` (every `explore` record against the
    `report --format json` record of the same unit): finds the candidate disagreements of the
    whole corpus at no simulation cost; re-run those live (`--match`), since records may come
    from another tree or another `--timeout`."""
    rows = {}
    for rec in sorted(directory.rglob("*explore")):
        edict, cdict = _stdout_json(rec), _stdout_json(rec.with_name(rec.name.replace("explore", "report")))
        if edict is None or cdict is None or "findings" not in cdict or "bounds" not in edict:
            continue
        rows[str(rec.relative_to(directory))] = judge(cdict, edict)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--evals", type=Path, default=DEFAULT_EVALS)
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--limit", type=int, default=0, help="only the first N units (0: all)")
    ap.add_argument("--match", action="append", default=[],
                    help="only units whose path contains this text (repeatable: any of them)")
    ap.add_argument("--save", type=Path)
    ap.add_argument("--recorded", type=Path, help="judge the records of scripts/record_outputs.py in this folder "
                    "instead of running anything (candidates to re-run live)")
    args = ap.parse_args()
    if args.recorded:
        rows = recorded(args.recorded)
        for key, r in rows.items():
            for m in r["missed"] + r["beyond"]:
                print(f"{'MISSED' if m in r['missed'] else 'BEYOND'} {key}: {m['kind']} lines {m['lines']} ({m['schedule']})")
        print(f"{len(rows)} records judged; missed within check's bound: {sum(bool(r['missed']) for r in rows.values())}; "
              f"only beyond it: {sum(bool(r['beyond']) and not r['missed'] for r in rows.values())}; "
              f"info with a severe outcome: {sum(bool(r['severity_breaks']) for r in rows.values())}")
        if args.save:
            args.save.write_text(json.dumps(rows, indent=1, sort_keys=True))
        return
    todo = targets(args.corpus, args.evals)
    if args.match:
        todo = [t for t in todo if any(m in str(t[0]) for m in args.match)]
    if args.limit:
        todo = todo[:args.limit]
    print(f"{len(todo)} units; explore --timeout {args.timeout:g}; load average {os.getloadavg()[0]:.1f}", flush=True)
    rows, started = {}, time.time()
    for path, unit, func in todo:
        key = f"{path}" + (f"#{unit}" if unit is not None else "") + (f"@{func}" if func else "")
        try:
            rows[key] = compare(path, unit, args.timeout, func)
        except Exception as exc:  # noqa: BLE001 - an input the CLI rejects (exit 2) is not a disagreement
            rows[key] = {"skipped": f"{type(exc).__name__}: {str(exc)[:200]}"}
            continue
        r = rows[key]
        if args.save and len(rows) % 25 == 0:
            args.save.write_text(json.dumps(rows, indent=1, sort_keys=True))  # a partial run still reports
        for m in r["missed"]:
            print(f"MISSED {key}: {m['kind']} lines {m['lines']} ({m['schedule']})", flush=True)
        for s in r["severity_breaks"]:
            print(f"INFO-WITH-SEVERE-OUTCOME {key}: {s}", flush=True)
    done = [r for r in rows.values() if "skipped" not in r]
    print(f"\n{len(done)} units compared ({len(rows) - len(done)} skipped: the CLI rejects them) in "
          f"{time.time() - started:.0f} s")
    print(f"units where explore reports an error race/deadlock check does not, within check's bound: "
          f"{sum(bool(r['missed']) for r in done)}")
    print(f"units with such a finding only beyond check's stated bound (other schedules or launch): "
          f"{sum(bool(r['beyond']) and not r['missed'] for r in done)}")
    print(f"units with an info finding whose outcome is a hang or wrong results: "
          f"{sum(bool(r['severity_breaks']) for r in done)}")
    if args.save:
        args.save.write_text(json.dumps(rows, indent=1, sort_keys=True))


if __name__ == "__main__":
    sys.exit(main())
