"""Comparison reviews out as reward-model data: one row per comparison task, and its pairs.

A comparison row (`annotations.comparisons.jsonl`) keeps the prompt, the responses as shown
(label, sample id, text) and every reviewer's verdict (`meta.reviews`: best, worst, categories
of the worst, better response, note). Its preference rows are the orders the verdicts give
(annotation/comparison.py: best over each other response, each other over the worst), with
agreement across reviewers as single reviews have it: an order counts when at least
`min_category_share` of the reviewers who ordered that pair took its side (`preferences: all`:
when more took it than the other), and not at all when fewer than `min_reviewers` gave a verdict;
a pair the reviewers dispute gives no row. `meta.agreement`: the mean, over the pairs anyone
ordered, of the share of their voters on the majority side. A better response a reviewer wrote
is preferred over the response they picked as the best (`chosen_written` true on its row). Each
preference row's `meta.agreement` is the share behind it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from annotation.comparison import ComparisonError, Verdict, comparison_pairs
from annotation.config import AgreementConfig
from annotation.export_rows import ComparisonRow, PreferenceRow, row_meta, was_blind
from annotation.review_results import ResultValues


def comparison_review(values: ResultValues) -> dict[str, Any]:
    """The comparison part of one reviewer's review (beside who and when)."""
    return {
        "best": values.best,
        "worst": values.worst,
        "categories": list(values.categories),
        "better_response": values.better,
        "note": values.note,
    }


def comparison_row(
    task: Mapping[str, Any], reviews: Sequence[dict[str, Any]], settings: AgreementConfig
) -> ComparisonRow | None:
    """The row of one comparison task from its reviewers' latest reviews (None: no review)."""
    data = task.get("data") or {}
    shown = [m for m in data.get("compare") or [] if isinstance(m, Mapping)]
    if not reviews or not data.get("sample_id") or len(shown) < 2:
        return None
    responses = [
        {"label": str(m.get("label")), "sample_id": str(m.get("sample_id")),
         "response": str(m.get("response", "")), "reward": m.get("reward")}
        for m in shown
    ]  # fmt: skip
    latest = reviews[-1]
    _, disputed, shares = _decided(_orders(responses, reviews), settings)
    return {
        "prompt": str(data.get("prompt", "")),
        "responses": responses,
        "sample_id": str(data["sample_id"]),
        "meta": {
            "run_id": data.get("run_id"),
            "step": data.get("step"),
            "task_id": task.get("id"),
            "selected_by": data.get("selected_by"),
            "annotation_id": latest.get("annotation_id"),
            "annotator_id": latest.get("reviewer"),
            "annotated_at": latest.get("annotated_at"),
            "reviewers": len(reviews),
            "verdicts": sum(1 for review in reviews if _verdict_pairs(responses, review)),
            "agreed": not disputed,
            "agreement": round(sum(shares) / len(shares), 4) if shares else 1.0,
            "disputed": [list(pair) for pair in disputed],
            "reviews": list(reviews),
            "deleted_in_label_studio": False,
            "blind": was_blind(data),
        },
    }


def comparison_preferences(
    row: Mapping[str, Any], settings: AgreementConfig | None = None
) -> list[PreferenceRow]:
    """The preference rows of one comparison row (module docstring), in a stable order."""
    settings = settings or AgreementConfig()
    text = {r["sample_id"]: r["response"] for r in row["responses"]}
    kept = _kept_orders(row, settings)
    rows = [_preference(row, text[a], text[b], share, False) for (a, b), share in kept]
    if row["meta"].get("verdicts", 0) >= settings.min_reviewers:
        for better, best in _better_responses(row["responses"], row["meta"].get("reviews") or []):
            rows.append(_preference(row, better, text[best], 1.0, True))
    return rows


def agreed_orders(
    row: Mapping[str, Any], settings: AgreementConfig | None = None
) -> list[tuple[str, str]]:
    """The (preferred, other) orders of a comparison row that its reviewers agree on, by
    sample id (what its preference rows say, without the written better responses)."""
    return [order for order, _ in _kept_orders(row, settings or AgreementConfig())]


