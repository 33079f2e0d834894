"""`lowtide`: a thin command line over the packages; each command group lives in its own module.

A command's module loads only when that command runs (or when the help lists them all): a
`lowtide worker` should not pay for importing the trainer's commands, and every user command
and test starts a process.
"""

from __future__ import annotations

import sys
import traceback
from dataclasses import dataclass
from importlib import import_module
from typing import Any

import typer
from rich.markup import escape

from annotation.errors import AnnotationError
from lowtide.cli.extras import missing_extra
from lowtide.cli.usage import RUN_CONFIG, click_error_line, click_errors, reads
from lowtide.console import err
from lowtide.errors import UserError
from lowtide.services.credentials import load_env_file_into_environ
from rl.masking import install_log_masking, mask_text
from rl.visible_text import visible_text


@dataclass(frozen=True)
class _Command:
    module: str  # in lowtide.cli
    function: str | None = None  # None: the module's `app` is a group of commands
    sections: tuple[str, ...] = ()  # the run-config sections it takes dotted overrides of


HELP = "RL post-training that routes low-reward rollouts to human review."
# In the order `lowtide --help` lists them.
COMMANDS = {
    "config": _Command("config_cmd"),
    "model": _Command("model_cmd"),
    "logs": _Command("logs_cmd"),
    "queue": _Command("queue_cmd"),
    "rm": _Command("rm_cmd"),
    "annotation": _Command("annotation_cmd"),
    "openrlhf": _Command("openrlhf_cmd"),
    "up": _Command("services_cmd", "up"),
    "down": _Command("services_cmd", "down"),
    "status": _Command("services_cmd", "status"),
    "train": _Command("train_cmd", "train", RUN_CONFIG),
    "demo": _Command("demo_cmd", "demo"),
    "worker": _Command("worker_cmd", "worker", ("queue", "annotation")),
    "export": _Command("export_cmd", "export", ("annotation", "export")),
    "ingest": _Command("ingest_cmd", "ingest", ("sampling", "queue")),
    "loop": _Command("loop_cmd", "loop", RUN_CONFIG),
}


def build_app(argv: list[str]) -> typer.Typer:
    """The command line with the command `argv` names, or with every command when it names none
    it knows (`--help`, a misspelling that gets a suggestion)."""
    app = typer.Typer(
        name="lowtide",
        help=HELP,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    app.callback()(_group)  # a group of commands even when only one is registered
    named = argv[0] if argv and argv[0] in COMMANDS else None
    for name, command in COMMANDS.items():
        if named in (None, name):
            module = import_module(f"lowtide.cli.{command.module}")
            if command.function is None:
                app.add_typer(module.app, name=name)
            else:
                cls = reads(*command.sections) if command.sections else None
                app.command(name, cls=cls)(getattr(module, command.function))
    return app


def _group() -> None:
    pass  # nothing runs before a command: registered so that one command still makes a group


def main(argv: list[str] | None = None) -> None:
    for note in load_env_file_into_environ():
        err.print(f"note: {note}", markup=False)
    install_log_masking()
    sys.excepthook = _masked_traceback
    argv = sys.argv[1:] if argv is None else argv
    try:
        # Not standalone: click's usage errors come here, to be told in one line like ours.
        code = build_app(argv)(args=argv, prog_name="lowtide", standalone_mode=False)
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
    except OSError as exc:  # a path given that cannot be made, read or written: say which
        if exc.filename is None:
            raise
        _print_error(f"{exc.filename}: {exc.strerror or exc}")
        code = 1
    sys.exit(code if isinstance(code, int) else 0)


def _masked_traceback(kind: type[BaseException], error: BaseException, tb: Any) -> None:
    """An unexpected error's traceback, with the passwords its messages may hold masked."""
    sys.stderr.write(mask_text("".join(traceback.format_exception(kind, error, tb))))


def _print_error(message: str) -> None:
    for line in message.splitlines():
        err.print(f"[bold red]error:[/] {escape(visible_text(line))}")  # may quote data


if __name__ == "__main__":
    main()
