"""Configs found in data being read (a run directory's saved `config.yaml`), read as data.

A command that reads someone else's run never takes settings from its config: they could name
code (`sampling.redact.redactor: os:system`) or switch protections off. It may read what the
config asks for, to tell the reader what it did not apply; this module reads it bounded (size,
no aliases, nesting) and never resolves anything in it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from rl.plugins import is_dotted_path
from sampling.redaction.config import RedactConfig

MAX_CONFIG_BYTES = 1 << 20  # a saved run config is a few KB
MAX_DEPTH = 50


class _NoAliases(yaml.SafeLoader):
    """A YAML loader that refuses anchors' aliases (a few lines expand to gigabytes)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise yaml.YAMLError("aliases are not read in a run's config")
        return super().compose_node(parent, index)


def read_untrusted_yaml(path: Path) -> Any:
    """The YAML document at `path`, or None where it is missing, too large, or unreadable."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError:
        return None
    if len(raw) > MAX_CONFIG_BYTES:
        return None
    try:
        data = yaml.load(raw.decode("utf-8", errors="replace"), Loader=_NoAliases)
    except (yaml.YAMLError, RecursionError, ValueError):
        return None
    return data if _depth(data) <= MAX_DEPTH else None


def redact_settings_asked(path: Path) -> list[str]:
    """The `sampling.redact` settings the config at `path` sets otherwise than the defaults,
    named (and a redactor's dotted path shown where it is one), `enabled` aside: what a reader
    of the run is told was not applied."""
    data = read_untrusted_yaml(path)
    sampling = data.get("sampling") if isinstance(data, dict) else None
    asked = sampling.get("redact") if isinstance(sampling, dict) else None
    if not isinstance(asked, dict):
        return []
    defaults = RedactConfig().model_dump(mode="json")
    named = []
    for key, value in asked.items():
        if key == "enabled" or (key in defaults and value == defaults[key]):
            continue
        if key == "redactor" and isinstance(value, str) and is_dotted_path(value):
            named.append(f"redactor {value}")
        else:
            named.append(key if isinstance(key, str) and key.isidentifier() else "(a key)")
    return named


def _depth(data: Any) -> int:
    depth, level = 0, [data]
    while level:  # breadth first: no recursion for a reader to exhaust
        depth += 1
        if depth > MAX_DEPTH:
            return depth
        nested: list[Any] = []
        for item in level:
            if isinstance(item, dict):
                nested.extend(item.values())
            elif isinstance(item, list):
                nested.extend(item)
        level = nested
    return depth - 1
