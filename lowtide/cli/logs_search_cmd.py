"""`lowtide logs search DIR 'QUERY'`: find rollouts in any run's dump files (a lowtide run,
verl's `rollout_data_dir`, TRL's `completions/`) with one query language, or DuckDB SQL; show,
export, or route what it finds to review (sampling/sources/search/)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.table import Table
from rich.text import Text

from lowtide.cli.dump_options import DumpFormatName, parse_reward_weights
from lowtide.console import err, out, warn_problems
from lowtide.errors import UsageError, UserError
from rl.visible_text import visible_line, visible_text

if TYPE_CHECKING:  # DuckDB and the search modules load only when the command runs
    from sampling.sources.ingest.formats import DumpLocation
    from sampling.sources.search.engine import Found
    from sampling.sources.search.table import Refresh

PROMPT_CHARS = 48
RESPONSE_CHARS = 96
CELL_CHARS = 80  # --sql: any column
SHOWN_FIRST = ("step", "sample_id", "reward")
EXAMPLE = "lowtide logs search logs/<run> 'reward > 2.0 AND response CONTAINS \"I agree\"'"


def search(
    ctx: typer.Context,
    directory: Path = typer.Argument(
        ..., help="a run or dump directory: logs/<run>, verl's rollout_data_dir, TRL's output_dir"
    ),
    query: str | None = typer.Argument(
        None, help="e.g. 'reward > 2.0 AND response CONTAINS \"I agree\"' (see docs/logging.md)"
    ),
    sql: str | None = typer.Option(
        None, "--sql", help="instead of a query: one DuckDB SELECT over the table `rollouts`"
    ),
    limit: int = typer.Option(20, "--limit", min=0, help="rows to show"),
    sort: str | None = typer.Option(
        None, "--sort", help="columns, - for descending: -reward,step (default: as written)"
    ),
    export: Path | None = typer.Option(
        None, "--export", help="write every match to FILE.jsonl or FILE.parquet"
    ),
    route: bool = typer.Option(
        False, "--route", help="send the matches to the review queue (each sample once)"
    ),
    dump_format: DumpFormatName = typer.Option(
        DumpFormatName.auto, "--format", help="auto: from the file names"
    ),
    run_id: str | None = typer.Option(
        None, "--run-id", help="run id of the sample ids (default: the run directory's name)"
    ),
    reward_weights: str | None = typer.Option(
        None, "--reward-weights", help="TRL: the trainer's reward_weights, e.g. 1.0,0.5"
    ),
    model: str = typer.Option("unknown", "--model", help="--route: model name in the records"),
    config: Path | None = typer.Option(
        None, "--config", "-c", help="--route: run config (its sampling and queue sections)"
    ),
) -> None:
    """Search the rollouts of a run with AND / OR / NOT, comparisons on reward, any reward
    component, step and lengths, and CONTAINS / MATCHES on prompt and response. The first
    search reads the files into a table beside them (.lowtide-search/); later ones read only
    what changed. With --route, overrides of the config sections apply: --queue.name=x."""
    from sampling.sources.ingest.formats import FormatError, expected_files, locate
    from sampling.sources.search import engine
    from sampling.sources.search.export import ExportError, check_target, write
    from sampling.sources.search.table import SearchTable, TableError, TableKey, columns_of

    if (query is None) == (sql is None):
        raise UsageError(
            "give a query or --sql (one of them), e.g. " + EXAMPLE
            if query is None
            else "give either a query or --sql, not both"
        )
    if sql is not None and sort is not None:
        raise UsageError("--sort: with --sql, sort in the SQL (ORDER BY)")
    if sql is not None and route:
        raise UsageError("--route takes a query, not --sql (route what a query finds)")
    if ctx.args and not route:
        raise UsageError(f"{ctx.args[0]}: config overrides apply to --route only")
    weights = parse_reward_weights(reward_weights, dump_format)
    if not directory.is_dir():
        what = "is a file" if directory.exists() else "no such directory"
        raise UsageError(f"{directory}: {what} (give the run or dump directory)")
    if export is not None:
        try:
            check_target(export)
        except ExportError as error:
            raise UsageError(str(error)) from None
    settings = None
    if route:
        from lowtide.integrations import routing_settings

        settings = routing_settings(config, ctx.args)  # a config mistake stops here
    try:
        location = locate(directory, dump_format.value)
    except FormatError as error:
        raise UsageError(str(error)) from None
    if location is None:
        raise UserError(f"no dump files in {directory} (expected {expected_files()})")
    if weights is not None and location.format.name != "trl":
        raise UsageError(f"--reward-weights: {location.format.name} dumps have one reward")
    key = TableKey(
        location.format.name,
        run_id or location.run_dir.resolve().name,
        tuple(weights) if weights is not None else None,
    )
    try:
        with ExitStack() as stack:
            with _progress() as on_progress:
                table = SearchTable(location, key, on_progress=on_progress)
                connection, refresh = stack.enter_context(table.opened())
            _report_refresh(refresh)
            columns = columns_of(connection)
            if sql is not None:
                relation = engine.sql_relation(connection, sql)
                _print_found(engine.sql_found(relation, limit), None, location, refresh, rows=True)
                if export is not None:
                    _exported(export, write(export, engine.sql_batches(relation)))
                return
            assert query is not None
            compiled = engine.compile_checked(connection, query, columns)
            keys = engine.sort_keys(sort, columns)
            shown = _shown_columns(columns, compiled.columns, [key.column for key in keys])
            found = engine.find(connection, compiled, keys, shown, limit)
            _print_found(found, compiled, location, refresh, sort)
            if export is not None:
                batches = engine.all_matches(connection, compiled, keys, _export_columns(columns))
                _exported(export, write(export, batches))
            if route:
                assert settings is not None
                _route(connection, compiled, query, key, settings, model, table.directory)
    except engine.SearchError as error:
        raise UsageError(str(error)) from None
    except (TableError, FormatError, ExportError) as error:
        raise UserError(str(error)) from None


# ---- what it prints ----------------------------------------------------------------------------


def _report_refresh(refresh: Refresh) -> None:
    if refresh.rebuilt:
        err.print(f"search table built again: {refresh.rebuilt}", markup=False)
    # The reader kept the first few problems and counted the rest; every unreadable file.
    warn_problems(refresh.problems, shown=len(refresh.problems), more=refresh.more_problems)
    warn_problems(refresh.unreadable, shown=len(refresh.unreadable))


def _print_found(
    found: Found,
    compiled: Any,
    location: DumpLocation,
    refresh: Refresh,
    sort: str | None = None,
    *,
    rows: bool = False,  # --sql: its result's rows, not matches
) -> None:
    table = Table(show_lines=False)
    for name in found.columns:
        numeric = name not in ("prompt", "response", "sample_id", "source")
        # A component's name is the dump's: a Text, never read as markup.
        header = Text(visible_line(name))
        table.add_column(header, justify="right" if numeric else "left", overflow="fold")
    contains = {column: (text, case) for column, text, case in getattr(compiled, "contains", ())}
    for row in found.rows:
        cells = zip(found.columns, row, strict=True)
        table.add_row(*(_cell(name, value, contains) for name, value in cells))
    if found.rows:
        out.print(table)
    order = f", sorted by {sort}" if sort else ""
    shown = f"showing {len(found.rows)}{order}" if found.total else "nothing to show"
    noun = ("row", "rows") if rows else ("match", "matches")
    out.print(
        f"{found.total} {noun[found.total != 1]} in {refresh.rows} rollouts "
        f"({refresh.files} {location.format.name} dump files in {location.files_dir}); {shown}",
        markup=False,
    )


def _cell(name: str, value: Any, contains: dict[str, tuple[str, bool]]) -> Text:
    if value is None:
        return Text("")
    if isinstance(value, float):
        return Text(f"{value:.4g}" if math.isfinite(value) else str(value))
    if name in ("prompt", "response"):
        chars = PROMPT_CHARS if name == "prompt" else RESPONSE_CHARS
        return Text(_excerpt(str(value), contains.get(name), chars))
    return Text(_one_line(str(value), CELL_CHARS))


def _excerpt(text: str, match: tuple[str, bool] | None, chars: int) -> str:
    """The text on one line, cut to `chars`; around the first match of a CONTAINS when there
    is one, so that what matched shows. Control and invisible characters as visible marks."""
    flat = " ".join(text.split())
    start = 0
    if match is not None and match[0]:
        needle, case_sensitive = match
        where = flat.find(needle) if case_sensitive else flat.lower().find(needle.lower())
        if where > chars // 3:
            start = where - chars // 3
    piece = visible_text(flat[start : start + chars])
    return ("…" if start else "") + piece + ("…" if start + chars < len(flat) else "")


def _one_line(text: str, chars: int) -> str:
    flat = " ".join(text.split())
    return visible_text(flat if len(flat) <= chars else flat[: chars - 1] + "…")


def _shown_columns(
    columns: dict[str, str], named: Sequence[str], sorted_on: Sequence[str]
) -> list[str]:
    """step, sample_id, reward, the other number columns the query or sort names, the texts."""
    extra = [
        name
        for name in (*named, *sorted_on)
        if name not in SHOWN_FIRST and columns.get(name) in ("number", "bool")
    ]
    return [*SHOWN_FIRST, *dict.fromkeys(extra), "prompt", "response"]


def _export_columns(columns: dict[str, str]) -> list[str]:
    first = ["step", "sample_id", "reward", "prompt", "response"]
    return [*first, *(name for name in columns if name not in first)]


def _exported(path: Path, rows: int) -> None:
    out.print(f"exported {rows} rows to {path}", markup=False)


@contextmanager
def _progress() -> Iterator[Any]:
    """A progress bar on stderr while the files are read (shown once there is much to read)."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

    progress = Progress(
        "reading dumps", BarColumn(), DownloadColumn(), TimeRemainingColumn(),
        console=err, transient=True,
    )  # fmt: skip
    task = None

    def on_progress(done: int, total: int) -> None:
        nonlocal task
        if total < 16 * 2**20:
            return
        if task is None:
            progress.start()
            task = progress.add_task("read", total=total)
        progress.update(task, completed=done)

    try:
        yield on_progress
    finally:
        if task is not None:
            progress.stop()