def _kept_orders(
    row: Mapping[str, Any], settings: AgreementConfig
) -> list[tuple[tuple[str, str], float]]:
    """The orders a comparison row's reviewers agree on, with the share behind each, sorted;
    none when fewer than `min_reviewers` gave a verdict."""
    meta = row["meta"]
    if meta.get("verdicts", 0) < settings.min_reviewers:
        return []
    kept, _, _ = _decided(_orders(row["responses"], meta.get("reviews") or []), settings)
    return sorted(kept.values())


def _orders(
    responses: Sequence[Mapping[str, str]], reviews: Sequence[Mapping[str, Any]]
) -> Counter[tuple[str, str]]:
    """How many reviewers gave each (preferred, other) order, by sample id."""
    votes: Counter[tuple[str, str]] = Counter()
    for review in reviews:
        votes.update(_verdict_pairs(responses, review))
    return votes


def _verdict_pairs(
    responses: Sequence[Mapping[str, str]], review: Mapping[str, Any]
) -> list[tuple[str, str]]:
    """The orders one review gives; none for a verdict that names no shown response."""
    best, worst = review.get("best"), review.get("worst")
    if not best or not worst:
        return []
    try:  # the task's labels are A, B, ... in order (annotation/compare_form.py)
        return comparison_pairs([r["sample_id"] for r in responses], Verdict(best, worst))
    except ComparisonError:
        return []


def _decided(
    votes: Counter[tuple[str, str]], settings: AgreementConfig
) -> tuple[dict[frozenset[str], tuple[tuple[str, str], float]], list[tuple[str, str]], list[float]]:
    """Per pair of responses anyone ordered: the order kept with the share of its voters, the
    pairs the reviewers dispute, and each pair's share on the side most took."""
    kept: dict[frozenset[str], tuple[tuple[str, str], float]] = {}
    disputed: list[tuple[str, str]] = []
    shares: list[float] = []
    for pair in sorted({frozenset(order) for order in votes}, key=sorted):
        a, b = sorted(pair)
        for_a, for_b = votes[a, b], votes[b, a]
        winner, share = ((a, b), for_a) if for_a >= for_b else ((b, a), for_b)
        share /= for_a + for_b
        shares.append(share)
        wins = (
            share > 0.5 if settings.preferences == "all" else share >= settings.min_category_share
        )
        if wins:
            kept[pair] = (winner, share)
        if for_a and for_b:
            disputed.append((a, b))
    return kept, disputed, shares


def _better_responses(
    responses: Sequence[Mapping[str, str]], reviews: Sequence[Mapping[str, Any]]
) -> list[tuple[str, str]]:
    """(better response, the sample id its writer picked as the best: the form asks for one
    better than the best), each text once."""
    shown = {r["response"].strip() for r in responses}
    found: dict[str, str] = {}
    for review in reviews:
        better = (review.get("better_response") or "").strip()
        pairs = _verdict_pairs(responses, review)
        if better and better not in shown and pairs and better not in found:
            found[better] = pairs[0][0]  # the first order is the best's
    return list(found.items())


def _preference(
    row: Mapping[str, Any], chosen: str, rejected: str, agreement: float, written: bool
) -> PreferenceRow:
    meta = row["meta"]
    return {
        "prompt": row["prompt"],
        "chosen": chosen,
        "rejected": rejected,
        "chosen_written": written,
        "sample_id": row["sample_id"],
        # The meta of a single review's preference (the same keys), so both load as one dataset.
        "meta": row_meta(
            run_id=meta.get("run_id"),
            step=meta.get("step"),
            task_id=meta.get("task_id"),
            selected_by=meta.get("selected_by"),
            annotation_id=meta.get("annotation_id"),
            annotator_id=meta.get("annotator_id"),
            annotated_at=meta.get("annotated_at"),
            reviewers=meta.get("verdicts"),
            agreed=True,
            agreement=round(agreement, 4),
            blind=meta.get("blind"),
        ),
    }
