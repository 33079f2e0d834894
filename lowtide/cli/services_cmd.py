"""`lowtide up | down | status`: the local Redis and Label Studio that runs and tests use."""

from __future__ import annotations

import os
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from lowtide.console import err, out
from lowtide.services import labelstudio, postgres
from lowtide.services.credentials import ensure_credentials
from lowtide.services.process import is_running
from lowtide.services.redis_service import ensure_redis, redis_answers, stop_redis
from lowtide.services.state import ServiceRegistry
from rl.masking import mask_url


class Only(str, Enum):
    redis = "redis"
    label_studio = "label-studio"


def up(
    only: Only | None = typer.Option(None, "--only", help="start just one service"),
    label_studio_port: int = typer.Option(
        int(os.environ.get("LABEL_STUDIO_PORT", labelstudio.DEFAULT_PORT)),
        "--label-studio-port",
        help="loopback port for a Label Studio that lowtide starts [env LABEL_STUDIO_PORT]",
    ),
    # Annotated: plain defaults, so that `demo` can call up() without naming these.
    on_postgres: Annotated[
        bool,
        typer.Option(
            "--postgres",
            help="run the Label Studio that lowtide starts on PostgreSQL (PGHOST, PGPORT, PGUSER, "
            "PGPASSWORD; else the local server), creating its database if missing",
        ),
    ] = False,
    postgres_database: Annotated[
        str,
        typer.Option("--postgres-database", help="with --postgres: its database and role"),
    ] = postgres.DEFAULT_DATABASE,
) -> None:
    """Start (or find) Redis and Label Studio. Running it twice is harmless."""
    database = postgres.PostgresDatabase.named(postgres_database) if on_postgres else None
    if database is not None and only != Only.redis:
        postgres.require_reachable(database.host, database.port)  # before any install or start
    registry = ServiceRegistry()
    if only in (None, Only.redis):
        _, message = ensure_redis(registry)
        err.print(message)
    if only in (None, Only.label_studio):
        credentials = ensure_credentials()
        if not labelstudio.is_installed():
            with err.status(
                f"Installing Label Studio {labelstudio.VERSION} into {labelstudio.venv_dir()} "
                "(once per machine, ~2 min)"
            ) as spinner:
                labelstudio.ensure_installed(
                    Path.cwd(), lambda step: spinner.update(f"installing: {step}")
                )
        else:
            labelstudio.ensure_installed(Path.cwd())
        with err.status("Starting Label Studio") as spinner:
            record, message = labelstudio.ensure_label_studio(
                registry,
                credentials,
                label_studio_port,
                on_wait=lambda s: spinner.update(f"Waiting for Label Studio /health ({s:.0f} s)"),
                database=database,
            )
        err.print(message)
        err.print(
            f"\n  Label Studio  {record.url}\n"
            f"  login         {credentials.username} (password: LABEL_STUDIO_PASSWORD)\n"
            f"  API token     LABEL_STUDIO_API_KEY in {credentials.env_file}\n"
            f"  stop with     lowtide down",
            markup=False,
        )


def down() -> None:
    """Stop the services that `lowtide up` started; leave everything else alone."""
    registry = ServiceRegistry()
    err.print(labelstudio.stop_label_studio(registry))
    err.print(stop_redis(registry))


def status() -> None:
    """A table of the services: healthy or not, where, and who started them."""
    registry = ServiceRegistry()
    records = registry.load()
    table = Table(title=f"lowtide services ({registry.root})")
    for column in ("service", "state", "url", "started by", "log"):
        table.add_column(column)
    checks = {"redis": redis_answers, "label-studio": labelstudio.health}
    for name, check in checks.items():
        record = records.get(name)
        if record is None:
            table.add_row(name, "[dim]not started[/]", "", "", "")
            continue
        healthy = check(record.reachable_url())
        alive = record.pid is None or is_running(record.pid, record.command)
        state = "[green]healthy[/]" if healthy and alive else "[red]down[/]"
        owner = f"lowtide (pid {record.pid}, {record.kind})" if record.managed else "external"
        table.add_row(name, state, mask_url(record.url), owner, record.log or "")
    out.print(table)
