"""Reviewer functions for `lowtide loop` tests, named by dotted path like a user's."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from lowtide.demo.scripted_reviewer import review_task
from lowtide.loop.reviewer import Review


def _bucket(data: Mapping[str, Any]) -> int:
    return int(hashlib.sha256(str(data.get("sample_id")).encode()).hexdigest(), 16) % 6


def flaky(data: Mapping[str, Any]) -> Review | list | str:
    """The scripted reviewer, except that it raises for one task in six and returns nonsense
    for another one in six. Held-out responses (no run_id: not a task) it always rates, so the
    policy score never depends on which of them it would have failed."""
    bucket = _bucket(data) if "run_id" in data else None
    if bucket == 0:
        raise RuntimeError("reviewer crashed on this one")
    if bucket == 1:
        return Review(rating=9)
    return review_task(data)


def by_sample(data: Mapping[str, Any]) -> Any:
    """What the sample id asks for: the bad-input test makes tasks named after the case."""
    sample_id = str(data.get("sample_id"))
    if sample_id.startswith("raises"):
        raise ValueError("no opinion")
    if sample_id.startswith("string"):
        return "looks fine"
    if sample_id.startswith("badcategory"):
        return Review(rating=2, categories=("boring",))
    if sample_id.startswith("result"):
        return [{"from_name": "quality", "to_name": "response", "type": "rating",
                 "value": {"rating": 4}}]  # fmt: skip
    return Review(rating=1, categories=("off-topic",), better="Blue.")
