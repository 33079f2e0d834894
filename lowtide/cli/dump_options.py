"""What the commands that read dump files share: the `--format` names and `--reward-weights`."""

from __future__ import annotations

from enum import Enum

from lowtide.errors import UsageError


class DumpFormatName(str, Enum):
    verl = "verl"
    trl = "trl"
    lowtide = "lowtide"
    auto = "auto"


def parse_reward_weights(
    text: str | None, dump_format: DumpFormatName = DumpFormatName.auto
) -> list[float] | None:
    """`--reward-weights 1.0,0.5` as numbers; None when not given. Only TRL dumps have several
    reward columns: a format named otherwise refuses them."""
    if text is None:
        return None
    if dump_format not in (DumpFormatName.trl, DumpFormatName.auto):
        raise UsageError("--reward-weights: only TRL dumps have several reward columns")
    try:
        return [float(part) for part in text.split(",")]
    except ValueError:
        raise UsageError(f"--reward-weights {text}: expected numbers, e.g. 1.0,0.5") from None
