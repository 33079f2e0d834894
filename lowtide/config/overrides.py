"""Dotted command-line overrides: `--trainer.num_epochs=1`, `--logger.name=[wandb,console]`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml

from lowtide.errors import UsageError

_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$|^\d+$")


@dataclass(frozen=True)
class Override:
    flag: str  # as typed, for messages
    path: tuple[str | int, ...]
    value: Any


def parse_overrides(args: list[str]) -> list[Override]:
    """Parse `--a.b=v` and `--a.b v` pairs. Values are YAML scalars or flow lists/maps."""
    overrides: list[Override] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.startswith("--") or arg == "--":
            raise UsageError(_not_an_override(arg))
        key, sep, raw = arg[2:].partition("=")
        if not sep:
            if i + 1 >= len(args) or args[i + 1].startswith("--"):
                raise UsageError(f"{arg}: missing value (write {arg}=VALUE)")
            raw = args[i + 1]
            i += 1
        overrides.append(
            Override(flag=f"--{key}", path=_parse_path(key), value=_parse_value(key, raw))
        )
        i += 1
    return overrides


def _not_an_override(arg: str) -> str:
    if arg.lower().endswith((".yaml", ".yml")):  # `lowtide train run.yaml`: a file, not a key
        return f"{arg!r}: a config file goes after --config (--config {arg})"
    return f"{arg!r}: overrides look like --section.key=value"


def apply_overrides(data: dict[str, Any], overrides: list[Override]) -> dict[str, Any]:
    for override in overrides:
        _set_path(data, override)
    return data


def _parse_path(key: str) -> tuple[str | int, ...]:
    parts = key.split(".")
    if not key or any(not _KEY.match(part) for part in parts):
        raise UsageError(
            f"--{key}: not a valid key path (use names joined by dots, e.g. --trainer.seed=1)"
        )
    return tuple(int(part) if part.isdigit() else part for part in parts)


def _parse_value(key: str, raw: str) -> Any:
    try:
        return yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        # Not YAML (e.g. an unbalanced bracket): take it as the literal text.
        return raw


def _set_path(data: dict[str, Any], override: Override) -> None:
    path = override.path
    node: Any = data
    for depth, part in enumerate(path[:-1]):
        here = ".".join(map(str, path[: depth + 1]))
        if isinstance(node, list):
            node = _list_item(node, part, override.flag, here)
        elif isinstance(node, dict) and isinstance(part, str):
            if node.get(part) is None:
                if isinstance(path[depth + 1], int):
                    raise UsageError(
                        f"{override.flag}: {here} has no entry {path[depth + 1]} (it is empty)"
                    )
                node[part] = {}
            node = node[part]
        else:
            raise UsageError(
                f"{override.flag}: {'.'.join(map(str, path[:depth]))} is not a section"
            )
    last = path[-1]
    if isinstance(node, list):
        _list_item(node, last, override.flag, ".".join(map(str, path)))
        node[last] = override.value
    elif isinstance(node, dict) and isinstance(last, str):
        node[last] = override.value
    else:
        raise UsageError(f"{override.flag}: {'.'.join(map(str, path[:-1]))} is not a section")


def _list_item(items: list[Any], part: str | int, flag: str, where: str) -> Any:
    index = _index(part, flag)
    if index >= len(items):
        raise UsageError(f"{flag}: {where} does not exist (the list has {len(items)} entries)")
    return items[index]


def _index(part: str | int, flag: str) -> int:
    if not isinstance(part, int):
        raise UsageError(f"{flag}: {part!r} indexes a list, use a number")
    return part
