"""`skill install`: copy the packaged barrier-visualization skill where Claude Code finds it.

The skill's files ship inside the package (`barrier_viz/skill/`), so an installed wheel can
install the skill as well as a checkout can. Claude Code reads project skills from
`./.claude/skills/<name>/` and personal ones from `~/.claude/skills/<name>/`.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from .. import safe_io
from ..errors import InputError

SKILL_NAME = "barrier-visualization"
SKILLS_SUBDIR = Path(".claude") / "skills"
MAX_DESCRIPTION = 1024
REQUIRED_KEYS = ("name", "description")
# Frontmatter keys Claude Code's skill loader understands; anything else is a typo or a key the
# loader would ignore, and is rejected so the skill's metadata means what it says.
KNOWN_KEYS = frozenset({"name", "description", "allowed-tools", "license", "metadata", "model", "version"})
_NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


# The files one install wrote, one relative path a line: the next `--force` replaces or removes
# exactly these (and the packaged ones), and keeps every other file in the folder.
MANIFEST = ".barrier-viz-files"


@dataclass(frozen=True)
class InstallResult:
    target: Path
    files: list[str]
    replaced: bool
    kept: list[str] = field(default_factory=list)  # files in the folder the installer did not write
    removed: list[str] = field(default_factory=list)  # files an earlier install wrote, no longer shipped


def skill_source() -> Traversable:
    return resources.files("barrier_viz").joinpath("skill")


def skill_files(source: Traversable | None = None) -> list[tuple[str, bytes]]:
    """Every file of the skill as (relative posix path, content), sorted for a stable listing."""
    root = source or skill_source()
    found: list[tuple[str, bytes]] = []

    def walk(node: Traversable, prefix: str) -> None:
        for child in node.iterdir():
            if child.name.startswith(".") or child.name == "__pycache__":
                continue
            rel = f"{prefix}{child.name}"
            if child.is_dir():
                walk(child, rel + "/")
            else:
                found.append((rel, child.read_bytes()))

    walk(root, "")
    return sorted(found)


def parse_frontmatter(text: str) -> dict[str, str]:
    """The `key: value` lines between the leading `---` fences of a SKILL.md.

    Only one-line scalars are supported (optionally quoted); that is all the skill uses, and a
    construct this parser does not understand is an error rather than a silent misreading.
    """
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise ValueError("SKILL.md must start with a '---' frontmatter fence")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise ValueError("SKILL.md frontmatter has no closing '---'") from None
    data: dict[str, str] = {}
    for number, line in enumerate(lines[1:end], start=2):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if not sep or key != key.strip() or not key:
            raise ValueError(f"SKILL.md line {number}: expected 'key: value', got {line!r}")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        elif value.startswith(("|", ">", "[", "{")) or not value:
            raise ValueError(f"SKILL.md line {number}: {key} must be a one-line scalar")
        if key in data:
            raise ValueError(f"SKILL.md line {number}: duplicate key {key!r}")
        data[key] = value
    return data


def validate_frontmatter(meta: dict[str, str], folder: str = SKILL_NAME) -> None:
    missing = [k for k in REQUIRED_KEYS if k not in meta]
    if missing:
        raise ValueError(f"SKILL.md frontmatter lacks {', '.join(missing)}")
    unknown = sorted(set(meta) - KNOWN_KEYS)
    if unknown:
        raise ValueError(f"SKILL.md frontmatter has unknown keys: {', '.join(unknown)}")
    if meta["name"] != folder or not _NAME_RE.match(meta["name"]) or len(meta["name"]) > 64:
        raise ValueError(f"SKILL.md name {meta['name']!r} must equal its folder name {folder!r} (lowercase, digits, hyphens)")
    if not meta["description"].strip() or len(meta["description"]) > MAX_DESCRIPTION:
        raise ValueError(f"SKILL.md description must be 1..{MAX_DESCRIPTION} characters, has {len(meta['description'])}")


def install_skill(dest: str | None, *, user: bool, force: bool, cwd: Path | None = None, home: Path | None = None) -> InstallResult:
    """Write the skill into SKILLS_DIR/barrier-visualization/.

    The root is the project (the current directory) or, with `user`, the home directory; the
    skills directory defaults to ROOT/.claude/skills, and `dest` may name another one as long
    as it resolves (symlinks included) inside the root, so a typo or a planted link cannot
    make the installer write elsewhere. An existing install is replaced only with `force`, and
    only if it is a barrier-visualization skill.
    """
    here = cwd or Path.cwd()
    root = ((home or Path.home()) if user else here).resolve()
    # --dest is a path like any other (relative to the current directory); the default is
    # relative to the root.
    skills_dir = (here / Path(dest).expanduser()) if dest else (root / SKILLS_SUBDIR)
    target = skills_dir.resolve() / SKILL_NAME
    resolved_target = target.resolve()
    if not resolved_target.is_relative_to(root):
        scope = "your home directory (--user)" if user else "the current directory"
        raise InputError(str(dest or skills_dir), f"destination {resolved_target} is outside {scope} {root}; refusing to write there")

    files = skill_files()
    by_name = dict(files)
    if "SKILL.md" not in by_name:
        raise InputError(str(skill_source()), "the packaged skill has no SKILL.md")
    validate_frontmatter(parse_frontmatter(by_name["SKILL.md"].decode("utf-8")))

    try:
        return _install(target, files, force)
    except OSError as exc:  # a --dest that is a file, a read-only folder: the user's to fix (exit 2)
        raise InputError(str(target), f"cannot write the skill there: {exc.strerror or exc}") from None


def _install(target: Path, files: list[tuple[str, bytes]], force: bool) -> InstallResult:
    replaced = False
    if target.exists() or target.is_symlink():
        if not force:
            raise InputError(str(target), "the skill is already installed here; rerun with --force to replace it")
        _check_replaceable(target)
        replaced = True

    if not replaced:
        # A fresh install: stage the folder and rename it into place, so a failure leaves nothing.
        staging = target.parent / f".{SKILL_NAME}.tmp-{os.getpid()}"
        if staging.exists():
            shutil.rmtree(staging)
        _write_files(staging, files)
        staging.rename(target)
        return InstallResult(target=target, files=[rel for rel, _ in files], replaced=False)

    # --force: replace what an install owns (the packaged files, and what the last install's
    # manifest lists), file by file; the user's own files in the folder are kept and listed.
    shipped = {rel for rel, _ in files}
    owned = shipped | _manifest(target)
    removed = []
    for rel in sorted(owned - shipped):
        # Only a file the last install wrote, reached without following any link (`safe_io`).
        if safe_io.remove(target, rel):
            removed.append(rel)
    _write_files(target, files)
    kept = sorted(p.relative_to(target).as_posix() for p in target.rglob("*")
                  if (p.is_file() or p.is_symlink()) and p.relative_to(target).as_posix() not in owned
                  and p.name != MANIFEST)
    return InstallResult(target=target, files=sorted(shipped), replaced=True, kept=kept, removed=removed)


def _write_files(folder: Path, files: list[tuple[str, bytes]]) -> None:
    """Write each file through a temporary name and an atomic rename, then the manifest; a
    symlink planted in the skill folder (a file, `reference/`, the manifest) is never written
    through (`safe_io`: a linked folder is refused, a linked file is replaced)."""
    for rel, data in files:
        safe_io.write_atomic(folder, rel, data)
    safe_io.write_atomic(folder, MANIFEST, "".join(f"{rel}\n" for rel, _ in files))


def _manifest(target: Path) -> set[str]:
    """The relative paths the previous install wrote (empty for an install that predates it,
    or whose manifest is a link: it could name anything)."""
    text = safe_io.read_text_nofollow(target / MANIFEST)
    if text is None:
        return set()
    lines = text.splitlines()
    return {line for line in lines if line and not line.startswith("/") and ".." not in Path(line).parts}


def _check_replaceable(target: Path) -> None:
    """--force replaces a previous install of this skill, never an unrelated folder."""
    if target.is_symlink() or not target.is_dir():
        raise InputError(str(target), "exists and is not a skill folder; remove it yourself")
    try:
        meta = parse_frontmatter((target / "SKILL.md").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        meta = {}
    if meta.get("name") != SKILL_NAME:
        raise InputError(str(target), f"exists and is not a {SKILL_NAME} skill; remove it yourself")


def render_install_text(result: InstallResult, *, cwd: Path | None = None) -> str:
    base = (cwd or Path.cwd()).resolve()
    where = result.target.relative_to(base) if result.target.is_relative_to(base) else result.target
    verb = "replaced" if result.replaced else "installed"
    lines = [f"{verb} skill {SKILL_NAME} in {where}/"]
    lines += [f"  wrote {where}/{rel}" for rel in result.files]
    lines += [f"  removed {where}/{rel} (written by an earlier install, no longer shipped)" for rel in result.removed]
    lines += [f"  kept {where}/{rel} (not written by the installer)" for rel in result.kept]
    lines.append("Claude Code picks it up in sessions started from now on; ask it to visualize or audit barriers.")
    return "\n".join(lines)
