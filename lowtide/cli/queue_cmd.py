"""`lowtide queue status|failed|quarantined|requeue|replay|purge`: the annotation queue, the
workers' counters and the spool. Every command takes `--config` and dotted overrides."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import typer
from rich.table import Table
from rich.text import Text

from annotation import ledger
from annotation.config import AnnotationConfig
from annotation.rq_internals import BoundedJob, shown_job_id
from lowtide.cli.usage import reads, split_overrides
from lowtide.config import load_service_config
from lowtide.console import err, out
from lowtide.errors import UsageError, UserError
from lowtide.services.clients import redis_errors
from rl.masking import mask_text, mask_url
from rl.visible_text import cut_line, escaped_json, visible_line
from sampling.config import QueueConfig
from sampling.redaction import Redactor
from sampling.redaction.config import RedactConfig
from sampling.transport import queue_admin

app = typer.Typer(help="Inspect and manage the annotation queue.", no_args_is_help=True)
ConfigOption = typer.Option(None, "--config", "-c", help="run config (its queue section)")
READS_QUEUE = reads("queue")  # --config and --queue.KEY=VALUE overrides
T = TypeVar("T")
# How every command here reads a job: within the worker's bounds (a stored zlib bomb is not
# inflated, nothing it names is imported).
JOB_CLASS = BoundedJob
# `status` lists the review projects too; a frozen Label Studio must not hold up the queue's view.
PROJECTS_TIMEOUT_S = 5.0
SHOWN_CELL_CHARS = 500  # of a reason or error: anyone who writes to Redis writes them


def _queue_config(ctx: typer.Context, config: Path | None) -> QueueConfig:
    return load_service_config(config, ctx.args).queue


def _call(config: QueueConfig, action: Callable[[QueueConfig], T]) -> T:
    with redis_errors(config):
        return action(config)


@app.command(cls=reads("queue", "annotation"))
def status(ctx: typer.Context, config: Path | None = ConfigOption) -> None:
    """Depth, running and failed jobs, the oldest waiting job's age, the spool, what the
    workers did (imported, duplicates, quarantined, retries, failures, import latency), and the
    review projects of `annotation.project`'s series with their tasks."""
    service = load_service_config(config, ctx.args)
    queue = service.queue
    state = _call(queue, lambda q: queue_admin.queue_status(q, job_class=JOB_CLASS))
    stats = _call(queue, lambda q: ledger.read_stats(queue_admin.connect(q), q.name))
    table = Table(title=f"queue {state.name} at {mask_url(queue.redis_url.get_secret_value())}")
    table.add_column("what")
    table.add_column("value", justify="right")
    oldest = "-" if state.oldest_age_s is None else f"{state.oldest_age_s:.0f} s"
    rows = [
        ("waiting jobs", str(state.depth)), ("running jobs", str(state.started)),
        ("retrying jobs (scheduled)", str(state.scheduled)), ("failed jobs", str(state.failed)),
        ("oldest waiting", oldest),
        ("spooled batches", str(state.spool_batches)),
        ("spooled records", str(state.spool_records)),
        ("spool size", f"{state.spool_bytes / 1024:.1f} KiB ({queue.spool_dir})"),
        ("spool segments quarantined", str(state.spool_quarantined)),
    ]  # fmt: skip
    rows += [(f"workers: {name.replace('_', ' ')}", str(n)) for name, n in stats.counters.items()]
    mean = stats.mean_import_s
    rows.append(("workers: mean import", "-" if mean is None else f"{1000 * mean:.0f} ms"))
    rows += review_project_rows(service.annotation)
    for row in rows:
        table.add_row(*row)
    out.print(table)


def review_project_rows(annotation: AnnotationConfig) -> list[tuple[str, str]]:
    """One row a project of the series (title: tasks of the cap, id), oldest first; one row
    saying why they were not read when Label Studio cannot tell (the queue's rows stand)."""
    from annotation.labelstudio import LabelStudioClient, LabelStudioError
    from annotation.series import series_projects

    if annotation.api_key is None:
        return [("review projects", "not read: LABEL_STUDIO_API_KEY is not set")]
    timeout_s = min(annotation.request_timeout_s, PROJECTS_TIMEOUT_S)
    quick = annotation.model_copy(update={"request_timeout_s": timeout_s})
    try:
        with LabelStudioClient.from_config(quick) as client:
            projects = series_projects(client.projects_titled, annotation.project)
            counts = [(pid, title, client.count_tasks(pid)) for pid, title in projects]
    except LabelStudioError as error:
        return [("review projects", f"not read: {error}")]
    if not counts:
        return [("review projects", f"none yet of {annotation.project!r}")]
    cap = annotation.max_tasks_per_project
    return [
        (f"review project {title!r}", f"{tasks:,} of {cap:,} tasks (id {pid})")
        for pid, title, tasks in counts
    ]


