"""Turn pydantic validation errors into one readable line each: key path, what is wrong, a hint."""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationError

from rl.suggest import closest

Loc = tuple[str | int, ...]


def describe_errors(
    error: ValidationError,
    model: type[BaseModel],
    origin: dict[Loc, str],
) -> list[str]:
    """origin maps a key path to where it was written ("config.yaml:12" or "--trainer.seed")."""
    items = error.errors(include_url=False)
    misspelled = _misspelled_required_keys(items, model)
    lines = []
    for item in items:
        loc = tuple(item["loc"])
        if item["type"] == "missing" and loc in misspelled:
            continue  # the "unknown key (did you mean ...?)" line already says it
        problem = _problem(item, loc, model)
        if origin.get(loc, "").startswith("--"):
            lines.append(f"{origin[loc]}: {problem}")  # the flag already spells the key path
        else:
            where = written_at(loc, origin)
            lines.append(f"{where + ': ' if where else ''}{_dotted(loc)}: {problem}")
    return lines


def _misspelled_required_keys(items: list[Any], model: type[BaseModel]) -> set[Loc]:
    """Required keys that are missing only because the user misspelled them."""
    found = set()
    for item in items:
        if item["type"] == "extra_forbidden":
            loc = tuple(item["loc"])
            suggestion = _closest(loc, model)
            if suggestion:
                found.add((*loc[:-1], suggestion))
    return found


def _closest(loc: Loc, model: type[BaseModel]) -> str | None:
    names = field_names_at(model, loc[:-1]) or []
    near = closest(str(loc[-1]), names)
    return near[0] if near else None


def field_names_at(model: type[BaseModel], loc: Loc) -> list[str] | None:
    """The valid keys of the section at `loc`, or None if `loc` is not a section."""
    current = _unwrap(annotation_at(model, loc))
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return None


def first_plain_value_on(model: type[BaseModel], loc: Loc) -> Loc | None:
    """The first proper prefix of `loc` that holds a plain value (a number, a string...), if any:
    `trainer.seed.x` -> `trainer.seed`. Unknown keys are left to validation, which names them."""
    for end in range(1, len(loc)):
        annotation = _unwrap(annotation_at(model, loc[:end]))
        if annotation is _UNKNOWN:
            return None
        if annotation in (int, float, str, bool) or typing.get_origin(annotation) is typing.Literal:
            return loc[:end]
    return None


_UNKNOWN: Any = object()


def annotation_at(model: type[BaseModel], loc: Loc) -> Any:
    current: Any = model
    for part in loc:
        current = _unwrap(current)
        if isinstance(part, int):
            args = typing.get_args(current)
            current = args[0] if args else _UNKNOWN
        elif isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(part)
            current = field.annotation if field else _UNKNOWN
        else:
            return _UNKNOWN
    return current


def _unwrap(annotation: Any) -> Any:
    """Optional[X] -> X, so that sections that may be null are still walked."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        arms = [arm for arm in typing.get_args(annotation) if arm is not type(None)]
        if len(arms) == 1:
            return arms[0]
    return annotation


def _problem(item: dict[str, Any], loc: Loc, model: type[BaseModel]) -> str:
    kind = item["type"]
    if kind == "extra_forbidden":
        suggestion = _closest(loc, model)
        if suggestion:
            return f"unknown key (did you mean {suggestion}?)"
        names = field_names_at(model, loc[:-1]) or []
        return f"unknown key (valid keys: {', '.join(names)})" if names else "unknown key"
    if kind == "missing":
        return "required key is missing"
    message = item["msg"]
    if kind.startswith("literal_error") or kind == "enum":
        got = item.get("input")
        return f"{message[0].lower()}{message[1:]} (got {_short(got)})"
    if kind.startswith("value_error"):
        return message.removeprefix("Value error, ")
    return f"{message[0].lower()}{message[1:]} (got {_short(item.get('input'))})"


def written_at(loc: Loc, origin: dict[Loc, str]) -> str:
    """The flag that set `loc` or a key inside it (`--model.policy.path=x` makes `model.policy`),
    else the file:line that wrote `loc` or the nearest section above it; "" where none did."""
    for written, place in origin.items():
        if place.startswith("--") and written[: len(loc)] == loc:
            return place
    for end in range(len(loc), 0, -1):
        if loc[:end] in origin:
            return origin[loc[:end]]
    return ""


def _dotted(loc: Loc) -> str:
    return ".".join(str(part) for part in loc) or "(config)"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
