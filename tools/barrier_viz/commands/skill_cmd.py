"""`skill install`: copy the packaged barrier-visualization skill where Claude Code finds it.

The skill's files ship inside the package (`barrier_viz/skill/`), so an installed wheel can
install the skill as well as a checkout can. Claude Code reads project skills from
`./.claude/skills/<name>/` and personal ones from `~/.claude/skills/<name>/`.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field, replace
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from .. import safe_io
from ..errors import InputError

SKILL_NAME = "barrier-visualization"
# The name `skill install` falls back to when another skill called SKILL_NAME is already where
# Claude Code looks (Meta's Triton fork ships its own `barrier-visualization`): two skills with
# one name, and which one wins is not defined.
ALT_SKILL_NAME = "barrier-viz"
SKILLS_SUBDIR = Path(".claude") / "skills"
# The Agent Skills specification's limits (agentskills.io/specification).
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
REQUIRED_KEYS = ("name", "description")
SPEC_KEYS = frozenset({"name", "description", "license", "compatibility", "metadata", "allowed-tools"})
# Keys Claude Code adds to the specification's; anything else is a typo or a key the loader
# would ignore, and is rejected so the skill's metadata means what it says.
CLAUDE_CODE_KEYS = frozenset({"argument-hint", "disable-model-invocation", "user-invocable", "model", "context", "agent", "version"})
KNOWN_KEYS = SPEC_KEYS | CLAUDE_CODE_KEYS
# 1-64 lowercase letters, digits and single hyphens, neither first nor last.
_NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
# One `allowed-tools` entry: a tool name, optionally with a permission rule in parentheses
# (`Bash(barrier-viz *)`); the legacy `Bash(cmd:*)` prefix form is rejected.
_TOOL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(\([^()]+\))?$")


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
    name: str = SKILL_NAME  # the name it was installed under
    others: list[Path] = field(default_factory=list)  # other skills called SKILL_NAME that made us pick `name`


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
    """The Agent Skills specification's rules for the frontmatter (plus Claude Code's extra keys)."""
    missing = [k for k in REQUIRED_KEYS if k not in meta]
    if missing:
        raise ValueError(f"SKILL.md frontmatter lacks {', '.join(missing)}")
    unknown = sorted(set(meta) - KNOWN_KEYS)
    if unknown:
        raise ValueError(f"SKILL.md frontmatter has unknown keys: {', '.join(unknown)}")
    if meta["name"] != folder or not _NAME_RE.match(meta["name"]) or len(meta["name"]) > MAX_NAME:
        raise ValueError(f"SKILL.md name {meta['name']!r} must equal its folder name {folder!r} "
                         f"(1-{MAX_NAME} lowercase letters, digits and single hyphens)")
    if not meta["description"].strip() or len(meta["description"]) > MAX_DESCRIPTION:
        raise ValueError(f"SKILL.md description must be 1..{MAX_DESCRIPTION} characters, has {len(meta['description'])}")
    if "compatibility" in meta and not 0 < len(meta["compatibility"]) <= MAX_COMPATIBILITY:
        raise ValueError(f"SKILL.md compatibility must be 1..{MAX_COMPATIBILITY} characters, has {len(meta['compatibility'])}")
    if "allowed-tools" in meta:
        for entry in _split_tools(meta["allowed-tools"]):
            if not _TOOL_RE.match(entry) or ":*" in entry:
                raise ValueError(f"SKILL.md allowed-tools entry {entry!r}: expected Tool or Tool(rule) separated by spaces, "
                                 "with `cmd *` rather than the legacy `cmd:*`")


def _split_tools(value: str) -> list[str]:
    """Space-separated entries; spaces inside a `Tool(rule)` belong to the rule."""
    entries, depth, current = [], 0, ""
    for ch in value:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == " " and depth == 0:
            if current:
                entries.append(current)
            current = ""
        else:
            current += ch
    if current:
        entries.append(current)
    return entries


def frontmatter_name(text: str) -> str | None:
    """The `name:` of any SKILL.md, ours or not (other skills use YAML this module's parser
    refuses, such as folded descriptions), or None without one."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return None
    for line in lines[1:]:
        if line.strip() == "---":
            return None
        m = re.match(r"^name:\s*['\"]?([^'\"#]+?)['\"]?\s*$", line)
        if m:
            return m.group(1).strip()
    return None


def is_our_install(folder: Path) -> bool:
    """A folder `skill install` wrote: it keeps the manifest (an install older than the manifest
    is recognised by its SKILL.md driving the barrier-viz CLI)."""
    if (folder / MANIFEST).is_file():
        return True
    try:
        return "barrier-viz report" in (folder / "SKILL.md").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False


def other_skills_named(name: str, places: list[Path]) -> list[Path]:
    """The skill folders among `places` that hold another skill called `name` (not one we installed)."""
    found = []
    for folder in places:
        try:
            text = (folder / "SKILL.md").read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if frontmatter_name(text) == name and not is_our_install(folder):
            found.append(folder)
    return list(dict.fromkeys(found))


