"""The whole run config: every package's sections, loaded from YAML, env and dotted overrides.

Precedence, lowest first: defaults < YAML file < environment (REDIS_URL) < command-line flags.
Secrets (`env_only` fields, and the password of a URL in `password_env_only` ones) come from the
environment only (or a `VAR_FILE` it names, as Docker and Kubernetes mount secrets), never from
config files or flags: a flag shows in `ps` and in shell history, a file gets committed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, Field, ValidationError, model_validator

from annotation.config import AnnotationConfig, ExportConfig
from lowtide.config.messages import describe_errors, first_plain_value_on
from lowtide.config.overrides import apply_overrides, parse_overrides
from lowtide.config.yaml_source import Loc, read_yaml_config
from lowtide.errors import UsageError
from rl.config import DataConfig, HookSpec, LoggerConfig, ModelConfig, RewardSpec, TrainerConfig
from rl.config_base import ConfigSection
from rl.masking import url_has_secret
from sampling.config import QueueConfig, SamplingConfig

ConfigT = TypeVar("ConfigT", bound=BaseModel)


class RunConfig(ConfigSection):
    device: Literal["cpu", "cuda", "auto"] = Field(
        "auto", description="where training runs; auto: cuda if a GPU is visible, else cpu"
    )
    run_id: str | None = Field(None, description="defaults to a timestamp when training starts")
    trainer: TrainerConfig = Field(
        default_factory=TrainerConfig, description="algorithm, generation, optimizer and runs"
    )
    data: DataConfig = Field(default_factory=DataConfig, description="the training prompts")
    model: ModelConfig = Field(description="the policy and its reference and critic")
    rewards: list[RewardSpec] = Field(
        default_factory=list, description="reward components; the reward is their weighted sum"
    )
    logger: LoggerConfig = Field(
        default_factory=LoggerConfig, description="metrics, histograms and rollout tables"
    )
    hooks: list[HookSpec] = Field(default_factory=list, description="stage hooks, run in order")
    sampling: SamplingConfig = Field(
        default_factory=SamplingConfig, description="which rollouts go to review"
    )
    queue: QueueConfig = Field(
        default_factory=QueueConfig, description="the Redis queue to the workers, and the spool"
    )
    annotation: AnnotationConfig = Field(
        default_factory=AnnotationConfig, description="the Label Studio side: project, import"
    )
    export: ExportConfig = Field(
        default_factory=ExportConfig, description="reviews out as reward-model data"
    )

    @model_validator(mode="after")
    def _selection_follows_review_mode(self) -> RunConfig:
        # The routing core selects groups when tasks are comparisons: one knob, read by both
        # sides (the router only sees `sampling`).
        wanted = self.annotation.compare_size
        if self.sampling.compare_size not in (None, wanted):
            raise ValueError(
                "sampling.compare_size follows annotation.review_mode and annotation.compare.size:"
                " set those instead"
            )
        self.sampling.compare_size = wanted
        return self


class ServiceConfig(RunConfig):
    """The run config as the commands that do not train read it (worker, queue, export,
    annotation, rm): one file serves them and `train`, and is checked whole, so a typo
    anywhere in it stops every command alike. Only the model may be left out, as in a file with
    just the service sections; no file at all works too (defaults + environment)."""

    model: ModelConfig | None = None  # type: ignore[assignment]


def load_run_config(
    path: str | Path | None = None,
    overrides: list[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> RunConfig:
    """Raises UsageError with one line per problem; never a traceback for a user's mistake."""
    return _load(RunConfig, path, overrides, environ)


