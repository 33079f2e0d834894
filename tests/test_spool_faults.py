"""The spool under faults: torn writes, a cut at any byte, a full disk, kill -9 while it
writes, damaged bytes, and the segments an earlier version wrote. What append() acknowledged
is replayed exactly once; bytes that may hold it are never deleted."""

from __future__ import annotations

import json
import logging
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sampling.transport.spool import Spool, SpooledBatch
from tests.conftest import REPO

pytestmark = pytest.mark.unit


def batch(n: int, size: int = 2, text: str = "x" * 10) -> SpooledBatch:
    return SpooledBatch(f"b-{n}", [{"sample_id": f"s-{n}-{i}", "text": text} for i in range(size)])


def segments(directory: Path) -> list[Path]:
    return sorted(p for p in directory.glob("segment-*") if p.suffix != ".acked")


def replayed(spool: Spool) -> list[str]:
    sent: list[str] = []
    spool.replay(lambda b: sent.append(b.batch_id))
    return sent


def legacy_line(written: SpooledBatch) -> str:
    """A batch exactly as the earlier append() wrote it, without its newline."""
    return json.dumps({"batch_id": written.batch_id, "records": written.records})


def as_written(scratch: Path, written: SpooledBatch) -> bytes:
    """The bytes the spool writes for one batch, in whatever format it writes."""
    Spool(scratch).append(written)
    return segments(scratch)[0].read_bytes()


def test_a_torn_write_never_swallows_the_next_acknowledged_batch(tmp_path: Path) -> None:
    """The reported case: a write cut short, then a normal append; that append's batch used to
    be glued onto the torn bytes, skipped as one bad line, and deleted with the segment."""
    spool = Spool(tmp_path / "spool")
    spool.append(batch(0))
    torn = as_written(tmp_path / "scratch", batch(1))
    with open(segments(spool.directory)[-1], "ab") as handle:
        handle.write(torn[: len(torn) // 2])  # the writer was killed mid-write
    spool.append(batch(2))  # acknowledged
    assert spool.pending_batches() == 2 and spool.pending_records() == 4
    assert replayed(spool) == ["b-0", "b-2"]
    assert spool.pending_batches() == 0 and segments(spool.directory) == []
    assert spool.quarantined() == []  # a torn write held nothing acknowledged


def test_damage_inside_a_segment_quarantines_it_after_replaying_the_rest(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    spool = Spool(tmp_path / "spool")
    ends = []
    for n in range(4):
        spool.append(batch(n))
        ends.append(segments(spool.directory)[0].stat().st_size)
    segment = segments(spool.directory)[0]
    data = bytearray(segment.read_bytes())
    middle = (ends[0] + ends[1]) // 2
    data[middle] ^= 0x01  # a bit flipped inside b-1, which append() acknowledged
    segment.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING, logger="sampling.transport.spool"):
        assert replayed(spool) == ["b-0", "b-2", "b-3"]
    assert not segment.exists()
    [kept] = spool.quarantined()
    assert kept.read_bytes() == bytes(data)  # moved aside whole, never deleted
    note = json.loads(next(kept.parent.glob("*.damage.json")).read_text())
    [(start, end)] = note["unreadable"]
    assert start <= middle < end and (start, end) == (ends[0], ends[1])
    assert (kept.parent / f"{kept.stem}.acked").read_text().split() == ["b-0", "b-2", "b-3"]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "could not be read" in warnings[0].getMessage()
    assert spool.pending_batches() == 0 and replayed(spool) == []  # nothing is sent twice


def test_a_cut_at_any_byte_loses_only_the_cut_batch(tmp_path: Path) -> None:
    """Every batch wholly before the cut replays once, the next append is never lost, and a cut
    (a torn write) is not mistaken for damage."""
    source = Spool(tmp_path / "source")
    ends = []
    for n in range(3):
        source.append(batch(n))
        ends.append(segments(source.directory)[0].stat().st_size)
    [segment] = segments(source.directory)
    whole = segment.read_bytes()
    with mock.patch.object(os, "fsync"):  # the framing is under test here, not the disk
        for cut in range(len(whole) + 1):
            directory = tmp_path / f"cut-{cut}"
            directory.mkdir()
            (directory / segment.name).write_bytes(whole[:cut])
            spool = Spool(directory)
            before = [f"b-{n}" for n, end in enumerate(ends) if end <= cut]
            assert spool.pending_batches() == len(before), cut
            spool.append(batch(9))
            assert replayed(spool) == [*before, "b-9"], cut
    assert list(tmp_path.glob("cut-*/quarantine/*")) == []


def test_segments_written_by_the_earlier_version_still_replay(tmp_path: Path) -> None:
    directory = tmp_path / "spool"
    directory.mkdir()
    legacy = directory / "segment-00000000.jsonl"
    lines = [legacy_line(batch(n)) + "\n" for n in range(3)]
    legacy.write_text("".join(lines))
    (directory / "segment-00000000.acked").write_text("b-0\n")
    spool = Spool(directory)
    assert spool.pending_batches() == 2 and spool.pending_records() == 4
    spool.append(batch(3))
    assert legacy.read_text() == "".join(lines)  # new batches never go into the old format
    assert replayed(spool) == ["b-1", "b-2", "b-3"]
    assert segments(directory) == [] and spool.quarantined() == []


def test_an_earlier_segment_with_a_glued_line_gives_the_batch_back_and_is_kept(
    tmp_path: Path,
) -> None:
    """The bug's own trace on disk: a torn line, then an acknowledged batch on the same line."""
    directory = tmp_path / "spool"
    directory.mkdir()
    line = [legacy_line(batch(n)) for n in range(4)]
    glued = line[1][:30] + line[2] + "\n"
    (directory / "segment-00000000.jsonl").write_text(line[0] + "\n" + glued + line[3] + "\n")
    spool = Spool(directory)
    assert replayed(spool) == ["b-0", "b-2", "b-3"]
    [kept] = spool.quarantined()  # the torn bytes cannot be told from a damaged batch
    note = json.loads(next(kept.parent.glob("*.damage.json")).read_text())
    assert note["unreadable"] == [[len(line[0]) + 1, len(line[0]) + 31]]


DAMAGE = st.lists(
    st.one_of(
        st.tuples(st.just("flip"), st.integers(0, 2**16), st.integers(1, 255)),
        st.tuples(st.just("cut"), st.integers(0, 2**16), st.integers(0, 2**16)),
        st.tuples(st.just("insert"), st.integers(0, 2**16), st.binary(min_size=1, max_size=24)),
    ),
    min_size=1,
    max_size=4,
)


def damaged(data: bytes, damage: list[tuple]) -> bytes:
    out = bytearray(data)
    for kind, at, what in damage:
        at %= len(out) + 1
        if kind == "flip" and at < len(out):
            out[at] ^= what
        elif kind == "cut":  # a range, or everything from `at` on
            del out[at : at + what % 64 if what % 64 else len(out)]
        elif kind == "insert":
            out[at:at] = what
    return bytes(out)


APPENDED = [batch(n, size=n % 3 + 1, text=f"r\u00e9ponse {n} \u2603") for n in range(4)]
_written: dict[str, tuple[str, bytes]] = {}


def segment_as_written() -> tuple[str, bytes]:
    if not _written:
        with tempfile.TemporaryDirectory() as scratch:
            spool = Spool(scratch)
            for each in APPENDED:
                spool.append(each)
            [segment] = segments(Path(scratch))
            _written["segment"] = (segment.name, segment.read_bytes())
    return _written["segment"]


@settings(max_examples=150, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(damage=DAMAGE)
def test_damaged_bytes_never_raise_nor_invent_a_batch(damage: list[tuple]) -> None:
    name, data = segment_as_written()
    with tempfile.TemporaryDirectory() as scratch, mock.patch.object(os, "fsync"):
        directory = Path(scratch)
        (directory / name).write_bytes(damaged(data, damage))
        spool = Spool(directory)
        count = spool.pending_batches()
        spool.pending_records()
        spool.append(batch(9))  # acknowledged after the damage: never lost to it
        sent: list[SpooledBatch] = []
        spool.replay(sent.append)
    assert sent[-1] == batch(9) and len(sent) == count + 1
    assert all(each in APPENDED for each in sent[:-1])
    assert len({each.batch_id for each in sent}) == len(sent)


CHILD = """
import resource, signal, sys
from sampling.transport.spool import Spool, SpooledBatch, SpoolError

spool = Spool(sys.argv[1])
mode = sys.argv[2]


def append(batch_id, text):
    records = [{"sample_id": f"{batch_id}-{i}", "text": text} for i in range(3)]
    spool.append(SpooledBatch(batch_id, records))
    print(batch_id, flush=True)  # acknowledged


if mode == "full":
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails, as on a full disk
    _, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[3]), hard))
    for n in range(1000):
        try:
            append(f"before-{n}", "x" * 1000)
        except SpoolError:
            break
    for n in range(3):  # still full
        try:
            append(f"full-{n}", "x" * 1000)
        except SpoolError:
            pass
    resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))  # room again
    for n in range(3):
        append(f"after-{n}", "x" * 1000)
else:  # write until killed
    n = 0
    while True:
        append(f"{mode}-{n}", "x" * 2**18)
        n += 1
"""


def spooling_child(directory: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), *sys.path])}
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(directory), *args],
        cwd=directory.parent, env=env, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip


