"""What a command line may hold, and the one line a mistake in it gets.

A command that reads config sections (`cls=reads("queue")`) takes `--config` and dotted overrides
(`--queue.name=x`) of any run-config section, as its file may hold them all; every other word
that looks like an option is a mistake.
It is caught while the line is parsed, before `--help` prints the help and before anything runs,
and it ends in one line naming the nearest option or section (exit code 2). The keys inside a
section are checked when the config is loaded, with the same kind of hint.
"""

from __future__ import annotations

import sys
from typing import Any, ClassVar

import typer
import typer.core

from lowtide.config import RunConfig
from lowtide.config.messages import first_plain_value_on
from lowtide.config.overrides import looks_like_option, read_words
from lowtide.errors import UsageError
from rl.suggest import closest

RUN_CONFIG = tuple(RunConfig.model_fields)  # every top-level key of a run config
# The keys that hold sections (`--trainer.seed`), not a plain value (`--device`).
SECTIONS = tuple(
    name for name in RUN_CONFIG if first_plain_value_on(RunConfig, (name, "x")) is None
)
# Typer brings its own copy of click (typer._click) and raises that copy's usage errors: the
# module is the one that holds typer's public BadParameter.
click_errors = sys.modules[typer.BadParameter.__module__]


class ReadsConfig(typer.core.TyperCommand):
    """A command that takes dotted overrides of `sections` (see `reads`)."""

    sections: ClassVar[tuple[str, ...]] = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Click hands the options it does not know to the command (ctx.args): the overrides.
        self.context_settings = {
            **self.context_settings,
            "allow_extra_args": True,
            "ignore_unknown_options": True,
        }
        if self.sections != RUN_CONFIG and not self.epilog:  # `train` names every key itself
            keys = " ".join(f"--{section}.KEY=VALUE" for section in self.sections)
            self.epilog = f"Overrides of the config sections it reads: {keys}"

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:
        if not ctx.resilient_parsing:
            # A dry parse first: click would print the help for a later --help before the
            # command sees the unknown options.
            values, rest, _ = self.make_parser(ctx).parse_args(args=list(args))
            check_overrides(ctx, [*_argument_words(self, values), *rest])
            _check_single_arguments(ctx, self, values)
        return super().parse_args(ctx, args)


def reads(*sections: str) -> type[ReadsConfig]:
    """The command class for a command that reads these config sections."""
    return type("ReadsConfig", (ReadsConfig,), {"sections": sections})


def split_overrides(words: list[str]) -> tuple[list[str], list[str]]:
    """(the options, each as `--a.b=v` where a value came with it, the other words): job ids
    stay apart from the overrides among them, in their order."""
    read = read_words(words)
    options = [w.text if w.value is None else f"{w.text}={w.value}" for w in read if w.option]
    return options, [word.text for word in read if not word.option]


def check_overrides(ctx: typer.Context, words: list[str]) -> None:
    """UsageError for the first word that is neither the command's own nor an override of a
    section it reads."""
    for word in read_words(words):
        if word.option:
            problem = override_problem(ctx, word.text)
            if problem:
                raise UsageError(problem)


def override_problem(ctx: typer.Context, flag: str) -> str | None:
    """What is wrong with `flag` for this command, as one line; None if it is an override of a
    section the command reads."""
    sections: tuple[str, ...] = getattr(ctx.command, "sections", ())
    key = flag[2:] if flag.startswith("--") else ""
    first, dot, rest = key.partition(".")
    # Any section of the run config is accepted, as it is in the file: one set of flags can
    # serve every command, and the whole config (keys included) is checked when it loads.
    if first in sections or (sections and dot and first in RUN_CONFIG):
        return None
    if dot and sections:
        near = closest(first, sections) or closest(first, RUN_CONFIG)
        if near:
            return f"{flag}: unknown section {first} (did you mean --{near[0]}.{rest}?)"
        if not closest(flag, _option_names(ctx)):  # nothing near: name what it takes
            takes = ", ".join(f"--{name}.{rest}" for name in sections if name in SECTIONS)
            return f"{flag}: unknown section {first} (did you mean one of {takes}?)"
    return unknown_option(ctx, flag)


def unknown_option(ctx: typer.Context, flag: str) -> str:
    """The line for an option the command does not take, with the nearest one it does."""
    sections: tuple[str, ...] = getattr(ctx.command, "sections", ())
    known = [*_option_names(ctx), *(f"--{section}" for section in sections)]
    # `--logger.save_dir` for `--save-dir`: the last key, spelled as an option, may be meant.
    guesses = [flag, f"--{flag.rpartition('.')[2].replace('_', '-')}"] if "." in flag else [flag]
    for guess in guesses:
        near = closest(guess, known)
        if near:
            return f"{flag}: no such option of {ctx.command_path} (did you mean {near[0]}?)"
    takes = f"; it takes overrides of {', '.join(sections)}" if sections else ""
    return f"{flag}: no such option of {ctx.command_path} (see {ctx.command_path} --help{takes})"


def click_error_line(error: Exception) -> str:
    """One line for a usage error click found (a missing option, a bad value...)."""
    ctx = getattr(error, "ctx", None)
    if isinstance(error, click_errors.NoSuchOption) and ctx is not None:
        return override_problem(ctx, error.option_name) or unknown_option(ctx, error.option_name)
    message = " ".join(str(error.format_message()).split())
    return f"{ctx.command_path}: {message}" if ctx is not None else message


def _option_names(ctx: typer.Context) -> list[str]:
    names = []
    for param in ctx.command.get_params(ctx):
        if param.param_type_name == "option":
            names += [*param.opts, *param.secondary_opts]
    return names


def _argument_words(command: typer.core.TyperCommand, values: dict[str, Any]) -> list[str]:
    """Words the positional arguments took in: with unknown options allowed, click hands a
    misspelled one to an argument (`requeue JOB... --queue.name=x`, and `ingest --zz=1` with no
    DIR, which would take `--zz=1` as the directory)."""
    words: list[str] = []
    for param in command.params:
        value = values.get(param.name or "")
        if param.param_type_name != "argument" or value is None:
            continue
        words += [str(word) for word in value] if param.nargs == -1 else [str(value)]
    return words


def _check_single_arguments(
    ctx: typer.Context, command: typer.core.TyperCommand, values: dict[str, Any]
) -> None:
    """A one-word argument that took an option (even a valid override) was left out: say so,
    rather than run with `--queue.name=x` as the directory."""
    for param in command.params:
        value = values.get(param.name or "")
        single = param.param_type_name == "argument" and param.nargs == 1
        if single and value is not None and looks_like_option(str(value)):
            name = (param.name or "argument").upper()
            raise UsageError(f"{ctx.command_path}: missing argument {name} (before {value})")
