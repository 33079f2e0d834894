"""`lowtide`: a thin command line over the packages; each command group lives in its own module."""

from __future__ import annotations

import sys

import typer
from rich.markup import escape

from annotation.errors import AnnotationError
from lowtide.cli import (
    annotation_cmd,
    config_cmd,
    demo_cmd,
    export_cmd,
    ingest_cmd,
    logs_cmd,
    loop_cmd,
    model_cmd,
    openrlhf_cmd,
    queue_cmd,
    rm_cmd,
    services_cmd,
    train_cmd,
    worker_cmd,
)
from lowtide.cli.extras import missing_extra
from lowtide.cli.usage import RUN_CONFIG, click_error_line, click_errors, reads
from lowtide.console import err
from lowtide.errors import UserError
from lowtide.services.credentials import load_env_file_into_environ

app = typer.Typer(
    name="lowtide",
    help="RL post-training that routes low-reward rollouts to human review.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(config_cmd.app, name="config")
app.add_typer(model_cmd.app, name="model")
app.add_typer(logs_cmd.app, name="logs")
app.add_typer(queue_cmd.app, name="queue")
app.add_typer(rm_cmd.app, name="rm")
app.add_typer(annotation_cmd.app, name="annotation")
app.add_typer(openrlhf_cmd.app, name="openrlhf")
services_cmd.register(app)
app.command(cls=reads(*RUN_CONFIG))(train_cmd.train)
app.command()(demo_cmd.demo)
app.command(cls=reads("queue", "annotation"))(worker_cmd.worker)
app.command(cls=reads("annotation", "export"))(export_cmd.export)
app.command(cls=reads("sampling", "queue"))(ingest_cmd.ingest)
app.command(cls=reads(*RUN_CONFIG))(loop_cmd.loop)


def main(argv: list[str] | None = None) -> None:
    load_env_file_into_environ()
    try:
        # Not standalone: click's usage errors come here, to be told in one line like ours.
        code = app(args=argv, prog_name="lowtide", standalone_mode=False)
    except getattr(click_errors, "NoArgsIsHelpError", ()):
        code = 2  # the help is printed already
    except click_errors.ClickException as exc:
        _print_error(click_error_line(exc))
        code = exc.exit_code
    except typer.Abort:
        _print_error("aborted")
        code = 1
    except (UserError, AnnotationError) as exc:  # the library's own user-facing errors too
        _print_error(str(exc))
        code = getattr(exc, "exit_code", 1)
    except ModuleNotFoundError as exc:
        line = missing_extra(exc)
        if line is None:
            raise
        _print_error(line)
        code = 1
    sys.exit(code if isinstance(code, int) else 0)


def _print_error(message: str) -> None:
    for line in message.splitlines():
        err.print(f"[bold red]error:[/] {escape(line)}")


if __name__ == "__main__":
    main()
