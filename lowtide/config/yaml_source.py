"""Read a YAML config file into plain data, keeping the line of every key for error messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from lowtide.errors import UsageError

Loc = tuple[str | int, ...]
MAX_VALUES = 1_000_000  # values of a config with its aliases expanded; a real one has hundreds


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
    if _expanded_size(node, {}) > MAX_VALUES:  # a few aliases of aliases: billions of values
        raise UsageError(
            f"{path}: its aliases (*name) expand to more than {MAX_VALUES} values; "
            "write the values out, or alias fewer levels"
        )
    lines: dict[Loc, int] = {}
    _collect_lines(node, (), lines, path)
    return data, lines


def _expanded_size(node: yaml.Node, sizes: dict[int, int]) -> int:
    """How many values the document holds once every alias is expanded, each node counted
    once (an alias is the node it names)."""
    if id(node) not in sizes:
        children = node.value if isinstance(node, yaml.SequenceNode) else []
        if isinstance(node, yaml.MappingNode):
            children = [child for pair in node.value for child in pair]
        sizes[id(node)] = 1 + sum(_expanded_size(child, sizes) for child in children)
    return sizes[id(node)]


def _collect_lines(node: yaml.Node, loc: Loc, lines: dict[Loc, int], path: Path) -> None:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key_loc = (*loc, key_node.value)
            line = key_node.start_mark.line + 1
            if key_loc in lines:
                # YAML keeps the last of two equal keys: the first would be lost unsaid
                raise UsageError(
                    f"{path}:{line}: {'.'.join(map(str, key_loc))}: set again (first on line "
                    f"{lines[key_loc]}); keep one"
                )
            lines[key_loc] = line
            _collect_lines(value_node, key_loc, lines, path)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines[(*loc, index)] = item.start_mark.line + 1
            _collect_lines(item, (*loc, index), lines, path)


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
