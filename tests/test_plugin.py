"""The Claude Code plugin and marketplace (`.claude-plugin/`), and the skill they carry, checked
against the documented layouts and the Agent Skills specification.

Claude Code's layout (code.claude.com plugin and marketplace reference): a plugin is a folder
with `.claude-plugin/plugin.json` (only manifests live there; components sit at the plugin
root), skills in `skills/<name>/SKILL.md` (or folders the manifest's `skills` key names), each
skill's command namespaced `/<plugin>:<skill folder>`; a marketplace is
`.claude-plugin/marketplace.json` with `name`, `owner.name` and `plugins[]` entries of `name`
and `source` (a relative source starts with `./`). The test builds the plugin tree as an
install does (a copy of the plugin's source folder) and discovers its skills the way the loader
does, so a link that only works in this checkout would fail here.
"""

from __future__ import annotations

import json
import re
import shutil
import tomllib
from pathlib import Path

import pytest
import yaml

from barrier_viz.commands.skill_cmd import (
    MAX_COMPATIBILITY,
    MAX_DESCRIPTION,
    MAX_NAME,
    SKILL_NAME,
    SPEC_KEYS,
    parse_frontmatter,
    skill_files,
    validate_frontmatter,
)

REPO = Path(__file__).resolve().parents[1]
KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
PLUGIN_KEYS = {"name", "version", "description", "author", "homepage", "repository", "license", "keywords",
               "commands", "agents", "skills", "hooks", "mcpServers", "outputStyles", "lspServers"}
PATH_KEYS = {"commands", "agents", "skills", "hooks", "outputStyles"}
MARKETPLACE_KEYS = {"name", "owner", "metadata", "plugins", "description", "version"}
ENTRY_KEYS = PLUGIN_KEYS | {"source", "category", "tags", "strict"}
RESERVED = {"claude-code-marketplace", "claude-code-plugins", "claude-plugins-official", "anthropic-marketplace",
            "anthropic-plugins", "agent-skills", "life-sciences"}


def version() -> str:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]


def frontmatter_yaml(text: str) -> dict:
    return yaml.safe_load(text.split("---\n", 2)[1])


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The plugin tree as an install lays it out: a copy of the marketplace entry's source."""
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    (entry,) = market["plugins"]
    source = (REPO / entry["source"]).resolve()
    assert source == REPO or source.is_relative_to(REPO)
    dest = tmp_path_factory.mktemp("plugin") / entry["name"]
    shutil.copytree(source, dest, symlinks=True,
                    ignore=shutil.ignore_patterns(".git", ".venv", "__pycache__", ".pytest_cache", ".hypothesis", "*.egg-info"))
    return dest


def discover_skills(plugin: Path, manifest: dict) -> dict[str, Path]:
    """Skill folders as Claude Code's loader finds them: `skills/` plus the manifest's `skills`
    paths; a path holding SKILL.md is one skill, else each subfolder (or link) holding one."""
    roots = [plugin / "skills"]
    extra = manifest.get("skills", [])
    roots += [plugin / p for p in ([extra] if isinstance(extra, str) else extra)]
    found: dict[str, Path] = {}
    for root in roots:
        if not root.is_dir():
            continue
        if (root / "SKILL.md").is_file():
            found[root.name] = root
            continue
        for child in sorted(root.iterdir()):
            if child.is_dir() and (child / "SKILL.md").is_file():
                found[child.name] = child
    return found


def test_plugin_manifest_follows_the_layout(built: Path) -> None:
    manifest = json.loads((built / ".claude-plugin" / "plugin.json").read_text())
    assert KEBAB.match(manifest["name"])
    assert set(manifest) <= PLUGIN_KEYS, set(manifest) - PLUGIN_KEYS
    assert manifest["version"] == version()
    assert isinstance(manifest["author"], dict) and manifest["author"]["name"]
    assert [p.name for p in (built / ".claude-plugin").iterdir()] and all(
        p.suffix == ".json" and p.is_file() for p in (built / ".claude-plugin").iterdir()), "only manifests in .claude-plugin/"
    for key in PATH_KEYS & set(manifest):
        for path in [manifest[key]] if isinstance(manifest[key], str) else manifest[key]:
            assert path.startswith("./") and (built / path).exists(), (key, path)


def test_marketplace_lists_the_plugin(built: Path) -> None:
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    assert set(market) <= MARKETPLACE_KEYS
    assert KEBAB.match(market["name"]) and market["name"] not in RESERVED
    assert market["owner"]["name"]
    (entry,) = market["plugins"]
    assert set(entry) <= ENTRY_KEYS and {"name", "source"} <= set(entry)
    assert isinstance(entry["source"], str) and entry["source"].startswith("./")
    manifest = json.loads((REPO / entry["source"] / ".claude-plugin" / "plugin.json").read_text())
    assert entry["name"] == manifest["name"] and entry.get("version", version()) == version()