# ---- --route -----------------------------------------------------------------------------------


def _route(
    connection: Any,
    compiled: Any,
    query: str,
    key: Any,
    settings: Any,
    model: str,
    ledger_dir: Path,
) -> None:
    from lowtide.cli.ingest_cmd import _producer_messages
    from sampling.sources.search import engine
    from sampling.sources.search.route import COLUMNS, Ledger, RouteError, route_matches
    from sampling.wiring import router_for_queue

    queue = settings.queue
    ledger = Ledger(ledger_dir, queue.name, queue.redis_url.get_secret_value())
    with _producer_messages():
        router = router_for_queue(settings.sampling, queue, seed=settings.seed)
        batches = engine.all_matches(connection, compiled, [], COLUMNS)  # in step order
        try:
            routed = route_matches(
                router, batches, ledger, run_id=key.run_id, query=query, model_name=model
            )
        except RouteError as error:
            raise UserError(str(error)) from None
    sent = router.producer.stats
    earlier = f", {routed.earlier} routed by an earlier search left out" if routed.earlier else ""
    out.print(
        f"routed: {routed.submitted} of {routed.matched} matches to queue {queue.name}"
        f"{earlier}; {sent.enqueued - sent.replayed} records enqueued, {sent.spooled} spooled",
        markup=False,
    )
    if routed.unbuilt:
        out.print(f"not sent: {routed.unbuilt} (see the errors above)", markup=False)
    if sent.spooled > sent.replayed:
        out.print(
            f"Redis was unreachable: {sent.spooled - sent.replayed} records wait in "
            f"{queue.spool_dir}; `lowtide queue replay` (or the next run) queues them",
            markup=False,
        )
