"""What holds queued records, reviews or a follower's state is owner-only (folders 0700, files
0600) whatever the umask: the spool, the ingest cursor and journal, the search cache, the
export's files. The services' state (`lowtide up`) is tested in tests/test_services_redis.py."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from annotation.export_files import exclusive
from rl.atomic_file import write_text_atomically
from rl.private_files import private_dir, private_opener
from sampling.sources.ingest.cursor import Cursor, CursorState
from sampling.sources.search.table import cache_dir_for
from sampling.transport.spool import Spool, SpooledBatch

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    """umask 022, as on most machines: the modes must come from lowtide, not the umask."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_spool_folder_and_its_files_are_owner_only(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "logs" / "spool")
    spool.append(SpooledBatch("b-1", [{"sample_id": "s-1"}]))
    spool.append(SpooledBatch("b-2", [{"sample_id": "s-2"}]))

    def send(batch: SpooledBatch) -> None:
        if batch.batch_id == "b-2":
            raise ConnectionError("Redis went away")  # b-1 acknowledged, b-2 stays

    with pytest.raises(ConnectionError):
        spool.replay(send)
    assert [batch.batch_id for batch in spool.pending()] == ["b-2"]
    assert mode(spool.directory) == 0o700
    files = [path for path in spool.directory.iterdir() if path.is_file()]
    assert {path.suffix for path in files} >= {".spool", ".acked"}
    assert {path.name: mode(path) for path in files} == {path.name: 0o600 for path in files}


def test_the_ingest_cursor_and_journal_are_owner_only(tmp_path: Path) -> None:
    cursor = Cursor(tmp_path / "dumps" / ".lowtide-ingest-q-0123456789.json")
    cursor.lock()
    try:
        cursor.append(0, [{"sample_id": "s-1", "prompt": "p"}])
        cursor.save(CursorState(run_id="run", format="jsonl"))
    finally:
        cursor.release()
    written = sorted(cursor.path.parent.iterdir())
    assert len(written) == 3  # state, journal, lock
    assert {p.name: mode(p) for p in written} == {p.name: 0o600 for p in written}
    assert mode(cursor.path.parent) == 0o755  # the dump folder is the user's: left as it is


def test_the_search_cache_is_owner_only_and_an_earlier_one_is_tightened(tmp_path: Path) -> None:
    assert mode(cache_dir_for(tmp_path)) == 0o700
    earlier = tmp_path / "other"
    (earlier / ".lowtide-search").mkdir(parents=True, mode=0o755)
    os.chmod(earlier / ".lowtide-search", 0o755)
    assert mode(cache_dir_for(earlier)) == 0o700


def test_export_files_are_owner_only_in_a_new_folder_and_a_named_one_is_left(
    tmp_path: Path,
) -> None:
    new = tmp_path / "data" / "reward_model"
    with exclusive(new / "annotations.lock"):
        write_text_atomically(new / "annotations.jsonl", "{}\n")  # rows and cursor are written so
    assert mode(new) == 0o700
    assert mode(new / "annotations.lock") == mode(new / "annotations.jsonl") == 0o600
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    with exclusive(shared / "annotations.lock"):
        pass
    assert mode(shared) == 0o755 and mode(shared / "annotations.lock") == 0o600


def test_an_existing_file_or_folder_of_ours_is_tightened(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    folder.mkdir(mode=0o755)
    old = folder / "journal"
    old.write_text("written by an earlier version\n")
    assert mode(old) == 0o644
    with open(old, "a", opener=private_opener) as handle:
        handle.write("more\n")
    assert mode(old) == 0o600 and old.read_text().endswith("version\nmore\n")
    assert mode(private_dir(folder)) == 0o700
    assert mode(private_dir(tmp_path / "user", tighten_existing=False)) == 0o700  # a new one