def project_skill_dirs(cwd: Path) -> list[Path]:
    """`.claude/skills` of the current folder and of every folder above it up to the repository
    root (the folder with `.git`), where Claude Code also finds project skills."""
    out, here = [], cwd.resolve()
    for folder in (here, *here.parents):
        out.append(folder / SKILLS_SUBDIR)
        if (folder / ".git").exists():
            break
    else:
        out = out[:1]
    return out


def renamed(files: list[tuple[str, bytes]], name: str) -> list[tuple[str, bytes]]:
    """The skill's files with SKILL.md's frontmatter `name` set to `name` (it must equal the folder's)."""
    out = []
    for rel, data in files:
        if rel == "SKILL.md":
            text = data.decode("utf-8")
            text = re.sub(r"(?m)^name:.*$", f"name: {name}", text, count=1)
            data = text.encode("utf-8")
        out.append((rel, data))
    return out


def install_skill(dest: str | None, *, user: bool, force: bool, cwd: Path | None = None, home: Path | None = None,
                  name: str | None = None) -> InstallResult:
    """Write the skill into SKILLS_DIR/barrier-visualization/ (or SKILLS_DIR/NAME/).

    When another skill called barrier-visualization is already at the destination or in the
    project's `.claude/skills` (Meta's Triton fork ships one), it is left alone and this one is
    installed as ALT_SKILL_NAME, so both load under distinct names; `name` picks the name instead.

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
    others: list[Path] = []
    if name is None:
        places = [skills_dir / SKILL_NAME] + [d / SKILL_NAME for d in project_skill_dirs(here)]
        others = other_skills_named(SKILL_NAME, places)
        name = ALT_SKILL_NAME if others else SKILL_NAME
    if not _NAME_RE.match(name) or len(name) > MAX_NAME:
        raise InputError(name, f"--name: a skill name is 1-{MAX_NAME} lowercase letters, digits and single hyphens")
    target = skills_dir.resolve() / name
    if target.exists() and not is_our_install(target) and (target / "SKILL.md").exists():
        raise InputError(str(target), f"another skill is installed as {name} there; choose a free name with --name")
    resolved_target = target.resolve()
    if not resolved_target.is_relative_to(root):
        scope = "your home directory (--user)" if user else "the current directory"
        raise InputError(str(dest or skills_dir), f"destination {resolved_target} is outside {scope} {root}; refusing to write there")

    files = renamed(skill_files(), name)
    by_name = dict(files)
    if "SKILL.md" not in by_name:
        raise InputError(str(skill_source()), "the packaged skill has no SKILL.md")
    validate_frontmatter(parse_frontmatter(by_name["SKILL.md"].decode("utf-8")), folder=name)

    try:
        result = _install(target, files, force)
    except OSError as exc:  # a --dest that is a file, a read-only folder: the user's to fix (exit 2)
        raise InputError(str(target), f"cannot write the skill there: {exc.strerror or exc}") from None
    return replace(result, name=name, others=others)


def _install(target: Path, files: list[tuple[str, bytes]], force: bool) -> InstallResult:
    replaced = False
    if target.exists() or target.is_symlink():
        if not force:
            raise InputError(str(target), "the skill is already installed here; rerun with --force to replace it")
        _check_replaceable(target)
        replaced = True

    if not replaced:
        # A fresh install: stage the folder and rename it into place, so a failure leaves nothing.
        staging = target.parent / f".{target.name}.tmp-{os.getpid()}"
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
    if not is_our_install(target):
        raise InputError(str(target), "exists and was not installed by barrier-viz; remove it yourself or choose --name")


def render_install_text(result: InstallResult, *, cwd: Path | None = None) -> str:
    base = (cwd or Path.cwd()).resolve()
    where = result.target.relative_to(base) if result.target.is_relative_to(base) else result.target
    verb = "replaced" if result.replaced else "installed"
    lines = []
    for other in result.others:
        shown = other.relative_to(base) if other.is_relative_to(base) else other
        lines.append(f"another skill named {SKILL_NAME} is at {shown}/ (not installed by barrier-viz; Meta's Triton fork "
                     "ships one): left as it is")
    if result.others:
        lines.append(f"so this one is installed as {result.name}, and Claude Code loads both: ask for /{result.name}; "
                     f"or install the Claude Code plugin instead, which namespaces it as /barrier-viz:{SKILL_NAME} (README)")
    lines.append(f"{verb} skill {result.name} in {where}/")
    lines += [f"  wrote {where}/{rel}" for rel in result.files]
    lines += [f"  removed {where}/{rel} (written by an earlier install, no longer shipped)" for rel in result.removed]
    lines += [f"  kept {where}/{rel} (not written by the installer)" for rel in result.kept]
    lines.append("Claude Code picks it up in sessions started from now on; ask it to visualize or audit barriers.")
    return "\n".join(lines)
