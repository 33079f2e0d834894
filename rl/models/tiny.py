"""Build a tiny local policy and reward model (~1M parameters) without any model hub.

The tokenizer is a byte-level BPE trained on a corpus shipped with the package, the policy is a
small Llama briefly fine-tuned on that corpus so its generations read like text, and the reward
model is a ``LlamaForSequenceClassification`` whose backbone starts from the fine-tuned policy
(its one-output score head is freshly initialised). Everything is seeded: the same seed gives
the same weights.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import (
    GenerationConfig,
    LlamaConfig,
    LlamaForCausalLM,
    LlamaForSequenceClassification,
    PreTrainedModel,
    PreTrainedTokenizerFast,
)

from rl.models.quiet import quiet_progress_bars

ProgressFn = Callable[[str, int, int], None]

PAD_TOKEN = "<|pad|>"
BOS_TOKEN = "<|bos|>"
EOS_TOKEN = "<|eos|>"
VOCAB_CAP = 1024
MAX_POSITIONS = 512

# The template writes the bos token itself (the tokenizer adds no special tokens on its own), so
# a rendered prompt carries exactly one bos. A user/assistant pair renders exactly like a chat
# example of the corpus, which is what the policy is fine-tuned on.
CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{% if message['role'] == 'user' %}{{ 'User: ' + message['content'] + '\\n' }}"
    "{% elif message['role'] == 'assistant' %}"
    "{{ 'Assistant: ' + message['content'] + eos_token }}"
    "{% else %}{{ message['content'] + '\\n' }}"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}"
)

SFT_BATCH_SIZE = 32
SFT_LR = 3e-3
SFT_WARMUP_STEPS = 10


@dataclass(frozen=True)
class TinyModelPaths:
    policy: Path  # AutoModelForCausalLM + tokenizer, via save_pretrained
    reward_model: Path  # AutoModelForSequenceClassification (num_labels=1) + the same tokenizer

    @classmethod
    def under(cls, out_dir: str | Path) -> TinyModelPaths:
        """Where `build_tiny_models(out_dir)` writes them."""
        return cls(policy=Path(out_dir) / "policy", reward_model=Path(out_dir) / "reward_model")


def load_corpus() -> list[str]:
    """The shipped corpus as a list of examples (blank-line separated, '#' lines are comments)."""
    text = resources.files("rl.models").joinpath("data/tiny_corpus.txt").read_text("ascii")
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    blocks = "\n".join(lines).split("\n\n")
    return [block.strip() for block in blocks if block.strip()]


def train_tokenizer(texts: Sequence[str]) -> PreTrainedTokenizerFast:
    """Train a byte-level BPE on ``texts`` and wrap it with special tokens and a chat template."""
    backend = Tokenizer(models.BPE())
    # No prefix space: decode(encode(x)) must give back x exactly.
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_CAP,
        special_tokens=[PAD_TOKEN, BOS_TOKEN, EOS_TOKEN],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(texts, trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token=BOS_TOKEN,
        eos_token=EOS_TOKEN,
        pad_token=PAD_TOKEN,
        padding_side="left",  # decoder-only batched generation needs left padding
        chat_template=CHAT_TEMPLATE,
        model_max_length=MAX_POSITIONS,
        clean_up_tokenization_spaces=False,
    )


def tiny_config(tokenizer: PreTrainedTokenizerFast) -> LlamaConfig:
    """A ~1.1M parameter Llama sized to the tokenizer's vocabulary."""
    return LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=128,
        intermediate_size=512,
        num_hidden_layers=4,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=MAX_POSITIONS,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )


def generation_config(tokenizer: PreTrainedTokenizerFast) -> GenerationConfig:
    """Generation stops at eos and pads with the pad token."""
    return GenerationConfig(
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )


def encode_examples(tokenizer: PreTrainedTokenizerFast, texts: Sequence[str]) -> list[list[int]]:
    """Token ids of each text framed as ``bos text eos``, as the chat template renders them."""
    bos, eos = tokenizer.bos_token_id, tokenizer.eos_token_id
    encoded = tokenizer(list(texts), add_special_tokens=False)["input_ids"]
    return [[bos, *ids, eos] for ids in encoded]


