"""What one OpenRLHF reward call says: the queries, prompts and labels it was given and the
answer it got back (`{"rewards", "scores", "extra_logs"}`), read as scored samples. `queries`
are prompt + response decoded with special tokens kept: the response is what follows the
prompt, without the special tokens it ends with."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Real
from typing import Any

from sampling.routing import PlainSample
from sampling.sources import group_id_of

# What a special token a decoded query ends with (eos, end of turn, padding) looks like:
# `<|im_end|>`, `<|eot_id|>`, `<|endoftext|>`, `</s>`, `<eos>`, `<end_of_turn>`,
# `<｜end▁of▁sentence｜>`.
_SPECIAL_TOKEN = re.compile(
    r"<\|[^<>|\s]{1,40}\|>|</s>|<eos>|<pad>|<end_of_turn>|<｜[^<>｜\s]{1,40}｜>"
)
_MIN_OVERLAP = 8  # characters of a cut prompt's end that must be found again


def response_from_query(query: str, prompt: str, end_tokens: Sequence[str] | None = None) -> str:
    """The response in an OpenRLHF query: the query without its prompt, without the special
    tokens it ends with (`end_tokens` exactly, else anything that looks like one).

    The query is `decode(encode(prompt) + response tokens)`. It starts with the prompt unless
    OpenRLHF cut the prompt from the left to fit `max_len` (then it starts with the prompt's
    end), or decoding did not give the prompt back (then the common prefix is cut)."""
    if query.startswith(prompt):
        rest = query[len(prompt) :]
    else:
        kept = _kept_prompt_end(query, prompt)
        rest = query[kept if kept >= _MIN_OVERLAP else _common_prefix(query, prompt) :]
    if end_tokens is None:
        return _strip_special_end(rest)
    stripped = True
    while stripped:  # e.g. eos then padding
        stripped = False
        trimmed = rest.rstrip()
        for token in end_tokens:
            if token and trimmed.endswith(token):
                rest, stripped = trimmed[: -len(token)], True
    return rest


def _strip_special_end(text: str) -> str:
    # From the end, token by token: a regex over the whole response would cost ~30 ns a char.
    while True:
        trimmed = text.rstrip()
        start = trimmed.rfind("<") if trimmed.endswith(">") else -1
        if start < 0 or not _SPECIAL_TOKEN.fullmatch(trimmed, start):
            return text
        text = trimmed[:start]


def _kept_prompt_end(query: str, prompt: str) -> int:
    """The length of the longest start of `query` that is an end of `prompt` (what is left of
    a prompt cut from the left). Linear: the KMP prefix function of start + sep + prompt."""
    text = f"{query[: len(prompt)]}\x00{prompt}"
    border = [0] * len(text)
    for i in range(1, len(text)):
        k = border[i - 1]
        while k and text[i] != text[k]:
            k = border[k - 1]
        border[i] = k + (text[i] == text[k])
    return border[-1]


def _common_prefix(a: str, b: str) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def _number(value: Any) -> float | None:
    if isinstance(value, Real):
        return float(value)
    return None


def per_sample(value: Any, count: int, *, broadcast: bool = False) -> list[float] | None:
    """One float per sample from a value of an answer: a number (for one sample, or every sample
    with `broadcast`), a list, or a tensor/array (anything with `tolist`). Entries that are not
    numbers become NaN (never selected). None: the value cannot be read as `count` numbers."""
    if hasattr(value, "tolist") and not isinstance(value, str | bytes):
        try:
            value = value.tolist()  # torch, numpy: a 0-d tensor gives a number
        except Exception:
            return None
    number = _number(value)
    if number is not None:
        return [number] * count if (count == 1 or broadcast) else None
    if isinstance(value, list | tuple):
        if len(value) == 1 and isinstance(value[0], list | tuple):
            value = value[0]  # a [[x]] from a tensor of shape (1, 1)
        if len(value) != count:
            return None
        return [math.nan if (n := _number(item)) is None else n for item in value]
    return None


def group_of(prompt: str, label: Any) -> int:
    """Samples of one prompt share a group (OpenRLHF samples `n_samples_per_prompt` each)."""
    return group_id_of(f"{prompt}\x00{label}")


@dataclass(frozen=True)
class RewardCall:
    """One call of OpenRLHF's reward path and what it got back."""

    queries: Sequence[str]
    prompts: Sequence[str]
    labels: Sequence[Any]
    answer: Any  # the reward function's return value, or the server's parsed JSON


class UnreadableAnswer(ValueError):
    """An answer without one reward per query: returned to OpenRLHF as it is, never routed."""


def _listed(value: Any) -> list[Any]:
    return [value] if isinstance(value, str) else list(value)


def samples_of(
    call: RewardCall, end_tokens: Sequence[str] | None, first_index: int = 0
) -> list[PlainSample]:
    """The scored samples of one call, indexed from `first_index`. Reward: `rewards`;
    components: `scores` and every numeric `extra_logs` value."""
    answer = call.answer
    queries, prompts, labels = _listed(call.queries), _listed(call.prompts), _listed(call.labels)
    count = len(queries)
    if not isinstance(answer, Mapping):
        raise UnreadableAnswer(f"the answer is a {type(answer).__name__}, not a dict")
    if len(prompts) != count:
        raise UnreadableAnswer(f"{count} queries but {len(prompts)} prompts")
    rewards = per_sample(answer.get("rewards"), count)
    if rewards is None:
        raise UnreadableAnswer(f"'rewards' is not {count} number(s): {answer.get('rewards')!r:.80}")
    columns: dict[str, list[float]] = {}
    scores = per_sample(answer.get("scores"), count)
    if scores is not None:
        columns["scores"] = scores
    extra = answer.get("extra_logs")
    if isinstance(extra, Mapping):
        for name, value in extra.items():
            values = per_sample(value, count, broadcast=True)
            if values is not None:
                columns[str(name)] = values
    if len(labels) != count:
        labels = [None] * count
    samples = []
    for i in range(count):
        prompt, query = str(prompts[i]), str(queries[i])
        details = {name: values[i] for name, values in columns.items() if math.isfinite(values[i])}
        samples.append(
            PlainSample(
                prompt=prompt,
                response=response_from_query(query, prompt, end_tokens),
                reward=rewards[i],
                reward_details=details,
                group_id=group_of(prompt, labels[i]),
                index=first_index + i,
            )
        )
    return samples