def test_the_installed_plugin_holds_the_skill_under_its_namespace(built: Path) -> None:
    manifest = json.loads((built / ".claude-plugin" / "plugin.json").read_text())
    skills = discover_skills(built, manifest)
    assert list(skills) == [SKILL_NAME]
    assert f"/{manifest['name']}:{SKILL_NAME}" == "/barrier-viz:barrier-visualization"
    folder = skills[SKILL_NAME]
    assert folder.resolve().is_relative_to(built.resolve()), "the skill's link must stay inside the plugin"
    text = (folder / "SKILL.md").read_text(encoding="utf-8")
    validate_frontmatter(parse_frontmatter(text), folder=folder.name)
    assert {rel: data for rel, data in skill_files()} == {
        p.relative_to(folder.resolve()).as_posix(): p.read_bytes()
        for p in folder.resolve().rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    for link in re.findall(r"\]\(([^)#:]+\.md)\)", text):
        assert (folder / link).is_file(), link


def test_frontmatter_meets_the_agent_skills_spec() -> None:
    text = dict(skill_files())["SKILL.md"].decode("utf-8")
    meta = parse_frontmatter(text)
    assert frontmatter_yaml(text) == meta, "a YAML reader sees the same frontmatter (no `: ` or ` #` in a value)"
    assert set(meta) <= SPEC_KEYS
    assert meta["name"] == SKILL_NAME and len(meta["name"]) <= MAX_NAME
    assert len(meta["description"]) <= MAX_DESCRIPTION and len(meta["compatibility"]) <= MAX_COMPATIBILITY
    assert "<" not in meta["description"] and ">" not in meta["description"]
    assert meta["allowed-tools"].split() == ["Bash(barrier-viz", "*)", "Read"] and ":*" not in meta["allowed-tools"]
    description = meta["description"]
    # Where the model decides whether to use the skill: the kernel families, the questions, the inputs.
    for words in ("AutoWS", "TLX", "Gluon", "CTA clusters", "2-CTA MMA", "multicast", "CLC",
                  "hangs", "deadlocks", "races", "non-deterministic", "which barrier", "slot-index", "phase",
                  "diff the synchronization of two IRs", "gate a compiler change", "CI audit",
                  "TTGIR", "lit tests", "MLIR_ENABLE_DUMP", "dump"):
        assert words in description, words


@pytest.mark.parametrize(("text", "problem"), [
    ("---\nname: barrier--viz\ndescription: d\n---\n", "folder name"),
    ("---\nname: -barrier\ndescription: d\n---\n", "folder name"),
    ("---\nname: " + "a" * (MAX_NAME + 1) + "\ndescription: d\n---\n", "folder name"),
    ("---\nname: barrier-visualization\ndescription: d\ncompatibility: " + "x" * (MAX_COMPATIBILITY + 1) + "\n---\n", "compatibility"),
    ("---\nname: barrier-visualization\ndescription: d\nallowed-tools: Bash(barrier-viz:*), Read\n---\n", "allowed-tools"),
    ("---\nname: barrier-visualization\ndescription: d\nallowed-tools: Bash(barrier-viz:*) Read\n---\n", "legacy"),
])
def test_spec_violations_are_caught(text: str, problem: str) -> None:
    meta = parse_frontmatter(text)
    with pytest.raises(ValueError, match=problem):
        validate_frontmatter(meta, folder=meta["name"])


def test_long_reference_files_open_with_a_table_of_contents() -> None:
    long = {rel: data.decode("utf-8") for rel, data in skill_files()
            if rel.startswith("reference/") and data.decode("utf-8").count("\n") > 100}
    assert len(long) >= 7
    for rel, text in long.items():
        lines = text.split("\n")
        title = next(i for i, line in enumerate(lines) if line.startswith("# "))
        assert lines[title + 2] == "Contents:", rel
        entries = []
        for line in lines[title + 4:]:
            if not line.startswith("- ["):
                break
            entries.append(re.match(r"- \[(.+)\]\(#([^)]+)\)$", line).groups())
        level = "## " if any(line.startswith("## ") for line in lines) else "### "
        heads, code = [], False
        for line in lines:
            code ^= line.startswith("```")
            if not code and line.startswith(level):
                heads.append(line[len(level):].strip())
        assert [h for h, _ in entries] == heads, rel
        for heading, anchor in entries:
            assert anchor == "".join(c for c in heading.lower() if c.isalnum() or c in " -_").replace(" ", "-"), (rel, heading)