def collate(
    examples: Sequence[Sequence[int]], pad_id: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Right-pad a batch; return input ids, attention mask and labels (-100 on padding)."""
    width = max(len(ids) for ids in examples)
    input_ids = torch.full((len(examples), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(examples), width), dtype=torch.long)
    for row, ids in enumerate(examples):
        input_ids[row, : len(ids)] = torch.tensor(ids, dtype=torch.long)
        mask[row, : len(ids)] = 1
    labels = input_ids.masked_fill(mask == 0, -100)
    return input_ids, mask, labels


def lm_loss(
    model: LlamaForCausalLM, examples: Sequence[Sequence[int]], pad_id: int
) -> torch.Tensor:
    """Mean next-token cross-entropy of ``model`` on a batch of framed examples."""
    input_ids, mask, labels = collate(examples, pad_id)
    return model(input_ids=input_ids, attention_mask=mask, labels=labels).loss


def _lr_factor(step: int, total: int) -> float:
    # Short linear warmup, then cosine decay to 10%: stable at a high lr for a tiny model.
    if step < SFT_WARMUP_STEPS:
        return (step + 1) / SFT_WARMUP_STEPS
    progress = (step - SFT_WARMUP_STEPS) / max(1, total - SFT_WARMUP_STEPS)
    return 0.1 + 0.45 * (1.0 + math.cos(math.pi * progress))


def sft(
    model: LlamaForCausalLM,
    examples: Sequence[Sequence[int]],
    *,
    steps: int,
    pad_id: int,
    seed: int,
    on_progress: ProgressFn | None = None,
) -> list[float]:
    """Fine-tune ``model`` in place on random batches of ``examples``; return per-step losses."""
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=SFT_LR, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: _lr_factor(s, steps))
    losses: list[float] = []
    model.train()
    for step in range(steps):
        picks = torch.randint(len(examples), (SFT_BATCH_SIZE,), generator=generator).tolist()
        loss = lm_loss(model, [examples[i] for i in picks], pad_id)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
        if on_progress is not None:
            on_progress("sft", step + 1, steps)
    model.eval()
    return losses


def reward_model_from(policy: LlamaForCausalLM) -> LlamaForSequenceClassification:
    """A one-output reward model whose backbone is a copy of the policy's backbone."""
    # Drop the policy's default two-label map, which contradicts num_labels=1.
    fields = {
        key: value
        for key, value in policy.config.to_dict().items()
        if key not in ("id2label", "label2id", "architectures")
    }
    config = LlamaConfig.from_dict({**fields, "num_labels": 1})
    reward_model = LlamaForSequenceClassification(config)
    reward_model.model.load_state_dict(policy.model.state_dict())
    return reward_model.eval()


def _save(model: PreTrainedModel, tokenizer: PreTrainedTokenizerFast, path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    with quiet_progress_bars():  # save_pretrained draws tqdm bars; callers get on_progress
        model.save_pretrained(path)  # safetensors is the default format
    tokenizer.save_pretrained(path)
    return path


def build_tiny_models(
    out_dir: str | Path,
    *,
    sft_steps: int = 100,
    seed: int = 0,
    on_progress: ProgressFn | None = None,
) -> TinyModelPaths:
    """Writes out_dir/policy and out_dir/reward_model. on_progress(phase, done, total) for a
    progress bar (phases "tokenizer", "sft", "save"); no printing from the library itself."""
    if sft_steps < 0:
        raise ValueError(f"sft_steps must be >= 0, got {sft_steps}")
    report = on_progress or (lambda phase, done, total: None)
    out = Path(out_dir)
    texts = load_corpus()

    report("tokenizer", 0, 1)
    tokenizer = train_tokenizer(texts)
    report("tokenizer", 1, 1)

    # Seed inside a forked RNG so the caller's global torch RNG state is left untouched.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        policy = LlamaForCausalLM(tiny_config(tokenizer))
        policy.generation_config = generation_config(tokenizer)
        report("sft", 0, sft_steps)
        examples = encode_examples(tokenizer, texts)
        sft(
            policy,
            examples,
            steps=sft_steps,
            pad_id=tokenizer.pad_token_id,
            seed=seed,
            on_progress=report,
        )
        torch.manual_seed(seed + 1)  # the score head's init must not depend on sft_steps
        reward_model = reward_model_from(policy)

    report("save", 0, 2)
    paths = TinyModelPaths.under(out)
    _save(policy, tokenizer, paths.policy)
    _save(reward_model, tokenizer, paths.reward_model)
    report("save", 2, 2)
    return paths
