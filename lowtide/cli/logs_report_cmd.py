"""`lowtide logs report RUN`: one self-contained HTML file of a run (curves, reward histograms,
response-length drift, reward-hacking suspects, the lowest- and highest-reward samples), built by
`lowtide.report`; it opens with no network, and its rollout texts are redacted by default."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import typer

from lowtide.cli.dump_options import DumpFormatName
from lowtide.cli.settings_options import option_for
from lowtide.console import err, out, warn_problems
from lowtide.errors import UsageError, UserError
from rl.config import LoggerConfig
from sampling.selection.hacking.config import WatchConfig

REPORT_FILE = "report.html"
RUN_CONFIG_FILE = "config.yaml"  # what `lowtide train` saves in the run directory


def report(
    run: str = typer.Argument(
        ...,
        help="run name or directory (logs/<run>), or a dump directory: verl's "
        "rollout_data_dir, TRL's output_dir",
    ),
    out_path: Path | None = typer.Option(
        None, "--out", "-o", help=f"the HTML file to write (default: <run>/{REPORT_FILE})"
    ),
    save_dir: Path = option_for(LoggerConfig, "save_dir", help="logger.save_dir of the run"),
    dump_format: DumpFormatName = typer.Option(
        DumpFormatName.auto, "--format", help="auto: from the file names"
    ),
    redact: bool = typer.Option(
        True,
        "--redact/--no-redact",
        help="redact the prompts, responses and suspect phrases shown (secrets and personal "
        "data become placeholders such as <EMAIL_1>): a report is made to be shared. "
        "--no-redact shows them as the run logged them",
    ),
    config: Path | None = typer.Option(
        None,
        "--config",
        "-c",
        help="your config whose sampling.redact settings --redact uses (default: the built-in "
        f"defaults; the run's own <run>/{RUN_CONFIG_FILE} is never applied, as it may name "
        "code to run: name it here if you trust it)",
    ),
    samples: int = typer.Option(5, "--samples", min=1, help="lowest- and highest-reward shown"),
    top: int = option_for(WatchConfig, "top", help="reward-hacking suspects shown at most"),
) -> None:
    """Write one HTML file that shows the run: reward and KL curves, reward histograms over the
    steps, response-length drift, the reward-hacking suspects (as `logs bias` finds them) with
    examples, and the lowest- and highest-reward samples. Everything is inline: it opens with
    no network and runs no script."""
    from lowtide.report import NothingYet, ReportError, collect, render

    directory = _directory(run, save_dir)
    redactor = _redactor(config) if redact else None
    if redact and config is None:
        _say_what_the_run_asked(directory)
    redacted_with = f"the sampling.redact settings of {config}" if config else "the defaults"
    target = out_path or directory / REPORT_FILE
    if target.is_dir():
        raise UsageError(f"--out {target}: is a directory; name the HTML file to write")
    try:
        with err.status(f"reading {directory}"):
            data = collect(
                directory, dump_format.value, top=top, shown=samples, redact=redactor,
                redacted_with=redacted_with,
            )  # fmt: skip
    except NothingYet as error:  # as logs search and logs bias: a script may wait and retry
        raise UserError(str(error)) from None
    except ReportError as error:
        raise UsageError(str(error)) from None
    except _redaction_errors() as error:
        raise UserError(f"redaction failed, no report written: {error}") from None
    warn_problems(data.problems)
    page = render(data)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page, encoding="utf-8", errors="replace")
    except OSError as error:
        raise UserError(f"cannot write {target}: {error.strerror}") from None
    suspects = len(data.watch.suspects) if data.watch is not None else 0
    err.print(
        f"{data.source}: {data.samples} scored rollouts, {suspects} reward-hacking "
        f"suspect{'' if suspects == 1 else 's'}; "
        f"texts {'redacted' if redactor is not None else 'not redacted'}",
        markup=False,
    )
    out.print(f"wrote {target}", markup=False)


def _directory(run: str, save_dir: Path) -> Path:
    candidates = [Path(run), save_dir / run]
    for path in candidates:
        if path.is_dir():
            return path
    tried = " or ".join(dict.fromkeys(map(str, candidates)))
    raise UsageError(f"no run at {tried}: give a run name, its directory or a dump directory")


def _say_what_the_run_asked(directory: Path) -> None:
    """The run directory is someone's data: where its own config asks for other redaction
    (a redactor of its own, kinds switched off...), say so once and apply the defaults."""
    from lowtide.config.untrusted import redact_settings_asked

    asked = redact_settings_asked(directory / RUN_CONFIG_FILE)
    if asked:
        err.print(
            f"note: {directory / RUN_CONFIG_FILE} sets sampling.redact {', '.join(asked)}: not "
            "applied (a run directory never chooses how it is read); texts are redacted with "
            "the defaults. Give --config with the settings you trust to use others",
            markup=False,
        )


def _redactor(config: Path | None) -> Callable[[Sequence[str]], Sequence[str]]:
    """The redaction of the reader's own config (kinds, allowlists, patterns, a redactor of
    their own), else the defaults: never of the run being read."""
    from pydantic import ValidationError

    from lowtide.config.messages import describe_errors
    from lowtide.config.yaml_source import read_yaml_config
    from rl.plugins import PluginPathError
    from sampling.redaction import redactor_for_run
    from sampling.redaction.config import RedactConfig

    data: dict[str, Any] = read_yaml_config(config)[0] if config is not None else {}
    try:
        return redactor_for_run(data)
    except ValidationError as error:
        problem = describe_errors(error, RedactConfig, {})[0]
        raise UsageError(f"{config}: sampling.redact.{problem}") from None
    except PluginPathError as error:
        raise UsageError(f"{config}: {error}") from None
    except (AttributeError, TypeError):  # a section that is not a mapping
        raise UsageError(f"{config}: sampling.redact must be a mapping of settings") from None


def _redaction_errors() -> tuple[type[Exception], ...]:
    from sampling.redaction import RedactionError

    return (RedactionError,)