@app.command(cls=READS_QUEUE)
def failed(
    ctx: typer.Context,
    config: Path | None = ConfigOption,
    limit: int = typer.Option(50, "--limit"),
) -> None:
    """Failed jobs with their error."""
    queue = _queue_config(ctx, config)
    jobs = _call(queue, lambda q: queue_admin.failed_jobs(q, limit, job_class=JOB_CLASS))
    rows = [
        (shown_job_id(job.job_id), str(job.records), job.ended_at or "-", job.error) for job in jobs
    ]
    _print_table(f"{len(jobs)} failed job(s)", ("job", "records", "ended", "error"), rows)


@app.command(cls=READS_QUEUE)
def quarantined(
    ctx: typer.Context,
    config: Path | None = ConfigOption,
    limit: int = typer.Option(50, "--limit"),
    as_json: bool = typer.Option(False, "--json", help="one JSON entry per line"),
) -> None:
    """Records and jobs the workers refused, newest first, with the reason."""
    queue = _queue_config(ctx, config)
    entries = _call(queue, lambda q: ledger.quarantined(queue_admin.connect(q), q.name, limit))
    if as_json:
        for entry in entries:
            out.print(escaped_json(_redacted_entry(entry)), markup=False)
        return
    rows = [
        (shown_job_id(str(entry.get("job_id", "-"))),
         "-" if entry.get("index") is None else str(entry["index"]), str(entry.get("reason", "")))
        for entry in entries
    ]  # fmt: skip
    _print_table(f"{len(entries)} quarantined (newest first)", ("job", "record", "reason"), rows)


@app.command(cls=READS_QUEUE)
def requeue(
    ctx: typer.Context,
    job_ids: list[str] = typer.Argument(None, help="failed job ids"),
    all_jobs: bool = typer.Option(False, "--all", help="every failed job"),
    config: Path | None = ConfigOption,
) -> None:
    """Put failed jobs back on the queue, each with a fresh set of retries (one a worker would
    refuse again, such as a job too large to read, stays failed: it says which and why)."""
    # Dotted overrides land among the positional job ids: tell them apart.
    overrides, ids = split_overrides([*(job_ids or []), *ctx.args])
    if not all_jobs and not ids:
        raise UsageError("name the job ids to requeue, or pass --all")
    queue = load_service_config(config, overrides).queue
    wanted = None if all_jobs else ids
    try:
        done = _call(queue, lambda q: queue_admin.requeue(q, wanted, job_class=JOB_CLASS))
    except queue_admin.NotFailedError as error:
        raise UserError(str(error)) from None
    err.print(f"requeued {done.count} job(s)")
    for job_id, reason in done.left.items():  # a reason may quote what was stored: one line
        err.print(Text(_shown_line(f"left failed: {shown_job_id(job_id)}: {reason}")))


@app.command(cls=READS_QUEUE)
def replay(ctx: typer.Context, config: Path | None = ConfigOption) -> None:
    """Enqueue what was spooled to disk while Redis was unreachable."""
    queue = _queue_config(ctx, config)
    records = _call(queue, queue_admin.replay_spool)
    err.print(f"replayed {records} record(s) from {queue.spool_dir}")


@app.command(cls=READS_QUEUE)
def purge(
    ctx: typer.Context,
    yes: bool = typer.Option(False, "--yes", help="really delete"),
    config: Path | None = ConfigOption,
) -> None:
    """Delete every waiting and failed job of the queue (the spool is left alone)."""
    if not yes:
        raise UsageError("purge deletes every waiting and failed job: add --yes to confirm")
    queue = _queue_config(ctx, config)
    waiting, failed_count = _call(queue, lambda q: queue_admin.purge(q, job_class=JOB_CLASS))
    err.print(f"deleted {waiting} waiting and {failed_count} failed job(s)")


def _print_table(title: str, columns: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    table = Table(title=title)
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:  # errors and reasons may quote a payload: Text, never markup, marked
        table.add_row(*(Text(_shown_line(str(cell))) for cell in row))
    out.print(table)


def _shown_line(text: str) -> str:
    """Text read from Redis as one line: marked, a URL's password masked, secrets and personal
    data redacted (an error or a refused record may quote a payload nobody redacted: one from a
    run with redaction off, or written by someone else), and cut."""
    line = mask_text(visible_line(text))[: 2 * SHOWN_CELL_CHARS]  # read past the cut: no half
    return cut_line(_redacted([line])[0], SHOWN_CELL_CHARS)


def _redacted_entry(entry: dict[str, object]) -> dict[str, object]:
    """A quarantine entry for `--json`: its texts redacted and masked, whole (not cut)."""
    texts = [key for key, value in entry.items() if isinstance(value, str)]
    shown = _redacted([mask_text(str(entry[key])) for key in texts])
    return entry | dict(zip(texts, shown, strict=True))


def _redacted(texts: list[str]) -> list[str]:
    """The texts redacted together; where redaction fails, none of them is shown (it says so)."""
    try:
        return list(_redactor().redact(texts).texts)
    except Exception as error:  # its message may quote the text
        return [f"(not shown: redaction failed, {type(error).__name__})"] * len(texts)


@functools.cache
def _redactor() -> Redactor:
    """Redaction with every built-in kind: what a record's texts get by default."""
    return Redactor.from_config(RedactConfig())
