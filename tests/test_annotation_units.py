"""The annotation side without Label Studio: job screening, orphan recovery, counters, metrics,
retries, export rows and the service config (real Redis where Redis is involved)."""

from __future__ import annotations

import json
import os
import pickle
import time
import uuid
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import redis
from prometheus_client import CollectorRegistry, generate_latest
from rq import Queue, Retry
from rq.executions import Execution
from rq.job import Job
from rq.serializers import JSONSerializer
from rq.worker import Worker

from annotation import jobs, ledger
from annotation.config import AnnotationConfig
from annotation.export import ExportError, ExportPaths, _resolve_since, preference_rows, rating_row
from annotation.importer import ImportContext, pace
from annotation.late_imports import LATE_IMPORT_WINDOW_S, note_uncertain, uncertain_key
from annotation.metrics import AnnotationCollector
from annotation.rq_internals import recover_orphans, rejection_reason
from annotation.worker import AnnotationWorker, worker_name
from lowtide.config import load_service_config
from lowtide.services.process import free_port
from sampling.records import JOB_FUNCTION
from tests.conftest import REPO
from tests.helpers.records import rollout_record, rollout_records

pytestmark = pytest.mark.integration

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")


@pytest.fixture
def queue():
    connection = redis.Redis.from_url(REDIS_URL)
    name = f"test-units-{uuid.uuid4().hex[:8]}"
    queue = Queue(name, connection=connection, serializer=JSONSerializer)
    yield queue
    queue.empty()
    for key in connection.scan_iter(f"*{name}*"):
        connection.delete(key)


# --- which jobs may run ---


def test_only_import_batch_with_one_list_runs(queue: Queue) -> None:
    assert rejection_reason(queue.enqueue(JOB_FUNCTION, rollout_records(0, 2))) is None
    other = queue.enqueue("subprocess.getoutput", "id")
    assert "refusing to run 'subprocess.getoutput'" in rejection_reason(other)
    assert "one argument, a list" in rejection_reason(queue.enqueue(JOB_FUNCTION, {"a": 1}))
    assert "one argument, a list" in rejection_reason(queue.enqueue(JOB_FUNCTION, [], extra=1))

    pickled = Queue(queue.name, connection=queue.connection).enqueue("os.system", "id")
    job = Job.fetch(pickled.id, connection=queue.connection, serializer=JSONSerializer)
    assert "not readable as JSON" in rejection_reason(job)
    raw = queue.enqueue(JOB_FUNCTION, [])
    queue.connection.hset(raw.key, "data", pickle.dumps(("os.system", None, ("id",), {})))
    job = Job.fetch(raw.id, connection=queue.connection, serializer=JSONSerializer)
    assert "not readable as JSON" in rejection_reason(job)

    # A method of an instance the payload names; a job made for another queue.
    on_instance = queue.enqueue(JOB_FUNCTION, [])
    queue.connection.hset(on_instance.key, "data", zlib.compress(
        json.dumps([JOB_FUNCTION, "an instance", [[]], {}]).encode()))  # fmt: skip
    job = Job.fetch(on_instance.id, connection=queue.connection, serializer=JSONSerializer)
    assert "one argument, a list" in rejection_reason(job)
    ours = queue.enqueue(JOB_FUNCTION, [])
    assert rejection_reason(ours, queue.name) is None
    assert "made for the queue" in rejection_reason(ours, "another-queue")


# --- orphans of dead workers ---


def _no_give_up(job_id: str, reason: str) -> None:
    raise AssertionError(f"{job_id} given up: {reason}")


def _start(queue: Queue, job: Job, owner: str) -> None:
    """What a worker does when it starts a job: an execution in the started registry."""
    queue.remove(job.id)
    with queue.connection.pipeline() as pipe:
        execution = Execution.create(job, 120, pipeline=pipe, worker_name=owner)
        queue.started_job_registry.add_execution(execution, pipeline=pipe, ttl=120)
        pipe.execute()


