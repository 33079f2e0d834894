"""Built-in rule rewards: pure batched functions of the batch's columns and their params.

Types: `keyword` (alias `keywords`), `brevity` (alias `length`), `format`. Each checks its params
before looking at any sample, so a bad value fails when the reward set is built.

The quickstart task (prompts in configs/prompts/quickstart.yaml: 48 corpus-style questions,
mostly about colors) is "answer with a cool color". Suggested rewards:

    rewards:
      - {type: keyword, weight: 1.0, params: {words: [blue, green]}}
      - {type: format, weight: 0.1}  # a guard: answers cut off at max_new_tokens lose it

Measured on the tiny policy (`build_tiny_models(sft_steps=100, seed=0)`) with
`sample_completions` at temperature 1.0, 4 samples per prompt, 5 seeds (960 samples): keyword
rate 0.084, format rate 0.99, total mean 0.18, mean within-group std 0.13, and 32% of the groups
of 4 have any spread (the groups GRPO learns from). "blue" alone is too rare to learn from
(1.7%, 7% of groups). A minimal on-policy GRPO (8 prompts x 4 samples, k3 KL 0.05, AdamW, 30
steps) took the keyword rate from 0.08 to 0.41-0.46 at lr 1e-4 and to 0.86-0.97 at lr 3e-4
(3 seeds each); adding `brevity` halved that progress, so the quickstart leaves it out.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from rl.rewards.types import batched

DEFAULT_WORDS = ("blue",)
DEFAULT_TARGET_WORDS = 4
DEFAULT_ENDINGS = (".",)
HAS_WORD_CHARACTER = re.compile(r"\w")


@batched
def keyword(
    prompts: Sequence[str], responses: Sequence[str], *, words: Sequence[str] | str = DEFAULT_WORDS
) -> list[float]:
    """1.0 where the response contains any of `words` as a whole word, ignoring case."""
    pattern = word_pattern(_as_words(words))
    return [1.0 if pattern.search(response) else 0.0 for response in responses]


@batched
def brevity(
    prompts: Sequence[str],
    responses: Sequence[str],
    truncated: Sequence[bool],
    *,
    target: float = DEFAULT_TARGET_WORDS,
    truncated_value: float = 0.0,
) -> list[float]:
    """1 - |words - target| / target, clipped to [0, 1]; `truncated_value` for a cut-off answer."""
    if isinstance(target, bool) or not isinstance(target, (int, float)) or not target > 0:
        raise ValueError(f"target must be a positive number of words, got {target!r}")
    if isinstance(truncated_value, bool) or not isinstance(truncated_value, (int, float)):
        raise ValueError(f"truncated_value must be a number, got {truncated_value!r}")
    scores = []
    for response, cut in zip(responses, truncated, strict=True):
        if cut:
            scores.append(float(truncated_value))
            continue
        miss = abs(len(response.split()) - target) / target
        scores.append(max(0.0, 1.0 - miss))
    return scores


@batched
def sentence_format(
    prompts: Sequence[str],
    responses: Sequence[str],
    truncated: Sequence[bool],
    *,
    endings: Sequence[str] | str = DEFAULT_ENDINGS,
) -> list[float]:
    """1.0 for a finished sentence: not truncated, has a letter or digit, ends with `endings`."""
    suffixes = tuple(_as_words(endings, what="endings"))
    scores = []
    for response, cut in zip(responses, truncated, strict=True):
        text = response.rstrip()
        finished = (
            not cut and text.endswith(suffixes) and HAS_WORD_CHARACTER.search(text) is not None
        )
        scores.append(1.0 if finished else 0.0)
    return scores


@functools.lru_cache(maxsize=64)
def word_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    # Lookarounds instead of \b, so words that start or end with punctuation still match whole.
    alternatives = "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)


def _as_words(value: Sequence[str] | str, *, what: str = "words") -> tuple[str, ...]:
    words = (value,) if isinstance(value, str) else value
    if (
        not isinstance(words, Sequence)
        or not words
        or not all(isinstance(word, str) and word for word in words)
    ):
        raise ValueError(f"{what} must be a non-empty list of non-empty strings, got {value!r}")
    return tuple(words)
