"""The few file-system moves every durable write is built from.

A rename is atomic but not durable until the directory holding it is fsynced, and a file's
contents are not durable until the file is fsynced; every atomic replacement in storage goes
through ``write_file_atomically`` so that ordering is written down once.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

TEMP_SUFFIX = ".tmp"


def fsync_directory(directory: Path) -> None:
    """Make creations, renames and deletions inside ``directory`` survive a power loss."""
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes | memoryview) -> None:
    """``os.write`` may write less than asked (signals, quotas); loop until all of it is out."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def write_file_atomically(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Replace ``path`` so that after a crash it holds either the old or the new bytes.

    Temp file, fsync, rename over the target, fsync the directory: without the first fsync a
    crash can leave the renamed file empty; without the last the rename itself can be lost.
    ``mode`` is the new file's permissions (before the umask) from its first byte on.
    """
    temp = path.with_name(path.name + TEMP_SUFFIX)
    _unlink_quietly(temp)  # so O_CREAT applies ``mode`` rather than a leftover file's
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        _unlink_quietly(temp)
        raise
    os.close(fd)
    os.replace(temp, path)
    fsync_directory(path.parent)


def _unlink_quietly(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
