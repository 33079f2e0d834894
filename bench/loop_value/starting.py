"""A starting reward model with a blind spot: trained on an earlier labeller's judgements of the
starting policy's own samples, where the labeller's taste (a score per response) is not the
oracle's. Pairs where the taste differs by 2 or more, and a 1-5 rating from the taste, as
annotation.reward_model trains on reviews."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

from annotation.reward_model.data import Pair, Rated, RMData
from annotation.reward_model.train import RMTrainSettings, train_reward_model
from bench.loop_value.oracles import names_cool_colour
from bench.loop_value.rollouts import sample_policy
from rl.models.tiny import TinyModelPaths

SAMPLES_PER_PROMPT = 16  # starting-RM data: the starting policy's samples of the train prompts

Taste = Callable[[str], int]  # the earlier labeller's score of a response (about 0..9)
PromptTaste = Callable[[str, str], int]  # the same, of (prompt, response)
Builder = Callable[[TinyModelPaths, list[str], Path, int], Path]  # a task's starting_reward_model


def liking(liked: Callable[[str], bool]) -> Taste:
    """The taste of a labeller who liked `liked` answers far above a cool colour: 2, 4 more for a
    liked answer, 1 more for one that names a cool colour."""
    return lambda response: 2 + 4 * liked(response) + names_cool_colour(response)


def learned_from(taste: Taste, source: str) -> Builder:
    """A task's `starting_reward_model`: the starting reward model trained on the judgements
    of an earlier labeller with this taste (`source` names it in the model's data)."""
    return learned_from_prompt_taste(lambda _, response: taste(response), source)


def learned_from_prompt_taste(taste: PromptTaste, source: str) -> Builder:
    """As `learned_from`, for a labeller whose taste reads the question too."""

    def build(models: TinyModelPaths, prompts: list[str], out: Path, seed: int) -> Path:
        return _build(models, prompts, out, seed, taste, source)

    return build


def _build(
    models: TinyModelPaths,
    prompts: list[str],
    out: Path,
    seed: int,
    taste: PromptTaste,
    source: str,
) -> Path:
    samples = sample_policy(models.policy, prompts, SAMPLES_PER_PROMPT, 24, seed)
    rng = random.Random(seed)
    data = RMData(sources=[f"the earlier labeller ({source}), on the starting policy"])
    by_prompt: dict[str, list[str]] = {}
    for sample in samples:
        by_prompt.setdefault(sample.prompt, []).append(sample.response)
    for prompt, responses in by_prompt.items():
        rng.shuffle(responses)
        for index, (a, b) in enumerate(zip(responses[::2], responses[1::2], strict=False)):
            score_a, score_b = taste(prompt, a), taste(prompt, b)
            if abs(score_a - score_b) >= 2:
                chosen, rejected = (a, b) if score_a > score_b else (b, a)
                data.pairs.append(Pair(prompt, chosen, rejected, f"start-{prompt}-{index}"))
        for index, response in enumerate(responses):
            rating = max(1, min(5, (taste(prompt, response) + 1) // 2))
            data.ratings.append(Rated(prompt, response, rating, f"start-{prompt}-r{index}"))
    settings = RMTrainSettings(epochs=2, learning_rate=3e-4, holdout=0.1, seed=seed)
    train_reward_model(data, models.reward_model, out, settings)
    return out
