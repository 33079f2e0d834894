"""The dump formats `lowtide ingest` reads, and where a directory's dump files are.

A user names the directory the trainer was told about (verl's `rollout_data_dir`, TRL's
`output_dir`, our `<save_dir>/<run>`) or the folder of files itself; `auto` picks the format
whose file names are there.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sampling.sources.ingest import lowtide_rollouts
from sampling.sources.ingest.rows import DumpFormat
from sampling.sources.trl import dumps as trl_dumps
from sampling.sources.verl import dumps as verl_dumps

AUTO = "auto"


class FormatError(ValueError):
    """The directory cannot be followed (several formats in it, or it cannot be listed); the
    message says what to pass."""


# Each trainer's reader is in its folder (`sampling/sources/<trainer>/dumps.py`); ours is here.
FORMATS = {
    dump_format.name: dump_format
    for dump_format in (verl_dumps.FORMAT, trl_dumps.FORMAT, lowtide_rollouts.FORMAT)
}
NAMES = (*FORMATS, AUTO)


@dataclass(frozen=True)
class DumpLocation:
    format: DumpFormat
    files_dir: Path  # where the dump files are (and the cursor is kept)
    run_dir: Path  # what the trainer was given: its name is the default run id


@dataclass(frozen=True)
class DumpFile:
    path: Path
    step: int  # from the name
    size: int
    mtime: float


def locate(directory: Path, name: str) -> DumpLocation | None:
    """Where the files of format `name` (or the one `auto` finds) are; None while there are none
    yet to tell (the trainer has not written its first dump). FormatError when two formats'
    files are there."""
    if name != AUTO:
        dump_format = FORMATS[name]
        return _location(directory, dump_format, require_files=False)
    found = [
        location
        for dump_format in FORMATS.values()
        if (location := _location(directory, dump_format, require_files=True)) is not None
    ]
    if len(found) > 1:
        names = ", ".join(location.format.name for location in found)
        raise FormatError(
            f"{directory} holds dump files of several formats ({names}): pass --format"
        )
    return found[0] if found else None


def list_files(
    location: DumpLocation, not_a_file: Callable[[Path], None] | None = None
) -> list[DumpFile]:
    """The dump files, in step order (verl's `10.jsonl` after `9.jsonl`). An entry named like
    one that is not a regular file (a FIFO, whose reading never ends; a directory) is left out,
    and given to `not_a_file` when there is one."""
    files = []
    try:
        entries = list(os.scandir(location.files_dir))
    except FileNotFoundError:
        return []  # not written yet
    except OSError as error:  # not a directory, no permission: it will not mend itself
        raise FormatError(f"cannot list {location.files_dir}: {error.strerror}") from None
    for entry in entries:
        match = location.format.pattern.match(entry.name)
        if match is None:
            continue
        try:
            stat = entry.stat()
        except FileNotFoundError:  # removed between the listing and now
            continue
        if entry.is_file():
            step = int(match.group(1))
            files.append(DumpFile(Path(entry.path), step, stat.st_size, stat.st_mtime))
        elif not_a_file is not None:
            not_a_file(Path(entry.path))
    return sorted(files, key=lambda file: (file.step, file.path.name))


def expected_files() -> str:
    return "; ".join(f"{f.name}: {f.describe}" for f in FORMATS.values())


def _location(directory: Path, dump_format: DumpFormat, require_files: bool) -> DumpLocation | None:
    subdir = dump_format.subdir
    candidates = [(directory, directory)]
    if subdir is not None:
        if directory.name == subdir:
            candidates = [(directory, directory.parent)]
        else:
            candidates = [(directory / subdir, directory), (directory, directory)]
    for files_dir, run_dir in candidates:
        if _has_files(files_dir, dump_format):
            return DumpLocation(dump_format, files_dir, run_dir)
    if require_files:
        return None
    files_dir, run_dir = candidates[0]
    return DumpLocation(dump_format, files_dir, run_dir)  # the trainer will write there


def _has_files(directory: Path, dump_format: DumpFormat) -> bool:
    try:
        return any(dump_format.pattern.match(entry.name) for entry in os.scandir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return False
