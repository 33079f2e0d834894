"""Sample completions from any causal LM directory, the way a user would load a hub model."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from rl.models.quiet import quiet_progress_bars
from rl.rollout import render_prompts


def sample_completions(
    model_path: str | Path,
    prompts: Sequence[str],
    *,
    max_new_tokens: int = 24,
    temperature: float = 1.0,
    seed: int = 0,
) -> list[str]:
    """One completion per prompt (chat template applied when the tokenizer has one)."""
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    with quiet_progress_bars():
        model = AutoModelForCausalLM.from_pretrained(model_path).eval()
    tokenizer.padding_side = "left"  # decoder-only batches are padded on the left
    use_chat = bool(tokenizer.chat_template)
    texts = render_prompts(tokenizer, list(prompts), use_chat_template=use_chat)
    batch = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=not use_chat)
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        torch.manual_seed(seed)
        output = model.generate(
            **batch,
            max_new_tokens=max_new_tokens,
            do_sample=temperature > 0,
            temperature=temperature if temperature > 0 else None,
            pad_token_id=tokenizer.pad_token_id,
        )
    new_tokens = output[:, batch["input_ids"].shape[1] :]
    return [text.strip() for text in tokenizer.batch_decode(new_tokens, skip_special_tokens=True)]
