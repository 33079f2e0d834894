"""`ConfigSection`: the one base of every settings model, in every package and the CLI.

A section's rules are the config file's: an unknown key fails (and the loader names the nearest
valid one), defaults are validated like given values, and a number written where text is
expected stays text (`run_id: 2024`, `allow: [12345]`), as YAML users mean it. The frozen record
models that cross the queue (`sampling.records`) are the one other base: they are data, not
settings.

It lives in `rl`, the bottom layer, so that `sampling`, `annotation` and `lowtide` derive from it
without importing each other.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.fields import FieldInfo


class ConfigSection(BaseModel):
    """Base of every config section: unknown keys fail, numbers given for text stay text."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True, validate_default=True)


def field_of(model: type[BaseModel], name: str, **changes: Any) -> Any:
    """`model`'s field `name` (its constraints, description and default) for another model that
    surfaces the same setting under its own name, with `changes` (e.g. another `default=`): the
    setting stays declared once. Typed `Any` so that it reads as a field's default."""
    return FieldInfo.merge_field_infos(model.model_fields[name], **changes)
