"""Opening workspace files so that a swapped-in symlink or a FIFO cannot subvert the call.

`DeveloperState.resolve` checks a path once, but a directory on it replaced by a symlink
between that check and the open would send the read or write somewhere else, outside the
workspace. So the file tools open their (already symlink-free) path one component at a
time, each relative to the directory opened before it, with `O_NOFOLLOW`: meeting a symlink
means the tree changed under us, and the call is refused. `O_NONBLOCK` keeps a FIFO from
blocking the open, and an `fstat` of what was opened refuses anything but a regular file
before a byte is read or written.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from gosling.agent.tools.base import ToolError

_DIR_FLAGS = os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | getattr(os, "O_PATH", os.O_RDONLY)
"""O_PATH (Linux) needs only search permission on the directory, like a normal path walk."""
_FILE_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class Missing(ToolError):
    """The file (or a directory on its path) does not exist."""


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "not a regular file"


def _not_regular(shown: str, mode: int, *, writing: bool = False) -> ToolError:
    if stat.S_ISDIR(mode):
        fix = "give a file path" if writing else "use tree to list it"
        return ToolError(f"{shown} is a directory; {fix}.")
    return ToolError(
        f"{shown} is {kind_of(mode)}, not a regular file; the file tools only read and write "
        "regular files (reading a pipe or device can wait forever). Use the shell if you "
        "really mean to."
    )


def _changed(shown: str) -> ToolError:
    return ToolError(
        f"{shown} changed while gosling was using it (a part of its path is now a symlink or "
        "no longer a directory); nothing was read or written. Check the path and try again."
    )


def _start(path: Path, root: Path) -> tuple[Path, tuple[str, ...]]:
    """Where the walk to `path` begins (the working dir when inside it, else `/`)."""
    if path.is_relative_to(root):
        return root, path.relative_to(root).parts
    return Path(path.anchor), path.relative_to(path.anchor).parts


@contextlib.contextmanager
def parent_dir(path: Path, root: Path, shown: str, *, create: bool = False) -> Iterator[int]:
    """A descriptor of `path`'s directory, reached without following any symlink below
    `root`; missing directories are made when `create` is set."""
    base, parts = _start(path, root)
    if not parts:
        raise ToolError(f"{shown} is a directory; give a file path.")
    fd = os.open(base, os.O_DIRECTORY | os.O_CLOEXEC | getattr(os, "O_PATH", os.O_RDONLY))
    try:
        for name in parts[:-1]:
            try:
                child = _open_dir(name, fd, shown)
            except Missing:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, dir_fd=fd)
                child = _open_dir(name, fd, shown)
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def _open_dir(name: str, dir_fd: int, shown: str) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        raise Missing(f"{shown} does not exist.") from None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise _changed(shown) from None
        raise


def read_plain_file(path: Path | str, limit: int) -> bytes | None:
    """Up to `limit` bytes of a regular file; None for anything else (a symlink, a FIFO, a
    device, a missing file), which is never waited on."""
    try:
        fd = os.open(path, os.O_RDONLY | _FILE_FLAGS)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            os.set_blocking(fd, True)
            return handle.read(limit)
        except OSError:
            return None


def lstat_in(path: Path, root: Path, shown: str) -> os.stat_result | None:
    """`lstat` of `path` through a safe walk; None when it (or a directory of it) is missing."""
    try:
        with parent_dir(path, root, shown) as fd:
            return os.stat(path.name, dir_fd=fd, follow_symlinks=False)
    except (FileNotFoundError, Missing):
        return None


@contextlib.contextmanager
def open_regular(
    path: Path, root: Path, shown: str, *, writing: bool = False
) -> Iterator[BinaryIO]:
    """`path` opened for reading, refused unless it is a regular file (`writing`: the
    caller reads it only to replace it, which the refusal's advice reflects)."""
    with parent_dir(path, root, shown) as dir_fd:
        try:
            fd = os.open(path.name, os.O_RDONLY | _FILE_FLAGS, dir_fd=dir_fd)
        except FileNotFoundError:
            raise Missing(f"{shown} does not exist.") from None
        except OSError as exc:
            raise _open_error(exc, path.name, dir_fd, shown, writing=writing) from None
    handle = _checked(fd, shown, writing=writing)
    with handle:
        yield handle


def read_regular(path: Path, root: Path, shown: str, *, writing: bool = False) -> bytes:
    with open_regular(path, root, shown, writing=writing) as handle:
        return handle.read()


def read_if_regular(path: Path, root: Path, shown: str, *, writing: bool = False) -> bytes | None:
    """The content of `path`, or None when it does not exist."""
    try:
        return read_regular(path, root, shown, writing=writing)
    except Missing:
        return None


def write_regular(path: Path, root: Path, shown: str, data: bytes) -> None:
    """Replace the content of `path` (created, with missing parents, if absent)."""
    with parent_dir(path, root, shown, create=True) as dir_fd:
        try:
            fd = os.open(path.name, os.O_WRONLY | os.O_CREAT | _FILE_FLAGS, 0o666, dir_fd=dir_fd)
        except OSError as exc:
            raise _open_error(exc, path.name, dir_fd, shown, writing=True) from None
    with _checked(fd, shown, mode="wb", writing=True) as handle:
        handle.truncate(0)
        handle.write(data)


def unlink_regular(path: Path, root: Path, shown: str) -> None:
    with contextlib.suppress(FileNotFoundError, Missing), parent_dir(path, root, shown) as dir_fd:
        os.unlink(path.name, dir_fd=dir_fd)


def _checked(fd: int, shown: str, *, mode: str = "rb", writing: bool = False) -> BinaryIO:
    """A file object for `fd` once it is known to be a regular file (else `fd` is closed)."""
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise _not_regular(shown, status.st_mode, writing=writing)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, mode)  # type: ignore[return-value]


def _open_error(
    exc: OSError, name: str, dir_fd: int, shown: str, *, writing: bool = False
) -> Exception:
    """A clear error for an open that failed on the last component."""
    if exc.errno == errno.ELOOP:
        return _changed(shown)
    if exc.errno in (errno.EISDIR, errno.ENXIO, errno.EOPNOTSUPP):
        try:
            mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
        except OSError:
            return exc
        return _not_regular(shown, mode, writing=writing)
    return exc
