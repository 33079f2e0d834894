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

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, model_validator
from pydantic.fields import FieldInfo

from rl.plugins import is_dotted_path


class ConfigSection(BaseModel):
    """Base of every config section: unknown keys fail, numbers given for text stay text."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True, validate_default=True)


def _function_path(value: str) -> str:
    if not is_dotted_path(value):
        raise ValueError(f"{value!r} is not a dotted path (write package.module:function)")
    return value


# A setting that names a function of the user's own, imported when the run starts.
FunctionPath = Annotated[str, AfterValidator(_function_path)]


class SwitchedSection(ConfigSection):
    """A section with an `enabled` switch that a config may also give alone: `redact: false`
    reads as `redact: {enabled: false}`."""

    @model_validator(mode="before")
    @classmethod
    def _bool_means_enabled(cls, data: Any) -> Any:
        return {"enabled": data} if isinstance(data, bool) else data


def field_of(model: type[BaseModel], name: str, **changes: Any) -> Any:
    """`model`'s field `name` (its constraints, description and default) for another model that
    surfaces the same setting under its own name, with `changes` (e.g. another `default=`): the
    setting stays declared once. Typed `Any` so that it reads as a field's default."""
    return FieldInfo.merge_field_infos(model.model_fields[name], **changes)