def test_jobs_of_dead_workers_go_back_on_the_queue_and_live_ones_stay(queue: Queue) -> None:
    dead_job = queue.enqueue(JOB_FUNCTION, rollout_records(0, 1))
    live_job = queue.enqueue(JOB_FUNCTION, rollout_records(1, 1))
    _start(queue, dead_job, "lowtide-gone-1-abc")  # no such worker registered
    live = Worker([queue], connection=queue.connection, name=worker_name())
    live.register_birth()  # this process: alive
    try:
        _start(queue, live_job, live.name)
        assert queue.count == 0 and queue.started_job_registry.count == 2

        assert recover_orphans(queue, 3, _no_give_up) == 1
        assert queue.get_job_ids() == [dead_job.id]
        assert queue.started_job_registry.get_job_ids() == [live_job.id]
        assert recover_orphans(queue, 3, _no_give_up) == 0  # nothing twice
    finally:
        live.register_death()


def test_a_registered_worker_whose_process_is_gone_is_dead(queue: Queue) -> None:
    job = queue.enqueue(JOB_FUNCTION, rollout_records(0, 1))
    ghost = Worker([queue], connection=queue.connection, name=worker_name())
    ghost.pid = 2**22 + 12345  # above pid_max: no such process
    ghost.register_birth()
    try:
        queue.connection.hset(ghost.key, "pid", ghost.pid)
        _start(queue, job, ghost.name)
        assert recover_orphans(queue, 3, _no_give_up) == 1 and queue.get_job_ids() == [job.id]
    finally:
        ghost.register_death()


