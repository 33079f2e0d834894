"""Queue -> `lowtide worker` -> Label Studio, against a real Label Studio and real Redis: exact
counts, SIGKILLed workers, Label Studio outages, junk on the queue, and no leaked key."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import redis
from rq import Queue
from rq.serializers import JSONSerializer

from annotation import jobs, ledger
from annotation.importer import ImportContext, JobMemo, import_records
from annotation.labelstudio import (
    LabelStudioClient,
    LabelStudioError,
    LabelStudioOutcomeUnknown,
    task_from_record,
)
from annotation.late_imports import LATE_IMPORT_WINDOW_S, Sweep, note_uncertain, uncertain_key
from annotation.rq_internals import BoundedJob
from annotation.worker import AnnotationWorker
from sampling.records import JOB_FUNCTION
from sampling.transport import queue_admin
from tests.conftest import run_cli
from tests.helpers.labelstudio import REVIEW_XML_PATH, LabelStudioServer
from tests.helpers.pipeline import Setup, stop, wait_for
from tests.helpers.proxies import HeldRequestProxy, LostAnswerProxy
from tests.helpers.toggle_proxy import ToggleProxy

pytestmark = [pytest.mark.e2e, pytest.mark.labelstudio, pytest.mark.slow, pytest.mark.timeout(600)]


def test_a_thousand_records_become_exactly_a_thousand_tasks(
    any_label_studio: LabelStudioServer, workdir: Path
) -> None:
    setup = Setup(any_label_studio, workdir)
    records = setup.records(0, 1000)
    setup.enqueue(records)
    result = setup.cli("worker", "--burst")
    assert result.returncode == 0, result.stderr

    tasks = setup.tasks()
    assert len(tasks) == 1000 and setup.task_count() == 1000
    assert Counter(task["sample_id"] for task in tasks) == Counter(r["sample_id"] for r in records)
    by_id = {task["sample_id"]: task for task in tasks}
    for record in records[::97]:
        task = by_id[record["sample_id"]]
        assert (task["prompt"], task["response"]) == (record["prompt"], record["response"])
        assert (task["run_id"], task["step"]) == (record["run_id"], record["step"])
        assert task["reward"] == record["reward"] and task["reward_text"] == "0.05"
    stats = setup.stats()
    assert stats["imported"] == 1000 and stats["batches"] == 16 and stats["failures"] == 0
    assert result.stderr.count(" records -> ") == 16  # one line per batch

    # The same records again, in other batches (other job ids): nothing new is created.
    setup.enqueue(records[:300], batch=50)
    assert setup.cli("worker", "--burst").returncode == 0
    assert setup.task_count() == 1000 and setup.stats()["duplicates"] == 300

    status = setup.cli("queue", "status")
    assert "workers: imported" in status.stdout and "1000" in status.stdout
    setup.assert_no_key_leaked()


def test_sigkilled_workers_leave_exactly_one_task_per_record(
    any_label_studio: LabelStudioServer, workdir: Path
) -> None:
    # Small import requests: many chances for a kill to land between a request and its mark.
    setup = Setup(any_label_studio, workdir, import_batch_max="20")
    # Three kills 100 imports apart (five import requests each) land well before the end of
    # 600: each kill, wherever it lands, is one more chance to die between a request and its mark.
    count = 600
    records = setup.records(0, count)
    setup.enqueue(records, batch=100)
    for kill in range(3):
        before = setup.task_count()
        worker = setup.start_worker()
        wait_for(lambda b=before: setup.task_count() >= b + 100, 120, f"imports before kill {kill}")
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()
    assert setup.task_count() < count, "the kills came too late to test anything"

    # A fresh worker puts the killed workers' batches back (at once, or after 10 s for a batch
    # taken but not yet started) and finishes them.
    worker = setup.start_worker()
    try:
        setup.wait_for_all(count)
    finally:
        stop(worker)
    setup.assert_each_once(records)
    setup.assert_no_key_leaked()


def test_paced_imports_take_queued_jobs_and_a_sigkill_loses_and_repeats_nothing(
    label_studio: LabelStudioServer, workdir: Path
) -> None:
    """annotation.import_interval_s: one request a project per interval, each filled with the
    small jobs queued behind it (annotation/coalesce.py), not one job a turn; a worker killed
    on the way leaves every record once."""
    setup = Setup(label_studio, workdir, import_interval_s="0.5", import_batch_max="100")
    records = setup.records(0, 600)
    setup.enqueue(records, batch=5)  # 120 jobs: one a turn would take a minute
    first, second = setup.start_worker(), setup.start_worker()
    try:
        wait_for(lambda: setup.task_count() >= 100, 120, "the first imports")
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
        setup.wait_for_all(600)
    finally:
        stop(second)
    setup.assert_each_once(records)
    stats = setup.stats()
    assert stats["coalesced_jobs"] >= 60 and stats["batches"] <= 60, stats
    status = setup.cli("queue", "status").stdout  # what docs/review.md points the reader at
    assert "workers: coalesced jobs" in status and str(stats["coalesced_jobs"]) in status
    setup.assert_no_key_leaked()


def test_a_batch_taken_by_a_worker_that_died_before_starting_it_goes_to_an_idle_worker(
    label_studio: LabelStudioServer, workdir: Path
) -> None:
    """A SIGKILL just after RQ moved a job to its intermediate list and before it started leaves
    the id only there. A worker with nothing else to do puts it back within seconds: RQ's idle
    wait (405 s) held off the recovery that long, and its own cleanup would then fail the job."""
    setup = Setup(label_studio, workdir)
    setup.enqueue(setup.records(0, 20), batch=20)
    assert setup.connection.lmove(setup.queue.key, setup.queue.intermediate_queue_key)
    worker = setup.start_worker()
    try:
        wait_for(lambda: setup.task_count() == 20, 45, "the batch", explain=setup.queue_state)
    finally:
        stop(worker)
    assert setup.queue.failed_job_registry.count == 0


def test_a_dead_workers_scheduler_lock_does_not_hold_back_retries(
    label_studio: LabelStudioServer, workdir: Path
) -> None:
    """A killed worker's scheduler keeps the queue's scheduler lock for a minute, and a retry
    waiting in the scheduler waited for it. The next worker releases a dead local holder's lock."""
    setup = Setup(label_studio, workdir)
    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid that no longer runs
    holder = f"dead-scheduler-{uuid.uuid4().hex[:6]}"
    connection = setup.connection
    connection.hset(
        f"rq:scheduler:{holder}",
        mapping={"name": holder, "hostname": socket.gethostname(), "pid": gone.pid},
    )
    connection.set(f"rq:scheduler-lock:{setup.queue_name}", holder, ex=61)
    records = setup.records(0, 20)
    due = datetime.now(timezone.utc) + timedelta(seconds=1)  # a retry, due now
    setup.queue.enqueue_at(due, JOB_FUNCTION, records, job_id=f"retry-{setup.run_id}")
    worker = setup.start_worker()
    try:
        wait_for(lambda: setup.task_count() == 20, 30, "the retry", explain=setup.queue_state)
    finally:
        stop(worker)
    assert "released the scheduler lock of a dead worker" in setup.logs[-1].read_text()


