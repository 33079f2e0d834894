"""A user's own OpenRLHF reward function (`reward_func(queries, prompts, labels)`), as in
OpenRLHF's examples: tensors in the answer. It raises for a prompt that asks it to, as a buggy
reward function would. `score` is shared with the test reward server."""

from __future__ import annotations

from typing import Any

RAISE_MARK = "RAISE"  # a prompt with this makes reward_func raise
FAIL_MARK = "FAIL"  # a prompt with this makes the test reward server answer 500


def score(query: str, prompt: str, label: str) -> tuple[float, float]:
    """(reward, length): 0.9 when the response names the label, else 0.1."""
    response = query[len(prompt) :] if query.startswith(prompt) else query
    return (0.9 if label and label in response else 0.1), float(len(response))


def reward_func(queries: list[str], prompts: list[str], labels: list[str]) -> dict[str, Any]:
    import torch  # OpenRLHF's environment has it; the examples return tensors

    if any(RAISE_MARK in prompt for prompt in prompts):
        raise ValueError("reward_func: cannot score this prompt")
    scored = [score(q, p, str(label)) for q, p, label in zip(queries, prompts, labels, strict=True)]
    rewards = torch.tensor([reward for reward, _ in scored])
    return {
        "rewards": rewards,
        "scores": rewards,
        "extra_logs": {"length": torch.tensor([length for _, length in scored])},
    }
