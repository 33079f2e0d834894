"""What `rm train` saves beside a trained reward model for its reward's extras, all read off one
no-grad forward over the distinct training texts with the backbone frozen:

- the uncertainty heads (annotation.reward_model.heads; extra `spread`), unless
  `uncertainty_heads` is 0;
- the failure probe (annotation.reward_model.probe; extra `failure`), when the training data's
  reviews ticked failure categories that some reviews did not: its rows are the distinct
  policy texts (a reviewer's own better response is left out, or the probe would learn who
  wrote a text), each with every category ticked on it (a rated response's, a comparison's
  worst's), none ticked a negative;
- the reviewed features (rl.rewards.novelty; extra `novelty`): the features of every distinct
  training text, subsampled to at most 512 rows.

A file of an earlier model in the output directory that this training does not write again is
removed: heads, a probe or reviewed features of another backbone would measure nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from annotation.reward_model.data import RMData, distinct, texts_of
from annotation.reward_model.heads import HeadSettings, fit_heads
from annotation.reward_model.probe import fit_failure_probe
from annotation.reward_model.settings import RMTrainSettings
from rl.rewards.failure_probe import PROBE_FILE, FailureProbe
from rl.rewards.model import RewardModel
from rl.rewards.novelty import REVIEWED_FILE, ReviewedFeatures
from rl.rewards.uncertainty import HEADS_FILE, UncertaintyHeads, score_module

Text = tuple[str, str]  # (prompt, response)


class KnownFeatures:
    """The frozen model's features of a set of texts, each computed once; a text asked for
    later and not among them is encoded then (and kept)."""

    def __init__(self, scorer: RewardModel, texts: list[Text]) -> None:
        self.scorer = scorer
        self.rows: dict[Text, torch.Tensor] = {}
        self._add(distinct(texts)[1])

    def _add(self, texts: list[Text]) -> None:
        if texts:
            found = self.scorer.features([p for p, _ in texts], [r for _, r in texts])
            self.rows.update(zip(texts, found, strict=True))

    def features(self, prompts: list[str], responses: list[str]) -> torch.Tensor:
        texts = list(zip(prompts, responses, strict=True))
        self._add(distinct([text for text in texts if text not in self.rows])[1])
        if not texts:
            return self.scorer.features([], [])
        return torch.stack([self.rows[text] for text in texts])


@dataclass(frozen=True)
class Extras:
    heads: UncertaintyHeads | None
    probe: FailureProbe | None
    reviewed: ReviewedFeatures | None

    def save(self, out: Path) -> None:
        """Write what was fitted into `out`; remove the files of what was not."""
        for fitted, name in ((self.heads, HEADS_FILE), (self.probe, PROBE_FILE),
                             (self.reviewed, REVIEWED_FILE)):  # fmt: skip
            if fitted is not None:
                fitted.save(out)
            elif (out / name).exists():
                (out / name).unlink()


def fit_extras(scorer: RewardModel, train: RMData, settings: RMTrainSettings) -> Extras:
    """The extras of a trained `scorer` (module docstring); none for a model without a linear
    `score` head, whose features there is nothing to read from."""
    if score_module(scorer.model) is None:
        return Extras(None, None, None)
    known = KnownFeatures(scorer, texts_of(train.pairs, train.ratings))
    heads = None
    if settings.uncertainty_heads > 0:
        heads = fit_heads(known, train, _head_settings(settings))
    rows, categories = probe_rows(train)
    probe = None
    if rows:
        features = known.features([p for p, _ in rows], [r for _, r in rows])
        probe = fit_failure_probe(features, categories, seed=settings.seed)
    reviewed = None
    if known.rows:
        everything = torch.stack(list(known.rows.values()))
        reviewed = ReviewedFeatures.of(everything, seed=settings.seed)
    return Extras(heads, probe, reviewed)


def probe_rows(train: RMData) -> tuple[list[Text], list[tuple[str, ...]]]:
    """The failure probe's rows: each distinct policy text of `train` and the categories ticked
    on it (none when no review ticked any; then no rows at all: nothing to learn from)."""
    ticked: dict[Text, set[str]] = {}
    for pair in train.pairs:
        if not pair.written:
            ticked.setdefault((pair.prompt, pair.chosen), set())
        ticked.setdefault((pair.prompt, pair.rejected), set()).update(pair.rejected_categories)
    for rated in train.ratings:
        ticked.setdefault((rated.prompt, rated.response), set()).update(rated.categories)
    if not any(ticked.values()):
        return [], []
    return list(ticked), [tuple(sorted(names)) for names in ticked.values()]


def _head_settings(settings: RMTrainSettings) -> HeadSettings:
    return HeadSettings(
        count=settings.uncertainty_heads, rating_weight=settings.rating_weight, seed=settings.seed
    )
