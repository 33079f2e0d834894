"""The TensorBoard backend, read back from its event files with TensorBoard's own reader."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from rl.config import LoggerConfig
from rl.tracking.backends.base import (
    ROLLOUT_COLUMNS,
    ROLLOUT_TABLE,
    RunInfo,
    Table,
    backend_factory,
)
from rl.tracking.backends.tensorboard_backend import (
    MAX_TEXT_CHARS,
    TensorBoardBackend,
    markdown_cell,
    markdown_table,
)

pytestmark = pytest.mark.unit

event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")

COLUMNS = (*ROLLOUT_COLUMNS, "reward/format")
ROWS = (
    (3, "s-0", "What is 2+2?", "4", 1.0, '{"format": 1.0}', 1.0),
    (3, "s-1", "Say | hi\nthere", "a\\b", 0.25, '{"format": 0.0}', math.nan),
)


def read_back(log_dir: Path) -> event_accumulator.EventAccumulator:
    # size_guidance 0 = keep everything (the defaults keep 1 histogram and 10 texts per tag)
    accumulator = event_accumulator.EventAccumulator(
        str(log_dir), size_guidance={"scalars": 0, "histograms": 0, "tensors": 0}
    )
    return accumulator.Reload()


def test_scalars_histograms_and_table_read_back(tmp_path: Path) -> None:
    info = RunInfo("20260101-000000", "run-a", tmp_path, tmp_path / "run-a", {})
    backend = backend_factory("tensorboard")(info, LoggerConfig())
    assert isinstance(backend, TensorBoardBackend)
    for step in range(3):
        backend.log_scalars(step, {"reward/mean": 0.5 + step, "loss": 1.0 / (step + 1)})
    backend.log_histograms(
        3, {"reward/distribution": [0.0, 0.5, 1.0, math.nan, -math.inf], "empty": [math.nan]}
    )
    backend.log_table(3, Table(ROLLOUT_TABLE, COLUMNS, ROWS))
    backend.close()
    backend.close()  # idempotent

    events = read_back(tmp_path / "tensorboard" / "run-a")
    tags = events.Tags()
    rewards = [(e.step, e.value) for e in events.Scalars("reward/mean")]
    assert rewards == [(0, 0.5), (1, 1.5), (2, 2.5)]
    assert [e.step for e in events.Scalars("loss")] == [0, 1, 2]
    assert [e.value for e in events.Scalars("loss")] == pytest.approx([1.0, 0.5, 1 / 3])

    assert tags["histograms"] == ["reward/distribution"]  # "empty" had nothing finite
    (histogram,) = events.Histograms("reward/distribution")
    assert histogram.step == 3
    value = histogram.histogram_value
    assert (value.num, value.min, value.max, value.sum) == (3, 0.0, 1.0, 1.5)

    (text,) = events.Tensors(f"{ROLLOUT_TABLE}/text_summary")
    assert text.step == 3
    markdown = text.tensor_proto.string_val[0].decode()
    assert markdown == markdown_table(Table(ROLLOUT_TABLE, COLUMNS, ROWS))
    lines = markdown.splitlines()
    assert lines[0] == "| " + " | ".join(COLUMNS) + " |"
    assert lines[2] == '| 3 | s-0 | What is 2+2? | 4 | 1.0 | {"format": 1.0} | 1.0 |'
    assert lines[3] == '| 3 | s-1 | Say \\| hi<br>there | a\\\\b | 0.25 | {"format": 0.0} | nan |'
    assert len(lines) == 4


def test_markdown_is_capped_at_whole_rows() -> None:
    row = (1, "id", "p" * 1_500, "r" * 1_500, 0.0, "{}")
    table = Table(ROLLOUT_TABLE, ROLLOUT_COLUMNS, (row,) * 200)
    markdown = markdown_table(table)
    assert len(markdown) <= MAX_TEXT_CHARS + 100
    shown = sum(1 for line in markdown.splitlines() if line.startswith("| 1 |"))
    assert 0 < shown < 200
    assert markdown.endswith(f"*{200 - shown} more rows not shown ({MAX_TEXT_CHARS} chars)*")
    assert markdown_cell("x" * 5_000).endswith("…[cut 3000 chars]")
