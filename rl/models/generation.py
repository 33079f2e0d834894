"""Sample completions from any causal LM directory, the way a user would load a hub model.

The same loading and generation as the trainer's rollouts, one sample per prompt, seeded.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch

from rl.config import ModelRef
from rl.models.loading import load_causal_lm, load_tokenizer
from rl.rollout import GenerationSettings, generate


def sample_completions(
    model_path: str | Path,
    prompts: Sequence[str],
    *,
    max_new_tokens: int = 24,
    temperature: float = 1.0,
    seed: int = 0,
) -> list[str]:
    """One completion per prompt (chat template applied when the tokenizer has one)."""
    ref = ModelRef(model_name_or_path=str(model_path))
    tokenizer = load_tokenizer(ref)
    model = load_causal_lm(ref, torch.device("cpu"), torch.float32)
    settings = GenerationSettings(max_new_tokens, temperature, 1.0, samples_per_prompt=1)
    with torch.random.fork_rng(devices=[]):  # seeded without touching the caller's RNG
        torch.manual_seed(seed)
        rollout = generate(model, tokenizer, list(prompts), settings)
    return [response.strip() for response in rollout.responses]
