"""Refresh `known_misses` in evals/config.yaml from a deterministic eval run.

    python evals/gen/known_misses.py            # show what would change
    python evals/gen/known_misses.py --write    # rewrite the list

Misses that are already listed keep their reason; misses that are gone are dropped; new misses
get a reason starting with "TODO: judge", which tests/test_evals.py refuses. A person must read
each new one against its case (mutation notes, the IR at the site, what check reported) and
write whether it is a rule miss, a false finding, a kind mismatch, or a wrong expectation (which
is then fixed in the mutation engine, not listed here).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(REPO / "tools"))
CONFIG = REPO / "evals" / "config.yaml"
TODO = "TODO: judge"


def main() -> None:
    from barrier_viz.evals.cases import discover
    from barrier_viz.evals.runner import run_deterministic

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    args = ap.parse_args()
    text = CONFIG.read_text()
    head = text.split("known_misses:")[0]
    old = (yaml.safe_load(text) or {}).get("known_misses") or {}
    scores = run_deterministic(discover([REPO / "evals" / "cases"]), jobs=args.jobs)
    new: dict[str, str] = {}
    for s in scores:
        if s.passed:
            continue
        name = s.case.name
        if name in old:
            new[name] = old[name]
            continue
        got = sorted({f"{r.kind}({r.severity})" for r in s.reported if r.severity != "info"}) or ["nothing"]
        what = [f"missed {e['kind']}" for e in s.missed] + [f"false {r.kind}" for _, r in s.false]
        new[name] = f"{TODO}: {', '.join(what)}; reported {', '.join(got)}" + (f"; crashed: {s.error}" if s.error else "")
    for name in sorted(set(old) - set(new)):
        print(f"fixed: {name}")
    for name in sorted(set(new) - set(old)):
        print(f"new:   {name}: {new[name]}")
    if args.write:
        CONFIG.write_text(head + yaml.safe_dump({"known_misses": new}, sort_keys=True, width=100))
        print(f"wrote {len(new)} known misses to {CONFIG.relative_to(REPO)}")


if __name__ == "__main__":
    main()
