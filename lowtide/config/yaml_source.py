"""Read a YAML config file into plain data, keeping the line of every key for error messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from lowtide.errors import UsageError

Loc = tuple[str | int, ...]


def read_yaml_config(path: str | Path) -> tuple[dict[str, Any], dict[Loc, int]]:
    """Returns (data, lines) where lines maps a key path like ("logger", "name") to its line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{path}: config file not found") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory, not a config file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read config file ({exc})") from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise UsageError(
            f"{path}:{_yaml_error_position(exc)} bad YAML: {_yaml_problem(exc)}"
        ) from None
    except RecursionError:  # PyYAML composes nested collections recursively
        raise UsageError(f"{path}: bad YAML: nested too deeply to read") from None
    if data is None:
        return {}, {}
    if not isinstance(data, dict):
        raise UsageError(f"{path}: the top level must be a mapping of sections, not {_kind(data)}")
    lines: dict[Loc, int] = {}
    _collect_lines(node, (), lines)
    return data, lines


def _collect_lines(node: yaml.Node, loc: Loc, lines: dict[Loc, int]) -> None:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key_loc = (*loc, key_node.value)
            lines[key_loc] = key_node.start_mark.line + 1
            _collect_lines(value_node, key_loc, lines)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines[(*loc, index)] = item.start_mark.line + 1
            _collect_lines(item, (*loc, index), lines)


def _yaml_error_position(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    return f"{mark.line + 1}:{mark.column + 1}:" if mark is not None else ""


def _yaml_problem(exc: yaml.YAMLError) -> str:
    problem = getattr(exc, "problem", None)
    context = getattr(exc, "context", None)
    if problem and context:
        return f"{problem} ({context})"
    return str(problem or exc).replace("\n", " ")


def _kind(value: Any) -> str:
    return {list: "a list", str: "a string"}.get(type(value), type(value).__name__)