def test_a_job_whose_workers_keep_dying_is_given_up_with_the_reason(
    queue: Queue, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Taken and never started, or started: each death of its worker counts (in the job's
    hash); past `max_requeues` the job is handed to give_up (the worker fails it in place and
    quarantines it) instead of going back to the front of the queue."""
    monkeypatch.setattr("annotation.rq_internals.STUCK_AFTER_S", 0)
    job = queue.enqueue(JOB_FUNCTION, rollout_records(0, 1))
    given_up: list[tuple[str, str]] = []

    def give_up(job_id: str, reason: str) -> None:
        given_up.append((job_id, reason))

    Queue.lmove(queue.connection, queue.key, timeout=None)  # taken by a worker that died
    assert recover_orphans(queue, 2, give_up) == 0  # seen there for the first time
    assert recover_orphans(queue, 2, give_up) == 1 and queue.get_job_ids() == [job.id]
    _start(queue, job, "lowtide-gone-2")
    assert recover_orphans(queue, 2, give_up) == 1 and queue.get_job_ids() == [job.id]
    _start(queue, job, "lowtide-gone-3")
    assert recover_orphans(queue, 2, give_up) == 0 and queue.count == 0
    assert given_up == [(job.id, given_up[0][1])]
    assert given_up[0][1].startswith("its workers died 3 times running it")
    job.delete()


# --- counters and metrics ---


def test_counters_and_latency_histogram_add_up(queue: Queue) -> None:
    connection = queue.connection
    ledger.add_counts(connection, queue.name, {"imported": 64, "batches": 1}, [0.08, 0.3])
    ledger.add_counts(connection, queue.name, {"imported": 10, "duplicates": 2}, [7.0])
    stats = ledger.read_stats(connection, queue.name)
    assert stats.counters["imported"] == 74 and stats.counters["duplicates"] == 2
    assert stats.import_seconds_count == 3 and stats.mean_import_s == pytest.approx(7.38 / 3)
    assert stats.import_seconds_buckets[0.1] == 1 and stats.import_seconds_buckets[0.5] == 2
    assert stats.import_seconds_buckets[10.0] == 3
    with pytest.raises(KeyError):
        ledger.add_counts(connection, queue.name, {"imported_typo": 1})

    registry = CollectorRegistry(auto_describe=False)
    registry.register(AnnotationCollector(queue))
    text = generate_latest(registry).decode()
    assert f'lowtide_annotation_imported_total{{queue="{queue.name}"}} 74.0' in text
    assert f'lowtide_annotation_import_seconds_bucket{{le="0.5",queue="{queue.name}"}} 2.0' in text
    assert f'lowtide_queue_jobs{{queue="{queue.name}",state="waiting"}} 0.0' in text
    assert "lowtide_redis_up 1.0" in text


def test_metrics_say_when_redis_is_down() -> None:
    down = redis.Redis(port=free_port(), socket_connect_timeout=0.5)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(AnnotationCollector(Queue("q", connection=down, serializer=JSONSerializer)))
    assert "lowtide_redis_up 0.0" in generate_latest(registry).decode()


def test_quarantine_keeps_reasons_and_only_the_start_of_huge_records(queue: Queue) -> None:
    huge = {"response": "x" * 1_000_000}
    entry = {"reason": "too big", "job_id": "j", "index": 0, "record": ledger.record_excerpt(huge)}
    ledger.quarantine(queue.connection, queue.name, [entry])
    (stored,) = ledger.quarantined(queue.connection, queue.name)
    assert stored["reason"] == "too big" and len(stored["record"]) < 4_100
    assert stored["record"].endswith("characters in all)")


# --- retries ---


def _unreachable_context(queue: Queue, **retry: object) -> ImportContext:
    config = AnnotationConfig(
        label_studio_url=f"http://127.0.0.1:{free_port()}",
        api_key="k" * 20,
        labeling_config=str(REPO / "configs" / "label_studio" / "review.xml"),
        retry=retry or {"max": 3, "intervals_s": [1, 5]},
    )
    context = ImportContext.create(config, queue.connection, queue.name)
    context._project_id = 7  # as if found earlier: the import itself fails
    return context


@contextmanager
def bound(context: ImportContext) -> Iterator[None]:
    """`context` is the worker's for the job functions until the block ends."""
    jobs.bind(context)
    try:
        yield
    finally:
        jobs.bind(None)


def test_an_unreachable_label_studio_asks_rq_to_retry_with_our_intervals(queue: Queue) -> None:
    with bound(_unreachable_context(queue)):
        retry = jobs.import_batch(rollout_records(0, 3))
    assert isinstance(retry, Retry)
    assert retry.max == 3 and retry.intervals == [1, 5, 5]  # the last interval repeats
    assert ledger.read_stats(queue.connection, queue.name).counters["retries"] == 1


def test_without_retries_left_the_job_fails_with_a_readable_reason(queue: Queue) -> None:
    gives_up = pytest.raises(jobs.ImportFailed, match=r"gave up after 1 attempt.*cannot reach")
    with bound(_unreachable_context(queue, max=0, intervals_s=[])), gives_up:
        jobs.import_batch(rollout_records(0, 3))
    assert ledger.read_stats(queue.connection, queue.name).counters["failures"] == 1


def test_the_late_copy_sweep_with_label_studio_down_keeps_its_entry_and_raises_nothing(
    own_redis, caplog: pytest.LogCaptureFixture
) -> None:
    """An import that timed out is looked up again at each maintenance pass; Label Studio out
    of reach then: the worker's pass goes on, says so once, and the entry waits for the next."""
    connection = redis.Redis.from_url(own_redis.url)
    queue = Queue("late", connection=connection, serializer=JSONSerializer)
    context = _unreachable_context(queue)
    note_uncertain(connection, queue.name, 7, ["s-1", "s-2"])
    note_uncertain(connection, queue.name, 8, ["s-3"])
    key = uncertain_key(queue.name)
    old = next(raw for raw in connection.zrange(key, 0, -1) if b"s-3" in raw)
    connection.zadd(key, {old: time.time() - LATE_IMPORT_WINDOW_S - 60})  # its window is over
    with bound(context):
        worker = AnnotationWorker(queue)
        worker.recover()
        connection.delete(worker.late_copies.lock_key)  # the next pass, without waiting for it
        worker.recover()
    entries = [json.loads(raw) for raw in connection.zrange(key, 0, -1)]
    # Neither is dropped unswept, not even the one whose window is over.
    assert [(e["project"], e["samples"]) for e in entries] == [(8, ["s-3"]), (7, ["s-1", "s-2"])]
    assert caplog.text.count("cannot look for late copies of imports") == 1
    assert "cannot reach Label Studio" in caplog.text


@pytest.mark.unit
def test_the_job_needs_a_worker_context() -> None:
    with pytest.raises(RuntimeError, match="runs inside `lowtide worker`"):
        jobs.import_batch([])


# --- export rows ---


def _task(annotations: list[dict], **data: object) -> dict:
    base = {"sample_id": "s-1", "prompt": "Name a colour.", "response": "No.", "run_id": "r",
            "step": 3, "reward": 0.1}  # fmt: skip
    return {"id": 11, "data": {**base, **data}, "annotations": annotations}


def _annotation(id_: int, updated: str, *results: dict, cancelled: bool = False) -> dict:
    return {"id": id_, "updated_at": updated, "was_cancelled": cancelled, "completed_by": 1,
            "result": list(results)}  # fmt: skip


RATING_2 = {"from_name": "quality", "type": "rating", "value": {"rating": 2}}
RATING_4 = {"from_name": "quality", "type": "rating", "value": {"rating": 4}}
REFUSAL = {"from_name": "failure", "type": "choices", "value": {"choices": ["refusal"]}}
BETTER = {"from_name": "better_response", "type": "textarea", "value": {"text": ["Blue.\n"]}}


@pytest.mark.unit
def test_the_latest_annotation_that_was_not_skipped_wins() -> None:
    task = _task(
        [
            _annotation(1, "2024-01-01T00:00:00Z", RATING_4),
            _annotation(2, "2024-01-02T00:00:00Z", RATING_2, REFUSAL, BETTER),
            _annotation(3, "2024-01-03T00:00:00Z", cancelled=True),
        ]
    )
    row = rating_row(task)
    assert row["rating"] == 2 and row["categories"] == ["refusal"]
    assert row["meta"]["better_response"] == "Blue."  # the UI's trailing newline is dropped
    assert row["meta"]["annotation_id"] == 2 and row["meta"]["task_id"] == 11
    [preference] = preference_rows(row)
    assert preference == {"prompt": "Name a colour.", "chosen": "Blue.", "rejected": "No.",
                          "chosen_written": True, "sample_id": "s-1",
                          "meta": row["meta"]}  # fmt: skip


@pytest.mark.unit
def test_skipped_foreign_and_unchanged_tasks_make_no_rows() -> None:
    assert rating_row(_task([_annotation(1, "2024-01-01T00:00:00Z", cancelled=True)])) is None
    assert rating_row(_task([_annotation(1, "2024-01-01T00:00:00Z")], sample_id=None)) is None
    same = _task([_annotation(1, "2024-01-01T00:00:00Z", RATING_2, BETTER)], response="Blue.")
    row = rating_row(same)
    assert row["rating"] == 2 and preference_rows(row) == []  # "better" is the same answer


@pytest.mark.unit
def test_since_accepts_last_all_and_iso_times() -> None:
    assert _resolve_since("last", "2024-01-01T00:00:00.000001Z") == "2024-01-01T00:00:00.000001Z"
    assert _resolve_since("all", "2024-01-01T00:00:00.000001Z") is None
    assert _resolve_since("2024-05-01T12:00:00Z", None) == "2024-05-01T12:00:00.000000Z"
    assert _resolve_since("2024-05-01T14:00:00+02:00", None) == "2024-05-01T12:00:00.000000Z"
    with pytest.raises(ExportError, match="'last'"):
        _resolve_since("yesterday", None)


@pytest.mark.unit
def test_export_files_sit_beside_out() -> None:
    paths = ExportPaths.beside("data/rm/annotations.jsonl")
    assert paths.preferences == Path("data/rm/annotations.preferences.jsonl")
    assert paths.dataset == Path("data/rm/annotations.hf")
    assert paths.cursor == Path("data/rm/annotations.cursor.json")


# --- config ---


@pytest.mark.unit
def test_service_config_reads_a_full_run_config_and_the_environment() -> None:
    environ = {"LABEL_STUDIO_URL": "http://ls.internal:8080", "LABEL_STUDIO_API_KEY": "secret"}
    service = load_service_config(REPO / "configs" / "quickstart.yaml", [], environ)
    assert service.queue.name == "lowtide-annotate"
    assert service.annotation.label_studio_url == "http://ls.internal:8080"
    assert service.annotation.api_key.get_secret_value() == "secret"
    assert "secret" not in repr(service) and "secret" not in service.model_dump_json()
    overridden = load_service_config(None, ["--annotation.import_batch_max=50"], {})
    assert overridden.annotation.import_batch_max == 50


def test_healthz_is_503_while_redis_is_down() -> None:
    import httpx

    from annotation.metrics import serve_metrics

    down = redis.Redis(port=free_port(), socket_connect_timeout=0.5)
    port = free_port()
    server = serve_metrics(Queue("q", connection=down, serializer=JSONSerializer), port)
    try:
        response = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10)
        assert response.status_code == 503 and "redis unreachable" in response.text
        metrics = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10)
        assert metrics.status_code == 200 and "lowtide_redis_up 0.0" in metrics.text
    finally:
        server.shutdown()


