"""The outlier score's reference kept as texts (`outlier_reference_file`), so that every run
that names the file measures distance from the same starting responses: the first run fills
the reference from its first samples and writes their prompts and responses there; a later
run (the next round of `lowtide loop`, whose policy has moved on) reads them and fits its own
reference from them with its own model. The file holds rollouts as they were, as the run's
local rollout files do: it stays beside the run's outputs."""

from __future__ import annotations

import json
from pathlib import Path

from rl.atomic_file import write_text_atomically
from rl.jsonl import read_jsonl
from rl.rewards.types import RewardError

Texts = list[tuple[str, str]]  # (prompt, response)


def read_reference(path: Path) -> Texts:
    """The texts of a reference file; RewardError (one line) for a file that is not one."""

    def broken(number: int, problem: str) -> None:
        raise RewardError(f"reward_model: outlier_reference_file {path}:{number}: {problem}")

    texts: Texts = []
    try:
        for number, row in read_jsonl(path, broken):
            prompt, response = row.get("prompt"), row.get("response")
            if not isinstance(prompt, str) or not isinstance(response, str):
                broken(number, "needs a string `prompt` and `response`")
            texts.append((prompt, response))
    except OSError as error:
        raise RewardError(
            f"reward_model: cannot read outlier_reference_file {path}: {error.strerror}"
        ) from None
    if len(texts) < 2:
        raise RewardError(
            f"reward_model: outlier_reference_file {path} holds {len(texts)} sample(s); a "
            "reference needs at least 2 (remove the file to fill it again from a run)"
        )
    return texts


def write_reference(path: Path, texts: Texts) -> None:
    lines = (json.dumps({"prompt": p, "response": r}, ensure_ascii=False) for p, r in texts)
    try:
        write_text_atomically(path, "".join(f"{line}\n" for line in lines))
    except OSError as error:
        raise RewardError(
            f"reward_model: cannot write outlier_reference_file {path}: {error.strerror}"
        ) from None