def acknowledged(output: str) -> list[str]:
    """Whole lines only: a line cut by a kill names no batch for sure."""
    return output.splitlines()[: output.count("\n")]


@pytest.mark.integration
def test_a_full_disk_loses_only_the_batches_append_refused(tmp_path: Path) -> None:
    directory = tmp_path / "spool"
    child = spooling_child(directory, "full", "20000")  # past 6 batches, into the 7th
    output, _ = child.communicate(timeout=60)
    assert child.returncode == 0
    acked = acknowledged(output)
    assert "before-0" in acked and "after-2" in acked and not any("full" in a for a in acked)
    sent = replayed(Spool(directory))
    assert sent == acked  # every acknowledged batch, once, in order; nothing refused
    assert Spool(directory).quarantined() == []


@pytest.mark.integration
def test_kill_9_while_spooling_loses_no_acknowledged_batch(tmp_path: Path) -> None:
    directory = tmp_path / "spool"
    directory.mkdir()
    seed = random.randrange(2**32)
    chance = random.Random(seed)
    acked: list[str] = []
    for generation in range(20):
        child = spooling_child(directory, f"g{generation}")
        first = child.stdout.readline()  # it spools: now kill it at a random moment
        assert first.endswith("\n"), "the child spooled nothing"
        time.sleep(chance.uniform(0, 0.03))
        child.kill()
        rest = child.stdout.read()
        child.wait()
        acked += acknowledged(first + rest)
    spool = Spool(directory)
    sent: list[SpooledBatch] = []
    spool.replay(sent.append)
    ids = [b.batch_id for b in sent]
    assert set(acked) <= set(ids), (seed, sorted(set(acked) - set(ids)))
    assert spool.quarantined() == [], seed  # writes cut by a kill are no damage
    assert len(ids) == len(set(ids)), seed  # no replay crashed: each batch once
    samples = [record["sample_id"] for b in sent for record in b.records]
    assert len(samples) == len(set(samples)), seed
    assert all(b.records[0]["sample_id"].startswith(b.batch_id) for b in sent), seed