@pytest.mark.unit
def test_secrets_can_come_from_files_named_by_the_environment(tmp_path: Path) -> None:
    from lowtide.errors import UsageError

    (tmp_path / "key").write_text("from-a-file\n")
    (tmp_path / "redis").write_text("redis://:pw@redis:6379/0\n")
    environ = {"LABEL_STUDIO_API_KEY_FILE": str(tmp_path / "key"),
               "REDIS_URL_FILE": str(tmp_path / "redis")}  # fmt: skip
    service = load_service_config(None, [], environ)
    assert service.annotation.api_key.get_secret_value() == "from-a-file"
    assert service.queue.redis_url.get_secret_value() == "redis://:pw@redis:6379/0"
    # The variable itself wins over its file.
    both = load_service_config(None, [], {**environ, "LABEL_STUDIO_API_KEY": "direct"})
    assert both.annotation.api_key.get_secret_value() == "direct"
    with pytest.raises(UsageError, match=r"LABEL_STUDIO_API_KEY_FILE=.*cannot read"):
        load_service_config(None, [], {"LABEL_STUDIO_API_KEY_FILE": str(tmp_path / "missing")})


@pytest.mark.unit
def test_a_wiped_label_studio_does_not_inherit_the_imported_set() -> None:
    """Project 1 of a server whose data was reset is another project: another set."""
    url = "http://127.0.0.1:8080"
    before = ledger.imported_key(url, 1, "2026-01-01T10:00:00.123456+00:00")
    after = ledger.imported_key(url, 1, "2026-03-02T09:00:00.654321+00:00")
    assert before != after
    assert ledger.imported_key("http://other:8080", 1, "x") != ledger.imported_key(url, 1, "x")


