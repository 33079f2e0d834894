"""Writing a search's matches to a file: `.jsonl` (one JSON object per line, unknown values as
null, `reward_details` as an object) or `.parquet` (the table's own types). Written beside the
target and renamed into place, so that a failed export leaves no half file."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rl.numbers import none_if_not_finite

SUFFIXES = (".jsonl", ".parquet")


class ExportError(ValueError):
    """The file cannot be written; the message is one line."""


def check_target(path: Path) -> None:
    if path.suffix not in SUFFIXES:
        raise ExportError(f"--export {path}: the name must end in .jsonl or .parquet")
    if path.is_dir():
        raise ExportError(f"--export {path}: is a directory")
    if not path.parent.is_dir():
        raise ExportError(f"--export {path}: no directory {path.parent}")


def write(path: Path, batches: Iterable[Any]) -> int:
    """Every row of the Arrow record batches into `path`; the number of rows written."""
    check_target(path)
    partial = path.with_name(f".{path.name}.partial")
    try:
        rows = _parquet(partial, batches) if path.suffix == ".parquet" else _jsonl(partial, batches)
        os.replace(partial, path)
    except OSError as error:
        partial.unlink(missing_ok=True)
        raise ExportError(f"--export {path}: {error.strerror or error}") from None
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return rows


def _parquet(path: Path, batches: Iterable[Any]) -> int:
    import pyarrow.parquet as pq

    rows, writer = 0, None
    try:
        for batch in batches:
            if writer is None:
                writer = pq.ParquetWriter(path, batch.schema, compression="zstd")
            writer.write_batch(batch)
            rows += batch.num_rows
    finally:
        if writer is not None:
            writer.close()
    if writer is None:  # no match: an empty file that still reads back
        import pyarrow as pa

        pq.write_table(pa.table({}), path)
    return rows


def _jsonl(path: Path, batches: Iterable[Any]) -> int:
    import pyarrow as pa

    rows = 0
    with open(path, "w", encoding="utf-8") as handle:
        for batch in batches:
            maps = {field.name for field in batch.schema if pa.types.is_map(field.type)}
            for row in batch.to_pylist():
                handle.write(json.dumps(_plain(row, maps), ensure_ascii=False) + "\n")
                rows += 1
    return rows


def _plain(row: dict[str, Any], maps: set[str]) -> dict[str, Any]:
    """JSON values: a map as an object, NaN and infinities as null (JSON has none)."""
    plain = {}
    for name, value in row.items():
        if name in maps and value is not None:
            value = {key: none_if_not_finite(item) for key, item in value}
        elif isinstance(value, float):
            value = none_if_not_finite(value)
        plain[name] = value
    return plain