def test_reconcile_finds_tasks_imported_by_an_attempt_that_died(
    any_label_studio: LabelStudioServer, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worst moment to die: Label Studio has created the tasks, the sample ids are not
    marked yet. The next attempt must find them and import nothing twice."""
    setup = Setup(any_label_studio, workdir)
    config = setup.annotation_config()
    context = ImportContext.create(config, setup.connection, setup.queue_name)
    memo = JobMemo("job-1", {})
    records = setup.records(0, 50)

    class Died(BaseException):
        pass

    def die_before_marking(sample_ids: object) -> None:
        raise Died

    monkeypatch.setattr(ledger.ImportedSet, "mark", lambda self, ids: die_before_marking(ids))
    with pytest.raises(Died):
        import_records(records, context, memo)
    monkeypatch.undo()
    assert setup.task_count() == 50

    monkeypatch.setattr("annotation.importer.SETTLE_S", 0.0)
    outcome = import_records(records, context, memo)
    assert (outcome.reconciled, outcome.imported) == (50, 0)
    assert setup.task_count() == 50
    context.client.close()


def _sweeping_worker(context: ImportContext) -> AnnotationWorker:
    """A worker of the context's queue, whose maintenance pass (`recover`) sweeps late copies."""
    queue = Queue(context.queue_name, connection=context.connection, serializer=JSONSerializer)
    return AnnotationWorker(queue)


def _imports(method: str, path: str) -> bool:
    return method == "POST" and "/import" in path


def _proxied_context(
    setup: Setup, proxy_url: str, redis_url: str, timeout_s: float = 30.0
) -> ImportContext:
    """An import context whose Label Studio client goes through the proxy at `proxy_url`; the
    review project is made first, directly (the proxied client may be given a short timeout)."""
    with setup.server.client() as direct:
        direct.ensure_project(setup.project, REVIEW_XML_PATH.read_text())
    config = setup.annotation_config(proxy_url)
    client = LabelStudioClient(proxy_url, setup.server.api_key, timeout_s=timeout_s)
    return ImportContext(config, client, redis.Redis.from_url(redis_url), setup.queue_name)


def test_an_import_that_times_out_and_lands_after_its_retry_leaves_one_task_per_sample(
    label_studio: LabelStudioServer,
    workdir: Path,
    own_redis,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An import request held back past the client's timeout (a slow upload, a queueing proxy):
    the retry looks its samples up, finds none and imports them; the held request lands after
    that. The worker's next maintenance pass deletes the late copies, and only those."""
    setup = Setup(label_studio, workdir)
    with HeldRequestProxy(label_studio.url, _imports) as proxy:
        context = _proxied_context(setup, proxy.url, own_redis.url, timeout_s=2)
        client, connection = context.client, context.connection
        memo, records = JobMemo("job-1", {}), setup.records(0, 5)
        try:
            with pytest.raises(LabelStudioOutcomeUnknown):
                import_records(records, context, memo)
            assert proxy.held.is_set()
            monkeypatch.setattr("annotation.importer.SETTLE_S", 0.0)
            assert import_records(records, context, memo).imported == 5  # the retry
            assert proxy.release() == 201
            assert setup.task_count() == 10  # each sample twice
            kept = set(setup.sample_id_counts())
            jobs.bind(context)
            _sweeping_worker(context).recover()
        finally:
            jobs.bind(None)
            client.close()
    setup.assert_each_once(records)
    assert kept == {task["sample_id"] for task in setup.tasks()}
    assert ledger.read_stats(connection, setup.queue_name).counters["late_copies_removed"] == 5
    assert "deleted 5 unreviewed second task(s)" in caplog.text


def test_an_import_a_gateway_answered_502_for_is_noted_for_the_sweep(
    label_studio: LabelStudioServer, workdir: Path, own_redis
) -> None:
    """A gateway's 502 (or 504) on an import: Label Studio may have carried it out behind the
    gateway, and later than the retry's lookup; the request is noted for the sweep like a
    timeout."""
    setup = Setup(label_studio, workdir)
    with LostAnswerProxy(label_studio.url, _imports) as proxy:
        context = _proxied_context(setup, proxy.url, own_redis.url)
        client, connection = context.client, context.connection
        records = setup.records(0, 3)
        try:
            with pytest.raises(LabelStudioError) as raised:
                import_records(records, context, JobMemo("job-1", {}))
        finally:
            client.close()
    assert raised.value.status == 502 and proxy.lost
    entries = [json.loads(raw) for raw in connection.zrange(uncertain_key(setup.queue_name), 0, -1)]
    assert [sorted(entry["samples"]) for entry in entries] == [
        sorted(r["sample_id"] for r in records)
    ]


def test_the_late_copy_sweep_never_deletes_a_reviewed_task(
    label_studio: LabelStudioServer, workdir: Path, own_redis, caplog: pytest.LogCaptureFixture
) -> None:
    """Two tasks of each sample, reviewed or not: the reviewed ones stay, else the oldest; two
    reviewed copies both stay, said once however many passes see them."""
    setup = Setup(label_studio, workdir)
    connection = redis.Redis.from_url(own_redis.url)
    records = setup.records(0, 4)
    with label_studio.client() as client:
        project_id = client.ensure_project(setup.project, REVIEW_XML_PATH.read_text())
        tasks = [task_from_record(record) for record in records]
        first, late = client.import_tasks(project_id, tasks), client.import_tasks(project_id, tasks)
        # 0: the oldest reviewed; 1: the late copy reviewed; 2: both reviewed; 3: neither
        for task_id in (first[0], late[1], first[2], late[2]):
            client.create_annotation(task_id, [])
        note_uncertain(connection, setup.queue_name, project_id, [r["sample_id"] for r in records])
        sweep = Sweep(connection, setup.queue_name)
        assert sweep.run(client) == (3, None)
        connection.delete(sweep.lock_key)  # the next pass, without waiting for it
        assert sweep.run(client) == (0, None)
        key = uncertain_key(setup.queue_name)
        assert connection.zcard(key) == 1  # looked up again until its window is over
        (entry,) = connection.zrange(key, 0, -1)
        connection.zadd(key, {entry: time.time() - LATE_IMPORT_WINDOW_S - 1})
        connection.delete(sweep.lock_key)
        assert sweep.run(client) == (0, None) and connection.zcard(key) == 0  # and once after
    left = {task["id"] for task in setup.tasks()}
    assert left == {first[0], late[1], first[2], late[2], first[3]}
    assert caplog.text.count("has 2 reviewed tasks") == 1


def test_a_project_deleted_under_the_worker_is_found_or_made_again(
    label_studio: LabelStudioServer, workdir: Path, own_redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The review project deleted in Label Studio while a worker runs: the batch's retry imports
    into the project found again by its title, or made again (as a worker that starts does),
    not into the deleted id until the worker restarts; the failed attempt says so in one line."""
    import httpx
    import redis

    from annotation.labelstudio import LabelStudioError

    setup = Setup(label_studio, workdir)
    config = setup.annotation_config()
    context = ImportContext.create(config, redis.Redis.from_url(own_redis.url), setup.queue_name)
    try:
        assert import_records(setup.records(0, 5), context, JobMemo("job-1", {})).imported == 5
        deleted = setup.project_id()
        httpx.delete(
            f"{label_studio.url}/api/projects/{deleted}/",
            headers={"Authorization": f"Token {label_studio.api_key}"},
            timeout=30,
        ).raise_for_status()

        memo, records = JobMemo("job-2", {}), setup.records(5, 5)
        with pytest.raises(LabelStudioError) as failed:  # the attempt that meets the deletion
            import_records(records, context, memo)
        assert f"has no project {deleted}" in str(failed.value)
        assert "\n" not in str(failed.value) and "<" not in str(failed.value)
        monkeypatch.setattr("annotation.importer.SETTLE_S", 0.0)
        assert import_records(records, context, memo).imported == 5  # its retry
    finally:
        context.client.close()
    with label_studio.client() as client:
        again = client.find_project(setup.project)
        assert again is not None and again != deleted
        assert client.count_tasks(again) == 5


def test_label_studio_down_for_a_while_then_for_good(
    label_studio: LabelStudioServer, workdir: Path
) -> None:
    """Label Studio out of reach (a proxy in front of it refuses connections and cuts the open
    ones, as a stopped server does): for longer than the first retries wait (12 s), then for
    good."""
    with ToggleProxy(label_studio.url) as proxy:
        check_outages(label_studio, proxy, workdir)


def check_outages(label_studio: LabelStudioServer, proxy: ToggleProxy, workdir: Path) -> None:
    setup = Setup(
        label_studio, workdir, url=proxy.url,
        **{"retry.max": "6", "retry.intervals_s": "[1,2,3,5,8]"},  # 27 s of retries in all
    )  # fmt: skip
    worker = setup.start_worker()
    try:
        setup.enqueue(setup.records(0, 100))
        wait_for(lambda: setup.task_count() == 100, 60, "the first 100 tasks")

        proxy.down()
        setup.enqueue(setup.records(100, 200))  # records keep flowing while it is down
        time.sleep(12)  # three retries at least, well inside the retries' 27 s
        assert setup.stats()["retries"] >= 2
        proxy.up()
        wait_for(lambda: setup.task_count() == 300, 180, "all 300 tasks after the outage")
    finally:
        stop(worker)
    assert worker.returncode == 0  # SIGTERM: a clean stop
    counts = setup.sample_id_counts()
    assert len(counts) == 300 and max(counts.values()) == 1

    # Down for good: the retries run out and the batches wait in the failed registry.
    # The same project: requeued batches must not duplicate what is there.
    retry_fast = {"retry.max": "2", "retry.intervals_s": "[1]"}
    # A password in the URL's userinfo (a proxy's login): never in a message, log or job record.
    with_password = proxy.url.replace("http://", "http://reviewer:pw-in-the-url-7731@")
    quick = Setup(label_studio, workdir, project=setup.project, url=with_password, **retry_fast)
    worker = quick.start_worker()
    try:
        wait_for(lambda: "worker: queue" in quick.logs[-1].read_text(), 60, "the worker")
        proxy.down()
        quick.enqueue(setup.records(300, 100), batch=50)
        wait_for(lambda: quick.queue.failed_job_registry.count == 2, 90, "2 failed batches")
    finally:
        proxy.up()
        stop(worker)
    failed = queue_admin.failed_jobs(quick.queue_config(), job_class=BoundedJob)
    errors = [job.error for job in failed]
    assert len(errors) == 2, errors
    for error in errors:
        assert error.startswith("annotation.jobs.ImportFailed: gave up after 3 attempt(s): ")
        assert f"cannot reach Label Studio at {proxy.url}" in error
    shown = quick.cli("queue", "failed")
    assert "gave up after" in shown.stdout and "pw-in-the-url-7731" not in shown.stdout
    quick.assert_no_key_leaked()
    assert quick.stats()["failures"] == 2

    requeued = quick.cli("queue", "requeue", "--all")
    assert "requeued 2 job(s)" in requeued.stderr
    assert quick.cli("worker", "--burst").returncode == 0
    counts = quick.sample_id_counts()
    assert len(counts) == 400 and max(counts.values()) == 1
    setup.assert_no_key_leaked()
    quick.assert_no_key_leaked()


def test_junk_on_the_queue_is_refused_and_nothing_valid_is_lost(
    label_studio: LabelStudioServer, workdir: Path
) -> None:
    setup = Setup(label_studio, workdir)
    marker = workdir / "executed"
    # A job naming another function, as anyone with access to Redis could enqueue.
    setup.queue.enqueue("subprocess.getoutput", f"touch {marker}")
    # A pickle payload (RQ's default serializer) that would run code when unpickled.
    Queue(setup.queue_name, connection=setup.connection).enqueue("os.system", f"touch {marker}")
    # A body that is not JSON at all.
    job = setup.queue.enqueue("annotation.jobs.import_batch", [])
    setup.connection.hset(job.key, "data", b"\x00\xff not json")
    # Junk that stopped the worker, and the batches behind it waited: arguments of another
    # shape (a dict), and an id whose key is no job's hash.
    setup.queue.enqueue("annotation.jobs.import_batch", {"0": []})
    string_key = f"string-{setup.run_id}"
    setup.connection.set(f"rq:job:{string_key}", "not a job")
    setup.connection.rpush(setup.queue.key, string_key)
    # Bad records beside good ones, in one batch.
    missing = setup.record(2)
    del missing["prompt"]
    huge = setup.record(3)
    huge.update(response="x" * 10_000_000, response_chars=10_000_000)
    good = [setup.record(0), setup.record(1), setup.record(4)]
    batch = [good[0], missing, huge, good[1], "not a record", good[2]]
    setup.queue.enqueue("annotation.jobs.import_batch", batch, job_id=f"mixed-{setup.run_id}")
    setup.enqueue(setup.records(10, 20))  # and a plain batch after the junk

    result = setup.cli("worker", "--burst")
    setup.connection.delete(f"rq:job:{string_key}")  # a key no check of this shared Redis reads
    assert result.returncode == 0, result.stderr
    assert not marker.exists()
    ids = set(setup.sample_id_counts())
    assert ids == {r["sample_id"] for r in good + setup.records(10, 20)}

    reasons = [entry["reason"] for entry in ledger.quarantined(setup.connection, setup.queue_name)]
    assert any("refusing to run 'subprocess.getoutput'" in r for r in reasons)
    assert any("takes one argument, a list of records" in r for r in reasons)
    assert any("not a job's hash" in r for r in reasons)
    assert sum("not readable as JSON" in r for r in reasons) == 2
    assert any(r.startswith("prompt: field required") for r in reasons)
    assert any("response: 10000000 characters" in r for r in reasons)
    assert any(r.startswith("record: not valid JSON") for r in reasons)
    stats = setup.stats()
    assert (stats["rejected_jobs"], stats["quarantined"], stats["imported"]) == (5, 3, 23)
    quarantined = setup.cli("queue", "quarantined", "--json")
    entries = [json.loads(line) for line in quarantined.stdout.splitlines()]
    assert max(len(entry.get("record", "")) for entry in entries) < 5_000  # not 10 MB
    failed = setup.cli("queue", "failed")
    assert failed.stdout.count("refusing to run") == 1
    setup.assert_no_key_leaked()


def test_a_wrong_token_stops_the_worker_with_a_clear_message(
    label_studio: LabelStudioServer, workdir: Path
) -> None:
    setup = Setup(label_studio, workdir)
    wrong = "wrong-" + uuid.uuid4().hex
    result = run_cli(
        "worker", "--burst", *setup.flags,
        cwd=workdir, env={**setup.env(), "LABEL_STUDIO_API_KEY": wrong},
    )  # fmt: skip
    assert result.returncode == 1
    assert "rejects the API token (LABEL_STUDIO_API_KEY)" in result.stderr
    assert wrong not in result.stderr and "Traceback" not in result.stderr


def test_torchrun_ranks_route_their_own_samples_and_each_lands_once(
    label_studio: LabelStudioServer, workdir: Path, tiny_models
) -> None:
    """Two CPU processes under torchrun with the sampler, then a worker: rank-unique sample ids,
    the logged `sampling/*` counts summed over ranks, every routed sample in Label Studio once."""
    from rl.tracking.reader import read_run
    from tests.conftest import REPO

    setup = Setup(label_studio, workdir)
    out = workdir / "out"
    train = [
        "train", "--config", str(REPO / "configs" / "quickstart.yaml"),
        f"--model.actor.model_name_or_path={tiny_models.policy}", f"--trainer.output_dir={out}",
        "--trainer.max_steps=3", "--trainer.rollout_batch_size=4", "--trainer.max_new_tokens=12",
        f"--run_id={setup.run_id}", f"--logger.save_dir={out / 'logs'}", "--logger.name=[console]",
        f"--queue.name={setup.queue_name}", f"--queue.spool_dir={out / 'spool'}",
        "--sampling.threshold=0.5",
    ]  # fmt: skip
    result = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
         "-m", "lowtide", *train],
        cwd=REPO, capture_output=True, text=True, timeout=600,  # the config's data path
        env={**os.environ, **setup.env(), "OMP_NUM_THREADS": "1"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert "2 process(es)" in result.stderr

    queued = [record for job in setup.queue.get_jobs() for record in job.args[0]]
    assert {record["rank"] for record in queued} == {0, 1}  # both ranks routed their own
    sample_ids = [record["sample_id"] for record in queued]
    assert len(sample_ids) == len(set(sample_ids)) > 0
    metrics = read_run(out / "logs" / setup.run_id).metrics
    routed = (metrics["sampling/selected"] - metrics["sampling/capped"]).sum()
    assert routed == len(sample_ids)  # rank 0 logged the sum over both ranks

    assert setup.cli("worker", "--burst").returncode == 0
    counts = setup.sample_id_counts()
    assert set(counts) == set(sample_ids) and max(counts.values()) == 1


def test_annotation_init_creates_the_project_once(
    label_studio: LabelStudioServer, workdir: Path
) -> None:
    setup = Setup(label_studio, workdir)
    first = setup.cli("annotation", "init")
    assert first.returncode == 0, first.stderr
    project_id = setup.project_id()
    assert f"id {project_id}" in first.stdout
    again = setup.cli("annotation", "init")
    assert again.returncode == 0 and f"id {project_id}" in again.stdout  # found, not duplicated

    down = run_cli(
        "annotation", "init", "--wait", "0", *setup.flags, cwd=workdir,
        env={**setup.env(), "LABEL_STUDIO_URL": "http://127.0.0.1:9"},
    )  # fmt: skip
    assert down.returncode == 1 and "cannot reach Label Studio" in down.stderr


def _down_during(
    setup: Setup, proxy: ToggleProxy, burst: subprocess.Popen, tasks_before: int = 0
) -> None:
    """Label Studio goes out of reach once the burst has imported its first batch."""
    wait_for(lambda: setup.task_count() > tasks_before, 120, "the first batch")
    proxy.down()
    assert burst.poll() is None, "the burst ended before Label Studio went down"


def _burst_into_an_outage(
    label_studio: LabelStudioServer, workdir: Path, proxy: ToggleProxy, retries: dict[str, str]
) -> tuple[Setup, subprocess.Popen]:
    """400 records queued, a burst worker started, and Label Studio out of reach once the first
    of its 8 batches has landed."""
    setup = Setup(label_studio, workdir, url=proxy.url, **retries)
    setup.enqueue(setup.records(0, 400), batch=50)
    burst = setup.start_worker("--burst")
    try:
        _down_during(setup, proxy, burst)
    except BaseException:
        stop(burst)
        raise
    return setup, burst


def test_a_burst_waits_for_the_batches_label_studio_missed_and_fails_when_they_give_up(
    label_studio: LabelStudioServer, workdir: Path
) -> None:
    """A burst (`lowtide loop` runs one after each round) used to exit 0 as soon as the queue
    was empty, leaving the batches that Label Studio missed waiting for a retry nobody ran."""
    with ToggleProxy(label_studio.url) as proxy:
        retries = {"retry.max": "4", "retry.intervals_s": "[2,3]"}
        setup, burst = _burst_into_an_outage(label_studio, workdir, proxy, retries)
        try:
            wait_for(lambda: setup.stats()["retries"] >= 2, 60, "attempts to fail")
            assert burst.poll() is None  # not gone with its batches waiting
            proxy.up()
            assert burst.wait(timeout=180) == 0
        finally:
            stop(burst)
        log = setup.logs[-1].read_text()
        assert "batch(es) wait for a retry" in log and "--burst waits for them" in log
        setup.assert_each_once(setup.records(0, 400))

        # Down for good: the retries run out, the burst says so in one line and exits 1.
        quick = Setup(label_studio, workdir, project=setup.project, url=proxy.url,
                      **{"retry.max": "1", "retry.intervals_s": "[1]"})  # fmt: skip
        quick.enqueue(setup.records(400, 600), batch=200)  # few batches: each try is ~3 s
        burst = quick.start_worker("--burst")
        try:
            _down_during(quick, proxy, burst, tasks_before=400)
            assert burst.wait(timeout=120) == 1
        finally:
            stop(burst)
        lines = quick.logs[-1].read_text().strip().splitlines()
        assert re.fullmatch(
            r"error: \d+ batch\(es\) could not be imported after their retries while this "
            r"worker ran: `lowtide queue failed` says why, `lowtide queue requeue --all` sends "
            r"them again",
            lines[-1],
        ), lines[-1]
        assert not any("Traceback" in line for line in lines)  # each give-up is one line
        proxy.up()
        assert quick.cli("queue", "requeue", "--all").returncode == 0
        assert quick.cli("worker", "--burst").returncode == 0
    setup.assert_each_once(setup.records(0, 1000))


def test_a_burst_stops_at_once_when_label_studio_is_out_of_reach_at_its_start(
    label_studio: LabelStudioServer, workdir: Path
) -> None:
    with ToggleProxy(label_studio.url) as proxy:
        setup = Setup(label_studio, workdir, url=proxy.url)
        setup.enqueue(setup.records(0, 10))
        proxy.down()
        started = time.monotonic()
        result = setup.cli("worker", "--burst", timeout=120)
    assert result.returncode == 1 and time.monotonic() - started < 60
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error: cannot reach Label Studio at ") and last.endswith(
        "; the batches wait in the queue"
    ), last
    assert setup.queue.count == 1  # nothing taken, nothing lost


def test_a_burst_waiting_for_a_retry_stops_on_sigterm(
    label_studio: LabelStudioServer, workdir: Path
) -> None:
    with ToggleProxy(label_studio.url) as proxy:
        retries = {"retry.max": "3", "retry.intervals_s": "[60]"}
        setup, burst = _burst_into_an_outage(label_studio, workdir, proxy, retries)
        try:
            wait_for(lambda: "--burst waits for them" in setup.logs[-1].read_text(), 60,
                     "the burst to wait")  # fmt: skip
            started = time.monotonic()
            burst.send_signal(signal.SIGTERM)
            assert burst.wait(timeout=30) == 0
            assert time.monotonic() - started < 5
        finally:
            stop(burst)
    assert re.search(r"worker: stopped; \d+ batch\(es\) wait for a retry",
                     setup.logs[-1].read_text())  # fmt: skip