@pytest.mark.unit
def test_the_job_the_producer_names_is_the_one_the_worker_runs() -> None:
    module, _, name = JOB_FUNCTION.rpartition(".")
    assert getattr(__import__(module, fromlist=[name]), name) is jobs.import_batch


def test_a_batch_of_only_junk_is_quarantined_at_once_while_label_studio_is_down(
    queue: Queue,
) -> None:
    context = _unreachable_context(queue)
    context._project_id = None  # not looked up yet: any Label Studio call would fail
    job = queue.enqueue(JOB_FUNCTION, [{"sample_id": "x"}, "not a record"])
    with bound(context):
        counts = job.perform()
    assert counts["quarantined"] == 2 and counts["imported"] == 0  # not a Retry
    assert len(ledger.quarantined(queue.connection, queue.name)) == 2
    stats = ledger.read_stats(queue.connection, queue.name).counters
    assert stats["retries"] == 0 and stats["quarantined"] == 2


def test_records_past_the_field_caps_are_quarantined_with_the_reason(queue: Queue) -> None:
    """Every field a task shows, or a project is titled with, is bounded (sampling/records.py),
    and a comparison's responses are held to max_text_chars as the prompt and response are."""
    long_run = rollout_record(0)
    long_run["run_id"] = "r" * 300  # the sampler refuses to make such a record
    long_reason = rollout_record(1)
    long_reason["selected_by"]["reason"] = "x" * 10_000
    many_settings = rollout_record(2)
    many_settings["generation"] = {f"setting_{i}": i for i in range(100)}
    compared = rollout_record(3)
    compared["compare"] = [
        {"sample_id": f"member-{i}", "index": i, "response": text, "reward": 0.1,
         "reward_details": {}, "advantage": None, "truncated": False, "response_cut": False,
         "response_chars": len(text)}
        for i, text in enumerate((compared["response"], "y" * 500))
    ]  # fmt: skip
    context = _unreachable_context(queue)
    context.config = context.config.model_copy(update={"max_text_chars": 100})
    job = queue.enqueue(JOB_FUNCTION, [long_run, long_reason, many_settings, compared])
    with bound(context):
        counts = job.perform()
    assert counts["quarantined"] == 4 and counts["imported"] == 0  # not a Retry
    reasons = [entry["reason"] for entry in ledger.quarantined(queue.connection, queue.name)]
    assert any(r.startswith("run_id: string should have at most 256 characters") for r in reasons)
    assert any(r.startswith("selected_by.reason: string should have at most 256") for r in reasons)
    assert any(r.startswith("generation: dictionary should have at most 64 items") for r in reasons)
    assert any(r.startswith("compare.1.response: 500 characters") for r in reasons), reasons


