"""Tests for the tiny local policy/reward-model builder (rl.models.tiny)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer

from rl.models.tiny import (
    TinyModelPaths,
    build_tiny_models,
    encode_examples,
    lm_loss,
    load_corpus,
)

pytestmark = pytest.mark.unit

SFT_STEPS = 30  # enough for eos-terminated, text-like greedy output; ~3 s on one CPU thread
QUESTIONS = ["Name a color.", "What is two plus three?", "Hi.", "What does the cow say?"]


@pytest.fixture(scope="module", autouse=True)
def one_thread() -> Iterator[None]:
    # Shared small CPU boxes: one thread is faster and keeps the timings stable.
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture(scope="module")
def progress_events() -> list[tuple[str, int, int]]:
    return []


@pytest.fixture(scope="module")
def built(
    tmp_path_factory: pytest.TempPathFactory, progress_events: list[tuple[str, int, int]]
) -> TinyModelPaths:
    out = tmp_path_factory.mktemp("tiny")
    return build_tiny_models(
        out, sft_steps=SFT_STEPS, seed=0, on_progress=lambda *event: progress_events.append(event)
    )


@pytest.fixture(scope="module")
def untrained(tmp_path_factory: pytest.TempPathFactory) -> TinyModelPaths:
    return build_tiny_models(tmp_path_factory.mktemp("tiny-untrained"), sft_steps=0, seed=0)


@pytest.fixture(scope="module")
def tokenizer(built: TinyModelPaths):
    return AutoTokenizer.from_pretrained(built.policy)


@pytest.fixture(scope="module")
def policy(built: TinyModelPaths):
    return AutoModelForCausalLM.from_pretrained(built.policy).eval()


def chat_prompts(tokenizer, questions: list[str]) -> list[str]:
    return [
        tokenizer.apply_chat_template(
            [{"role": "user", "content": q}], add_generation_prompt=True, tokenize=False
        )
        for q in questions
    ]


def test_writes_both_model_dirs(built: TinyModelPaths) -> None:
    assert built.policy.name == "policy"
    assert built.reward_model.name == "reward_model"
    assert built.policy.parent == built.reward_model.parent
    for path in (built.policy, built.reward_model):
        assert (path / "model.safetensors").is_file()
        assert (path / "tokenizer.json").is_file()


def test_progress_reports_tokenizer_and_sft(progress_events: list[tuple[str, int, int]], built):
    phases = [phase for phase, _, _ in progress_events]
    assert "tokenizer" in phases
    sft_events = [(done, total) for phase, done, total in progress_events if phase == "sft"]
    assert sft_events[0] == (0, SFT_STEPS)
    assert sft_events[-1] == (SFT_STEPS, SFT_STEPS)
    assert all(done <= total for _, done, total in progress_events)


def test_tokenizer_round_trips_with_special_tokens_and_left_padding(tokenizer) -> None:
    assert tokenizer.padding_side == "left"
    assert (tokenizer.pad_token, tokenizer.bos_token, tokenizer.eos_token) == (
        "<|pad|>",
        "<|bos|>",
        "<|eos|>",
    )
    assert len({tokenizer.pad_token_id, tokenizer.bos_token_id, tokenizer.eos_token_id}) == 3
    assert 256 < len(tokenizer) <= 1024
    assert tokenizer.chat_template


def test_tokenizer_decodes_corpus_text_exactly(tokenizer) -> None:
    for text in load_corpus():
        ids = tokenizer.encode(text)
        assert tokenizer.bos_token_id not in ids  # only the chat template adds bos
        assert tokenizer.decode(ids) == text


def test_chat_template_renders_prompt_and_matches_corpus_format(tokenizer) -> None:
    messages = [{"role": "user", "content": "Name a color."}]
    prompt = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert prompt == "<|bos|>User: Name a color.\nAssistant:"

    conversation = [*messages, {"role": "assistant", "content": "blue is a nice color."}]
    rendered = tokenizer.apply_chat_template(conversation, tokenize=False)
    assert rendered == "<|bos|>User: Name a color.\nAssistant: blue is a nice color.<|eos|>"

    ids = tokenizer(prompt)["input_ids"]
    assert ids.count(tokenizer.bos_token_id) == 1 and ids[0] == tokenizer.bos_token_id


def test_policy_size_and_config(policy, tokenizer) -> None:
    n_params = sum(p.numel() for p in policy.parameters())
    assert 1_000_000 <= n_params <= 5_000_000
    assert policy.config.tie_word_embeddings
    for config in (policy.config, policy.generation_config):
        assert config.bos_token_id == tokenizer.bos_token_id
        assert config.eos_token_id == tokenizer.eos_token_id
        assert config.pad_token_id == tokenizer.pad_token_id


def test_batched_generation_with_left_padding_stops_at_eos(policy, tokenizer) -> None:
    prompts = chat_prompts(tokenizer, QUESTIONS)
    batch = tokenizer(prompts, return_tensors="pt", padding=True)
    assert (batch["attention_mask"][:, 0] == 0).any()  # the prompts differ in length
    assert (batch["attention_mask"][:, -1] == 1).all()  # padding is on the left

    with torch.no_grad():
        out = policy.generate(**batch, max_new_tokens=24, do_sample=False)
    completions = out[:, batch["input_ids"].shape[1] :]

    eos, pad = tokenizer.eos_token_id, tokenizer.pad_token_id
    for row in completions.tolist():
        assert eos in row, tokenizer.decode(row)
        assert all(token == pad for token in row[row.index(eos) + 1 :])
        assert tokenizer.decode(row, skip_special_tokens=True).strip()

    # Left padding must not change what a prompt generates.
    alone = tokenizer(prompts[:1], return_tensors="pt")
    with torch.no_grad():
        single = policy.generate(**alone, max_new_tokens=24, do_sample=False)
    single_completion = single[0, alone["input_ids"].shape[1] :].tolist()
    batched_completion = [t for t in completions[0].tolist() if t != pad]
    assert single_completion == batched_completion


def test_sft_lowers_corpus_loss(built: TinyModelPaths, untrained: TinyModelPaths, tokenizer):
    examples = encode_examples(tokenizer, load_corpus())
    losses = {}
    for name, paths in (("trained", built), ("untrained", untrained)):
        model = AutoModelForCausalLM.from_pretrained(paths.policy).eval()
        with torch.no_grad():
            losses[name] = lm_loss(model, examples, tokenizer.pad_token_id).item()
    # Untrained is ~ln(vocab) ~ 6.5; 30 steps already bring it near 2.
    assert losses["untrained"] > 5.0
    assert losses["trained"] < 0.5 * losses["untrained"], losses


def test_reward_model_scores_padded_batch(built: TinyModelPaths, policy, tokenizer) -> None:
    reward_model = AutoModelForSequenceClassification.from_pretrained(built.reward_model).eval()
    assert reward_model.config.num_labels == 1
    assert reward_model.config.pad_token_id == tokenizer.pad_token_id
    assert AutoTokenizer.from_pretrained(built.reward_model).get_vocab() == tokenizer.get_vocab()
    # The backbone starts from the fine-tuned policy.
    torch.testing.assert_close(
        reward_model.model.embed_tokens.weight, policy.model.embed_tokens.weight
    )

    texts = [p + " blue is a nice color." for p in chat_prompts(tokenizer, QUESTIONS)]
    batch = tokenizer(texts, return_tensors="pt", padding=True)
    with torch.no_grad():
        scores = reward_model(**batch).logits
        alone = reward_model(**tokenizer(texts[:1], return_tensors="pt")).logits
    assert scores.shape == (len(texts), 1)
    assert torch.isfinite(scores).all()
    # The score is read at the last real token, so padding must not change it.
    torch.testing.assert_close(scores[:1], alone, atol=1e-4, rtol=1e-4)


def _weights(path: Path) -> dict[str, torch.Tensor]:
    return load_file(path / "model.safetensors")


def test_same_seed_same_weights_and_other_seed_differs(tmp_path: Path) -> None:
    rng_before = torch.get_rng_state()
    first = build_tiny_models(tmp_path / "a", sft_steps=5, seed=0)
    again = build_tiny_models(tmp_path / "b", sft_steps=5, seed=0)
    other = build_tiny_models(tmp_path / "c", sft_steps=5, seed=1)
    assert torch.equal(torch.get_rng_state(), rng_before)  # the caller's RNG is left alone

    for attr in ("policy", "reward_model"):
        a, b, c = (_weights(getattr(paths, attr)) for paths in (first, again, other))
        assert a.keys() == b.keys()
        assert all(torch.equal(a[key], b[key]) for key in a)
        assert not torch.equal(a["model.embed_tokens.weight"], c["model.embed_tokens.weight"])
