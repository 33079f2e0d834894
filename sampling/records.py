"""`RolloutRecord`: the one thing that crosses the queue from the sampler to the annotation worker.

RQ runs with its JSON serializer, so every field is JSON-native: no NaN or infinity (JSON has
neither; a non-finite reward becomes None), no bytes, no datetimes (`created_at` is an ISO-8601
string). The schema is versioned: a worker reads only the `schema_version` it knows and
quarantines the rest with the one-line reason `parse_record` gives.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    StringConstraints,
    ValidationError,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from rl.numbers import finite_or_none
from rl.samples import ScoredSample, make_sample_id
from sampling.redaction.kinds import KIND_NAME

SCHEMA_VERSION = 4
# Version 2 added `redactions` and `reward_weights`; a version-1 record (neither) still reads,
# with both empty. Version 3 added `selected_by.about`; older records read without it. Version
# 4 added `compare` (a comparison task's responses); older records read as single reviews.
READABLE_SCHEMA_VERSIONS = (1, 2, 3, 4)
MIN_COMPARED, MAX_COMPARED = 2, 8
# The RQ job that carries a batch of records, named here because both sides of the queue need
# it: the producer enqueues it by name (sampling never imports annotation), the worker runs
# nothing else.
JOB_FUNCTION = "annotation.jobs.import_batch"
SAMPLE_ID_PATTERN = r"^[A-Za-z0-9_-]{1,128}$"  # the characters RQ accepts in a job id
MAX_TEXT_CHARS = 20_000
MAX_REWARD_DETAILS = 64
MAX_ABOUT_CHARS = 1000
# The rest of a record is bounded too: a worker reads records anyone who can write to Redis
# wrote, copies `selected_by` into each task and may title a project with the run id.
MAX_NAME_CHARS = 256  # run ids; names of policies, reasons, components, settings, details
MAX_PATH_CHARS = 4096  # a model's name or path
MAX_SETTINGS = 64  # entries of `generation` and of `selected_by.parameter`
MAX_SETTING_CHARS = 1000  # a `generation` value written as a string
MAX_REDACTION_KINDS = 256
_UTC_TIMESTAMP = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?Z"
)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_ERRORS_PER_LINE = 3


class RecordError(ValueError):
    """A record that cannot be read; the message is one line: `field.path: what is wrong`."""


def _generation_value(value: Any) -> float | int | str | bool:
    # One plain check instead of a union: a union reports one error per member type.
    if isinstance(value, str) and len(value) > MAX_SETTING_CHARS:
        raise ValueError(f"must be at most {MAX_SETTING_CHARS} characters")
    if isinstance(value, bool | int | str) or (isinstance(value, float) and math.isfinite(value)):
        return value
    raise ValueError("must be a finite number, a string or a boolean")


GenerationValue = Annotated[
    float | int | str | bool,
    PlainValidator(_generation_value),
    WithJsonSchema({"type": ["number", "string", "boolean"]}),
]
Name = Annotated[str, StringConstraints(max_length=MAX_NAME_CHARS)]


class _Frozen(BaseModel):
    # strict: a queue payload is data from another process; "3" is not a step.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class ModelInfo(_Frozen):
    name_or_path: str = Field(max_length=MAX_PATH_CHARS)
    checkpoint_step: int | None = Field(None, ge=0)


class Selection(_Frozen):
    """Why a rollout was picked: the policy, its parameters, and the value that triggered it."""

    policy: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    # {"quantile": 0.1, "cutoff": 0.05}
    parameter: dict[Name, float] = Field(default_factory=dict, max_length=MAX_SETTINGS)
    value: float | None = None
    component: Name | None = None  # the reward component selected on; None: the total reward
    # The budget policy's why (sampling.selection.budget.Reason: "low_reward",
    # "audit_high_reward", ...) and how many near-duplicate responses this one stands for
    # (itself included); others: None, 1.
    reason: Name | None = None
    group_size: int = Field(1, ge=1)
    # What the reason is about, shown to the reviewer: the query that found a searched sample.
    about: str | None = Field(None, max_length=MAX_ABOUT_CHARS)


class ComparedResponse(_Frozen):
    """One response of a comparison task (the record's `compare`): a sample of the record's
    prompt group, with what a record says of its own sample's response (the record's
    `redactions` count what was replaced in the whole task)."""

    sample_id: str = Field(pattern=SAMPLE_ID_PATTERN)
    index: int = Field(ge=0)
    response: str
    reward: float | None
    reward_details: dict[Name, float | None] = Field(max_length=MAX_REWARD_DETAILS)
    advantage: float | None
    truncated: bool
    response_cut: bool
    response_chars: int = Field(ge=0)

    @model_validator(mode="after")
    def _length_agrees_with_cut_flag(self) -> ComparedResponse:
        _check_cut("response", len(self.response), self.response_chars, self.response_cut)
        return self


class RolloutRecord(_Frozen):
    """One low-reward rollout on its way to review. Frozen (the dict fields are plain dicts for
    JSON; treat them as read-only too). Texts are capped at `max_text_chars` characters, never
    silently: `prompt_cut`/`response_cut` say so and `prompt_chars`/`response_chars` keep the
    original lengths. `sample_id` is computed from the original texts, so it is the same whether
    or not a text was cut."""

    schema_version: Literal[1, 2, 3, 4] = SCHEMA_VERSION
    sample_id: str = Field(pattern=SAMPLE_ID_PATTERN)
    run_id: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    step: int = Field(ge=0)
    rank: int = Field(ge=0)
    index: int = Field(ge=0)
    prompt: str
    response: str
    reward: float | None  # None: the reward was not finite
    reward_details: dict[Name, float | None] = Field(max_length=MAX_REWARD_DETAILS)
    group_id: int
    advantage: float | None
    model: ModelInfo
    generation: dict[Name, GenerationValue] = Field(max_length=MAX_SETTINGS)
    selected_by: Selection
    created_at: str
    truncated: bool  # the generation stopped at max_new_tokens
    prompt_cut: bool
    response_cut: bool
    prompt_chars: int = Field(ge=0)
    response_chars: int = Field(ge=0)
    # What redaction replaced, by kind: {"EMAIL": 2}. Counts only, never the values.
    redactions: dict[str, int] = Field(default_factory=dict, max_length=MAX_REDACTION_KINDS)
    # Each reward component's weight in the total, for the components in reward_details; empty
    # when the trainer did not say (reviewers then see raw values without contributions).
    reward_weights: dict[Name, float] = Field(default_factory=dict, max_length=MAX_REWARD_DETAILS)
    # A comparison task: the responses it shows, in label order (A first); the record's own
    # response (the one selected) is one of them, and `sample_id` names the group's task.
    # Empty: a single review of `response`.
    compare: list[ComparedResponse] = Field(default_factory=list, max_length=MAX_COMPARED)

    @field_validator("compare")
    @classmethod
    def _a_real_comparison(cls, value: list[ComparedResponse]) -> list[ComparedResponse]:
        if value and len(value) < MIN_COMPARED:
            raise ValueError(f"a comparison needs {MIN_COMPARED} to {MAX_COMPARED} responses")
        if len({member.sample_id for member in value}) < len(value):
            raise ValueError("a comparison shows each sample once")
        return value

    @field_validator("redactions")
    @classmethod
    def _kind_counts(cls, value: dict[str, int]) -> dict[str, int]:
        for kind, count in value.items():
            if not KIND_NAME.fullmatch(kind) or count < 1:
                raise ValueError("must map kind names (EMAIL) to counts of at least 1")
        return value

    @field_validator("created_at")
    @classmethod
    def _is_utc_timestamp(cls, value: str) -> str:
        if not _UTC_TIMESTAMP.fullmatch(value):  # fullmatch: no trailing newline
            raise ValueError("must be an ISO-8601 UTC time ending in Z")
        try:
            datetime.fromisoformat(value[:-1])  # the 'Z' is new to fromisoformat in 3.11
        except ValueError:
            raise ValueError("must be a real date and time (2024-02-30 is not)") from None
        return value

    @model_validator(mode="after")
    def _lengths_agree_with_cut_flags(self) -> RolloutRecord:
        for name in ("prompt", "response"):
            kept = len(getattr(self, name))
            _check_cut(name, kept, getattr(self, f"{name}_chars"), getattr(self, f"{name}_cut"))
        return self

    @classmethod
    def from_sample(
        cls,
        sample: ScoredSample,
        *,
        run_id: str,
        step: int,
        rank: int,
        model_name_or_path: str,
        checkpoint_step: int | None,
        generation: Mapping[str, float | int | str | bool],
        selection: Selection,
        max_text_chars: int = MAX_TEXT_CHARS,
        now: datetime | None = None,
        shown: tuple[str, str] | None = None,
        shown_cut: tuple[bool, bool] = (False, False),
        redactions: Mapping[str, int] | None = None,
        reward_weights: Mapping[str, float] | None = None,
        compare: Sequence[Mapping[str, Any]] = (),
        task_id: str | None = None,
    ) -> RolloutRecord:
        """The record of one selected sample; a bad argument raises RecordError (one line).

        `compare`: a comparison task's responses (`compared_response` makes each), with
        `task_id` the comparison's id in place of the sample's.

        `shown`: the (prompt, response) to put in the record instead of the sample's, as
        redaction made them, with `redactions` counting what it replaced. The sample id stays
        the hash of the sample's own texts; `shown_cut` says which of them stand for a prefix of
        the sample's text only (cut, whatever their length). `prompt_chars`/`response_chars`: a
        whole text's shown
        length; a cut one's original length (one far past the cap is redacted only in part), or
        its shown length where placeholders made it longer (always more than was kept).

        Non-finite floats become None (reward, advantage, reward details) or their name as a
        string in `generation` ("inf"); only the first 64 reward details by sorted name are kept.
        """
        if max_text_chars < 1:
            raise ValueError(f"max_text_chars must be at least 1, got {max_text_chars}")
        full_prompt, full_response = shown or (sample.prompt, sample.response)
        prompt, prompt_capped = _cap_text(full_prompt, max_text_chars)
        response, response_capped = _cap_text(full_response, max_text_chars)
        prompt_cut, response_cut = prompt_capped or shown_cut[0], response_capped or shown_cut[1]
        fields = {
            "sample_id": make_sample_id(
                run_id, step, rank, sample.index, sample.prompt, sample.response
            ),
            "run_id": run_id,
            "step": step,
            "rank": rank,
            "index": sample.index,
            "prompt": prompt,
            "response": response,
            "reward": finite_or_none(sample.reward),
            "reward_details": capped_reward_details(sample.reward_details),
            "group_id": sample.group_id,
            "advantage": finite_or_none(sample.advantage),
            "model": {"name_or_path": model_name_or_path, "checkpoint_step": checkpoint_step},
            "generation": {name: _json_safe(value) for name, value in generation.items()},
            "selected_by": selection,
            "created_at": utc_timestamp(now),
            "truncated": sample.truncated,
            "prompt_cut": prompt_cut,
            "response_cut": response_cut,
            "prompt_chars": _recorded_length(sample.prompt, full_prompt, prompt_cut),
            "response_chars": _recorded_length(sample.response, full_response, response_cut),
            "redactions": dict(redactions or {}),
        }
        details = fields["reward_details"]
        fields["reward_weights"] = {
            name: float(weight)
            for name, weight in (reward_weights or {}).items()
            if name in details
        }
        if compare:
            fields["compare"] = list(compare)
            fields["sample_id"] = task_id or fields["sample_id"]
        try:
            return cls.model_validate(fields)
        except ValidationError as error:
            raise RecordError(describe_validation_error(error)) from None


def compared_response(
    sample: ScoredSample,
    sample_id: str,
    *,
    shown: str | None = None,
    shown_cut: bool = False,
    max_text_chars: int = MAX_TEXT_CHARS,
) -> dict[str, Any]:
    """One entry of a record's `compare`, as `RolloutRecord.from_sample` makes a record's own
    response fields (`shown`: the response as redaction made it)."""
    full = sample.response if shown is None else shown
    response, capped = _cap_text(full, max_text_chars)
    cut = capped or shown_cut
    return {
        "sample_id": sample_id,
        "index": sample.index,
        "response": response,
        "reward": finite_or_none(sample.reward),
        "reward_details": capped_reward_details(sample.reward_details),
        "advantage": finite_or_none(sample.advantage),
        "truncated": sample.truncated,
        "response_cut": cut,
        "response_chars": _recorded_length(sample.response, full, cut),
    }


def _check_cut(name: str, kept: int, original: int, cut: bool) -> None:
    if original < kept or cut != (original > kept):
        raise ValueError(
            f"{name}_chars={original} and {name}_cut={cut} disagree with the {kept} characters "
            f"of {name}"
        )


def capped_reward_details(details: Mapping[str, float]) -> dict[str, float | None]:
    """At most MAX_REWARD_DETAILS entries, the first by sorted name: a reward function with
    hundreds of components must not blow up every record. Non-finite values become None."""
    names = sorted(details)[:MAX_REWARD_DETAILS]
    return {name: finite_or_none(details[name]) for name in names}


def utc_timestamp(now: datetime | None = None) -> str:
    """`2024-05-01T12:00:00.123Z`. A naive datetime is taken as UTC (what utcnow() gives)."""
    moment = now or datetime.now(timezone.utc)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    stamp = moment.astimezone(timezone.utc).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


def record_size_bytes(record: RolloutRecord) -> int:
    """Bytes of the record's JSON as RQ's JSON serializer writes it (json.dumps, ASCII escapes),
    before RQ compresses the job. With ASCII texts it stays under 2 * max_text_chars + a few KB."""
    return len(json.dumps(record.model_dump(mode="json")).encode("utf-8"))


def parse_record(data: Any) -> RolloutRecord:
    """A record from a queue payload (a dict, or JSON text), or RecordError with one line that
    names the field and the problem, for the worker's quarantine."""
    if isinstance(data, str | bytes | bytearray):
        try:
            data = json.loads(data)
        except ValueError as error:
            raise RecordError(f"record: not valid JSON ({error})") from None
    if not isinstance(data, Mapping):
        raise RecordError(f"record: expected a JSON object, got {_json_type_name(data)}")
    version = data.get("schema_version", SCHEMA_VERSION)
    # type(): True == 1 in Python
    if type(version) is not int or version not in READABLE_SCHEMA_VERSIONS:
        *earlier, last = map(str, READABLE_SCHEMA_VERSIONS)
        readable = f"{', '.join(earlier)} and {last}" if earlier else last
        raise RecordError(
            f"schema_version: {_short_repr(version)} is not supported "
            f"(this worker reads {readable})"
        )
    try:
        return RolloutRecord.model_validate(dict(data))
    except ValidationError as error:
        raise RecordError(describe_validation_error(error)) from None


