"""A starting reward model with a blind spot: trained on an earlier labeller's judgements of the
starting policy's own samples, where the labeller's taste (a score per response) is not the
oracle's. Pairs where the taste differs by 2 or more, and a 1-5 rating from the taste, as
annotation.reward_model trains on reviews."""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable
from pathlib import Path

from annotation.reward_model.data import Pair, Rated, RMData
from annotation.reward_model.train import RMTrainSettings, train_reward_model
from bench.loop_value.oracles import names_cool_colour
from bench.loop_value.rollouts import sample_policy
from bench.loop_value.task import TaskConfig
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


def tiny_models(given: Path | None, out: Path) -> TinyModelPaths:
    """The tiny models in `given` (policy/, reward_model/), else those built once into
    `out/models` (100 SFT steps, seed 0) and reused."""
    from rl.models.tiny import build_tiny_models

    if given is not None:
        return TinyModelPaths(given / "policy", given / "reward_model")
    target = out / "models"
    if (target / "policy" / "config.json").exists() and (target / "reward_model").exists():
        return TinyModelPaths(target / "policy", target / "reward_model")
    return build_tiny_models(target, sft_steps=100, seed=0)


def starting_reward_model(
    task: TaskConfig, models: TinyModelPaths, out: Path, prompts: int | None, rebuild: bool
) -> Path:
    """The task's starting reward model, built once per task and policy (seed 0, from the
    first `prompts` train prompts; None: all) into `out` and reused: every seed starts from it."""
    from bench.loop_value.provenance import source_digest, tree_digest

    suffix = "" if prompts is None else "-quick"
    path = out / f"start_rm-{task.name}{suffix}"
    marker = path / "built_from.json"
    # What it was built from: the policy's files and the builder's code, not only the policy's
    # place and the task's name (which let a model built by other code be reused).
    source = {"policy": tree_digest(Path(models.policy)), "task": task.name,
              "builder": source_digest(task.builder())}  # fmt: skip
    if not rebuild and marker.exists() and json.loads(marker.read_text()) == source:
        return path
    shutil.rmtree(path, ignore_errors=True)
    task.builder()(models, task.train_prompts[:prompts], path, 0)
    marker.write_text(json.dumps(source))
    return path
