"""The rule registry (analyses/rules/registry.py): every finding kind has one doc, every rule is
registered, `barrier-viz explain` prints the docs, and the prose that names kinds (the skill's
hazards reference, the README's kind list) names only kinds that exist, the README all of them.

Why: a kind added to `findings.Kind` without a doc would leave `explain` (and the agent reading
the hazards reference) without words for a finding users see; a kind named in the docs but
renamed in the code sends a reader looking for a finding that never comes.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

from barrier_viz.analyses import rules as rules_pkg
from barrier_viz.analyses.model.findings import Kind, Severity
from barrier_viz.analyses.model.kinds import Rule
from barrier_viz.analyses.rules.registry import RULES, duplicate_declarations, kind_docs
from barrier_viz.commands.explain_cmd import README_BEGIN, README_END, readme_kind_list
from cli_support import run_cli

ROOT = Path(__file__).resolve().parents[1]
HAZARDS = ROOT / "tools" / "barrier_viz" / "skill" / "reference" / "hazards.md"
README = ROOT / "README.md"
KIND_VALUES = [k.value for k in Kind]
FAMILIES = {k.split(".")[0] for k in KIND_VALUES}
# A backticked `family.name` of a kind's family: a kind, unless it is an IR attribute (below).
CITED = re.compile(r"`((?:" + "|".join(sorted(FAMILIES)) + r")\.[a-z_]+)`")


def test_every_kind_has_exactly_one_doc() -> None:
    docs = kind_docs()
    assert [k for k in KIND_VALUES if k not in docs] == []
    assert duplicate_declarations() == []


@pytest.mark.parametrize("kind", KIND_VALUES)
def test_a_doc_says_what_why_and_shows_an_example(kind: str) -> None:
    d = kind_docs()[kind]
    assert d.summary and "\n" not in d.summary and len(d.summary) <= 100, d.summary
    for part in (d.what, d.why, d.example, d.fix, d.policy):
        assert part.strip(), (kind, part)
    assert d.severities and set(d.severities) <= set(Severity)


def test_every_rule_module_is_registered_once() -> None:
    """A rule module declares `RULE`; forgetting the line in `RULES` would silently drop it
    from `check`."""
    declared = []
    for info in pkgutil.iter_modules(rules_pkg.__path__):
        mod = importlib.import_module(f"{rules_pkg.__name__}.{info.name}")
        if isinstance(getattr(mod, "RULE", None), Rule):
            declared.append(mod.RULE)
    assert sorted(r.name for r in declared) == sorted(r.name for r in RULES)
    assert len({r.name for r in RULES}) == len(RULES)
    assert all(k in Kind for r in RULES for k in r.kinds)


def test_registration_does_not_depend_on_what_was_imported_first() -> None:
    """`check` runs the rules in the registry's written order, whichever entry point imported
    the rule modules first (a fresh interpreter that imports them in reverse gets the same)."""
    code = ("import importlib, pkgutil\n"
            "from barrier_viz.analyses import rules\n"
            "for m in sorted((i.name for i in pkgutil.iter_modules(rules.__path__)), reverse=True):\n"
            "    importlib.import_module('barrier_viz.analyses.rules.' + m)\n"
            "from barrier_viz.analyses.rules.registry import RULES\n"
            "print(','.join(r.name for r in RULES))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT / "tools")}).stdout.strip()
    assert out == ",".join(r.name for r in RULES)


def test_explain_prints_each_kinds_doc() -> None:
    for kind in KIND_VALUES:
        r = run_cli("explain", kind)
        assert r.exit_code == 0, (kind, r.stderr)
        assert r.stdout.startswith(f"# {kind}\n")
        for heading in ("## What it does", "## Why is this bad?", "## Example", "## Severity"):
            assert heading in r.stdout, (kind, heading)
        assert kind_docs()[kind].summary in r.stdout


def test_explain_without_a_kind_lists_every_kind_with_its_summary() -> None:
    r = run_cli("explain")
    assert r.exit_code == 0
    listed = [m[1] for line in r.stdout.splitlines() if (m := re.match(r"^  (\S+)", line))]
    assert listed == KIND_VALUES
    doc = run_cli("explain", "--format", "json").json()
    assert list(doc)[:2] == ["schema", "input"] and doc["schema"] == "barrier-viz/explain/v1"
    assert [k["kind"] for k in doc["kinds"]] == KIND_VALUES


def test_explain_json_of_one_kind_names_the_rules_that_raise_it() -> None:
    doc = run_cli("explain", "race.early_release", "-f", "json").json()
    (k,) = doc["kinds"]
    assert k["rules"] == ["barrier_viz.analyses.rules.early_release"]
    assert k["severities"] == ["error"] and k["what_it_does"] and k["fix"]
    assert json.loads(json.dumps(doc)) == doc


def test_an_unknown_kind_is_one_line_with_close_matches_exit_2() -> None:
    r = run_cli("explain", "race.early_releas")
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "race.early_release" in r.stderr
    assert r.stderr.startswith("barrier-viz: error: explain: unknown finding kind 'race.early_releas'")
    r = run_cli("explain", "nothing.like_it")
    assert r.exit_code == 2 and "`barrier-viz explain` lists every kind" in r.stderr


def _ir_attributes(token: str) -> bool:
    """Is `token` an attribute key in IR the project ships (`buffer.id = 3 : i32`), not a kind?"""
    pattern = re.compile(re.escape(token) + r" = ")
    texts = [p for p in (ROOT / "tests").rglob("*") if p.is_file() and p.suffix in (".py", ".ttgir", ".mlir", ".txt")]
    return any(pattern.search(p.read_text(errors="replace")) for p in texts)


def test_the_hazards_reference_names_only_existing_kinds() -> None:
    cited = set(CITED.findall(HAZARDS.read_text()))
    unknown = sorted(t for t in cited - set(KIND_VALUES) if not _ir_attributes(t))
    assert unknown == [], f"hazards.md names kinds that do not exist: {unknown}"
    assert len(cited & set(KIND_VALUES)) >= 15  # the reference does cite kinds (the pattern matches)


def test_a_misspelled_kind_in_prose_is_caught() -> None:
    """The check above can fail: a kind-shaped name that is no IR attribute is reported."""
    cited = set(CITED.findall("see (`race.early_relase`) and `buffer.id`"))
    assert sorted(t for t in cited - set(KIND_VALUES) if not _ir_attributes(t)) == ["race.early_relase"]


def test_the_readme_lists_every_kind_as_the_registry_does() -> None:
    text = README.read_text()
    block = text[text.index(README_BEGIN):text.index(README_END) + len(README_END)]
    assert block == readme_kind_list(), "README.md's kind list is stale: run scripts/update_kind_list.py"
    assert re.findall(r"^\| `([a-z_.]+)` \|", block, re.M) == KIND_VALUES
