"""A scripted reviewer for `lowtide demo --simulate-review`: it does through the API what a
person does in Label Studio, with a rule that matches the quickstart task (answer with a cool
colour, in a sentence that ends with a period).

- A response naming blue or green is fine: rating 4, or 5 with the period.
- Anything else is off-topic: rating 1 (2 if it at least names another colour), category
  `off-topic` (and `format` without the final period), and a better response, "Blue." or
  "Green.", picked by a hash of the sample so the demo is repeatable.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from annotation.labelstudio import LabelStudioClient

COOL = ("blue", "green")
OTHER_COLOURS = ("red", "yellow", "orange", "purple", "pink", "black", "white", "brown", "grey")


@dataclass(frozen=True)
class Review:
    rating: int
    categories: list[str]
    better: str | None


def review(sample_id: str, response: str) -> Review:
    words = set(re.findall(r"[a-z]+", response.lower()))
    ends_well = response.strip().endswith(".")
    if words & set(COOL):
        return Review(5 if ends_well else 4, [] if ends_well else ["format"], None)
    categories = ["off-topic"] + ([] if ends_well else ["format"])
    colour = COOL[int(hashlib.sha256(sample_id.encode()).hexdigest(), 16) % 2]
    return Review(2 if words & set(OTHER_COLOURS) else 1, categories, f"{colour.capitalize()}.")


def result_of(verdict: Review) -> list[dict]:
    """The annotation result, in the shape of configs/label_studio/review.xml."""
    result = [{"from_name": "quality", "to_name": "response", "type": "rating",
               "value": {"rating": verdict.rating}}]  # fmt: skip
    if verdict.categories:
        result.append({"from_name": "failure", "to_name": "response", "type": "choices",
                       "value": {"choices": verdict.categories}})  # fmt: skip
    if verdict.better:
        result.append({"from_name": "better_response", "to_name": "response",
                       "type": "textarea", "value": {"text": [verdict.better]}})  # fmt: skip
    return result


def review_run(client: LabelStudioClient, project_id: int, run_id: str) -> dict[int, int]:
    """Review every unreviewed task of one training run; {rating: count}."""
    ratings: dict[int, int] = {}
    for task in client.unreviewed_tasks(project_id, run_id):
        data = task["data"]
        verdict = review(str(data.get("sample_id")), str(data.get("response", "")))
        client.create_annotation(task["id"], result_of(verdict))
        ratings[verdict.rating] = ratings.get(verdict.rating, 0) + 1
    return ratings
