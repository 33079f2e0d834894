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


@dataclass(frozen=True)
class Word:
    """One word of a command line as overrides read it: an option with its value, or another
    word (a job id, a misplaced file name)."""

    text: str  # the option without its value (`--a.b`), or the whole word
    value: str | None = None  # an option's value; None where none came with it
    option: bool = False


def read_words(args: list[str]) -> list[Word]:
    """The words in order: `--a.b=v` and `--a.b v` are one option each (a following word that
    starts with `--` is the next option, not a value); a negative number is a value."""
    words: list[Word] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if not looks_like_option(arg):
            words.append(Word(arg))
        elif "=" in arg:
            key, _, raw = arg.partition("=")
            words.append(Word(key, raw, option=True))
        else:
            following = args[index + 1] if index + 1 < len(args) else None
            taken = following is not None and not following.startswith("--")
            words.append(Word(arg, following if taken else None, option=True))
            if taken:
                index += 1
        index += 1
    return words


def looks_like_option(word: str) -> bool:
    if not word.startswith("-") or word in ("-", "--"):
        return False
    try:
        float(word)  # a negative number is a value
    except ValueError:
        return True
    return False


def parse_overrides(args: list[str]) -> list[Override]:
    """Parse `--a.b=v` and `--a.b v` pairs. Values are YAML scalars or flow lists/maps."""
    overrides: list[Override] = []
    for word in read_words(args):
        if not (word.option and word.text.startswith("--")):
            raise UsageError(_not_an_override(word.text))
        if word.value is None:
            raise UsageError(f"{word.text}: missing value (write {word.text}=VALUE)")
        key = word.text[2:]
        overrides.append(
            Override(flag=word.text, path=_parse_path(key), value=_parse_value(key, word.value))
        )
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
