"""TRL's completion logs (`log_completions=True`, TRL 1.16 `GRPOTrainer`/`RLOOTrainer`).

At every logging step the main process writes `<output_dir>/completions/completions_{step:05d}
.parquet` with pandas: `step`, `prompt`, `completion` (text, or a conversation: a list of
`{role, content}` messages), one float column per reward function in the trainer's order (None
became NaN), the columns reward functions added with `log_extra`, and `advantage`. A file holds
the latest generation batch only, so two files in a row can hold the same batch (several steps
per generation): the follower routes a batch once.

The total reward is TRL's: the reward columns weighted by `reward_weights` (1.0 each unless
given) and summed with NaN counted as missing; a row no function scored has no total (NaN, never
selected). TRL does not write the weights anywhere, so they are an option of `lowtide ingest`;
given, their count also says how many columns after `completion` are rewards. Without them every
float column between `completion` and `advantage` is taken for a reward function.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sampling.sources.ingest.rows import (
    BadRow,
    DumpFormat,
    DumpRow,
    as_float,
    step_field,
    type_name,
)

NAME = "trl"
FILE_PATTERN = re.compile(r"^completions_(\d+)\.parquet$")
SUBDIR = "completions"
FORMAT = DumpFormat(
    NAME, "parquet", FILE_PATTERN, SUBDIR, describe="completions/completions_{step}.parquet"
)
PARQUET_MAGIC = b"PAR1"
_TEXTS = ("prompt", "completion")
# Bounds of a file someone else wrote. A completions file holds one generation batch: thousands
# of rows, some MB; a conversation is a list of messages whose content may be a list of blocks.
MAX_ROWS = 1_000_000
MAX_DATA_BYTES = 2**30  # uncompressed, of the columns read
MAX_TYPE_DEPTH = 8
BATCH_ROWS = 1024  # rows turned into Python objects at a time


class UnreadableFile(ValueError):
    """A parquet file that cannot be read (yet): still being written, or broken."""


def looks_complete(path: Path) -> bool:
    """A parquet file begins and ends with its magic bytes; one still being written does not
    end with them yet."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(4)
            handle.seek(-4, 2)
            return head == PARQUET_MAGIC and handle.read(4) == PARQUET_MAGIC
    except OSError:
        return False


def read_rows(
    path: Path, file_step: int, reward_weights: Sequence[float] | None
) -> list[DumpRow | BadRow]:
    """Every row of the file, as a sample or as the reason it is not one (by position). Only
    the columns a sample needs are read, BATCH_ROWS rows at a time, and a file past the bounds
    (rows, bytes, nesting: its footer tells before anything is read) is UnreadableFile."""
    import pyarrow.parquet as pq  # only `lowtide ingest --format trl` pays for pyarrow

    try:
        parquet = pq.ParquetFile(path)
        schema = parquet.schema_arrow
        columns = schema.names
        for needed in ("prompt", "completion"):
            if needed not in columns:
                names = ", ".join(repr(name) for name in columns[:20])
                raise UnreadableFile(f"no {needed!r} column (columns: {names})")
        rewards = reward_columns(schema, reward_weights)
        read = [name for name in columns if name in ("step", "advantage", *_TEXTS, *rewards)]
        _check_bounds(parquet, read)
        weights = list(reward_weights) if reward_weights is not None else [1.0] * len(rewards)
        rows: list[DumpRow | BadRow] = []
        for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=read):
            for row in batch.to_pylist():
                try:
                    rows.append(_row(row, len(rows), file_step, rewards, weights))
                except BadRow as problem:
                    rows.append(problem)
        return rows
    except UnreadableFile:
        raise
    except Exception as error:  # pyarrow raises several kinds for a cut or broken file
        raise UnreadableFile(
            f"cannot read it as parquet ({type(error).__name__}: {_short(error)})"
        ) from None


