"""`lowtide annotation init`: create (or update) the review project, for deployments that start
Label Studio and the workers separately (a one-shot container, a Kubernetes Job)."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from lowtide.cli.usage import reads
from lowtide.config import load_service_config
from lowtide.console import err, out
from lowtide.services.clients import label_studio_client
from rl.masking import url_without_secrets

app = typer.Typer(help="The Label Studio side.", no_args_is_help=True)


@app.command(cls=reads("annotation"))
def init(
    ctx: typer.Context,
    config: Path | None = typer.Option(None, "--config", "-c", help="run config"),
    wait: float = typer.Option(120.0, "--wait", min=0, help="seconds to wait for Label Studio"),
) -> None:
    """Create the project with the labeling config, or update its config in place."""
    from annotation.importer import read_labeling_config
    from annotation.labelstudio import LabelStudioUnreachable

    annotation = load_service_config(config, ctx.args).annotation
    client = label_studio_client(annotation)
    xml = read_labeling_config(annotation.labeling_config)
    deadline = time.monotonic() + wait
    with client:
        while True:
            try:
                project_id = client.ensure_project(
                    annotation.project, xml, annotation.reviews_per_task, annotation.blind_review
                )
                break
            except LabelStudioUnreachable:
                if time.monotonic() > deadline:
                    raise
                err.print(f"waiting for Label Studio at {client.url}...", markup=False)
                time.sleep(3)
    out.print(
        f"project {annotation.project!r} is ready: id {project_id}, "
        f"{url_without_secrets(annotation.label_studio_url).rstrip('/')}/projects/{project_id}",
        markup=False,
    )
