"""Per-token values on the samples a step logs: taken from tensors the step already computed (no
forward pass), turned into Python lists only on the steps whose histograms or table go out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import torch
from transformers import PreTrainedTokenizerBase

from rl.samples import Sample, TokenValues


def with_token_values(
    samples: Sequence[Sample],
    tokenizer: PreTrainedTokenizerBase,
    *,
    logprobs: torch.Tensor,
    kl: torch.Tensor | None,
    rewards: torch.Tensor,
    advantages: torch.Tensor,
) -> tuple[Sample, ...]:
    """The samples with `tokens` set. Tensors are (N, T), row `sample.index` for each sample,
    response tokens left-aligned: each sample keeps the first len(response_ids) columns."""
    rows = {
        name: tensor.detach().float().cpu().tolist()  # one device-to-host copy per tensor
        for name, tensor in (
            ("logprobs", logprobs),
            ("kl", kl),
            ("rewards", rewards),
            ("advantages", advantages),
        )
        if tensor is not None
    }
    # Each distinct token is decoded once for the whole batch.
    ids = sorted({token for sample in samples for token in sample.response_ids})
    decoded = tokenizer.batch_decode([[token] for token in ids], clean_up_tokenization_spaces=False)
    text_of = dict(zip(ids, decoded, strict=True))

    def cut(name: str, sample: Sample) -> tuple[float, ...]:
        return tuple(rows[name][sample.index][: len(sample.response_ids)])

    return tuple(
        replace(
            sample,
            tokens=TokenValues(
                ids=sample.response_ids,
                texts=tuple(text_of[token] for token in sample.response_ids),
                logprobs=cut("logprobs", sample),
                kl=cut("kl", sample) if "kl" in rows else None,
                rewards=cut("rewards", sample),
                advantages=cut("advantages", sample),
            ),
        )
        for sample in samples
    )