def test_junk_beside_good_records_is_quarantined_once_across_retries(queue: Queue) -> None:
    job = queue.enqueue(JOB_FUNCTION, [*rollout_records(0, 2), {"sample_id": "x"}])
    context = _unreachable_context(queue)
    context._project_id = None  # the project lookup itself fails, before any import mark
    with bound(context):
        for _ in range(2):  # two attempts, both fail at Label Studio
            job = Job.fetch(job.id, connection=queue.connection, serializer=JSONSerializer)
            assert isinstance(job.perform(), Retry)
    assert len(ledger.quarantined(queue.connection, queue.name)) == 1


def test_paced_imports_into_a_project_are_an_interval_apart_across_workers(queue: Queue) -> None:
    """annotation.import_interval_s: three workers' imports into one project take turns, one an
    interval; another project is not held back; 0 paces nothing and leaves no key."""
    import threading
    import time

    connection = queue.connection
    project = ledger.imported_key(f"http://{queue.name}", 1, "x")
    other = ledger.imported_key(f"http://{queue.name}", 2, "x")
    times: list[float] = []

    def importer() -> None:
        pace(connection, project, 0.3)
        times.append(time.monotonic())

    threads = [threading.Thread(target=importer) for _ in range(3)]
    for thread in threads:
        thread.start()
    started = time.monotonic()
    pace(connection, other, 0.3)
    assert time.monotonic() - started < 0.2
    for thread in threads:
        thread.join()
    gaps = [b - a for a, b in zip(sorted(times), sorted(times)[1:], strict=False)]
    assert len(gaps) == 2 and min(gaps) >= 0.28, gaps
    unpaced = ledger.imported_key(f"http://{queue.name}", 3, "x")
    started = time.monotonic()
    for _ in range(3):
        pace(connection, unpaced, 0)
    assert time.monotonic() - started < 0.1
    assert not connection.exists(unpaced.replace(":imported:", ":paced:"))
    for key in (project, other):
        connection.delete(key.replace(":imported:", ":paced:"))


