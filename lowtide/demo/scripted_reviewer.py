"""A scripted reviewer for `lowtide demo --simulate-review` and `lowtide loop --reviewer
lowtide.demo.scripted_reviewer:review_task`: it does what a person does in Label Studio, with a
rule that matches the quickstart task (answer with a cool colour, in a sentence that ends with a
period). It annotates under its own Label Studio account (lowtide.loop.stages.review_run).

- A response naming blue or green is fine: rating 4, or 5 with the period.
- Anything else is off-topic: rating 1 (2 if it at least names another colour), category
  `off-topic` (and `format` without the final period), and a better response, "Blue." or
  "Green.", picked by a hash of the sample so the demo is repeatable.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from lowtide.loop.reviewer import Review

COOL = ("blue", "green")
OTHER_COLOURS = ("red", "yellow", "orange", "purple", "pink", "black", "white", "brown", "grey")


def review_task(data: Mapping[str, Any]) -> Review:
    """The Reviewer protocol (lowtide.loop.reviewer): a task's data in, a review out."""
    return review(str(data.get("sample_id")), str(data.get("response", "")))


def review(sample_id: str, response: str) -> Review:
    words = set(re.findall(r"[a-z]+", response.lower()))
    ends_well = response.strip().endswith(".")
    if words & set(COOL):
        return Review(5 if ends_well else 4, () if ends_well else ("format",), None)
    categories = ("off-topic",) + (() if ends_well else ("format",))
    colour = COOL[int(hashlib.sha256(sample_id.encode()).hexdigest(), 16) % 2]
    return Review(2 if words & set(OTHER_COLOURS) else 1, categories, f"{colour.capitalize()}.")
