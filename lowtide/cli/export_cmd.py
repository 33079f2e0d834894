"""`lowtide export`: completed reviews out of Label Studio as reward-model data."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from lowtide.cli.clients import label_studio_client
from lowtide.cli.console import err, out
from lowtide.config import load_service_config


def export(
    ctx: typer.Context,
    config: Path | None = typer.Option(None, "--config", "-c", help="run config"),
    since: str | None = typer.Option(
        None,
        "--since",
        help="'last' (resume from the cursor), 'all', or an ISO time [export.since]",
    ),
    out_path: Path | None = typer.Option(None, "--out", help="ratings JSONL [export.out]"),
) -> None:
    """Write rating and preference rows (JSONL and a datasets copy) from completed reviews.
    Override any key: --annotation.project="my review"."""
    from annotation.export import CATEGORIES, ExportPaths, export_annotations

    service = load_service_config(config, ctx.args)
    annotation = service.annotation
    target = out_path or Path(service.export.out)
    with label_studio_client(annotation) as client:
        summary = export_annotations(
            client, annotation.project, target, since or service.export.since
        )
    paths = ExportPaths.beside(target)
    if not summary.written:
        err.print(
            f"nothing new since {summary.since or 'the beginning'}: {target} left as it was",
            markup=False,
        )
    else:
        err.print(
            f"exported {summary.tasks_read} reviewed task(s) since "
            f"{summary.since or 'the beginning'}: {summary.new_rows} new, "
            f"{summary.updated_rows} updated, {summary.skipped} skipped",
            markup=False,
        )
    table = Table(title=f"reward-model data: {summary.total_rows} rated samples")
    table.add_column("what")
    table.add_column("count", justify="right")
    table.add_row("rating rows", str(summary.total_rows))
    table.add_row("preference rows", str(summary.preference_rows))
    for rating in ("1", "2", "3", "4", "5", "unrated"):
        if summary.ratings.get(rating) or rating != "unrated":
            table.add_row(f"rating {rating}", str(summary.ratings.get(rating, 0)))
    for category in (*CATEGORIES, *sorted(set(summary.categories) - set(CATEGORIES))):
        table.add_row(f"failure: {category}", str(summary.categories.get(category, 0)))
    out.print(table)
    err.print(
        f"ratings {paths.ratings}\npreferences {paths.preferences}\ndatasets {paths.dataset}",
        markup=False,
    )
