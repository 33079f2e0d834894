"""What anyone who can write to the Redis the workers read may plant beside lowtide's jobs: a
pickle, another function, JSON of any shape, ids no RQ makes, hashes missing fields or holding
junk, keys that are no hash, ids in RQ's registries and lists that point nowhere. The worker
runs none of it, refuses each with one log line and goes on to the next valid batch; every
`lowtide queue` command says one line per bad entry, never a traceback. A Redis of the test's
own; the worker runs in this process with its import function recorded (no Label Studio:
tests/test_annotation_worker.py imports a batch behind junk into a real one)."""

from __future__ import annotations

import json
import logging
import pickle
import time
import zlib
from pathlib import Path
from typing import Any

import pytest
import redis
from rq import Queue
from rq.job import Job
from rq.registry import FailedJobRegistry, ScheduledJobRegistry
from rq.serializers import JSONSerializer

from annotation import jobs, ledger
from annotation.rq_internals import BoundedJob
from annotation.worker import AnnotationWorker
from sampling.records import JOB_FUNCTION
from sampling.transport.producer import enqueue_batch
from tests.conftest import invoke
from tests.helpers.records import rollout_records
from tests.helpers.redis_server import OwnRedis

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

QUEUE = "hostile-annotate"
NESTED = "[" * 10_000 + "]" * 10_000


class _OpensOnUnpickle:
    """Unpickled, it creates the file at `path`: proof that something loaded a pickle."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (str(self.path), "w"))


def _payload(func: Any, args: Any, kwargs: Any = None) -> bytes:
    return zlib.compress(json.dumps([func, None, args, kwargs or {}]).encode())


def _stored(data: bytes, **fields: str | bytes) -> dict[str, str | bytes]:
    """A job's hash as RQ writes one (what matters of it), `fields` changed."""
    stamp = "2026-01-01T00:00:00.000000Z"
    return {"status": "queued", "origin": QUEUE, "created_at": stamp, "enqueued_at": stamp,
            "timeout": "300", "data": data, **fields}  # fmt: skip


def _junk_jobs(marker: Path) -> dict[str, dict[str, str | bytes]]:
    """Job id -> its stored hash: each must be refused, none may run or be unpickled."""
    pickled = pickle.dumps((_OpensOnUnpickle(marker), None, [], {}))
    ours = _payload(JOB_FUNCTION, [[]])
    other = _payload("os.system", [f"touch {marker}"])
    without_origin = _stored(other)
    del without_origin["origin"]
    return {
        "pickle-compressed": _stored(zlib.compress(pickled)),
        "pickle-plain": _stored(pickled),
        "os-system": _stored(other),
        "builtins-eval": _stored(_payload("builtins.eval", [f"open({str(marker)!r}, 'w')"])),
        "not-json": _stored(b"\x00\xff not json"),
        "json-a-dict": _stored(zlib.compress(b'{"a": 1}')),
        "json-nested-10k": _stored(zlib.compress(NESTED.encode())),
        "args-a-dict": _stored(_payload(JOB_FUNCTION, {"0": []})),
        "kwargs-a-list": _stored(_payload(JOB_FUNCTION, [[]], [1])),
        "zlib-garbage": _stored(zlib.compress(bytes(range(256)) * 8)),
        "line\nWARNING forged": _stored(other),
        "esc\x1b[2Jcleared": _stored(other),
        "../../etc/passwd": _stored(ours),
        "L" * 10_240: _stored(other),
        "no-origin": without_origin,
        "no-payload": {"status": "queued", "origin": QUEUE},
        "created-yesterday": _stored(ours, created_at="yesterday"),
        "status-junk": _stored(ours, status="pwned"),
        "meta-pickle": _stored(ours, meta=pickle.dumps(_OpensOnUnpickle(marker))),
    }


def _plant(connection: redis.Redis, jobs_: dict[str, dict[str, str | bytes]]) -> None:
    for job_id, fields in jobs_.items():
        connection.hset(Job.key_for(job_id), mapping=fields)


