"""Type `reward_model`: a sequence-classification model directory scores prompt + response.

The pair is rendered with the tokenizer's chat template as a user/assistant conversation when
it has one (the way reward models are trained), else as `prompt + response`. The score is
`logits[:, 0]` of a one-output model. Batches are padded by hand with the model's pad token on
the tokenizer's padding side, and position ids follow the attention mask, so a sample scores
the same alone or next to a much longer one. Inputs longer than the model's window keep their
end (the response), which is where the score is read.

A model directory with uncertainty heads (rl.rewards.uncertainty) also reports, per sample, the
heads' spread as the extra `spread` (reward_details `<name>/spread`), never part of the total. One
with a failure probe (rl.rewards.failure_probe) reports how much the sample resembles a failure
reviewers named, `failure`; one with the reviewed texts' features (rl.rewards.novelty), how far
it lies from all of them, `novelty`. All three are read off the pooled features of the one
forward that scores; a directory with none of them scores without pooling.
With `outlier_reference: N`, the extra `outlier` says how far the sample's representation lies
from the first N samples scored (the starting policy's): rl.rewards.representation; with
`outlier_reference_file` too, from the samples that file holds (rl.rewards.outlier_reference).
With `previous: DIR`, each sample is also scored by that reward model (a loop's first: what the
reward model said before reviews retrained it), reported as the extra `previous`; the budget
policy reads where the two disagree as uncertainty (sampling.selection.budget). It costs one more
forward pass per sample.

Params: see `rl.rewards.model_spec`, which checks them without torch.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path

import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer, PreTrainedModel

from rl.config import RewardSpec
from rl.models.quiet import quiet_progress_bars
from rl.rewards.failure_probe import FAILURE, load_probe
from rl.rewards.model_spec import (
    DEFAULT_BATCH_SIZE,
    PREVIOUS,
    check_model_spec,
    check_settings,
)
from rl.rewards.novelty import NOVELTY, load_reviewed
from rl.rewards.outlier_reference import Texts, read_reference, write_reference
from rl.rewards.representation import OUTLIER, OutlierScore
from rl.rewards.types import ComponentScores, RewardBatch, RewardError
from rl.rewards.uncertainty import SPREAD, load_heads, pooled_features, score_module

UNBOUNDED_LENGTH = 1_000_000  # tokenizers without a limit report a huge model_max_length


class RewardModel:
    def __init__(
        self,
        path: str | Path,
        *,
        device: str = "cpu",
        batch_size: int = DEFAULT_BATCH_SIZE,
        padding_side: str | None = None,
        max_length: int | None = None,
        dtype: str = "auto",
        outlier_reference: int = 0,
        outlier_reference_file: str | Path | None = None,
        previous: str | Path | None = None,
    ) -> None:
        self.path = Path(path)
        check_settings(self.path, batch_size, padding_side, max_length, dtype)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(self.path)
            with quiet_progress_bars():
                model = AutoModelForSequenceClassification.from_pretrained(self.path, dtype=dtype)
            self.model: PreTrainedModel | None = model.to(device).eval()
        except Exception as error:
            raise RewardError(
                f"reward_model: cannot load a sequence-classification model and tokenizer from "
                f"{str(self.path)!r}: {type(error).__name__}: {error}"
            ) from error
        if self.model.config.num_labels != 1:
            raise RewardError(
                f"reward_model: {str(self.path)!r} has num_labels={self.model.config.num_labels}; "
                "a reward model has one output (num_labels=1)"
            )
        self.device = torch.device(device)
        self.batch_size = batch_size
        self.padding_side = padding_side or self.tokenizer.padding_side or "right"
        self.pad_id = self._pad_id()
        self.max_length = max_length or self._window()
        self.use_chat_template = bool(getattr(self.tokenizer, "chat_template", None))
        self.takes_position_ids = "position_ids" in inspect.signature(self.model.forward).parameters
        # Uncertainty heads, a failure probe and reviewed features saved beside the model
        # (annotation.reward_model.extras), each if there: all read the score head's input.
        readable = score_module(self.model) is not None
        self.heads = load_heads(self.path) if readable else None
        self.probe = load_probe(self.path) if readable else None
        self.reviewed = load_reviewed(self.path) if readable else None
        self.outliers: OutlierScore | None = None
        if outlier_reference:
            if score_module(self.model) is None:
                raise RewardError(
                    f"reward_model: outlier_reference needs a linear `score` head to read the "
                    f"representation from; {type(self.model).__name__} has none"
                )
            self.outliers = OutlierScore(outlier_reference)
        # The texts of the reference as it fills, written to the file once it is full.
        self._reference_file = Path(outlier_reference_file) if outlier_reference_file else None
        self.previous = (
            RewardModel(previous, device=device, batch_size=batch_size, dtype=dtype)
            if previous is not None
            else None
        )
        self._reference_texts: Texts = []
        if self.outliers is not None and self._reference_file and self._reference_file.exists():
            texts = read_reference(self._reference_file)
            self.outliers = OutlierScore(len(texts))
            self.outliers(self.features([p for p, _ in texts], [r for _, r in texts]))

    @classmethod
    def from_spec(cls, spec: RewardSpec, *, device: str = "cpu") -> RewardModel:
        check_model_spec(spec)
        assert spec.path is not None  # checked
        return cls(spec.path, device=device, **spec.params)

    def _pad_id(self) -> int:
        # The model finds each row's last real token by this id, so it must be the model's own.
        config_pad = self.model.config.pad_token_id
        candidates = (config_pad, self.tokenizer.pad_token_id, self.tokenizer.eos_token_id)
        pad_id = next((token for token in candidates if token is not None), None)
        if pad_id is None:
            raise RewardError(
                f"reward_model: {str(self.path)!r} has no pad or eos token to pad batches with"
            )
        self.model.config.get_text_config().pad_token_id = pad_id
        return int(pad_id)

    def _window(self) -> int | None:
        limits = [
            self.tokenizer.model_max_length,
            getattr(self.model.config, "max_position_embeddings", None),
        ]
        bounded = [limit for limit in limits if isinstance(limit, int) and limit < UNBOUNDED_LENGTH]
        return min(bounded) if bounded else None

    def render(self, prompt: str, response: str) -> str:
        if self.use_chat_template:
            # The template writes its own separator after the role, as in training data.
            conversation = [
                {"role": "user", "content": prompt},
                {"role": "assistant", "content": response.lstrip()},
            ]
            return self.tokenizer.apply_chat_template(conversation, tokenize=False)
        return prompt + response

    def encode(self, prompts: list[str], responses: list[str]) -> list[list[int]]:
        texts = [
            self.render(prompt, response)
            for prompt, response in zip(prompts, responses, strict=True)
        ]
        # A chat template writes the special tokens itself; plain text gets the tokenizer's.
        encoded = self.tokenizer(texts, add_special_tokens=not self.use_chat_template)
        rows = [list(ids) for ids in encoded["input_ids"]]
        if self.max_length is not None:
            rows = [ids[-self.max_length :] for ids in rows]
        return [ids if ids else [self.pad_id] for ids in rows]

    def pad(self, rows: list[list[int]]) -> dict[str, torch.Tensor]:
        width = max(len(ids) for ids in rows)
        input_ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for row, ids in enumerate(rows):
            span = (
                slice(width - len(ids), width)
                if self.padding_side == "left"
                else slice(0, len(ids))
            )
            input_ids[row, span] = torch.tensor(ids, dtype=torch.long)
            mask[row, span] = 1
        inputs = {"input_ids": input_ids, "attention_mask": mask}
        if self.takes_position_ids:
            # Count positions over real tokens only: left padding then leaves them unchanged.
            inputs["position_ids"] = (mask.cumsum(-1) - 1).clamp(min=0)
        return {name: tensor.to(self.device) for name, tensor in inputs.items()}

    @torch.no_grad()
    def score_pairs(self, prompts: list[str], responses: list[str]) -> list[float]:
        return self._scored(prompts, responses, pool=False)[0]

    @torch.no_grad()
    def score_with_spread(
        self, prompts: list[str], responses: list[str]
    ) -> tuple[list[float], list[float] | None]:
        """The scores, and the uncertainty heads' spread per sample (None without heads)."""
        scores, pooled = self._scored(prompts, responses, pool=self.heads is not None)
        return scores, self._spreads(pooled)

    @torch.no_grad()
    def features(self, prompts: list[str], responses: list[str]) -> torch.Tensor:
        """(N, hidden) on the CPU: the score head's input for each text, as scoring reads it
        (what the uncertainty heads are fitted on)."""
        if self.model is not None and not prompts:  # the tokenizer refuses an empty batch
            return torch.zeros((0, self.model.config.get_text_config().hidden_size))
        pooled = self._scored(prompts, responses, pool=True)[1]
        assert pooled is not None
        return pooled.cpu()

    def _feature_readers(self) -> list[tuple[str, Callable[[torch.Tensor], torch.Tensor]]]:
        """The extras read off pooled features by what is saved beside the model: (name, one
        value per row of (N, hidden))."""
        readers: list[tuple[str, Callable[[torch.Tensor], torch.Tensor]]] = []
        if self.probe is not None:
            readers.append((FAILURE, self.probe.scores))
        if self.reviewed is not None:
            readers.append((NOVELTY, self.reviewed.novelty))
        return readers

    def _spreads(self, pooled: torch.Tensor | None) -> list[float] | None:
        if self.heads is None or pooled is None:
            return None
        return self.heads.spread(pooled).cpu().tolist()

    def _scored(
        self, prompts: list[str], responses: list[str], *, pool: bool
    ) -> tuple[list[float], torch.Tensor | None]:
        """The scores and, with `pool`, each sample's pooled representation (the score head's
        input), (N, hidden) in the samples' order."""
        if self.model is None:
            raise RewardError("reward_model: scored after close()")
        rows = self.encode(prompts, responses)
        # Similar lengths share a batch, which keeps padding (and compute) small.
        order = sorted(range(len(rows)), key=lambda index: len(rows[index]))
        scores = [0.0] * len(rows)
        features = pooled_features(self.model, self.pad_id) if pool else nullcontext([])
        with features as pooled:
            for start in range(0, len(order), self.batch_size):
                chunk = order[start : start + self.batch_size]
                logits = self.model(**self.pad([rows[index] for index in chunk])).logits
                for index, value in zip(chunk, logits[:, 0].float().cpu().tolist(), strict=True):
                    scores[index] = value
        if not pool or not rows:
            return scores, None
        by_length = torch.cat([part.float() for part in pooled])
        in_order = torch.empty_like(by_length)
        in_order[torch.tensor(order, device=by_length.device)] = by_length
        return scores, in_order

    @torch.no_grad()
    def __call__(self, batch: RewardBatch) -> ComponentScores:
        if not len(batch):
            return ComponentScores([])
        pool = any(
            reader is not None for reader in (self.heads, self.outliers, self.probe, self.reviewed)
        )
        scores, pooled = self._scored(list(batch.prompts), list(batch.responses), pool=pool)
        # Extras, not components: combine.py files them as `<name>/spread`, `<name>/outlier`,
        # `<name>/failure`, `<name>/novelty`, outside the total.
        extras: list[dict[str, float]] = [{} for _ in scores]
        for extra, value in zip(extras, self._spreads(pooled) or [], strict=False):
            extra[SPREAD] = value
        for name, read in self._feature_readers() if pooled is not None else []:
            for extra, value in zip(extras, read(pooled).cpu().tolist(), strict=True):
                extra[name] = value
        if self.outliers is not None and pooled is not None:
            filling = not self.outliers.fitted
            if filling and self._reference_file is not None:
                room = self.outliers.reference - len(self._reference_texts)
                pairs = zip(batch.prompts, batch.responses, strict=True)
                self._reference_texts += list(pairs)[:room]
            for extra, outlier in zip(extras, self.outliers(pooled), strict=True):
                if outlier is not None:
                    extra[OUTLIER] = outlier
            if filling and self.outliers.fitted and self._reference_file is not None:
                write_reference(self._reference_file, self._reference_texts)
        if self.previous is not None:
            before = self.previous.score_pairs(list(batch.prompts), list(batch.responses))
            for extra, value in zip(extras, before, strict=True):
                extra[PREVIOUS] = value
        return ComponentScores(scores, extras=extras if any(extras) else None)

    def close(self) -> None:
        if self.previous is not None:
            self.previous.close()
        model, self.model = self.model, None
        if model is not None and self.device.type == "cuda":
            del model
            torch.cuda.empty_cache()
