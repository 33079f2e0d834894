"""A search's matches to review: through the routing core's `route_chosen`, each sample once per
queue, however often the search is run.

The router redacts, dedups and hands the records to the producer (Redis, or its disk spool when
Redis is down) with `selected_by.reason: search` and the query as `selected_by.about`. Which
sample ids went to a queue is written down beside the search table (one file per queue and
Redis), once the producer holds them durably: a later search, with this query or another one,
leaves them out. A search killed while it hands matches over has written nothing down, and the
next one hands the same records over again in the same order; the worker imports a sample id
once, so review still sees each sample once.
"""

from __future__ import annotations

import itertools
import math
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rl.private_files import private_opener
from sampling.batch import BatchInfo, PlainSample
from sampling.routing import Router
from sampling.sources import group_id_of
from sampling.transport.queue_files import queue_file

REASON = "search"
HAND_OVER_TIMEOUT_S = 120.0
# The columns a record is made from, in the order `matches` reads them.
COLUMNS = ("sample_id", "step", "index", "prompt", "response", "reward", "reward_details",
           "advantage", "truncated")  # fmt: skip


class RouteError(RuntimeError):
    """The matches could not all be handed over; the message is one line that says what to do."""


@dataclass
class Routed:
    matched: int = 0
    earlier: int = 0  # routed to this queue by an earlier search: left out
    submitted: int = 0  # handed to the producer
    deduped: int = 0  # the router had seen them in this run
    unbuilt: int = 0  # could not be made records (redaction failed, invalid): not sent


class Ledger:
    """The sample ids routed to one queue from this table: one per line, appended and fsynced
    once the producer holds them."""

    def __init__(self, directory: Path, queue_name: str, redis_url: str) -> None:
        self.path = queue_file(directory, "routed", ".ids", queue_name, redis_url)

    def load(self) -> set[str]:
        try:
            text = self.path.read_text(encoding="ascii")
        except FileNotFoundError:
            return set()
        lines = text.split("\n")
        return set(lines[:-1])  # a last line without its newline was cut by a kill: not counted

    def add(self, sample_ids: Iterable[str]) -> None:
        text = "".join(f"{sample_id}\n" for sample_id in sample_ids)
        if not text:
            return
        with open(self.path, "a", encoding="ascii", opener=private_opener) as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())


def route_matches(
    router: Router,
    batches: Iterable[Any],  # Arrow record batches of COLUMNS, in step order
    ledger: Ledger,
    *,
    run_id: str,
    query: str,
    model_name: str = "unknown",
) -> Routed:
    """Route every match not routed to this queue before, step by step, and close the router
    (which flushes its producer). RouteError when the producer could not keep them all."""
    done = ledger.load()
    routed = Routed()
    producer = router.producer
    handed: list[str] = []
    try:
        for step, rows in itertools.groupby(_rows(batches), key=lambda row: row["step"]):
            samples, ids = [], []
            for row in rows:
                routed.matched += 1
                if row["sample_id"] in done:
                    routed.earlier += 1
                    continue
                samples.append(_sample(row))
                ids.append(row["sample_id"])
            if not samples:
                continue
            info = BatchInfo(run_id, step, 0, model_name)  # rank 0, as ingest routes dump rows
            counts = router.route_chosen(samples, info, reason=REASON, about=query)
            routed.submitted += counts.submitted
            routed.deduped += counts.deduped
            handed += ids
            _wait_for_room(producer, routed.submitted)
    finally:
        router.close(deadline_s=HAND_OVER_TIMEOUT_S)
    stats = producer.stats
    routed.unbuilt = stats.unbuilt
    if stats.dropped:
        errors = "; ".join(stats.errors) or "the spool cannot be written"
        raise RouteError(
            f"{stats.dropped} records could not be queued or spooled ({errors}); nothing was "
            "written down as routed: run the search with --route again"
        )
    ledger.add(handed)
    return routed


def _wait_for_room(producer: Any, submitted: int) -> None:
    """Keep what the producer holds in memory under half its buffer: past it, records spill to
    the spool (kept, but queued only at the next replay)."""
    room = getattr(producer, "buffer_max", 10_000) // 2
    deadline = time.monotonic() + HAND_OVER_TIMEOUT_S
    while submitted - _taken(producer.stats) > room and time.monotonic() < deadline:
        time.sleep(0.01)


def _taken(stats: Any) -> int:
    """Records the producer is done with: queued, spooled, lost, or never made."""
    return stats.enqueued - stats.replayed + stats.spooled + stats.dropped + stats.unbuilt


def _rows(batches: Iterable[Any]) -> Iterator[dict[str, Any]]:
    for batch in batches:
        yield from batch.to_pylist()


def _sample(row: dict[str, Any]) -> PlainSample:
    details = dict(row["reward_details"] or [])
    return PlainSample(
        prompt=row["prompt"],
        response=row["response"],
        reward=_number(row["reward"]),
        reward_details=details,
        group_id=group_id_of(row["prompt"]),
        index=row["index"],
        advantage=_number(row["advantage"]),
        truncated=bool(row["truncated"]),
    )


def _number(value: float | None) -> float:
    return math.nan if value is None else float(value)