@pytest.fixture
def queue(own_redis: OwnRedis) -> Queue:
    return Queue(QUEUE, connection=redis.Redis.from_url(own_redis.url), serializer=JSONSerializer)


def test_the_worker_runs_none_of_the_junk_and_imports_the_batch_behind_it(
    queue: Queue, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Before: a job whose arguments were a dict stopped the worker (KeyError in the check), and
    so did an id on the queue whose key is a string (HSET on it), one in the scheduled registry
    or the taken list that RQ's own id check refuses (ValueError in RQ's scheduler and its
    cleanup), and a counter of the workers' stats that is no number (HINCRBY on it); the
    batches behind them waited. A job id with a line break forged a log line."""
    marker = tmp_path / "executed"
    connection = queue.connection
    junk = _junk_jobs(marker)
    _plant(connection, junk)
    connection.rpush(queue.key, *junk, "no-hash-at-all")
    connection.set(Job.key_for("a-string-key"), "not a job")
    connection.rpush(queue.key, "a-string-key")
    # Ids RQ never makes, where RQ's scheduler and its cleanup read them.
    due = time.time() - 5
    connection.zadd(ScheduledJobRegistry(queue=queue).key, {"due\nforged": due, "gone": due})
    connection.hset(Job.key_for("due\nforged"), mapping=_stored(_payload(JOB_FUNCTION, [[]])))
    connection.hset(Job.key_for("taken\nforged"), mapping=_stored(_payload(JOB_FUNCTION, [[]])))
    connection.rpush(queue.intermediate_queue_key, "taken\nforged")
    connection.hset(ledger.stats_key(QUEUE), "rejected_jobs", "many")  # no number to add to
    enqueue_batch(queue, rollout_records(0, 3, run_id="run-hostile"))  # behind all of it
    refused = {*junk, "a-string-key", "due\nforged", "taken\nforged"}

    imported: list[list[Any]] = []
    monkeypatch.setattr(jobs, "import_batch", lambda records: imported.append(records) or {})
    caplog.set_level(logging.INFO)
    AnnotationWorker(queue, orphan_requeues=1).work(
        burst=True, with_scheduler=True, logging_level="WARNING"
    )

    assert not marker.exists()
    assert [len(batch) for batch in imported] == [3], caplog.text
    assert queue.count == 0
    assert set(FailedJobRegistry(queue=queue).get_job_ids(cleanup=False)) == refused
    quarantined = [entry["job_id"] for entry in ledger.quarantined(connection, QUEUE, 100)]
    assert sorted(quarantined) == sorted(refused)  # one reason each
    said = [r.getMessage() for r in caplog.records if r.name == "annotation.worker"]
    assert len(said) == len(refused) and all(" rejected: " in line for line in said), said
    assert not any(set(line) & {"\n", "\x1b"} or len(line) > 1_000 for line in said), said
    assert "Traceback" not in caplog.text and "unhandled exception" not in caplog.text
    assert ledger.read_stats(connection, QUEUE).counters["rejected_jobs"] == len(refused)


def test_each_queue_command_says_one_line_per_bad_entry(
    own_redis: OwnRedis,
    queue: Queue,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Before: `failed` printed a 5 MB error line whole (any error line: it was never cut) and
    stopped with a traceback on a job whose arguments were a dict; `requeue --all` put back
    jobs that name another function or hold a pickle (the worker refused them again); `purge`
    stopped on a key that is no hash; `quarantined` on an entry that is JSON but no object,
    and `--json` on one that is no JSON; `status` on a counter that is no number."""
    monkeypatch.setenv("REDIS_URL", own_redis.url)
    monkeypatch.delenv("LABEL_STUDIO_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    connection = queue.connection
    junk = _junk_jobs(tmp_path / "executed")
    junk["huge-error"] = _stored(_payload(JOB_FUNCTION, [[]]), exc_info="E" * 5_000_000)
    junk["long-error-line"] = _stored(_payload("os.system", ["x"]), exc_info="E" * 900_000)
    password = f"pwplanted{'q' * 60}7731xyz"  # longer than a column: folded, somewhere in it
    for pad in range(0, 40, 8):
        error = f"ConnectionError: {'y' * pad} redis://:{password}@db:6379"
        junk[f"error-with-password-{pad}"] = _stored(_payload("os.system", ["x"]), exc_info=error)
    # Not a URL: a secret and personal data quoted by an error, and by a refused record (one
    # a run with redaction off, or someone else, wrote).
    quoted = "api_key=Zq8vLw3NbX7kPr2Tm5Yd mail ana.quiroga@example.net"
    junk["error-quoting-a-record"] = _stored(
        _payload("os.system", ["x"]), exc_info=f"ValueError: bad row {quoted}"
    )
    _plant(connection, junk)
    connection.set(Job.key_for("a-string-key"), "not a job")
    failed = [*junk, "a-string-key", "points-nowhere"]
    connection.zadd(FailedJobRegistry(queue=queue).key, {i: time.time() + 3600 for i in failed})
    connection.rpush(ledger.quarantine_key(QUEUE), b"5", b"[1, 2]", b"\xff not json", NESTED)
    refused = {"job_id": "j1", "index": 0, "reason": f"invalid: {quoted}", "record": quoted}
    connection.lpush(ledger.quarantine_key(QUEUE), json.dumps(refused))
    stats = {"rejected_jobs": "many", "import_seconds_sum": "nan?", "imported": b"\xff"}
    connection.hset(ledger.stats_key(QUEUE), mapping=stats)
    flags = (f"--queue.name={QUEUE}",)

    def run(*argv: str) -> str:
        code, shown, said = invoke(capsys, "queue", *argv, *flags)
        assert code == 0 and "Traceback" not in shown + said, (argv, said[-2_000:])
        assert "pwplanted" not in shown + said and "7731xyz" not in shown + said, argv
        assert "Zq8vLw3NbX7kPr2Tm5Yd" not in shown + said and "quiroga" not in shown + said, argv
        assert len(shown + said) < 100_000, (argv, len(shown + said))  # no error line whole
        return shown + said

    assert "workers: rejected jobs" in run("status")  # a counter that is none reads as 0
    listed = run("failed", "--limit", "100")
    assert f"{len(failed)} failed job(s)" in listed and "huge-error" in listed
    read = BoundedJob.fetch("huge-error", connection=connection, serializer=JSONSerializer)
    assert read.exc_info.startswith("(the error stored for this job is over")  # not 5 MB
    assert run("quarantined").count("unreadable quarantine entry") == 4
    entries = [json.loads(line) for line in run("quarantined", "--json").splitlines()]
    assert [entry["reason"] for entry in entries][1:] == ["unreadable quarantine entry"] * 4
    assert entries[0]["record"] == "api_key=<SECRET_1> mail <EMAIL_1>"

    said = run("requeue", "--all")
    left = [line for line in said.splitlines() if line.startswith("left failed: ")]
    assert "requeued 1 job(s)" in said  # huge-error: ours, its error aside
    assert len(left) == len(failed) - 1, said
    assert any("refusing to run 'os.system'" in line for line in left)
    assert sum("not readable as JSON" in line for line in left) >= 5
    assert queue.get_job_ids() == ["huge-error"]

    assert f"deleted 1 waiting and {len(failed) - 1} failed job(s)" in run("purge", "--yes")
    assert not connection.exists(*(Job.key_for(i) for i in failed))


def test_a_line_redaction_cannot_read_is_not_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail closed: a redactor that raises (its message quoting the text) shows nothing of it."""
    from lowtide.cli import queue_cmd

    class Broken:
        def redact(self, texts: list[str]) -> None:
            raise ValueError(f"cannot read {texts!r}")

    monkeypatch.setattr(queue_cmd, "_redactor", Broken)
    shown = queue_cmd._shown_line("ValueError: token=Zq8vLw3NbX7kPr2Tm5Yd")
    assert shown == "(not shown: redaction failed, ValueError)"
    entry = queue_cmd._redacted_entry({"index": 1, "record": "mail ana.quiroga@example.net"})
    assert entry == {"index": 1, "record": "(not shown: redaction failed, ValueError)"}
