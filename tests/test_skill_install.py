"""The barrier-visualization skill: its metadata, its files, and `barrier-viz skill install`."""

from __future__ import annotations

import fnmatch
import re
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from barrier_viz.cli import app
from barrier_viz.commands.skill_cmd import (
    ALT_SKILL_NAME,
    KNOWN_KEYS,
    MANIFEST,
    MAX_DESCRIPTION,
    SKILL_NAME,
    parse_frontmatter,
    skill_files,
    validate_frontmatter,
)

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "tools" / "barrier_viz"


def packaged() -> dict[str, bytes]:
    return dict(skill_files())


def skill_md() -> str:
    return packaged()["SKILL.md"].decode("utf-8")


def install(*args: str) -> object:
    return CliRunner().invoke(app, ["skill", "install", *args])


# -- the skill itself ---------------------------------------------------------------------------


def test_frontmatter_names_the_folder_and_stays_within_limits() -> None:
    meta = parse_frontmatter(skill_md())
    assert meta["name"] == SKILL_NAME
    assert 0 < len(meta["description"]) <= MAX_DESCRIPTION
    assert set(meta) <= KNOWN_KEYS
    assert {"name", "description"} <= set(meta)
    validate_frontmatter(meta, folder=SKILL_NAME)
    for word in ("hang", "warp-specialized", "barrier"):
        assert word in meta["description"]


def test_body_is_short_and_every_referenced_file_ships() -> None:
    text = skill_md()
    assert len(text.splitlines()) < 500
    links = re.findall(r"\]\(([^)#:]+\.md)\)", text)
    assert links, "SKILL.md should point to its reference files"
    for link in links:
        assert link in packaged(), f"SKILL.md links to {link}, which the skill does not ship"


def test_repo_root_skill_md_is_the_packaged_one() -> None:
    assert (REPO / "SKILL.md").read_text(encoding="utf-8") == skill_md()


def test_package_data_covers_the_skill_and_the_prompts() -> None:
    patterns = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["barrier_viz"]
    for folder in ("skill", "prompts"):
        files = [p for p in (PACKAGE / folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts]
        assert files
        for path in files:
            rel = path.relative_to(PACKAGE).as_posix()
            assert any(fnmatch.fnmatch(rel, pat) and rel.count("/") == pat.count("/") for pat in patterns), f"{rel} would not be installed"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("name: x\n", "start with"),
        ("---\nname: barrier-visualization\ndescription: d\n", "closing"),
        ("---\nname: barrier-visualization\n---\n", "lacks description"),
        ("---\nname: barrier-visualization\ndescription: d\nwhen-to-use: always\n---\n", "unknown keys"),
        ("---\nname: other-skill\ndescription: d\n---\n", "folder name"),
        ("---\nname: barrier-visualization\ndescription: " + "x" * (MAX_DESCRIPTION + 1) + "\n---\n", "description"),
        ("---\nname: barrier-visualization\ndescription: >\n  folded\n---\n", "one-line"),
    ],
)
def test_frontmatter_problems_are_caught(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        validate_frontmatter(parse_frontmatter(text))


# -- skill install ------------------------------------------------------------------------------


def test_install_into_a_project_writes_every_file_and_lists_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = install()
    assert result.exit_code == 0, result.output
    target = tmp_path / ".claude" / "skills" / SKILL_NAME
    for rel, data in packaged().items():
        assert (target / rel).read_bytes() == data
        assert f"{SKILL_NAME}/{rel}" in result.output
    written = sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file() and p.name != MANIFEST)
    assert written == sorted(packaged())
    assert sorted((target / MANIFEST).read_text().splitlines()) == sorted(packaged())
    assert not list(target.parent.glob(".*tmp*")), "no staging folder left behind"


def test_second_install_needs_force(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert install().exit_code == 0
    target = tmp_path / ".claude" / "skills" / SKILL_NAME
    (target / "SKILL.md").write_text((target / "SKILL.md").read_text() + "local edit\n")
    (target / "stale.md").write_text("from an older version")

    again = install()
    assert again.exit_code == 2
    assert "--force" in again.output
    assert (target / "SKILL.md").read_text().endswith("local edit\n"), "refused install must not touch files"

    forced = install("--force")
    assert forced.exit_code == 0, forced.output
    assert (target / "SKILL.md").read_bytes() == packaged()["SKILL.md"]
    # stale.md was not written by an install: --force keeps it and says so.
    assert (target / "stale.md").read_text() == "from an older version"
    assert f"kept .claude/skills/{SKILL_NAME}/stale.md" in forced.output


def test_force_keeps_user_files_and_removes_only_what_an_install_wrote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert install().exit_code == 0
    target = tmp_path / ".claude" / "skills" / SKILL_NAME
    (target / "my-notes.md").write_text("mine")
    (target / "reference" / "my-kernel.md").write_text("also mine")
    # An earlier version shipped reference/old.md: its install listed it in the manifest.
    (target / "reference" / "old.md").write_text("shipped once")
    with (target / MANIFEST).open("a") as fh:
        fh.write("reference/old.md\n")

    forced = install("--force")
    assert forced.exit_code == 0, forced.output
    assert (target / "my-notes.md").read_text() == "mine"
    assert (target / "reference" / "my-kernel.md").read_text() == "also mine"
    assert not (target / "reference" / "old.md").exists()
    for rel, data in packaged().items():
        assert (target / rel).read_bytes() == data
    out = forced.output
    assert f"kept .claude/skills/{SKILL_NAME}/my-notes.md" in out
    assert f"kept .claude/skills/{SKILL_NAME}/reference/my-kernel.md" in out
    assert f"removed .claude/skills/{SKILL_NAME}/reference/old.md" in out


def test_force_does_not_replace_an_unrelated_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    target = tmp_path / ".claude" / "skills" / SKILL_NAME
    target.mkdir(parents=True)
    (target / "notes.txt").write_text("mine")
    result = install("--force")
    assert result.exit_code == 2
    assert (target / "notes.txt").read_text() == "mine"


def test_dest_inside_the_project_is_accepted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = install("--dest", "tooling/skills")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "tooling" / "skills" / SKILL_NAME / "SKILL.md").is_file()


