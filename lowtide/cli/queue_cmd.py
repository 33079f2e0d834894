"""`lowtide queue status|failed|requeue|replay|purge`: the annotation queue and the spool."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import redis
import typer
from rich.table import Table

from lowtide.cli.console import err, out
from lowtide.config import load_run_config
from lowtide.errors import UsageError, UserError
from sampling import queue_admin
from sampling.config import QueueConfig, mask_url_password

app = typer.Typer(help="Inspect and manage the annotation queue.", no_args_is_help=True)
ConfigOption = typer.Option(None, "--config", "-c", help="run config (its queue section)")
T = TypeVar("T")


def _queue_config(config: Path | None) -> QueueConfig:
    if config is not None:
        return load_run_config(config).queue
    environment = {"redis_url": os.environ["REDIS_URL"]} if os.environ.get("REDIS_URL") else {}
    return QueueConfig(**environment)


def _call(config: QueueConfig, action: Callable[[QueueConfig], T]) -> T:
    try:
        return action(config)
    except redis.RedisError as exc:
        url = mask_url_password(config.redis_url.get_secret_value())
        raise UserError(
            f"Redis at {url} is not reachable ({type(exc).__name__}): start it (`lowtide up`) "
            "or set REDIS_URL / queue.redis_url"
        ) from None


@app.command()
def status(config: Path | None = ConfigOption) -> None:
    """Depth, running and failed jobs, the oldest waiting job's age, and the spool."""
    queue = _queue_config(config)
    state = _call(queue, queue_admin.queue_status)
    table = Table(
        title=f"queue {state.name} at {mask_url_password(queue.redis_url.get_secret_value())}"
    )
    table.add_column("what")
    table.add_column("value", justify="right")
    oldest = "-" if state.oldest_age_s is None else f"{state.oldest_age_s:.0f} s"
    rows = [
        ("waiting jobs", str(state.depth)), ("running jobs", str(state.started)),
        ("failed jobs", str(state.failed)), ("oldest waiting", oldest),
        ("spooled batches", str(state.spool_batches)),
        ("spooled records", str(state.spool_records)),
        ("spool size", f"{state.spool_bytes / 1024:.1f} KiB ({queue.spool_dir})"),
    ]  # fmt: skip
    for row in rows:
        table.add_row(*row)
    out.print(table)


@app.command()
def failed(config: Path | None = ConfigOption, limit: int = typer.Option(50, "--limit")) -> None:
    """Failed jobs with their error."""
    queue = _queue_config(config)
    jobs = _call(queue, lambda q: queue_admin.failed_jobs(q, limit))
    table = Table(title=f"{len(jobs)} failed job(s)")
    for column in ("job", "records", "ended", "error"):
        table.add_column(column, overflow="fold")
    for job in jobs:
        table.add_row(job.job_id, str(job.records), job.ended_at or "-", job.error)
    out.print(table)


@app.command()
def requeue(
    job_ids: list[str] = typer.Argument(None, help="failed job ids"),
    all_jobs: bool = typer.Option(False, "--all", help="every failed job"),
    config: Path | None = ConfigOption,
) -> None:
    """Put failed jobs back on the queue."""
    if not all_jobs and not job_ids:
        raise UsageError("name the job ids to requeue, or pass --all")
    queue = _queue_config(config)
    count = _call(queue, lambda q: queue_admin.requeue(q, None if all_jobs else job_ids))
    err.print(f"requeued {count} job(s)")


@app.command()
def replay(config: Path | None = ConfigOption) -> None:
    """Enqueue what was spooled to disk while Redis was unreachable."""
    queue = _queue_config(config)
    records = _call(queue, queue_admin.replay_spool)
    err.print(f"replayed {records} record(s) from {queue.spool_dir}")


@app.command()
def purge(
    yes: bool = typer.Option(False, "--yes", help="really delete"),
    config: Path | None = ConfigOption,
) -> None:
    """Delete every waiting and failed job of the queue (the spool is left alone)."""
    if not yes:
        raise UsageError("purge deletes every waiting and failed job: add --yes to confirm")
    queue = _queue_config(config)
    waiting, failed_count = _call(queue, queue_admin.purge)
    err.print(f"deleted {waiting} waiting and {failed_count} failed job(s)")