def describe_validation_error(error: ValidationError) -> str:
    """One line: the first few problems as `path: problem`, then how many more there are."""
    problems = [_describe_problem(item) for item in error.errors(include_url=False)]
    line = "; ".join(problems[:_ERRORS_PER_LINE])
    if len(problems) > _ERRORS_PER_LINE:
        line += f" (and {len(problems) - _ERRORS_PER_LINE} more)"
    return line


def _describe_problem(item: Any) -> str:
    path = ".".join(_short_part(part) for part in item["loc"])
    if item["type"] == "missing":
        return f"{path}: field required"
    if item["type"] == "extra_forbidden":
        return f"{path}: unexpected field"
    if item["type"] == "value_error":
        message = str(item["ctx"]["error"])  # our own wording, without pydantic's "Value error, "
    else:
        message = item["msg"][:1].lower() + item["msg"][1:]
    if not path:  # a check across fields: its message names them
        return f"record: {message}"
    return f"{path}: {message}, got {_short_repr(item['input'])}"


def _short_part(part: Any, limit: int = 40) -> str:
    # A dict's key is a part of the path: an overlong one must not make the line overlong.
    text = str(part)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _short_repr(value: Any, limit: int = 40) -> str:
    text = repr(value)  # repr escapes newlines: the message stays one line
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _json_type_name(value: Any) -> str:
    for kind, name in ((bool, "boolean"), (int | float, "number"), (str, "string")):
        if isinstance(value, kind):
            return name
    if isinstance(value, list | tuple):
        return "array"
    return "null" if value is None else type(value).__name__


def _recorded_length(original: str, shown: str, cut: bool) -> int:
    # Placeholders can push a text under the cap past it: the original is then shorter than
    # what was kept, and the record would contradict its own cut flag.
    return max(len(original), len(shown)) if cut else len(shown)


def _cap_text(text: str, max_chars: int) -> tuple[str, bool]:
    # A lone surrogate (broken decoding) cannot be written as UTF-8: show U+FFFD instead.
    kept = _LONE_SURROGATE.sub("\ufffd", text[:max_chars])
    return kept, len(text) > max_chars


def _json_safe(value: float | int | str | bool) -> float | int | str | bool:
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)  # "inf", "nan": JSON has no such numbers, a string keeps the fact
    return value
