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
