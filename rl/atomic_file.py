"""Whole-file writes that a reader never sees half done."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_text_atomically(path: Path, text: str) -> None:
    """Written beside `path`, flushed to disk, then renamed over it; on failure the old file
    stays and no temporary file is left behind. The file is owner-only (0600, as mkstemp makes
    it): what is written this way is state or data (cursors, exported reviews)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
