"""The export's files as a whole: one export at a time reads and writes them (a lock), and a
rebuild keeps the previous ones first (a backup).

The lock (`annotations.lock` beside the files, `fcntl.flock`) is held from reading the stored
rows and the cursor to writing them back: two exports into the same files (the loop's and one
run by hand) take turns, and the second starts from what the first wrote. A lock dies with
its process, so a killed export never leaves the files locked.
"""

from __future__ import annotations

import fcntl
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from annotation.export_rows import ExportPaths
from rl.private_files import PRIVATE_DIR_MODE, private_dir, private_opener


@contextmanager
def exclusive(lock: Path, on_wait: Callable[[Path], None] | None = None) -> Iterator[None]:
    """Hold `lock` for the block; while another export holds it, call `on_wait` once and wait
    for it to finish."""
    # A new folder is owner-only (reviews); one the user named already is left as it is.
    private_dir(lock.parent, tighten_existing=False)
    # "a": opening never truncates what a holder wrote
    with open(lock, "a", opener=private_opener) as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None:
                on_wait(lock)
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def back_up(paths: ExportPaths, now: datetime | None = None) -> Path | None:
    """Copy the export's files, as they are, into `<stem>.<UTC time>.bak/` beside them; the
    folder, or None when there is nothing to keep."""
    existing = [path for path in paths.written() if path.exists()]
    if not existing:
        return None
    target = _new_folder(paths.ratings, now or datetime.now(timezone.utc))
    for path in existing:
        if path.is_dir():
            shutil.copytree(path, target / path.name)
        else:
            shutil.copy2(path, target / path.name)
    return target


def _new_folder(ratings: Path, now: datetime) -> Path:
    stem = ratings.name.removesuffix(".jsonl")
    stamp = now.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    for attempt in range(1, 1000):
        suffix = "" if attempt == 1 else f"-{attempt}"
        target = ratings.with_name(f"{stem}.{stamp}{suffix}.bak")
        try:
            target.mkdir(mode=PRIVATE_DIR_MODE, parents=True)
        except FileExistsError:
            continue
        return target
    raise FileExistsError(f"{ratings.parent}: no free name for a backup of {stamp}")