def _check_bounds(parquet: Any, columns: Sequence[str]) -> None:
    """UnreadableFile for a file larger or deeper than any completions file, from its footer."""
    metadata = parquet.metadata
    if metadata.num_rows > MAX_ROWS:
        raise UnreadableFile(f"{metadata.num_rows} rows; at most {MAX_ROWS} are read")
    wanted = set(columns)
    size = 0
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        for index in range(row_group.num_columns):
            chunk = row_group.column(index)
            if chunk.path_in_schema.split(".")[0] in wanted:
                size += chunk.total_uncompressed_size
    if size > MAX_DATA_BYTES:
        raise UnreadableFile(f"{size} bytes of data to read; at most {MAX_DATA_BYTES} are read")
    for name in columns:
        depth = _type_depth(parquet.schema_arrow.field(name).type)
        if depth > MAX_TYPE_DEPTH:
            raise UnreadableFile(f"column {name!r} nests {depth} levels; at most {MAX_TYPE_DEPTH}")


def _type_depth(kind: Any) -> int:
    """How deep lists and structs nest in an arrow type (a plain value is 0), without recursion."""
    depth, level = 0, [kind]
    while level:
        nested = [child.field(i).type for child in level for i in range(child.num_fields)]
        if not nested:
            return depth
        depth, level = depth + 1, nested
    return depth


def _short(error: Exception) -> str:
    text = " ".join(str(error).split())
    return text if len(text) <= 200 else text[:200] + "…"


def reward_columns(schema: Any, reward_weights: Sequence[float] | None) -> list[str]:
    import pyarrow as pa

    names = list(schema.names)
    start = names.index("completion") + 1
    end = names.index("advantage") if "advantage" in names else len(names)
    between = [name for name in names[start:end] if name != "step"]
    if reward_weights is None:
        return [name for name in between if pa.types.is_floating(schema.field(name).type)]
    if len(reward_weights) > len(between):
        raise UnreadableFile(
            f"{len(reward_weights)} reward weights given, but only {len(between)} columns "
            f"follow 'completion': {', '.join(between) or 'none'}"
        )
    chosen = between[: len(reward_weights)]
    for name in chosen:
        kind = schema.field(name).type
        if not (pa.types.is_floating(kind) or pa.types.is_integer(kind)):
            raise UnreadableFile(f"column {name!r} holds {kind}, not reward values")
    return chosen


def total_reward(values: Sequence[float], weights: Sequence[float]) -> float:
    """TRL's `(rewards * weights).nansum()`, except that a row no function scored has no total."""
    pairs = zip(values, weights, strict=True)
    present = [value * weight for value, weight in pairs if not math.isnan(value)]
    return math.fsum(present) if present else math.nan


def as_text(value: Any, name: str) -> str:
    """A plain text, or a conversation as `role: content` paragraphs (a completion's assistant
    messages: their contents only)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple) and all(isinstance(m, Mapping) for m in value):
        parts = []
        for message in value:
            content = _content_text(message.get("content"))
            role = message.get("role")
            only_assistant = name == "completion" and role == "assistant"
            parts.append(content if only_assistant or not role else f"{role}: {content}")
        return "\n\n".join(parts)
    raise BadRow(f"{name!r} must be a text or a list of messages, got {type_name(value)}")


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list | tuple):  # multimodal blocks: the text ones
        texts = [b.get("text", "") for b in content if isinstance(b, Mapping)]
        return "".join(text for text in texts if isinstance(text, str))
    return "" if content is None else str(content)


def _row(
    row: dict[str, Any], index: int, file_step: int, rewards: list[str], weights: list[float]
) -> DumpRow:
    values = [_float(row.get(name), name) for name in rewards]
    return DumpRow(
        step=step_field(row, file_step),
        index=index,
        prompt=as_text(row.get("prompt"), "prompt"),
        response=as_text(row.get("completion"), "completion"),
        reward=total_reward(values, weights),
        reward_details=dict(zip(rewards, values, strict=True)),
        advantage=_float(row.get("advantage")),
    )


def _float(value: Any, name: str = "advantage") -> float:
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadRow(f"{name!r} must be a number, got {type_name(value)}")
    return as_float(value)
