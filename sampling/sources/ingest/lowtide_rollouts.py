"""Our own rollout tables: `<save_dir>/<run>/rollouts/<table>-step-<step>.jsonl`, written by the
local-files logger (rl/tracking/backends/local_files.py) on rank 0, one line per logged sample:
`step`, `sample_id`, `prompt`, `response`, `reward`, `reward_details` (a JSON object as text),
`reward/<component>` columns, `response_length`, `truncated`, `text_cut`. The per-token files
under `rollouts/tokens/` are not samples and are never read.

The texts are what the logger kept: cut at `logger.rollout_max_length` with a visible marker
(and base64 with `logger.encode_response`).
"""

from __future__ import annotations

import math
import re
from typing import Any

from rl import jsonl
from sampling.sources.ingest.rows import (
    MAX_COMPONENTS,
    BadRow,
    DumpFormat,
    DumpRow,
    as_float,
    number_field,
    step_field,
    text_field,
    valid_text,
)

NAME = "lowtide"
FILE_PATTERN = re.compile(r"^[A-Za-z0-9_]+-step-(\d+)\.jsonl$")


def parse(row: dict[str, Any], index: int, file_step: int) -> DumpRow:
    return DumpRow(
        step=step_field(row, file_step),
        index=index,
        prompt=text_field(row, "prompt"),
        response=text_field(row, "response"),
        reward=number_field(row, "reward"),
        reward_details=_details(row),
        truncated=row.get("truncated") is True,
    )


def _details(row: dict[str, Any]) -> dict[str, float]:
    raw = row.get("reward_details", "{}")
    if isinstance(raw, str):
        try:
            raw = jsonl.parse_value(raw)  # text from the dump: bounded as its line is
        except jsonl.BadLine:
            raise BadRow("'reward_details' is not a JSON object") from None
    if not isinstance(raw, dict):
        raise BadRow("'reward_details' is not a JSON object")
    if len(raw) > MAX_COMPONENTS:
        raise BadRow(f"{len(raw)} reward_details; at most {MAX_COMPONENTS} are read")
    details = {}
    for name, value in raw.items():
        if value is None:
            details[valid_text(name)] = math.nan
        elif isinstance(value, int | float) and not isinstance(value, bool):
            details[valid_text(name)] = as_float(value)
        else:
            raise BadRow(f"reward_details[{name!r}] must be a number")
    return details


FORMAT = DumpFormat(
    NAME, "jsonl", FILE_PATTERN, "rollouts", parse, "rollouts/<table>-step-{step}.jsonl"
)