def load_service_config(
    path: str | Path | None = None,
    overrides: list[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> ServiceConfig:
    return _load(ServiceConfig, path, overrides, environ)


def _load(
    schema: type[ConfigT],
    path: str | Path | None,
    overrides: list[str] | None,
    environ: Mapping[str, str] | None,
) -> ConfigT:
    environ = os.environ if environ is None else environ
    data: dict[str, Any] = {}
    origin: dict[Loc, str] = {}
    if path is not None:
        data, lines = read_yaml_config(path)
        origin = {loc: f"{path}:{line}" for loc, line in lines.items()}
    parsed = parse_overrides(overrides or [])
    for override in parsed:
        origin[override.path] = override.flag
        plain = first_plain_value_on(schema, override.path)
        if plain is not None:
            raise UsageError(
                f"{override.flag}: {'.'.join(map(str, plain))} is a value, not a section"
            )
    _reject_secrets_outside_env(schema, data, parsed, origin)
    _apply_environment(schema, data, environ)
    apply_overrides(data, parsed)
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        raise UsageError("\n".join(describe_errors(exc, schema, origin))) from None


def dump_run_config(config: RunConfig) -> str:
    """YAML of the resolved config with every secret masked: safe to print and to save."""
    return yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False, allow_unicode=True)


@dataclass(frozen=True)
class EnvField:
    variable: str
    env_only: bool  # the whole value is a secret
    password_env_only: bool = False  # a URL whose password is a secret


def env_fields(model: type[BaseModel] = RunConfig, prefix: Loc = ()) -> dict[Loc, EnvField]:
    """Fields bound to an environment variable, by path."""
    found: dict[Loc, EnvField] = {}
    for name, field in model.model_fields.items():
        extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
        if "env" in extra:
            found[(*prefix, name)] = EnvField(
                str(extra["env"]), bool(extra.get("env_only")), bool(extra.get("password_env_only"))
            )
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            found.update(env_fields(annotation, (*prefix, name)))
    return found


def _reject_secrets_outside_env(
    schema: type[BaseModel], data: dict[str, Any], overrides: list[Any], origin: dict[Loc, str]
) -> None:
    for loc, field in env_fields(schema).items():
        if not (field.env_only or field.password_env_only):
            continue
        in_file = _get(data, loc)
        given = [override.value for override in overrides if override.path == loc]
        given += [] if in_file is None else [in_file]
        if not given:
            continue
        key, where = ".".join(map(str, loc)), origin.get(loc, "")
        where = where if where.startswith("--") else f"{where}: {key}" if where else key
        if field.env_only:
            raise UsageError(
                f"{where}: secrets are read from the environment only; "
                f"remove it here and set {field.variable} instead"
            )
        if any(_has_password(value) for value in given):
            raise UsageError(
                f"{where}: a password in the URL is read from the environment only; "
                f"remove it here and set {field.variable} (or {field.variable}_FILE) instead"
            )


def _has_password(url: Any) -> bool:
    """A password in the userinfo or as a credential query key (`?password=`), which redis-py
    passes to the connection as it passes the userinfo's."""
    return isinstance(url, str) and url_has_secret(url)


def _apply_environment(
    schema: type[BaseModel], data: dict[str, Any], environ: Mapping[str, str]
) -> None:
    for loc, field in env_fields(schema).items():
        variable = field.variable
        value = environ.get(variable) or _read_secret_file(variable, environ)
        if value:
            section = data
            for part in loc[:-1]:
                if not isinstance(section.get(part), dict):
                    section[part] = {}
                section = section[part]
            section[loc[-1]] = value


def _read_secret_file(variable: str, environ: Mapping[str, str]) -> str | None:
    """`VAR_FILE=/run/secrets/x` stands for `VAR` (Docker and Kubernetes secrets): the file's
    content without its trailing newline."""
    path = environ.get(f"{variable}_FILE")
    if not path:
        return None
    try:
        return Path(path).read_text(encoding="utf-8").rstrip("\r\n")
    except OSError as error:
        raise UsageError(
            f"{variable}_FILE={path}: cannot read it ({error.strerror or error}); mount the "
            f"secret there or set {variable} instead"
        ) from None


def _get(data: Any, loc: Loc) -> Any:
    for part in loc:
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data
