"""The settings of type `reward_model`, checked without torch: a config check never loads a model.

Params: `batch_size` (32), `padding_side` (the tokenizer's), `max_length` (the model's window),
`dtype` (auto, float32, bfloat16, float16), `outlier_reference` (0: off; N: the first N samples
scored are the reference of the Mahalanobis outlier score, `rl.rewards.representation`),
`outlier_reference_file` (a JSONL file: read as the reference where it exists, else written
with the first N samples once they are: `rl.rewards.outlier_reference`), `previous` (another
reward model's directory, the one a loop started from: each sample is scored by it too).
"""

from __future__ import annotations

from pathlib import Path

from rl.config import RewardSpec
from rl.rewards.types import RewardError
from rl.suggest import did_you_mean

PARAMS = (
    "batch_size", "padding_side", "max_length", "dtype", "outlier_reference",
    "outlier_reference_file", "previous",
)  # fmt: skip
DTYPES = ("auto", "float32", "bfloat16", "float16")
PREVIOUS = "previous"  # the extra (reward_details `<name>/previous`): the `previous` model's score
# Extras of a model directory that holds them (rl.rewards.failure_probe, rl.rewards.novelty),
# named here so the routing core reads `<name>/failure` and `<name>/novelty` without torch.
FAILURE = "failure"
NOVELTY = "novelty"
DEFAULT_BATCH_SIZE = 32


def check_model_spec(spec: RewardSpec) -> None:
    """RewardError for a spec that `RewardModel.from_spec` would refuse before loading."""
    if not spec.path:
        raise RewardError("reward_model needs `path`: the reward model's directory")
    unknown = [key for key in spec.params if key not in PARAMS]
    if unknown:
        close = did_you_mean(unknown[0], PARAMS, capital=True)
        hint = f" {close}" if close else ""
        raise RewardError(
            f"reward_model: unknown params {unknown}.{hint} Known params: {', '.join(PARAMS)}"
        )
    params = spec.params
    check_settings(
        Path(spec.path),
        batch_size=params.get("batch_size", DEFAULT_BATCH_SIZE),
        padding_side=params.get("padding_side"),
        max_length=params.get("max_length"),
        dtype=params.get("dtype", "auto"),
    )
    reference = params.get("outlier_reference", 0)
    if (
        isinstance(reference, bool)
        or not isinstance(reference, int)
        or reference == 1
        or reference < 0
    ):
        raise RewardError(
            f"reward_model: outlier_reference must be 0 (off) or a number of samples >= 2, "
            f"got {reference!r}"
        )
    reference_file = params.get("outlier_reference_file")
    if reference_file is not None and (not isinstance(reference_file, str) or not reference):
        raise RewardError(
            "reward_model: outlier_reference_file is a path, and needs outlier_reference: N "
            f"(the samples that fill it), got {reference_file!r} with outlier_reference "
            f"{reference!r}"
        )
    previous = params.get("previous")
    if previous is not None:
        if not isinstance(previous, str):
            raise RewardError(
                f"reward_model: previous is a reward model's directory, got {previous!r}"
            )
        check_model_dir(Path(previous), "previous")


def check_model_dir(path: Path, name: str = "path") -> None:
    """RewardError unless `path` is a directory (what save_pretrained writes)."""
    if not path.is_dir():
        problem = "is a file" if path.exists() else "does not exist"
        raise RewardError(
            f"reward_model: {name} {str(path)!r} {problem}; give the model directory "
            "(save_pretrained output)"
        )


def check_settings(
    path: Path, batch_size: object, padding_side: object, max_length: object, dtype: object
) -> None:
    check_model_dir(path)
    for name, value in (("batch_size", batch_size), ("max_length", max_length)):
        if value is None and name == "max_length":
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise RewardError(f"reward_model: {name} must be a positive integer, got {value!r}")
    if padding_side not in (None, "left", "right"):
        raise RewardError(
            f"reward_model: padding_side must be 'left' or 'right', got {padding_side!r}"
        )
    if dtype not in DTYPES:
        raise RewardError(f"reward_model: dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
