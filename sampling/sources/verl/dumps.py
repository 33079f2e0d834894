"""verl's rollout dumps (`trainer.rollout_data_dir`, verl 0.9.1).

`RayPPOTrainer._write_generations` writes `{dir}/{global_steps}.jsonl` in one pass, one line per
sample: `input` and `output` (the decoded prompt and response), `gts` (the ground truth),
`score` (the sequence's summed token-level score: the reward verl trained on), `step`, and every
reward-extra-info key that has one value per sample (the dict a `compute_score` returned besides
`score`, e.g. `acc`, `pred`; `request_id` where the rollout had one). Non-JSON values were
written with `str()`; NaN as `NaN`. Numbers among the extra keys are the reward components.
"""

from __future__ import annotations

import re
from typing import Any

from sampling.sources.ingest.rows import (
    DumpFormat,
    DumpRow,
    number_field,
    numeric_components,
    step_field,
    text_field,
)

NAME = "verl"
FILE_PATTERN = re.compile(r"^(\d+)\.jsonl$")
NOT_COMPONENTS = frozenset({"input", "output", "gts", "score", "step"})


def parse(row: dict[str, Any], index: int, file_step: int) -> DumpRow:
    return DumpRow(
        step=step_field(row, file_step),
        index=index,
        prompt=text_field(row, "input"),
        response=text_field(row, "output"),
        reward=number_field(row, "score"),
        reward_details=numeric_components(row, NOT_COMPONENTS),
    )


FORMAT = DumpFormat(NAME, "jsonl", FILE_PATTERN, None, parse, "{step}.jsonl")
