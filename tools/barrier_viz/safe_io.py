"""Writing files safely: inside the folder they belong to, never through a symlink, all or nothing.

Why: the tool writes into folders other people can write to (a CI workspace, a shared cache, a
project's `.claude/skills`). A `report.md` or `reference/` planted there as a symlink must not
redirect the write to a file elsewhere, and a full disk or an interrupt must not leave a
truncated report that a reader takes for a finished one.

How: the folder the user named is opened once; every component below it is opened relative to
its parent with `O_NOFOLLOW` (a link there is refused: `ELOOP`); the data goes to a fresh
temporary file in the final folder (`O_CREAT | O_EXCL | O_NOFOLLOW`) that is renamed over the
target (a rename replaces a planted link itself, never its target). On any error the temporary
file is removed and the old file, if any, is untouched. Folders are created only when a file is
written into them.
"""

from __future__ import annotations

import errno
import os
import secrets
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class UnsafePath(OSError):
    """A path component is a symlink (or not a folder) where the tool would write."""


def _parts(rel: str) -> list[str]:
    parts = [p for p in rel.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise UnsafePath(errno.EINVAL, f"not a path inside the folder: {rel!r}")
    return parts


@contextmanager
def _folder_fd(folder: Path, parts: list[str], create: bool) -> Iterator[int]:
    """A descriptor of `folder/parts...`, each part opened without following links."""
    if create:
        folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, _DIR_FLAGS)
    try:
        where = folder
        for part in parts:
            where = where / part
            if create:
                try:
                    os.mkdir(part, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass
            try:
                nfd = os.open(part, _DIR_FLAGS | _NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise UnsafePath(exc.errno, f"{where} is a symbolic link or not a folder: refusing to write through it") from None
                raise
            os.close(fd)
            fd = nfd
        yield fd
    finally:
        os.close(fd)


def write_atomic(folder: Path, rel: str, data: bytes | str) -> Path:
    """Write `data` to `folder/rel` (folders created as needed) through a temporary file and a
    rename: the file is complete or absent, never partial, and no symlink is followed below
    `folder`. Returns the path written."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    parts = _parts(rel)
    with _folder_fd(folder, parts[:-1], create=True) as dfd:
        name = parts[-1]
        tmp = f".{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666, dir_fd=dfd)
            try:
                view = memoryview(payload)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=dfd)
            except OSError:
                pass
            raise
    return folder.joinpath(*parts)


def open_new(folder: Path, rel: str) -> IO[str]:
    """A text file created fresh at `folder/rel` for streaming (a transcript): an existing
    file or planted link of that name is removed first (never followed), then the file is
    created exclusively."""
    parts = _parts(rel)
    with _folder_fd(folder, parts[:-1], create=True) as dfd:
        try:
            os.unlink(parts[-1], dir_fd=dfd)
        except FileNotFoundError:
            pass
        fd = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666, dir_fd=dfd)
    return os.fdopen(fd, "w", encoding="utf-8")


def remove(folder: Path, rel: str) -> bool:
    """Remove the file (or link) `folder/rel` without following any link; False if absent.
    A folder component that is a link is refused (UnsafePath)."""
    parts = _parts(rel)
    try:
        with _folder_fd(folder, parts[:-1], create=False) as dfd:
            os.unlink(parts[-1], dir_fd=dfd)
    except FileNotFoundError:
        return False
    return True


def read_text_nofollow(path: Path) -> str | None:
    """The text of `path` if it is a regular file that is not a symlink, else None."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        try:
            return fh.read().decode("utf-8")
        except UnicodeDecodeError:
            return None