@pytest.mark.parametrize("dest", ["../elsewhere", "{outside}", "link/skills"])
def test_dest_outside_the_root_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dest: str) -> None:
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (project / "link").symlink_to(outside, target_is_directory=True)
    monkeypatch.chdir(project)
    result = install("--dest", dest.format(outside=outside))
    assert result.exit_code == 2
    assert "outside" in result.output
    assert not any(tmp_path.rglob("SKILL.md"))


def test_user_install_goes_to_the_home_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project)
    assert install("--user").exit_code == 0
    assert (home / ".claude" / "skills" / SKILL_NAME / "SKILL.md").is_file()
    assert not (project / ".claude").exists()
    assert install("--user", "--dest", str(project / "skills")).exit_code == 2


# -- another skill with the same name (Meta's Triton fork ships a `barrier-visualization`) -------

FORK_SKILL = """---
name: barrier-visualization
description: >
  Produce a structured barrier report for AutoWS IR by reading the IR by hand.
---

# Barrier Visualization Report
"""


def fork_checkout(root: Path) -> Path:
    """A checkout that holds its own skill named barrier-visualization, as the fork does."""
    (root / ".git").mkdir(parents=True)
    theirs = root / ".claude" / "skills" / SKILL_NAME
    theirs.mkdir(parents=True)
    (theirs / "SKILL.md").write_text(FORK_SKILL)
    (theirs / "EXAMPLES.md").write_text("theirs")
    return theirs


def test_install_next_to_another_skill_of_the_same_name_uses_a_distinct_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    theirs = fork_checkout(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = install()
    assert result.exit_code == 0, result.output
    assert (theirs / "SKILL.md").read_text() == FORK_SKILL and (theirs / "EXAMPLES.md").read_text() == "theirs"
    ours = tmp_path / ".claude" / "skills" / ALT_SKILL_NAME
    meta = parse_frontmatter((ours / "SKILL.md").read_text())
    validate_frontmatter(meta, folder=ALT_SKILL_NAME)  # the name equals the folder, as the spec requires
    assert meta["description"] == parse_frontmatter(skill_md())["description"]
    out = result.output
    assert f"another skill named {SKILL_NAME} is at .claude/skills/{SKILL_NAME}/" in out
    assert f"installed as {ALT_SKILL_NAME}" in out and f"/barrier-viz:{SKILL_NAME}" in out
    assert f"installed skill {ALT_SKILL_NAME} in .claude/skills/{ALT_SKILL_NAME}/" in out
    # A rerun finds our own install under the distinct name and asks for --force, which replaces ours only.
    assert install().exit_code == 2
    assert install("--force").exit_code == 0
    assert (theirs / "SKILL.md").read_text() == FORK_SKILL


def test_another_skill_elsewhere_in_the_project_is_detected_from_a_subfolder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fork_checkout(tmp_path)
    sub = tmp_path / "python" / "tutorials"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    result = install()
    assert result.exit_code == 0, result.output
    assert (sub / ".claude" / "skills" / ALT_SKILL_NAME / "SKILL.md").is_file()
    assert not (sub / ".claude" / "skills" / SKILL_NAME).exists()


def test_force_never_replaces_another_skill_and_name_picks_the_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    theirs = fork_checkout(tmp_path)
    monkeypatch.chdir(tmp_path)
    refused = install("--name", SKILL_NAME, "--force")
    assert refused.exit_code == 2 and "--name" in refused.output
    assert (theirs / "SKILL.md").read_text() == FORK_SKILL
    named = install("--name", "mbarrier-audit")
    assert named.exit_code == 0, named.output
    assert parse_frontmatter((tmp_path / ".claude" / "skills" / "mbarrier-audit" / "SKILL.md").read_text())["name"] == "mbarrier-audit"
    assert install("--name", "Bad_Name").exit_code == 2
