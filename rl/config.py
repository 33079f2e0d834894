"""Config sections owned by the trainer: trainer, model, rewards, logger, hooks.

These are plain pydantic models so that `rl` works as a library; the CLI composes them with the
sections of `sampling` and `annotation` into one run config (`lowtide.config.RunConfig`).
Later work fills the sections in; unknown keys are always an error (`extra="forbid"`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)

from rl.config_base import ConfigSection, FunctionPath, SwitchedSection
from rl.plugins import is_dotted_path, logger_backend_names
from rl.suggest import did_you_mean

STAGES = ("rollout", "reward", "update", "step_end", "train_end")
Stage = Literal["rollout", "reward", "update", "step_end", "train_end"]


class TrainerConfig(ConfigSection):
    algorithm: Literal["grpo", "ppo"] = Field(
        "grpo", description="grpo: group-normalised advantages, no critic; ppo: a critic and GAE"
    )
    num_epochs: int = Field(1, ge=1, description="passes over the prompt set")
    max_steps: int | None = Field(None, ge=1, description="stop earlier than num_epochs")
    rollout_batch_size: int = Field(8, ge=1, description="prompts per step (per rank)")
    samples_per_prompt: int = Field(4, ge=1, description="completions per prompt (the GRPO group)")
    # generation
    max_new_tokens: int = Field(32, ge=1, description="most tokens generated per completion")
    temperature: float = Field(1.0, gt=0, description="sampling temperature of the rollouts")
    top_p: float = Field(1.0, gt=0, le=1, description="nucleus sampling; 1 = the whole vocabulary")
    # optimisation
    learning_rate: float = Field(1e-5, gt=0, description="AdamW learning rate after warmup")
    lr_scheduler: Literal["constant", "linear", "cosine"] = Field(
        "constant", description="after warmup: constant, or linear/cosine decay to 0 at the end"
    )
    warmup_steps: int = Field(
        0, ge=0, description="optimizer updates of linear warmup to learning_rate; 0 = none"
    )
    weight_decay: float = Field(0.0, ge=0, description="AdamW weight decay")
    max_grad_norm: float = Field(
        1.0, gt=0, description="gradients clipped to this total norm before each update"
    )
    gradient_accumulation_steps: int = Field(1, ge=1, description="micro-batches per minibatch")
    ppo_epochs: int = Field(1, ge=1, description="passes over each rollout batch")
    mini_batch_size: int | None = Field(None, ge=1, description="samples per optimizer step")
    clip_range: float = Field(0.2, gt=0, description="policy ratio clip (PPO and GRPO)")
    # KL to the frozen reference
    kl_coef: float = Field(
        0.05, ge=0, description="weight of the KL to the reference; 0 = no reference model loaded"
    )
    kl_mode: Literal["loss", "reward"] = Field(
        "loss",
        description="loss: kl_coef * KL added to the loss; reward: -kl_coef * KL per token "
        "added to the reward",
    )
    kl_estimator: Literal["k1", "k2", "k3"] = Field(
        "k3", description="per-token KL estimator (Schulman 2020); k3: unbiased and >= 0"
    )
    # GRPO
    scale_rewards: bool = Field(True, description="GRPO: divide advantages by the group std")
    # PPO
    gamma: float = Field(1.0, ge=0, le=1, description="PPO: discount per token in GAE")
    gae_lambda: float = Field(0.95, ge=0, le=1, description="PPO: GAE lambda")
    value_clip_range: float = Field(
        0.2, gt=0, description="PPO: how far new values may move from the old ones in the loss"
    )
    vf_coef: float = Field(0.1, ge=0, description="PPO: weight of the value loss in the loss")
    # runs
    seed: int = Field(0, description="torch and random get seed + rank; the prompt shuffle seed")
    output_dir: str = Field(
        "outputs", description="runs land in <output_dir>/<run_id>/ (config, checkpoints)"
    )
    save_every: int = Field(0, ge=0, description="checkpoint every N steps; 0 = only at the end")
    resume: bool = Field(False, description="continue from the run's last checkpoint")


class DataConfig(ConfigSection):
    """Prompts: an inline list, a JSONL file, or a HuggingFace `datasets` directory on disk."""

    prompts: list[str] | None = Field(None, description="the prompts inline (or give path)")
    path: str | None = Field(None, description=".jsonl or .yaml file, or a save_to_disk directory")
    prompt_field: str = Field(
        "prompt", description="the prompt's key in a .jsonl row or column of a datasets directory"
    )
    split: str = Field("train", description="the split of a saved DatasetDict")
    shuffle: bool = Field(True, description="reshuffle the prompts each epoch (from trainer.seed)")
    chat_template: bool = Field(True, description="apply the tokenizer's chat template if any")


class ModelRef(ConfigSection):
    model_name_or_path: str = Field(description="a local directory or a hub name")
    revision: str | None = Field(None, description="hub branch, tag or commit (null: the default)")
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(
        "auto",
        description="read on the actor only (the reference loads in its dtype, a critic in "
        "float32); auto: bfloat16 on a GPU that has it, else float32",
    )


class ModelConfig(ConfigSection):
    actor: ModelRef = Field(description="the policy that is trained; the tokenizer comes from it")
    reference: ModelRef | None = Field(None, description="defaults to a frozen copy of the actor")
    critic: ModelRef | None = Field(None, description="PPO value model; defaults to the actor's")


class RewardSpec(ConfigSection):
    type: str = Field(description="registry key or dotted path to a Python function")
    name: str | None = Field(None, description="component name in reward_details and metrics")
    weight: float = Field(1.0, description="the total reward is the sum of weight * value")
    path: str | None = Field(None, description="model directory, for type: reward_model")
    params: dict[str, Any] = Field(
        default_factory=dict,
        description="keyword arguments of the function (reward_model: batch_size, ...)",
    )


class HookSpec(ConfigSection):
    type: str = Field(description="registry key or dotted path")
    stage: Stage = Field(description="the stage after which the hook runs")
    every: int = Field(1, ge=1, description="run every N steps")
    when: str | None = Field(
        None, description="condition on step metrics, e.g. 'reward/mean < 0.5'"
    )
    on_error: Literal["disable", "fatal"] = Field(
        "disable",
        description="when the hook raises: disable it for the rest of the run, or stop the run",
    )
    params: dict[str, Any] = Field(
        default_factory=dict, description="settings handed to the hook's factory, checked by it"
    )


class LogIntervals(ConfigSection):
    scalars: int = Field(1, ge=1, description="scalar metrics every N steps")
    histograms: int = Field(1, ge=1, description="histograms every N steps")
    tables: int = Field(100, ge=1, description="rollout sample tables (and per-token values)")


class MetricWhitelist(ConfigSection):
    scalars: list[str] | None = Field(None, description="None = every scalar")
    histograms: list[str] | None = Field(
        None, description="null = reward/distribution and reward/token_distribution"
    )


class ConditionalLogging(ConfigSection):
    stage: Stage = Field(description="send these metrics as soon as this stage is done")
    metrics: list[str] = Field(
        description="metric names or prefixes (response_length: response_length/mean, ...)"
    )


class LoggerRedaction(SwitchedSection):
    """Redaction of the rollout tables (and files) the logger writes. Tables for a backend that
    sends text off this machine (wandb, whose offline files exist to be synced) are redacted by
    default; the local ones (jsonl files, console, TensorBoard) only with `enabled`: they stay
    with the run's owner, while records go to reviewers (`sampling.redact`, on by default)."""

    enabled: bool = Field(False, description="redact every table, the local files' too")
    remote: bool = Field(
        True,
        description="redact the tables of backends that send text elsewhere (wandb, online or "
        "synced later; a backend of your own unless it sets `remote = False`)",
    )
    # A factory named by dotted path: it gets the run config and returns a function of one row's
    # texts. Unset, the one the sampling package provides (rl.plugins.provide_table_redactor),
    # with the run's `sampling.redact` settings (kinds, allowlists, patterns, redactor).
    redactor: FunctionPath | None = Field(
        None,
        description="dotted path: (run config) -> (texts) -> texts with placeholders; unset: "
        "sampling's, with the run's `sampling.redact` settings",
    )


