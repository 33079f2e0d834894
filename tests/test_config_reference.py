"""docs/config.md is the generator's output, every config key has a description, and the
renderer writes real keys' types, defaults and environment variables right."""

from __future__ import annotations

import re
import typing

import pytest
from pydantic import BaseModel

from lowtide.config.reference import COMMAND, Row, render, rows
from lowtide.config.run_config import RunConfig
from sampling.redaction.kinds import DEFAULT_PHONE_REGIONS
from tests.conftest import invoke
from tests.helpers.docs import DOCS

pytestmark = pytest.mark.unit


def test_docs_config_md_is_the_generated_reference() -> None:
    assert (DOCS / "config.md").read_text(encoding="utf-8") == render(), (
        f"docs/config.md is out of date: regenerate it with `{COMMAND}`"
    )


def _models(annotation: typing.Any) -> typing.Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
    for arg in typing.get_args(annotation):
        yield from _models(arg)


def test_every_field_reachable_from_the_run_config_has_a_description() -> None:
    seen: set[type[BaseModel]] = set()
    missing: list[str] = []

    def walk(model: type[BaseModel]) -> None:
        if model in seen:
            return
        seen.add(model)
        for name, field in model.model_fields.items():
            if not (field.description or "").strip():
                missing.append(f"{model.__module__}.{model.__name__}.{name}")
            for sub in _models(field.annotation):
                walk(sub)

    walk(RunConfig)
    assert len(seen) > 20  # the walk reaches the nested sections
    assert missing == [], "give these fields a description= (it is their docs/config.md row)"


@pytest.fixture(scope="module")
def by_key() -> dict[str, Row]:
    found = rows()
    assert len({row.key for row in found}) == len(found)
    return {row.key: row for row in found}


def test_literals_nested_defaults_and_optional_sections(by_key: dict[str, Row]) -> None:
    assert by_key["sampling.review_budget.per"].type == '`"round"` \\| `"hour"`'
    # A name checked against a registry is a string; its description names the built-ins.
    policy = by_key["sampling.policy"]
    names = ["threshold", "quantile", "group_relative", "zscore", "budget"]
    assert policy.type == "`str`" and all(name in policy.description for name in names)
    assert policy.default == "`threshold`"
    assert by_key["sampling.redact.phone_regions"].type == "`list[str]`"
    assert by_key["sampling.redact.phone_regions"].default == (
        f"`[{', '.join(DEFAULT_PHONE_REGIONS)}]`"  # a default_factory, evaluated
    )
    assert by_key["annotation.retry.intervals_s"].default == "`[2, 10, 30, 60, 120]`"
    assert by_key["annotation.suggestions.judge"].default == "`'off'`"  # YAML would read off
    assert by_key["trainer.learning_rate"].default == "`1.0e-05`"
    assert by_key["sampling.review_budget"].type == "`section` \\| `null`"
    assert by_key["sampling.review_budget"].default == "`null`"
    assert "per round" in by_key["sampling.review_budget"].description  # its docstring
    assert by_key["sampling.review_budget.reviews"].default == "required"
    assert by_key["model"].default == by_key["model.actor.model_name_or_path"].default
    assert by_key["model.reference.revision"].type == "`str` \\| `null`"


def test_lists_of_sections_document_their_items(by_key: dict[str, Row]) -> None:
    assert by_key["rewards"].type == "`list[section]`"
    assert by_key["rewards"].default == "`[]`"
    assert (by_key["rewards[].weight"].type, by_key["rewards[].weight"].default) == (
        "`float`",
        "`1.0`",
    )
    assert '`"train_end"`' in by_key["hooks[].stage"].type
    assert by_key["hooks[].params"].type == "`dict[str, any]`"
    assert by_key["annotation.suggestions.bands[].rating"].default == "required"
    assert by_key["sampling.redact.patterns[].regex"].default == "required"
    assert by_key["logger.name"].type == "`list[str]`"  # a validator checks the names
    assert "wandb, tensorboard" in by_key["logger.name"].description


def test_environment_fields_name_their_variable(by_key: dict[str, Row]) -> None:
    api_key = by_key["annotation.api_key"]
    assert "environment only" in api_key.env and "`LABEL_STUDIO_API_KEY`" in api_key.env
    assert "environment only" in by_key["logger.wandb_api_key"].env
    redis = by_key["queue.redis_url"]
    assert "`REDIS_URL`" in redis.env and "password" in redis.env
    assert "environment only" not in redis.env
    assert redis.default == "`redis://127.0.0.1:6379/0`"
    assert by_key["queue.name"].env == ""
    line = next(line for line in render().splitlines() if line.startswith("| `annotation.api_key`"))
    assert "LABEL_STUDIO_API_KEY" in line


def test_every_table_row_has_four_cells() -> None:
    """A `|` in a description or type would split a cell: outside code spans they are escaped."""
    table_rows = [line for line in render().splitlines() if line.startswith("| `")]
    assert len(table_rows) == len(rows())
    for line in table_rows:
        bare = re.sub(r"`[^`]*`", "", line).replace("\\|", "")
        assert bare.count("|") == 5, line


def test_the_cli_prints_the_reference(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = invoke(capsys, "config", "reference")
    assert (code, out) == (0, render())
