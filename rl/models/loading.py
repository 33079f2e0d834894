"""Load policies, reference models, critics and tokenizers the same way for a tiny local model
and for any HuggingFace causal LM."""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn
from transformers import AutoModel, AutoModelForCausalLM, AutoTokenizer, PreTrainedTokenizerBase

from rl.config import ModelRef
from rl.models.quiet import quiet_progress_bars

VALUE_HEAD_FILE = "value_head.pt"


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("device: cuda requested but no GPU is visible (use --device=cpu)")
    return torch.device(name)


def resolve_dtype(name: str, device: torch.device) -> torch.dtype:
    """`auto`: bf16 on a GPU that supports it, fp32 on the CPU (CPU bf16 is slow and lossy)."""
    if name == "auto":
        if device.type == "cuda" and torch.cuda.is_bf16_supported():
            return torch.bfloat16
        return torch.float32
    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[name]


def load_tokenizer(ref: ModelRef) -> PreTrainedTokenizerBase:
    tokenizer = AutoTokenizer.from_pretrained(ref.model_name_or_path, revision=ref.revision)
    tokenizer.padding_side = "left"  # decoder-only generation pads prompts on the left
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token  # common for base LMs; masks keep it harmless
    return tokenizer


def load_causal_lm(ref: ModelRef, device: torch.device, dtype: torch.dtype) -> nn.Module:
    with quiet_progress_bars():
        model = AutoModelForCausalLM.from_pretrained(
            ref.model_name_or_path, revision=ref.revision, dtype=dtype
        )
    return model.to(device)


def load_reference(ref: ModelRef, device: torch.device, dtype: torch.dtype) -> nn.Module:
    model = load_causal_lm(ref, device, dtype).eval()
    model.requires_grad_(False)
    return model


class ValueModel(nn.Module):
    """A critic: the LM's backbone with a scalar head on every position (PPO)."""

    def __init__(self, backbone: nn.Module, hidden_size: int) -> None:
        super().__init__()
        self.backbone = backbone
        self.head = nn.Linear(hidden_size, 1)
        nn.init.zeros_(self.head.weight)  # start from V = 0: no made-up value estimates
        nn.init.zeros_(self.head.bias)

    def forward(self, input_ids, attention_mask, position_ids) -> torch.Tensor:
        hidden = self.backbone(
            input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids
        ).last_hidden_state
        return self.head(hidden.to(self.head.weight.dtype)).squeeze(-1)

    def save_pretrained(self, path: str | Path) -> None:
        self.backbone.save_pretrained(path)
        torch.save(self.head.state_dict(), Path(path) / VALUE_HEAD_FILE)

    @classmethod
    def load(cls, ref: ModelRef, device: torch.device, dtype: torch.dtype) -> ValueModel:
        with quiet_progress_bars():
            backbone = AutoModel.from_pretrained(
                ref.model_name_or_path, revision=ref.revision, dtype=dtype
            )
        model = cls(backbone, backbone.config.hidden_size)
        head_file = Path(ref.model_name_or_path) / VALUE_HEAD_FILE
        if head_file.exists():  # a saved critic, not a fresh one from an LM
            model.head.load_state_dict(torch.load(head_file, map_location="cpu", weights_only=True))
        return model.to(device)
