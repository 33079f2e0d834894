"""The verl adapter tests' data and `compute_score` (pure Python: verl imports it through
`reward.custom_reward_function.path`, and the tests import it to know the expected scores)."""

from __future__ import annotations

from typing import Any

# prompt, ground truth, four responses: scores spread around the tests' threshold (0.5)
GROUPS = [
    ("Name a color.", "blue sky", ["blue sky", "the sky is blue and wide today", "green", "red"]),
    ("Name an animal.", "a cat", ["a cat", "cat", "a dog is a good animal friend", "fish"]),
    ("What do you drink?", "cold water", ["cold water", "water", "hot tea", "I drink water cold"]),
    ("Say hello.", "hello there", ["hello there", "hello", "hi", "good morning to you all"]),
]


def compute_score(
    data_source: str, solution_str: str, ground_truth: str, extra_info: Any = None, **_: Any
) -> dict[str, Any]:
    """The share of the ground truth's words in the answer, a brevity bonus, and a text field
    (verl keeps every key as reward_extra_info; only numbers are reward components)."""
    if ground_truth == "raise":
        raise ValueError("the reward function failed on purpose")
    words = ground_truth.split()
    answer = solution_str.split()
    overlap = sum(word in answer for word in words) / len(words)
    brevity = 1.0 if len(answer) <= 3 else 0.0
    return {
        "score": 0.8 * overlap + 0.2 * brevity,
        "overlap": overlap,
        "brevity": brevity,
        "first_word": answer[0] if answer else "",
    }
