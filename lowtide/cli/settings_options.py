"""Command options generated from a settings model: one option per field, with the field's
default, bounds, choices and description, so a setting is declared once (on the model).

```python
@app.command()
@settings_options(RMTrainSettings, flags={"learning_rate": "--lr"})
def train(ctx: typer.Context, settings: RMTrainSettings, ...) -> None: ...
```

The command's own parameters stay as written; `settings` is replaced by the generated options
and the command receives the validated model. Why our own adapter rather than pydantic-settings'
command-line source or a typer plug-in: every command is a typer command already (help, the
strict checks in `lowtide.cli.usage`, the in-process test runner), and the run config's dotted
overrides (`--trainer.seed=1`) have their own loader with file:line origins. What was missing is
only the step from a model's fields to typer's options, which this module is. Secret fields are
never options: they come from the environment.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from functools import wraps
from typing import Any, TypeVar

import annotated_types
import typer
from pydantic import BaseModel, SecretStr, ValidationError
from pydantic.fields import FieldInfo

from lowtide.errors import UsageError

Command = TypeVar("Command", bound=Callable[..., Any])


def settings_options(
    model: type[BaseModel],
    *,
    into: str = "settings",
    flags: Mapping[str, str] | None = None,
    exclude: Sequence[str] = (),
    defaults: BaseModel | None = None,
) -> Callable[[Command], Command]:
    """Replace the command's parameter `into` with one option per field of `model` (`--field-name`
    unless `flags` names it; booleans as `--x/--no-x`); `defaults`: an instance whose values are
    the options' defaults (a command that starts elsewhere than the model's own defaults)."""
    flags = flags or {}
    fields = {
        name: field
        for name, field in model.model_fields.items()
        if name not in exclude and not _secret(field)
    }

    def decorate(command: Command) -> Command:
        hints = typing.get_type_hints(command)
        own = [
            parameter.replace(annotation=hints.get(parameter.name, parameter.annotation))
            for parameter in inspect.signature(command).parameters.values()
        ]
        at = next(i for i, parameter in enumerate(own) if parameter.name == into)
        generated = [
            _parameter(name, field, flags.get(name), defaults) for name, field in fields.items()
        ]
        parameters = [*own[:at], *generated, *own[at + 1 :]]

        @wraps(command)
        def run(*args: Any, **kwargs: Any) -> Any:
            given = {name: kwargs.pop(name) for name in fields}
            try:
                settings = model(**given)
            except ValidationError as error:
                raise UsageError(_one_line(error, flags)) from None
            return command(*args, **kwargs, **{into: settings})

        run.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
        run.__annotations__ = {parameter.name: parameter.annotation for parameter in parameters}
        return typing.cast(Command, run)

    return decorate


def flag_of(name: str, flags: Mapping[str, str] | None = None) -> str:
    return (flags or {}).get(name) or f"--{name.replace('_', '-')}"


def option_for(model: type[BaseModel], name: str, flag: str | None = None, **changes: Any) -> Any:
    """One field of `model` as a typer option (`--field-name` unless `flag`), for a command that
    takes one setting of a section; `changes`: typer.Option's keywords to set otherwise."""
    field = model.model_fields[name]
    if _secret(field):
        raise ValueError(f"{model.__name__}.{name} is a secret: it comes from the environment")
    return _option(field, flag or flag_of(name), _default(field), **changes)


def _parameter(
    name: str, field: FieldInfo, flag: str | None, defaults: BaseModel | None
) -> inspect.Parameter:
    default = getattr(defaults, name) if defaults is not None else _default(field)
    info = _option(field, flag or flag_of(name), default)
    return inspect.Parameter(
        name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=info, annotation=field.annotation
    )


def _option(field: FieldInfo, flag: str, default: Any, **changes: Any) -> Any:
    if field.annotation is bool and "/" not in flag:
        flag = f"{flag}/--no-{flag.removeprefix('--')}"
    low, high = _bounds(field)
    settings = {"help": field.description, "min": low, "max": high, **changes}
    return typer.Option(default, flag, **settings)


def _default(field: FieldInfo) -> Any:
    return ... if field.is_required() else field.get_default(call_default_factory=True)


def _bounds(field: FieldInfo) -> tuple[Any, Any]:
    """Closed bounds (`ge`, `le`) as the option's range, shown in `--help`; open ones (`gt`)
    are left to the model, whose error names the option all the same."""
    low = high = None
    for rule in field.metadata:
        if isinstance(rule, annotated_types.Ge):
            low = rule.ge
        elif isinstance(rule, annotated_types.Le):
            high = rule.le
    return low, high


def _secret(field: FieldInfo) -> bool:
    extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
    return bool(extra.get("env_only")) or SecretStr in (
        field.annotation,
        *typing.get_args(field.annotation),
    )


def _one_line(error: ValidationError, flags: Mapping[str, str]) -> str:
    problems = []
    for item in error.errors(include_url=False):
        message = str(item["msg"]).removeprefix("Value error, ")
        if item["loc"]:
            flag = flag_of(str(item["loc"][0]), flags)
            message = f"{flag} {item.get('input')!r}: {message}"
        problems.append(message)
    return "; ".join(problems)
