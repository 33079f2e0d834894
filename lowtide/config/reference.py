"""The configuration reference (docs/config.md), rendered from the run config's pydantic models.

`python -m lowtide.config.reference` prints it; `--write` writes docs/config.md, which
tests/test_config_reference.py keeps equal to this output. Every key is one table row: its
dotted YAML path (`rewards[].name` for the entries of a list), its type, its default as YAML
writes it, and its `description=`.
"""

from __future__ import annotations

import argparse
import inspect
import json
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo

from lowtide.config.run_config import EnvField, RunConfig, env_fields

DOC = Path(__file__).resolve().parents[2] / "docs" / "config.md"
COMMAND = "python -m lowtide.config.reference --write"
INTRO = """\
Every key of the run config, the one YAML file that `lowtide train` and the service commands
read (see [Command line](cli.md#configuration)). Precedence, lowest first: these defaults, the
file, the environment, `--section.key=value` flags. A key in a list is written with `[]`:
`rewards[].weight` is the `weight` of each entry of `rewards` (`--rewards.0.weight=2` on the
command line). Secrets come from the environment only (or a `VAR_FILE` it names)."""


@dataclass(frozen=True)
class Row:
    key: str  # dotted YAML path
    type: str  # Markdown
    default: str  # Markdown
    description: str  # the field's (a nested section's: and its model's docstring)
    env: str = ""  # Markdown: the environment variable, for a field bound to one


def render(root: type[BaseModel] = RunConfig) -> str:
    """The whole reference as Markdown."""
    env = _env(root)
    notice = f"<!-- Generated from the config models by `{COMMAND}`: do not edit. -->"
    parts = [notice, "", "# Configuration reference", "", INTRO]
    plain = [name for name, field in root.model_fields.items() if not _models_in(field.annotation)]
    if plain:
        parts += ["", "## Top-level keys", "", *_table(_rows(root, "", plain, env))]
    for name, field in root.model_fields.items():
        if name not in plain:
            docs = _cell(_docstrings(field))
            parts += ["", f"## `{name}`", "", *([docs, ""] if docs else [])]
            parts += _table(_rows(root, "", [name], env))
    return "\n".join(parts) + "\n"


def rows(root: type[BaseModel] = RunConfig) -> list[Row]:
    """Every row of the reference, in order."""
    return list(_rows(root, "", list(root.model_fields), _env(root)))


def _env(root: type[BaseModel]) -> dict[str, EnvField]:
    return {".".join(map(str, loc)): field for loc, field in env_fields(root).items()}


def _rows(
    model: type[BaseModel], prefix: str, names: list[str], env: dict[str, EnvField]
) -> Iterator[Row]:
    for name in names:
        field = model.model_fields[name]
        key = f"{prefix}{name}"
        nested = _models_in(field.annotation)
        description = field.description or ""
        docs = _docstrings(field) if prefix else ""  # a top-level one is under its heading
        if docs:
            description = f"{description.rstrip('.')}. {docs}" if description else docs
        note = _env_note(env[key]) if key in env else ""
        yield Row(key, type_of(field.annotation), _default(field), description, note)
        origin = typing.get_origin(field.annotation)
        inner = f"{key}[]" if origin in (list, tuple, set) else key
        for sub in nested:
            yield from _rows(sub, f"{inner}.", list(sub.model_fields), env)


def type_of(annotation: Any) -> str:
    """Readable Markdown: `int`, `list[str]`, `"a"` | `"b"`, `section`, ..."""
    return " \\| ".join(_arms(annotation))


def _arms(annotation: Any) -> list[str]:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:  # a type with a validator: the type it validates
        return _arms(args[0])
    if origin in (typing.Union, types.UnionType):
        arms = [arm for arg in args if arg is not type(None) for arm in _arms(arg)]
        return arms + (["`null`"] if type(None) in args else [])
    if origin is typing.Literal:
        return [f"`{json.dumps(value)}`" for value in args]
    if origin in (list, tuple, set):
        item = _arms(args[0]) if args else ["`any`"]
        if len(item) == 1 and item[0].startswith("`"):
            return [f"`list[{item[0].strip('`')}]`"]
        return ["list of " + " \\| ".join(item)]
    if origin is dict:
        key, value = (_arms(arg)[0].strip("`") for arg in args) if args else ("str", "any")
        return [f"`dict[{key}, {value}]`"]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return ["`section`"]
    if annotation is SecretStr:
        return ["`str`"]
    if annotation is Any:
        return ["`any`"]
    return [f"`{getattr(annotation, '__name__', str(annotation))}`"]


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The models an annotation holds (itself, the arms of a union, a list's items)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found = [model for arg in typing.get_args(annotation) for model in _models_in(arg)]
    return list(dict.fromkeys(found))


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    if isinstance(value, BaseModel):
        return ""  # a section: its keys have the defaults
    return f"`{_yaml(_plain(value))}`"


def _plain(value: Any) -> Any:
    if isinstance(value, SecretStr):
        return value.get_secret_value()  # a default in the code, not a secret of a user's
    if isinstance(value, BaseModel):
        return {name: _plain(getattr(value, name)) for name in type(value).model_fields}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def _yaml(value: Any) -> str:
    text = yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=10**6)
    return text.strip().removesuffix("...").strip()


def _docstrings(field: FieldInfo) -> str:
    """The docstrings of the models a field holds (their own, not a base class's)."""
    models = _models_in(field.annotation)
    return " ".join(inspect.cleandoc(model.__dict__.get("__doc__") or "") for model in models)


def _env_note(field: EnvField) -> str:
    variable = f"`{field.variable}` (or a file named by `{field.variable}_FILE`)"
    if field.env_only:
        return f"**Secret: from the environment only**, {variable}."
    if field.password_env_only:
        return f"Also from {variable}; a password in the URL only from there."
    return f"Also from {variable}."


def _table(found: Iterator[Row]) -> list[str]:
    lines = ["| key | type | default | description |", "|---|---|---|---|"]
    for row in found:
        described = " ".join(filter(None, [row.env, _cell(row.description)]))
        lines.append(f"| `{row.key}` | {row.type} | {row.default} | {described} |")
    return lines


def _cell(text: str) -> str:
    """Text safe in a table cell and in Markdown: one line, `|` `*` `<` escaped outside code."""
    pieces = " ".join(text.split()).split("`")
    for index in range(0, len(pieces), 2):  # outside backticks
        piece = pieces[index].replace("|", "\\|").replace("*", "\\*")
        pieces[index] = piece.replace("<", "&lt;").replace(">", "&gt;")
    return "`".join(pieces)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Print the configuration reference (Markdown).")
    parser.add_argument("--write", action="store_true", help="write docs/config.md instead")
    if parser.parse_args(argv).write:
        DOC.write_text(render(), encoding="utf-8")
        print(f"wrote {DOC}")
    else:
        print(render(), end="")


if __name__ == "__main__":
    main()
