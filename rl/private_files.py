"""Folders and files that hold state or data (queued records, reviews, tokens): owner-only.

Made with owner-only modes (0700, 0600) where they are made, not by changing the umask: the
umask is process-wide, and a library must not change how the trainer's other files are made.
A child process started for that purpose (a local service) may get its own umask instead.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
_OTHERS = 0o077  # group and world bits


def private_dir(path: Path, *, parents: bool = True, tighten_existing: bool = True) -> Path:
    """`mkdir -p path`, the folder itself owner-only (its parents, if made, keep the umask's
    mode). An existing folder is tightened too, unless it is one the user named and may share
    (`tighten_existing=False`): then only a new one is private."""
    path.mkdir(mode=PRIVATE_DIR_MODE, parents=parents, exist_ok=True)
    if tighten_existing:
        _tighten(path)
    return path


def private_opener(path: str | os.PathLike[str], flags: int) -> int:
    """An `opener` for `open()`: a new file is created 0600, an existing one of ours tightened
    (an earlier version made it with the umask's mode)."""
    fd = os.open(path, flags, PRIVATE_FILE_MODE)
    try:
        _tighten_fd(fd)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _tighten(path: Path) -> None:
    info = path.stat()
    if info.st_mode & _OTHERS and info.st_uid == os.geteuid():  # another's: not ours to change
        os.chmod(path, stat.S_IMODE(info.st_mode) & ~_OTHERS)


def _tighten_fd(fd: int) -> None:
    info = os.fstat(fd)
    if info.st_mode & _OTHERS and info.st_uid == os.geteuid():
        os.fchmod(fd, stat.S_IMODE(info.st_mode) & ~_OTHERS)
