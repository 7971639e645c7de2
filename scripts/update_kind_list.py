"""Rewrite the README's list of finding kinds from the rule registry (analyses/rules/registry.py).

    .venv/bin/python scripts/update_kind_list.py            # rewrite the block in README.md
    .venv/bin/python scripts/update_kind_list.py --check    # exit 1 if it is stale

The block sits between two HTML comments (commands/explain_cmd.py: README_BEGIN, README_END);
everything else in the README is written by people. tests/test_registry.py fails when the
committed block differs from the registry: after adding a kind or changing a summary, rerun this.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from barrier_viz.commands.explain_cmd import README_BEGIN, README_END, readme_kind_list  # noqa: E402


def updated(text: str) -> str:
    """`text` (the README) with its kind list replaced by the registry's."""
    start, end = text.index(README_BEGIN), text.index(README_END) + len(README_END)
    return text[:start] + readme_kind_list() + text[end:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if README.md's list is stale")
    args = parser.parse_args()
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    new = updated(text)
    if args.check:
        if new != text:
            print("README.md: the finding-kind list is stale; run scripts/update_kind_list.py", file=sys.stderr)
            return 1
        return 0
    if new != text:
        readme.write_text(new, encoding="utf-8")
        print("README.md: finding-kind list rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