def test_a_paced_job_takes_the_never_tried_jobs_queued_behind_it(queue: Queue) -> None:
    """annotation/coalesce.py: up to the limit, from the head of the queue; a job already tried
    (meta), one of another function or one that does not fit is left; what was taken is in the
    taking job's stored payload (a rerun after a SIGKILL imports it), the taken job is finished
    and the same batch sent again is still refused by its id."""
    from annotation.coalesce import take_queued_jobs
    from sampling.transport.producer import enqueue_batch

    batches = [rollout_records(10 * i, 3, run_id=queue.name) for i in range(7)]
    for batch in batches:
        enqueue_batch(queue, batch)
    ids = queue.get_job_ids()
    tried = Job.fetch(ids[2], connection=queue.connection, serializer=JSONSerializer)
    tried.meta["validated"] = True
    tried.save_meta()
    queue.enqueue("os.system", ["echo no"])
    taker = Job.fetch(ids[0], connection=queue.connection, serializer=JSONSerializer)
    queue.remove(taker)  # as a worker dequeues it

    merged, taken = take_queued_jobs(taker, batches[0], limit=10)
    assert taken == 2 and merged == batches[0] + batches[1] + batches[3]  # 9: a fourth is 12
    assert queue.get_job_ids()[:3] == [ids[2], ids[4], ids[5]]
    stored = Job.fetch(taker.id, connection=queue.connection, serializer=JSONSerializer)
    assert stored.args == [merged] and taker.args == [merged]
    finished = Job.fetch(ids[1], connection=queue.connection, serializer=JSONSerializer)
    assert finished.get_status() == "finished" and queue.connection.ttl(finished.key) > 0
    depth = queue.count
    enqueue_batch(queue, batches[1])
    assert queue.count == depth  # refused as a duplicate, as a batch that ran would be
    _, none = take_queued_jobs(taker, merged, limit=10)
    assert none == 0 and len(queue.get_job_ids()) == depth


# --- the default review form, outside a checkout ---


@pytest.mark.unit
def test_the_default_form_is_read_from_the_installed_copy_where_the_path_is_not_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from annotation.config import DEFAULT_LABELING_CONFIG, AnnotationConfig
    from annotation.importer import LabelingConfigError, read_labeling_config

    checkout_form = (REPO / DEFAULT_LABELING_CONFIG).read_text(encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # a worker installed with pip, run from its own directory
    assert AnnotationConfig().labeling_config == DEFAULT_LABELING_CONFIG
    assert read_labeling_config(DEFAULT_LABELING_CONFIG) == checkout_form
    (tmp_path / "configs" / "label_studio").mkdir(parents=True)
    (tmp_path / DEFAULT_LABELING_CONFIG).write_text("<View/>")  # a form of its own wins
    assert read_labeling_config(DEFAULT_LABELING_CONFIG) == "<View/>"
    with pytest.raises(LabelingConfigError, match=r"cannot read the labeling config forms/my\.xml"):
        read_labeling_config("forms/my.xml")  # a path the config names is never replaced


def test_the_wheel_carries_the_default_form(tmp_path: Path) -> None:
    import subprocess
    import sys
    import zipfile

    from annotation.config import DEFAULT_LABELING_CONFIG

    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "--quiet", "--wheel-dir", str(tmp_path), str(REPO)], check=True)  # fmt: skip
    (wheel,) = tmp_path.glob("lowtide-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        packed = archive.read("annotation/forms/review.xml")
    assert packed == (REPO / DEFAULT_LABELING_CONFIG).read_bytes()
