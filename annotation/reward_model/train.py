"""Train the next reward model: Bradley-Terry on preference pairs, optionally a regression on
ratings, warm-started from a sequence-classification model (num_labels=1), usually the previous
reward model.

Texts are encoded exactly as the `reward_model` reward scores them (rl.rewards.model: chat
template or prompt + response, the end kept, padding by hand), so what is trained is what is
later used. Losses: -log sigmoid(s_chosen - s_rejected) per pair; rating_weight * (s - target)^2
per rated response, target = (rating - 3) / 2 in [-1, 1]. With `weight_by_agreement`, each
pair's and rated response's loss is weighted by its sample's reviewer agreement (1 - rating
spread / 4: 1 when reviewers agree or one reviewed it, 0 for a 1-star against a 5-star),
divided by the mean weight of the training data, so the loss keeps its scale and a disputed
sample moves the model less than a clear one. A pair whose chosen side a reviewer wrote (a better
response: text the policy did not generate, whose style alone can tell it apart) is weighted by
`written_weight` besides (0 leaves them out). The default, 1, weighs them as the others: on
the loop bench 0 ordered the policy's responses better, but where the reviews are of failures
alone (threshold routing) the better answers are most of what orders anything
(docs/reward-models.md).

Then, on one no-grad forward of the frozen model over the distinct training texts, what the
`reward_model` reward's extras read is fitted and saved beside it (annotation.reward_model.extras):
a few cheap uncertainty heads unless `uncertainty_heads` is 0 (their spread per sample is its
uncertainty), a failure probe when the reviews ticked failure categories, and the reviewed texts'
features its novelty is measured from.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import torch
import torch.nn.functional as F

from annotation.reward_model.data import (
    Pair,
    Rated,
    RMData,
    RMDataError,
    distinct,
    texts_of,
)
from annotation.reward_model.extras import fit_extras
from annotation.reward_model.head_refit import HeadRefitSettings, refit_score_head
from annotation.reward_model.settings import RMTrainSettings
from rl.models.quiet import quiet_progress_bars
from rl.numbers import average_ranks
from rl.rewards.model import RewardModel
from rl.rewards.registry import RewardError

METADATA_FILE = "lowtide_reward_model.json"


@dataclass
class RMMetrics:
    pairs: int = 0
    pair_accuracy: float | None = None  # share of pairs where chosen scores above rejected
    ratings: int = 0
    rating_spearman: float | None = None  # rank correlation of scores with human ratings
    # The pairs between two of the policy's own responses (not a reviewer's written one): what
    # ordering the policy's samples, as training will ask of the model, looks like.
    policy_pairs: int = 0
    policy_pair_accuracy: float | None = None

    def line(self) -> str:
        acc = "-" if self.pair_accuracy is None else f"{self.pair_accuracy:.3f}"
        rho = "-" if self.rating_spearman is None else f"{self.rating_spearman:+.3f}"
        own = ""
        if self.policy_pairs_apart:
            own = (f" ({self.policy_pair_accuracy:.3f} on the {self.policy_pairs} between the "
                   "policy's own)")  # fmt: skip
        return (f"pair accuracy {acc} on {self.pairs} pairs{own}, rating Spearman {rho} on "
                f"{self.ratings}")  # fmt: skip

    @property
    def policy_pairs_apart(self) -> bool:
        """Whether the pairs between the policy's own responses say something the whole does
        not: some pairs are of that kind and some are not."""
        return 0 < self.policy_pairs < self.pairs


@dataclass
class RMReport:
    out: str
    parent: str
    train_pairs: int
    train_ratings: int
    before: RMMetrics  # the parent, on the held-out data
    after: RMMetrics  # the new model, on the held-out data
    steps: int
    run_ids: list[str] = field(default_factory=list)
    settings: dict = field(default_factory=dict)


Progress = Callable[[int, int, dict[str, float]], None]


def load_scorer(path: str | Path) -> RewardModel:
    try:
        return RewardModel(path)
    except RewardError as error:
        raise RMDataError(str(error).replace("reward_model: ", "", 1)) from None


def evaluate(scorer: RewardModel, data: RMData) -> RMMetrics:
    metrics = RMMetrics(pairs=len(data.pairs), ratings=len(data.ratings))
    scores = distinct_scores(scorer, texts_of(data.pairs, data.ratings))
    count = len(data.pairs)
    if data.pairs:
        won = [c > r for c, r in zip(scores[:count], scores[count : 2 * count], strict=True)]
        metrics.pair_accuracy = sum(won) / count
        own = [win for win, pair in zip(won, data.pairs, strict=True) if not pair.written]
        metrics.policy_pairs = len(own)
        metrics.policy_pair_accuracy = sum(own) / len(own) if own else None
    if len(data.ratings) >= 2:
        rated = scores[2 * count :]
        metrics.rating_spearman = spearman(rated, [float(r.rating) for r in data.ratings])
    return metrics


def distinct_scores(scorer: RewardModel, texts: list[tuple[str, str]]) -> list[float]:
    """The score of each (prompt, response) of `texts`, each distinct one scored once (a
    response sits in several pairs; a policy repeats itself)."""
    slots, unique = distinct(texts)
    found = scorer.score_pairs([p for p, _ in unique], [r for _, r in unique]) if unique else []
    return [found[slot] for slot in slots]


def train_reward_model(
    data: RMData,
    base: str | Path,
    out: str | Path,
    settings: RMTrainSettings = RMTrainSettings(),
    on_step: Progress | None = None,
) -> RMReport:
    train, held = data.split(settings.holdout)
    if settings.written_weight == 0:
        train.pairs = [pair for pair in train.pairs if not pair.written]
    if not train.pairs and not (train.ratings and settings.rating_weight > 0):
        raise RMDataError(
            f"nothing to train on after holding out {settings.holdout:.0%}: "
            f"{len(train.pairs)} pairs, {len(train.ratings)} ratings (rating_weight "
            f"{settings.rating_weight}); review more tasks or lower --holdout"
        )
    torch.manual_seed(settings.seed)
    scorer = load_scorer(base)
    before = evaluate(scorer, held)
    if settings.train == "head":
        refit = HeadRefitSettings(rating_weight=settings.rating_weight)
        weighting = Weighting.of(train, settings)
        loss = refit_score_head(
            scorer, train, refit, weighting.of_items(train.pairs), weighting.of_items(train.ratings)
        )
        step = refit.steps
        if on_step is not None:
            on_step(step, step, {"rm/loss": loss})
    else:
        step = _fine_tune(scorer, train, settings, on_step)
    after = evaluate(scorer, held)
    extras = fit_extras(scorer, train, settings)
    report = RMReport(
        out=str(out), parent=str(base), train_pairs=len(train.pairs),
        train_ratings=len(train.ratings), before=before, after=after, steps=step,
        run_ids=data.run_ids, settings=settings.model_dump(),
    )  # fmt: skip
    save(scorer, Path(out), report, data)
    extras.save(Path(out))
    scorer.close()
    return report


def _fine_tune(
    scorer: RewardModel, train: RMData, settings: RMTrainSettings, on_step: Progress | None
) -> int:
    """Every weight of the model, minibatch by minibatch; the number of steps taken."""
    model = scorer.model
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate)
    weighting = Weighting.of(train, settings)
    batches = _batches(train, settings)
    total = settings.epochs * len(batches)
    end_factor = 0.0 if settings.lr_schedule == "linear" else 1.0
    schedule = torch.optim.lr_scheduler.LinearLR(optimizer, 1.0, end_factor, total_iters=total)
    step = 0
    for _ in range(settings.epochs):
        random.Random(settings.seed + step).shuffle(batches)
        for pairs, rated in batches:
            loss, parts = _loss(scorer, pairs, rated, settings.rating_weight, weighting)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), settings.max_grad_norm)
            rate = optimizer.param_groups[0]["lr"]
            optimizer.step()
            schedule.step()
            step += 1
            if on_step is not None:
                on_step(step, total, {"rm/loss": loss.item(), "rm/learning_rate": rate, **parts})
    model.eval()
    return step


def _batches(data: RMData, settings: RMTrainSettings) -> list[tuple[list[Pair], list[Rated]]]:
    """Minibatches of whole samples, shuffled: a sample's pairs (a comparison task's orders, or
    a better response over the rated one) and its rating share a step, so each of its responses
    is scored once a step (`distinct`), and one task's correlated pairs do not spread over many
    steps (as InstructGPT trains on a prompt's comparisons together). A batch takes samples
    until it holds `batch_size` items; a sample of more items than that (hand-made data that
    gives many rows one sample_id) is cut into pieces of `batch_size`, so that no step holds
    more than twice `batch_size`."""
    samples: dict[str, tuple[list[Pair], list[Rated]]] = {}
    for pair in data.pairs:
        samples.setdefault(pair.sample_id, ([], []))[0].append(pair)
    for rated in data.ratings if settings.rating_weight > 0 else []:
        samples.setdefault(rated.sample_id, ([], []))[1].append(rated)
    size = settings.batch_size
    order = [piece for pairs, rated in samples.values() for piece in _pieces(pairs, rated, size)]
    random.Random(settings.seed).shuffle(order)
    batches: list[tuple[list[Pair], list[Rated]]] = []
    for pairs, rated in order:
        if not batches or len(batches[-1][0]) + len(batches[-1][1]) >= size:
            batches.append(([], []))
        batches[-1][0].extend(pairs)
        batches[-1][1].extend(rated)
    return batches or [([], [])]


def _pieces(
    pairs: list[Pair], rated: list[Rated], size: int
) -> list[tuple[list[Pair], list[Rated]]]:
    """One sample's items in pieces of at most `size` (one piece, as a rule), pairs first."""
    if len(pairs) + len(rated) <= size:
        return [(pairs, rated)]
    items: list[Pair | Rated] = [*pairs, *rated]
    cut = [items[start : start + size] for start in range(0, len(items), size)]
    return [([i for i in part if isinstance(i, Pair)], [i for i in part if isinstance(i, Rated)])
            for part in cut]  # fmt: skip


def agreement_scale(data: RMData) -> float:
    """1 / the mean agreement over what trains: weights that average 1 keep the loss's scale."""
    weights = [item.agreement for item in (*data.pairs, *data.ratings)]
    mean = sum(weights) / len(weights) if weights else 1.0
    if mean <= 0:
        raise RMDataError(
            "--weight-by-agreement: every training sample has agreement 0 (its reviewers gave "
            "1 and 5 stars): nothing to learn from; adjudicate them or train without weights"
        )
    return 1.0 / mean


@dataclass(frozen=True)
class Weighting:
    """How much each pair's and rated response's loss counts: its agreement times
    `agreement_scale` (None: agreement is not weighed), times `written` for a pair whose chosen
    side a reviewer wrote."""

    agreement_scale: float | None = None
    written: float = 1.0

    @classmethod
    def of(cls, train: RMData, settings: RMTrainSettings) -> Weighting:
        scale = agreement_scale(train) if settings.weight_by_agreement else None
        return cls(scale, settings.written_weight)

    def of_items(
        self, items: list[Pair] | list[Rated], device: torch.device | None = None
    ) -> torch.Tensor | None:
        """Each item's loss weight; None: every weight is 1 (an unweighted mean)."""
        if self.agreement_scale is None and self.written == 1.0:
            return None
        return torch.tensor([self._weight(item) for item in items], device=device)

    def _weight(self, item: Pair | Rated) -> float:
        agreed = 1.0 if self.agreement_scale is None else item.agreement * self.agreement_scale
        return agreed * (self.written if isinstance(item, Pair) and item.written else 1.0)


def _weighted_mean(
    losses: torch.Tensor, items: list[Pair] | list[Rated], weighting: Weighting
) -> torch.Tensor:
    weights = weighting.of_items(items, losses.device)
    return losses.mean() if weights is None else (weights * losses).mean()


def _loss(
    scorer: RewardModel,
    pairs: list[Pair],
    rated: list[Rated],
    rating_weight: float,
    weighting: Weighting = Weighting(),
) -> tuple[torch.Tensor, dict[str, float]]:
    slots, unique = distinct(texts_of(pairs, rated))
    encoded = scorer.encode([p for p, _ in unique], [r for _, r in unique])
    once = scorer.model(**scorer.pad(encoded)).logits[:, 0].float()
    scores = once[torch.tensor(slots, device=once.device)]  # gradients add up over the copies
    parts: dict[str, float] = {}
    loss = scores.new_zeros(())
    if pairs:
        margin = scores[: len(pairs)] - scores[len(pairs) : 2 * len(pairs)]
        pair_loss = _weighted_mean(-F.logsigmoid(margin), pairs, weighting)
        loss = loss + pair_loss
        parts["rm/pair_loss"] = pair_loss.item()
        parts["rm/pair_accuracy_train"] = (margin > 0).float().mean().item()
    if rated:
        target = torch.tensor([(r.rating - 3) / 2 for r in rated], device=scores.device)
        squared = F.mse_loss(scores[2 * len(pairs) :], target, reduction="none")
        rating_loss = _weighted_mean(squared, rated, weighting)
        loss = loss + rating_weight * rating_loss
        parts["rm/rating_loss"] = rating_loss.item()
    return loss, parts


def save(scorer: RewardModel, out: Path, report: RMReport, data: RMData) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with quiet_progress_bars():
        scorer.model.save_pretrained(out)
    scorer.tokenizer.save_pretrained(out)
    metadata = {
        **asdict(report),
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "data": data.sources,
    }
    (out / METADATA_FILE).write_text(json.dumps(metadata, indent=2) + "\n")
    (out / "README.md").write_text(model_card(report, data))


def model_card(report: RMReport, data: RMData) -> str:
    runs = ", ".join(report.run_ids) or "-"
    before, after = report.before, report.after
    return f"""---
library_name: transformers
tags: [reward-model, lowtide]
---

# Reward model trained by lowtide

A sequence-classification model with one output: higher is better. Trained from human reviews
of low-reward rollouts (`lowtide export`), warm-started from `{report.parent}`.

| | |
|---|---|
| parent model | `{report.parent}` |
| data | {", ".join(f"`{source}`" for source in data.sources)} |
| rollouts from runs | {runs} |
| training pairs / rated responses | {report.train_pairs} / {report.train_ratings} |
| held-out pairs / rated responses | {report.after.pairs} / {report.after.ratings} |
| steps | {report.steps} |

| held out | parent | this model |
|---|---|---|
| pairwise accuracy | {_fmt(before.pair_accuracy)} | {_fmt(after.pair_accuracy)} |
| Spearman with ratings | {_fmt(before.rating_spearman)} | {_fmt(after.rating_spearman)} |

Settings: `{json.dumps(report.settings)}`.

Use it in a run config:

```yaml
rewards:
  - {{type: reward_model, path: {report.out}}}
```
"""


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def spearman(xs: list[float], ys: list[float]) -> float | None:
    """Rank correlation (average ranks for ties); None when either side is constant."""
    rx, ry = average_ranks(xs), average_ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    vx = sum((a - mx) ** 2 for a in rx)
    vy = sum((b - my) ** 2 for b in ry)
    return None if vx == 0 or vy == 0 else cov / math.sqrt(vx * vy)
