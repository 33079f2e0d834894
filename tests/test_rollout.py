"""Rollout generation: prompts are encoded the way the tokenizer expects, with or without a
chat template, and responses are cut at EOS."""

from __future__ import annotations

import pytest
import torch

from rl.config import ModelRef
from rl.models.loading import load_causal_lm, load_tokenizer
from rl.rollout import GenerationSettings, generate

pytestmark = pytest.mark.unit


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


def test_responses_are_cut_after_the_first_eos(tiny_models) -> None:
    """EOS is made certain at the fourth response token (never before it: min_new_tokens; then
    a bias no sample escapes), so the cut is checked on every row, not only when chance
    happens to sample EOS."""
    ref = ModelRef(model_name_or_path=str(tiny_models.policy))
    tokenizer = load_tokenizer(ref)
    model = load_causal_lm(ref, torch.device("cpu"), torch.float32)
    eos = tokenizer.eos_token_id
    model.generation_config.min_new_tokens = 3
    model.generation_config.sequence_bias = {(eos,): 1000.0}
    settings = GenerationSettings(10, 1.0, 1.0, samples_per_prompt=3)

    rollout = generate(model, tokenizer, ["Name a color.", "What does the cow say?"], settings)

    assert rollout.response_ids.shape[0] == 6
    assert not rollout.truncated.any()
    for ids, mask in zip(rollout.response_ids, rollout.response_mask, strict=True):
        first_eos = int((ids == eos).nonzero()[0, 0])  # every row has one
        assert first_eos == 3
        assert mask[: first_eos + 1].tolist() == [1.0] * 4  # the EOS itself is scored
        assert mask[first_eos + 1 :].sum() == 0
        assert (ids[first_eos + 1 :] == tokenizer.pad_token_id).all()
