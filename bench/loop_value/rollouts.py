"""Sampling a policy directory outside training: held-out evaluation and starting-RM data."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from rl.config import ModelRef
from rl.models.loading import load_causal_lm, load_tokenizer
from rl.rollout import GenerationSettings, generate


@dataclass(frozen=True)
class Sampled:
    prompt: str
    response: str


def sample_policy(
    policy: Path, prompts: list[str], per_prompt: int, max_new_tokens: int, seed: int
) -> list[Sampled]:
    """`per_prompt` completions of each prompt at temperature 1, seeded, the caller's RNG kept."""
    ref = ModelRef(model_name_or_path=str(policy))
    tokenizer = load_tokenizer(ref)
    model = load_causal_lm(ref, torch.device("cpu"), torch.float32)
    settings = GenerationSettings(max_new_tokens, 1.0, 1.0, samples_per_prompt=per_prompt)
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        torch.manual_seed(seed)
        rollout = generate(model, tokenizer, prompts, settings)
    expanded = [prompt for prompt in prompts for _ in range(per_prompt)]
    return [
        Sampled(prompt, response)
        for prompt, response in zip(expanded, rollout.responses, strict=True)
    ]
