"""Rollouts: sample completions with `generate()`, then score every response token once.

Prompts are left-padded (decoder-only generation), responses right-padded; the response mask is 1
up to and including the first EOS. Position ids come from the attention mask so that the forward
pass sees the same positions as generation did despite the left padding.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from transformers import PreTrainedTokenizerBase

from rl.algorithms.losses import entropy_from_logits, logprobs_from_logits


@dataclass(frozen=True)
class GenerationSettings:
    max_new_tokens: int
    temperature: float
    top_p: float
    samples_per_prompt: int


@dataclass
class Rollout:
    """One step's completions, N = prompts x samples_per_prompt rows."""

    prompts: list[str]  # the raw prompt of each row
    group_ids: torch.Tensor  # (N,) rows of the same prompt share it
    prompt_ids: torch.Tensor  # (N, P) left-padded
    prompt_mask: torch.Tensor  # (N, P)
    response_ids: torch.Tensor  # (N, T) right-padded after EOS
    response_mask: torch.Tensor  # (N, T) float, 1 up to and including EOS
    responses: list[str]
    truncated: torch.Tensor  # (N,) bool: no EOS within max_new_tokens
    old_logp: torch.Tensor | None = None  # (N, T) policy log-probs at sampling time
    ref_logp: torch.Tensor | None = None  # (N, T) frozen reference log-probs
    old_values: torch.Tensor | None = None  # (N, T) critic values (PPO)

    @property
    def size(self) -> int:
        return self.response_ids.shape[0]

    def sequences(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(input_ids, attention_mask, position_ids) of prompt + response."""
        input_ids = torch.cat([self.prompt_ids, self.response_ids], dim=1)
        attention = torch.cat([self.prompt_mask, self.response_mask.long()], dim=1)
        return input_ids, attention, position_ids_from(attention)

    def rows(self, index: torch.Tensor) -> Rollout:
        """The sub-batch at `index` (a micro-batch for the update)."""

        def pick(tensor: torch.Tensor | None) -> torch.Tensor | None:
            return None if tensor is None else tensor[index]

        keep = index.tolist()
        return Rollout(
            prompts=[self.prompts[i] for i in keep],
            group_ids=self.group_ids[index],
            prompt_ids=self.prompt_ids[index],
            prompt_mask=self.prompt_mask[index],
            response_ids=self.response_ids[index],
            response_mask=self.response_mask[index],
            responses=[self.responses[i] for i in keep],
            truncated=self.truncated[index],
            old_logp=pick(self.old_logp),
            ref_logp=pick(self.ref_logp),
            old_values=pick(self.old_values),
        )


def position_ids_from(attention_mask: torch.Tensor) -> torch.Tensor:
    return (attention_mask.long().cumsum(-1) - 1).clamp(min=0)


def uses_chat_template(tokenizer: PreTrainedTokenizerBase, wanted: bool) -> bool:
    return wanted and bool(getattr(tokenizer, "chat_template", None))


def render_prompts(
    tokenizer: PreTrainedTokenizerBase, prompts: list[str], use_chat_template: bool
) -> list[str]:
    if uses_chat_template(tokenizer, use_chat_template):
        return [
            tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}], add_generation_prompt=True, tokenize=False
            )
            for prompt in prompts
        ]
    return list(prompts)


@torch.no_grad()
def generate(
    policy: nn.Module,
    tokenizer: PreTrainedTokenizerBase,
    prompts: list[str],
    settings: GenerationSettings,
    *,
    use_chat_template: bool = True,
    first_group_id: int = 0,
) -> Rollout:
    device = next(policy.parameters()).device
    n = settings.samples_per_prompt
    chat = uses_chat_template(tokenizer, use_chat_template)
    texts = render_prompts(tokenizer, prompts, chat)
    # A chat template writes its own special tokens; a plain prompt gets the tokenizer's.
    encoded = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=not chat)
    prompt_ids = encoded["input_ids"].repeat_interleave(n, dim=0).to(device)
    prompt_mask = encoded["attention_mask"].repeat_interleave(n, dim=0).to(device)
    was_training = policy.training
    policy.eval()
    output = policy.generate(
        input_ids=prompt_ids,
        attention_mask=prompt_mask,
        do_sample=True,
        temperature=settings.temperature,
        top_p=settings.top_p,
        top_k=0,  # plain sampling from the policy: no hidden top-k truncation
        max_new_tokens=settings.max_new_tokens,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    policy.train(was_training)
    response_ids, response_mask, truncated = _cut_at_eos(
        output[:, prompt_ids.shape[1] :], tokenizer.eos_token_id, tokenizer.pad_token_id
    )
    responses = tokenizer.batch_decode(
        response_ids.masked_fill(response_mask == 0, tokenizer.pad_token_id),
        skip_special_tokens=True,
    )
    group_ids = torch.arange(len(prompts), device=device).repeat_interleave(n) + first_group_id
    return Rollout(
        prompts=[prompt for prompt in prompts for _ in range(n)],
        group_ids=group_ids,
        prompt_ids=prompt_ids,
        prompt_mask=prompt_mask,
        response_ids=response_ids,
        response_mask=response_mask,
        responses=responses,
        truncated=truncated,
    )


def _cut_at_eos(
    tokens: torch.Tensor, eos_id: int, pad_id: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Mask everything after the first EOS (kept); rows without EOS are truncated."""
    is_eos = tokens == eos_id
    has_eos = is_eos.any(dim=1)
    first_eos = torch.where(has_eos, is_eos.float().argmax(dim=1), tokens.shape[1] - 1)
    positions = torch.arange(tokens.shape[1], device=tokens.device).unsqueeze(0)
    mask = (positions <= first_eos.unsqueeze(1)).float()
    return tokens.masked_fill(mask == 0, pad_id), mask, ~has_eos


def token_logprobs(
    model: nn.Module, rollout: Rollout, *, with_entropy: bool = False
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Log-probs (N, T) of the response tokens under `model` (and their entropy if asked)."""
    input_ids, attention, positions = rollout.sequences()
    length = rollout.response_ids.shape[1]
    # The logit at position t predicts token t+1: the response needs the last length + 1
    # positions' logits, and only those go through the LM head.
    logits = model(
        input_ids=input_ids,
        attention_mask=attention,
        position_ids=positions,
        logits_to_keep=length + 1,
    ).logits
    response_logits = logits[:, :-1]
    logp = logprobs_from_logits(response_logits, rollout.response_ids)
    # Entropy is only reported, never optimised: no autograd graph for it.
    entropy = entropy_from_logits(response_logits.detach()) if with_entropy else None
    return logp, entropy


def token_values(critic: nn.Module, rollout: Rollout) -> torch.Tensor:
    """Critic values (N, T) at the positions that predict each response token."""
    input_ids, attention, positions = rollout.sequences()
    values = critic(input_ids=input_ids, attention_mask=attention, position_ids=positions)
    start = rollout.prompt_ids.shape[1]
    return values[:, start - 1 : -1].float()
