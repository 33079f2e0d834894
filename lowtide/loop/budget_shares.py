"""`lowtide loop` with `sampling.budget.adaptive`: after a round's export, what each selection
reason's reviews contradicted sets the next round's shares (sampling/selection/budget_learning.py).

The evidence is every review of this loop so far (each compared within its own round), read
from the export's rating rows: the reward (`meta.reward`), the rating, the run. Why a sample was
picked is on its Label Studio task (`selected_by.reason`, as the importer put it there); a row
that carries it itself (`meta.selected_by`) is read without asking Label Studio.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from annotation.agreement import sample_agreement
from annotation.config import AnnotationConfig
from lowtide.config import RunConfig
from rl.numbers import finite_or_none
from sampling.config import BudgetConfig
from sampling.selection.budget_learning import (
    Bucket,
    Compared,
    Credit,
    Review,
    Shares,
    credits,
    next_shares,
)


def budgeted(config: RunConfig) -> bool:
    """The budget policy picks this run's samples: its shares are worth printing."""
    return config.sampling.policy == "budget"


def adaptive(config: RunConfig) -> bool:
    return budgeted(config) and config.sampling.budget.adaptive


@dataclass(frozen=True)
class LearnedShares:
    """The next round's shares and the evidence they came from."""

    shares: Shares
    evidence: Mapping[Bucket, Credit]

    @property
    def reviews(self) -> int:
        return sum(credit.reviews for credit in self.evidence.values())

    def record(self) -> dict[str, Any]:
        """As state.json keeps it: the shares, and per bucket its reviews, mean contradiction
        and mean credit after the repeat discount (None: no evidence)."""
        return {
            "shares": self.shares.as_dict(),
            "credit": {
                bucket: {
                    "reviews": credit.reviews,
                    "contradiction": credit.rate,
                    "credit": credit.earned / credit.reviews if credit.reviews else None,
                }
                for bucket, credit in self.evidence.items()
            },
        }

    def line(self) -> str:
        rates = ", ".join(
            f"{bucket} {credit.rate:.2f} of {credit.reviews}"
            for bucket, credit in self.evidence.items()
            if credit.rate is not None
        )
        learned = f"contradicted: {rates}" if rates else "nothing to learn from yet"
        return f"{self.shares.line()} ({learned})"


def learn_shares(
    budget: BudgetConfig,
    rows: Iterable[Mapping[str, Any]],
    reasons: Mapping[str, str],
    comparisons: Iterable[Mapping[str, Any]] = (),
) -> LearnedShares:
    """The shares after these rating rows and comparison rows: `reasons` ({sample_id:
    selected_by.reason}) for the rows that do not carry their own."""
    return learned_from(budget, reviews_of(rows, reasons), compared_of(comparisons, reasons))


def learned_from(
    budget: BudgetConfig, reviews: Iterable[Review], compared: Iterable[Compared] = ()
) -> LearnedShares:
    """The shares after this evidence, with the evidence (what `learn_shares` reads from rows)."""
    evidence = credits(reviews, compared, budget.repeat_discount)
    return LearnedShares(next_shares(budget, evidence), evidence)


def compared_of(
    rows: Iterable[Mapping[str, Any]], reasons: Mapping[str, str]
) -> Iterator[Compared]:
    """The comparison rows usable as evidence: a known reason, and orders its reviewers agree
    on between responses with finite rewards."""
    from annotation.comparison_rows import agreed_orders

    for row in rows:
        if (row.get("meta") or {}).get("deleted_in_label_studio") is True:
            continue  # its reviews were deleted in Label Studio
        reason = own_reason(row.get("meta") or {}) or reasons.get(str(row.get("sample_id")))
        rewards = {r.get("sample_id"): finite_or_none(r.get("reward")) for r in row["responses"]}
        orders = tuple(
            (rewards[a], rewards[b])
            for a, b in agreed_orders(row)
            if rewards.get(a) is not None and rewards.get(b) is not None
        )
        if reason is not None and orders:
            yield Compared(reason, orders, _worst_kind(row))  # type: ignore[arg-type]


def shares_of(record: Mapping[str, Any] | None, budget: BudgetConfig) -> Shares:
    """The shares a `LearnedShares.record()` holds; the configured ones without a record."""
    if not record:
        return Shares.of(budget)
    shares = record["shares"]
    return Shares(float(shares["random"]), float(shares["audit"]), float(shares["uncertain"]))


def reviews_of(rows: Iterable[Mapping[str, Any]], reasons: Mapping[str, str]) -> Iterator[Review]:
    """The rows usable as evidence: a rating, a finite reward, a known reason, and reviewers who
    agree (a disputed rating is no verdict to credit)."""
    for row in rows:
        meta = row.get("meta") or {}
        if meta.get("agreed") is False or meta.get("deleted_in_label_studio") is True:
            continue  # disputed, or its reviews were deleted in Label Studio
        reason = own_reason(meta) or reasons.get(str(row.get("sample_id")))
        reward, rating = finite_or_none(meta.get("reward")), finite_or_none(row.get("rating"))
        if reason is None or reward is None or rating is None:
            continue
        run = str(meta.get("run_id") or "")
        yield Review(reason, reward, rating, run, kind_of(row.get("categories") or ()))


def kind_of(categories: Iterable[str]) -> tuple[str, ...]:
    """A review's lesson, for the credit's repeat discount: the failure categories it names."""
    return tuple(sorted({str(category) for category in categories}))


def _worst_kind(row: Mapping[str, Any]) -> tuple[str, ...]:
    """The categories more than half of a comparison's reviewers named for the worst (their
    majority, as a rating row's `categories` is)."""
    reviews = [r for r in (row.get("meta") or {}).get("reviews") or [] if isinstance(r, Mapping)]
    named = [review.get("categories") or () for review in reviews]
    return kind_of(sample_agreement([None] * len(named), named).majority_categories)


def own_reason(meta: Mapping[str, Any]) -> str | None:
    selected_by = meta.get("selected_by")
    reason = selected_by.get("reason") if isinstance(selected_by, Mapping) else None
    return str(reason) if reason else None


def read_rows(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def selection_reasons(annotation: AnnotationConfig, run_ids: Collection[str]) -> dict[str, str]:
    """{sample_id: selected_by.reason} of the reviewed tasks of these runs, from their task data
    in the project."""
    from lowtide.services.clients import label_studio_client

    found: dict[str, str] = {}
    with label_studio_client(annotation) as client:
        project_id = client.find_project(annotation.project)
        if project_id is None:
            return found
        for task in client.annotated_tasks(project_id):
            data = task.get("data") or {}
            reason = own_reason(data)
            if data.get("run_id") in run_ids and data.get("sample_id") and reason:
                found[str(data["sample_id"])] = reason
    return found


def needs_reasons(rows: Iterable[Mapping[str, Any]]) -> bool:
    """Some row does not say why its sample was picked: Label Studio's tasks do."""
    return any(own_reason(row.get("meta") or {}) is None for row in rows)