def _backend_name(name: str) -> str:
    """A built-in backend, one registered with `rl.tracking.register_backend`, or the dotted
    path of a factory of your own (`pkg.module:make_backend`, taken from your config only):
    a misspelled name fails with the nearest one."""
    known = logger_backend_names()
    if name in known or is_dotted_path(name):
        return name
    close = did_you_mean(name, known, quote=False)
    raise ValueError(f"unknown backend {name!r} ({close or 'known: ' + ', '.join(known)}; or the "
                     "dotted path of a factory: package.module:make_backend)")  # fmt: skip


LoggerBackendName = Annotated[str, AfterValidator(_backend_name)]


class LoggerConfig(ConfigSection):
    name: list[LoggerBackendName] = Field(
        default_factory=lambda: ["console"],
        description="one backend or a list: wandb, tensorboard, console, jsonl, prometheus, a "
        "name registered with rl.tracking.register_backend, or the dotted path of a factory of "
        "your own (package.module:make_backend)",
    )
    project: str = Field("lowtide", description="wandb project")
    group: str | None = Field(None, description="wandb run group")
    name_run: str | None = Field(None, description="run name; defaults to the run id")
    log_interval: LogIntervals = Field(
        default_factory=LogIntervals, description="steps between logs; one number sets every kind"
    )
    log_rollout: bool = Field(
        True, description="log rollout sample tables (every log_interval.tables steps)"
    )
    rollout_log_interval: int | None = Field(
        None, ge=1, description="old name of log_interval.tables; set one of the two"
    )
    save_dir: str = Field(
        "./logs", description="local files: <save_dir>/<run>/, tensorboard/ and wandb/ in it"
    )
    prometheus_port: int = Field(
        9110, ge=1, le=65535, description="prometheus backend: /metrics on this port"
    )
    prometheus_host: str = Field(
        "127.0.0.1",
        min_length=1,
        description="prometheus backend: the interface it listens on; loopback by default, "
        "`0.0.0.0` where a cluster's Prometheus scrapes the pod (behind a NetworkPolicy)",
    )
    rollout_max_length: int = Field(
        512, ge=16, description="table texts are cut past this many characters (and marked)"
    )
    encode_response: bool = Field(
        False, description="store table texts as base64 of their UTF-8 (binary-unsafe outputs)"
    )
    redact: LoggerRedaction = Field(
        default_factory=LoggerRedaction,
        description="secrets and personal data out of tables (true or false: sets `enabled`)",
    )
    metrics: MetricWhitelist = Field(
        default_factory=MetricWhitelist, description="which metrics are logged"
    )
    conditional_logging: list[ConditionalLogging] = Field(
        default_factory=list, description="per stage: metrics sent as soon as it is done"
    )
    wandb_api_key: SecretStr | None = Field(
        None,
        description="wandb runs online with a key, offline without (unless WANDB_MODE says)",
        json_schema_extra={"env": "WANDB_API_KEY", "env_only": True},
    )

    @field_validator("name", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("log_interval", mode="before")
    @classmethod
    def _int_means_every_kind(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            return {"scalars": value, "histograms": value, "tables": value}
        return value

    @model_validator(mode="before")
    @classmethod
    def _shorthand_names_no_kind(cls, data: Any) -> Any:
        """`log_interval: 5` beside `rollout_log_interval: 100`: the key that names tables sets
        the table interval; the shorthand sets the others."""
        if isinstance(data, dict) and data.get("rollout_log_interval") is not None:
            value = data.get("log_interval")
            if isinstance(value, int) and not isinstance(value, bool):
                return {**data, "log_interval": {"scalars": value, "histograms": value}}
        return data

    @model_validator(mode="after")
    def _one_table_interval(self) -> LoggerConfig:
        """`log_interval.tables` is the knob; `rollout_log_interval` (the seed's name) sets it
        when given alone. Both given and different: which one was meant is a guess, so say so."""
        alias, intervals = self.rollout_log_interval, self.log_interval
        if alias is None:
            return self
        if "tables" in intervals.model_fields_set and intervals.tables != alias:
            raise ValueError(
                f"log_interval.tables ({intervals.tables}) and rollout_log_interval ({alias}) "
                "both set the rollout-table interval and disagree: keep log_interval.tables "
                "and drop rollout_log_interval (its old name)"
            )
        self.log_interval = intervals.model_copy(update={"tables": alias})
        return self
