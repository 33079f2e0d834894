"""The disk spool: durable, ordered, resumable replays; loud when it cannot write."""

from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path

import pytest

from sampling.transport import spool as spool_module
from sampling.transport.spool import Spool, SpooledBatch, SpoolError, encode_frame

pytestmark = pytest.mark.unit


def batch(n: int, size: int = 2) -> SpooledBatch:
    return SpooledBatch(
        f"b-{n}", [{"sample_id": f"s-{n}-{i}", "text": "x" * 10} for i in range(size)]
    )


def test_replay_sends_in_order_then_deletes(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool")
    for n in range(5):
        spool.append(batch(n))
    assert spool.pending_batches() == 5 and spool.pending_records() == 10
    sent: list[str] = []
    assert spool.replay(lambda b: sent.append(b.batch_id)) == 5
    assert sent == [f"b-{n}" for n in range(5)]
    assert spool.pending_batches() == 0
    assert [p.name for p in (tmp_path / "spool").iterdir() if not p.name.startswith(".")] == []


def test_a_failed_replay_keeps_the_rest_and_never_resends_acknowledged(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    for n in range(4):
        spool.append(batch(n))
    sent: list[str] = []

    def flaky(b: SpooledBatch) -> None:
        if b.batch_id == "b-2" and "b-2" not in failed:
            failed.add("b-2")
            raise ConnectionError("redis went away")
        sent.append(b.batch_id)

    failed: set[str] = set()
    with pytest.raises(ConnectionError):
        spool.replay(flaky)
    assert sent == ["b-0", "b-1"] and spool.pending_batches() == 2
    spool.append(batch(9))  # more arrive while Redis is still down
    assert spool.replay(flaky) == 3
    assert sent == ["b-0", "b-1", "b-2", "b-3", "b-9"]  # each once, in order


def test_a_torn_last_frame_is_skipped(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    spool.append(batch(0))
    segment = next(tmp_path.glob("segment-*.spool"))
    with open(segment, "ab") as handle:
        handle.write(encode_frame(batch(1))[:40])  # a crash mid-write
    sent: list[str] = []
    spool.replay(lambda b: sent.append(b.batch_id))
    assert sent == ["b-0"]
    assert not segment.exists() and spool.quarantined() == []  # it held nothing acknowledged


def test_segments_roll_over_and_replay_across_them(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(spool_module, "SEGMENT_MAX_BYTES", 200)
    spool = Spool(tmp_path)
    for n in range(6):
        spool.append(batch(n))
    assert len(list(tmp_path.glob("segment-*.spool"))) > 1
    sent: list[str] = []
    spool.replay(lambda b: sent.append(b.batch_id))
    assert sent == [f"b-{n}" for n in range(6)]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere; see the file-in-the-way case")
def test_an_unwritable_directory_is_a_clear_error(tmp_path: Path) -> None:
    tmp_path.chmod(0o500)
    try:
        with pytest.raises(SpoolError, match="cannot write the spool"):
            Spool(tmp_path / "spool").append(batch(0))
    finally:
        tmp_path.chmod(0o700)


def test_a_file_in_the_way_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "spool").write_text("not a directory")
    with pytest.raises(SpoolError, match="cannot write the spool"):
        Spool(tmp_path / "spool").append(batch(0))


def test_a_directory_named_like_a_segment_is_no_segment(tmp_path: Path) -> None:
    # Taken for the last segment, it failed every write: records were dropped.
    spool = Spool(tmp_path)
    spool.append(batch(0))
    (tmp_path / "segment-00000005.spool").mkdir()
    spool.append(batch(1))
    assert spool.pending_batches() == 2
    sent: list[str] = []
    assert spool.replay(lambda b: sent.append(b.batch_id)) == 2 and sent == ["b-0", "b-1"]


def test_a_segment_that_cannot_be_read_is_left_and_the_later_ones_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    spool = Spool(tmp_path)
    spool.append(batch(0))
    first = next(tmp_path.glob("segment-*.spool"))
    second = first.with_name("segment-00000001.spool")
    second.write_bytes(encode_frame(batch(1)))
    real_open = open

    def refusing(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if Path(path) == first:  # another user's file, mode 000 (root reads any file)
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(spool_module, "open", refusing, raising=False)
    assert spool.pending_batches() == 1  # counted: what can be read
    sent: list[str] = []
    assert spool.replay(lambda b: sent.append(b.batch_id)) == 1 and sent == ["b-1"]
    assert first.exists()  # left for a person, never deleted
    assert sum("cannot be read" in r.getMessage() for r in caplog.records) == 1
    assert spool.replay(lambda b: sent.append(b.batch_id)) == 0  # said once
    assert sum("cannot be read" in r.getMessage() for r in caplog.records) == 1


def test_counting_while_a_replay_removes_a_segment_counts_it_as_sent(
    tmp_path: Path, monkeypatch
) -> None:
    """Counting takes no lock: a segment listed and then removed by a replay in another thread
    or process is sent, not an error (a producer's stats once died on it)."""
    spool = Spool(tmp_path / "spool")
    spool.append(batch(0))
    listed = [*spool._segments(), tmp_path / "spool" / "segment-00000007.spool"]  # gone since
    monkeypatch.setattr(spool, "_segments", lambda: listed)
    assert spool.pending_batches() == 1 and spool.pending_records() == 2
    assert spool.size_bytes() > 0


def test_acks_left_by_a_crash_after_their_segment_went_do_not_hide_new_batches(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "spool"
    directory.mkdir()
    (directory / "segment-00000000.acked").write_text("b-0\n")  # its segment was removed
    spool = Spool(directory)
    spool.append(batch(0))  # the same batch id again, in a new segment of the same number
    assert spool.pending_batches() == 1
    sent: list[str] = []
    spool.replay(lambda b: sent.append(b.batch_id))
    assert sent == ["b-0"]


def test_a_huge_declared_length_is_damage_not_an_allocation(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    head = struct.pack(">4sII", spool_module.MAGIC, 2**31, 0)  # checksums hold, length absurd
    segment = tmp_path / "segment-00000000.spool"
    segment.write_bytes(head + struct.pack(">I", zlib.crc32(head)) + encode_frame(batch(0)))
    assert spool.pending_batches() == 1
    sent: list[str] = []
    spool.replay(lambda b: sent.append(b.batch_id))
    assert sent == ["b-0"] and len(spool.quarantined()) == 1
