"""Rollout generation: prompts are encoded the way the tokenizer expects, with or without a
chat template, and responses are cut at EOS."""

from __future__ import annotations

import torch

from rl.config import ModelRef
from rl.models.loading import load_causal_lm, load_tokenizer
from rl.rollout import GenerationSettings, generate


def test_plain_prompts_get_the_tokenizers_special_tokens(tiny_models) -> None:
    ref = ModelRef(model_name_or_path=str(tiny_models.policy))
    tokenizer = load_tokenizer(ref)
    model = load_causal_lm(ref, torch.device("cpu"), torch.float32)
    settings = GenerationSettings(8, 1.0, 1.0, samples_per_prompt=2)

    chat = generate(model, tokenizer, ["Name a color."], settings)
    first_real = chat.prompt_ids[0][chat.prompt_mask[0].bool()]
    assert first_real[0] == tokenizer.bos_token_id  # written by the template, exactly once
    assert (first_real == tokenizer.bos_token_id).sum() == 1

    tokenizer.chat_template = None  # a base model: the prompt is used as it is
    tokenizer.add_bos_token = True
    plain = generate(model, tokenizer, ["Name a color."], settings)
    plain_ids = plain.prompt_ids[0][plain.prompt_mask[0].bool()]
    assert plain_ids[0] == tokenizer.bos_token_id  # the tokenizer's own special tokens
    text = tokenizer.decode(plain_ids)
    assert "User:" not in text and "Name a color." in text
    assert plain.response_ids.shape[0] == 2 and plain.group_ids.tolist() == [0, 0]
    # Everything after the first EOS is masked out.
    for ids, mask in zip(plain.response_ids, plain.response_mask, strict=True):
        eos = (ids == tokenizer.eos_token_id).nonzero()
        if len(eos):
            assert mask[eos[0, 0] + 1 :].sum() == 0 and mask[: eos[0, 0] + 1].all()
