"""`lowtide export`: completed reviews out of Label Studio as reward-model data."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table
from rich.text import Text

from lowtide.config import load_service_config
from lowtide.console import out, say
from lowtide.services.clients import label_studio_client
from rl.visible_text import visible_line

if TYPE_CHECKING:
    from annotation.agreement import AgreementReport
    from annotation.export import ExportSummary

SHOWN = 10  # sample ids listed per kind of finding


def export(
    ctx: typer.Context,
    config: Path | None = typer.Option(None, "--config", "-c", help="run config"),
    since: str | None = typer.Option(
        None,
        "--since",
        help="'last' (resume from the cursor), 'all', or an ISO time [export.since]",
    ),
    out_path: Path | None = typer.Option(None, "--out", help="ratings JSONL [export.out]"),
    rebuild: bool = typer.Option(
        False,
        "--rebuild",
        help="drop the stored rows and write what Label Studio holds now; the previous files "
        "are copied to a .bak folder beside them first",
    ),
) -> None:
    """Write rating and preference rows (JSONL and a datasets copy) from completed reviews, and
    show how much reviewers agree. Rows already written are kept and merged with the new
    reviews. Override any key: --annotation.project="my review"."""
    from annotation.export import ExportPaths, export_annotations

    service = load_service_config(config, ctx.args)
    annotation = service.annotation
    target = out_path or Path(service.export.out)
    with label_studio_client(annotation) as client:
        summary = export_annotations(
            client, annotation.project, target, since or service.export.since,
            service.export.agreement, rebuild=rebuild, on_wait=_say_waiting,
        )  # fmt: skip
    paths = ExportPaths.beside(target)
    show_checks(summary)
    if len(summary.projects) > 1:
        read = ", ".join(f"{title!r} (id {pid})" for pid, title in summary.projects)
        say(f"read {len(summary.projects)} projects of the series: {read}")
    if not summary.written:
        say(f"nothing new since {summary.since or 'the beginning'}: {target} left as it was")
    else:
        say(
            f"exported {summary.tasks_read} reviewed task(s) since "
            f"{summary.since or 'the beginning'}: {summary.new_rows} new, "
            f"{summary.updated_rows} updated, {summary.skipped} skipped"
        )
    table = Table(title=f"reward-model data: {summary.total_rows} rated samples")
    table.add_column("what")
    table.add_column("count", justify="right")
    table.add_row("rating rows", str(summary.total_rows))
    if summary.deleted_rows:  # kept in the files, left out of the training data
        table.add_row("rows deleted in Label Studio", str(summary.deleted_rows))
    if summary.comparison_rows:
        table.add_row("comparison rows", str(summary.comparison_rows))
    table.add_row("preference rows", str(summary.preference_rows))
    for rating in ("1", "2", "3", "4", "5", "unrated"):
        if summary.ratings.get(rating) or rating != "unrated":
            table.add_row(f"rating {rating}", str(summary.ratings.get(rating, 0)))
    # The project's categories in its form's order, then any others its reviews hold.
    categories = summary.form_categories
    for category in (*categories, *sorted(set(summary.categories) - set(categories))):
        label = Text(visible_line(f"failure: {category}"))  # the reviews' words: not markup
        table.add_row(label, str(summary.categories.get(category, 0)))
    suggested = summary.suggestions_accepted + summary.suggestions_edited
    if suggested:  # reviews of tasks that carried a machine suggestion
        kept = summary.suggestions_accepted
        table.add_row("suggestions accepted", f"{kept} ({kept / suggested:.0%})")
        table.add_row("suggestions edited", str(summary.suggestions_edited))
    out.print(table)
    if summary.agreement is not None:
        show_agreement(summary.agreement, f"{client.url}/projects/{summary.project_id}/data?task=")
    say(f"ratings {paths.ratings}\npreferences {paths.preferences}\ndatasets {paths.dataset}")


def _say_waiting(lock: Path) -> None:
    say(f"another export is writing these files ({lock}): waiting for it")


def show_checks(summary: ExportSummary) -> None:
    """What the export refused, could not check, found deleted, and where a rebuild kept the
    files it replaced."""
    if summary.backup is not None:
        say(f"rebuilt: the previous files are kept in {summary.backup}")
    if summary.refused:
        say(
            f"refused {len(summary.refused)} reviewed task(s) whose text no longer matches what "
            "lowtide imported (their reviews are not exported):"
        )
        for refusal in summary.refused[:SHOWN]:
            sample = visible_line(refusal.sample_id) or "-"
            say(f"  task {refusal.task_id} (sample {sample}): {refusal.reason}")
    if summary.unsealed:
        say(
            f"{summary.unsealed} reviewed task(s) carry no seal (imported before tasks were "
            "sealed): exported, but their text could not be checked"
        )
    for samples, what in (
        (
            summary.deleted,
            "lost every review in Label Studio: kept, marked deleted_in_label_studio",
        ),
        (summary.withdrawn, "lost some reviews in Label Studio: rebuilt from the rest"),
    ):
        if samples:
            shown = ", ".join(visible_line(sample) for sample in samples[:SHOWN])
            more = f" and {len(samples) - SHOWN} more" if len(samples) > SHOWN else ""
            say(f"{len(samples)} sample(s) {what}: {shown}{more}")


def show_agreement(report: AgreementReport, task_link: str = "") -> None:
    """Inter-reviewer agreement, and the samples to adjudicate first (`task_link` + a task id
    opens one in Label Studio)."""
    alpha = report.alpha
    if report.reviewed_twice == 0:
        out.print(
            "inter-reviewer agreement: no sample has two reviews yet "
            "(annotation.reviews_per_task sets how many each task gets)",
            markup=False,
        )
        return
    value = "n/a (every rating the same)" if alpha.value is None else f"{alpha.value:.3f}"
    if alpha.samples == 0:
        value = "n/a (no sample has two ratings)"
    out.print(
        f"inter-reviewer agreement: {alpha.name} = {value} over {alpha.samples} samples with >= 2 "
        f"ratings ({alpha.ratings} ratings); {report.agreed} of {report.reviewed_twice} samples "
        "with >= 2 reviews agree",
        markup=False,
    )
    if not report.disputed:
        return
    table = Table(
        title="most disputed samples: adjudicate them in Label Studio",
        caption=f"open one: {task_link}<task>" if task_link else None,
    )
    for column in ("sample_id", "task", "ratings", "split categories", "agreed"):
        table.add_column(column, overflow="fold")
    for entry in report.disputed:
        table.add_row(
            Text(visible_line(entry.sample_id)),
            ", ".join(str(task_id) for task_id in entry.task_ids),
            ", ".join("-" if rating is None else str(rating) for rating in entry.ratings),
            Text(visible_line(", ".join(entry.split_categories) or "-")),
            "yes" if entry.agreed else "no",
        )
    out.print(table)
