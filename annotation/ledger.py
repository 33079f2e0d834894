"""What the workers keep in Redis besides RQ's own keys: which samples are in Label Studio, the
counters behind `lowtide queue status` and /metrics, and the quarantine of unreadable records.

Keys (all under `lowtide:annotation:`):
- `imported:<project ref>`: a set of sample ids with a task in that project. Written only after
  Label Studio acknowledged the import, so a crash in between is closed by a lookup on retry.
- `<queue>:stats`: a hash of counters (see `COUNTERS`) and import-latency histogram buckets.
- `<queue>:quarantine`: a capped list of `{reason, job_id, index, record}` JSON entries.
- `<queue>:uncertain_imports`: import requests whose outcome is unknown, swept for their late
  copies (annotation/late_imports.py).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import redis

PREFIX = "lowtide:annotation"
QUARANTINE_MAX = 10_000  # newest entries kept; older ones are trimmed
QUARANTINED_RECORD_CHARS = 4_000  # of each quarantined record's JSON, enough to see what it was
# Each counter of the stats hash, with the help text /metrics and `queue status` show.
COUNTERS = {
    "batches": "Batches imported to the end",
    "received": "Records received in imported batches",
    "imported": "Tasks created in Label Studio",
    "duplicates": "Records skipped because their sample already had a task",
    "reconciled": "Records found in Label Studio on a retry and marked imported",
    "quarantined": "Records that failed validation",
    "suggested": "Tasks imported with a machine suggestion",
    "suggestions_rejected": "Tasks imported without a suggestion: the judge failed for them",
    "rejected_jobs": "Jobs refused before running (unreadable, over the size bound, another "
    "function or a callback, or their workers died too often)",
    "retries": "Batch attempts that failed and were scheduled again",
    "failures": "Batches that gave up and went to the failed registry",
    "coalesced_jobs": "Queued jobs a paced import took into its own request",
    "late_copies_removed": "Unreviewed second tasks of a sample deleted: an import that timed "
    "out landed after its retry had imported the sample again",
}
# Upper bounds, in seconds, of the import-latency histogram (one Label Studio import request).
LATENCY_BUCKETS_S = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


def project_ref(label_studio_url: str, project_id: int, created_at: str = "") -> str:
    """Project ids are only unique per server, and a server whose data was wiped starts again
    at 1: key the set by the URL, the id and the project's creation time."""
    server = hashlib.sha256(label_studio_url.rstrip("/").encode()).hexdigest()[:12]
    born = hashlib.sha256(created_at.encode()).hexdigest()[:8]
    return f"{server}:{project_id}:{born}"


def imported_key(label_studio_url: str, project_id: int, created_at: str = "") -> str:
    return f"{PREFIX}:imported:{project_ref(label_studio_url, project_id, created_at)}"


def stats_key(queue_name: str) -> str:
    return f"{PREFIX}:{queue_name}:stats"


def quarantine_key(queue_name: str) -> str:
    return f"{PREFIX}:{queue_name}:quarantine"


class ImportedSet:
    """The sample ids that have a task in one project: an exact set, and beside it a Bloom
    filter of the same ids (about 1.2 bytes a sample at `capacity`, one false positive in a
    hundred lookups). Once a project has rolled over its set may expire (`retire`); the filter
    stays, so a late copy of one of its samples is still caught: a filter hit is only a maybe,
    which the caller confirms in Label Studio (a filter never misses an id it holds).

    A retired project is read from its filter alone, even while its set lives: an import that
    was on its way when the project filled may mark ids after the set expired, which makes a
    new set holding only those, and that set must neither be trusted as whole nor kept."""

    def __init__(self, connection: redis.Redis, key: str, capacity: int = 100_000) -> None:
        self.connection = connection
        self.key = key
        self.retired_key = f"{key}:retired"  # the set's lifetime in seconds, once retired
        self.filter = BloomFilter(connection, f"{key}:filter", capacity)

    def known(self, sample_ids: list[str]) -> set[str]:
        """The ids in the exact set (none once it has expired)."""
        if not sample_ids:
            return set()
        flags = self.connection.smismember(self.key, sample_ids)
        return {sample_id for sample_id, flag in zip(sample_ids, flags, strict=True) if flag}

    def maybe(self, sample_ids: list[str]) -> set[str]:
        """Ids that may have a task here: exactly the set's while it lives, else the filter's
        (a superset: confirm in Label Studio)."""
        if not sample_ids or self.exact():
            return self.known(sample_ids)
        return self.filter.maybe(sample_ids)

    def mark(self, sample_ids: Iterable[str]) -> None:
        ids = list(sample_ids)
        if not ids:
            return
        pipe = self.connection.pipeline(transaction=False)
        pipe.sadd(self.key, *ids)
        self.filter.add(pipe, ids)
        pipe.get(self.retired_key)
        pipe.ttl(self.key)
        *_, keep_s, ttl = pipe.execute()
        if keep_s is not None and ttl == -1:  # a late mark re-made a retired set: it expires too
            self.connection.expire(self.key, max(1, int(keep_s)))

    def exact(self) -> bool:
        """The exact set is whole: it is there and the project has not been retired."""
        pipe = self.connection.pipeline(transaction=False)
        pipe.exists(self.key)
        pipe.exists(self.retired_key)
        lives, retired = pipe.execute()
        return bool(lives) and not retired

    def count(self) -> int:
        """Samples marked (while the exact set lives)."""
        return int(self.connection.scard(self.key))

    def retire(self, after_s: float) -> None:
        """Let the exact set expire `after_s` from now (a project that rolled over: imports
        still on their way to it have that long to finish); the filter is kept and answers
        for the project from now on."""
        keep_s = max(1, int(after_s))
        pipe = self.connection.pipeline(transaction=False)
        pipe.set(self.retired_key, keep_s)
        pipe.expire(self.key, keep_s)
        pipe.execute()


class BloomFilter:
    """A Bloom filter in one Redis string (SETBIT/GETBIT): `capacity` ids (at most
    MAX_SIZED_IDS: 1.2 MB) at a 1% false positive rate, 7 bit positions an id from one
    SHA-256."""

    HASHES = 7
    BITS_PER_ID = 9.6  # -ln(0.01) / ln(2)^2
    # A cap far past Label Studio's guidance (1e8 tasks) must not make a 120 MB filter for every
    # project: past this size more ids only raise the false positives (more lookups, no loss).
    MAX_SIZED_IDS = 1_000_000

    def __init__(self, connection: redis.Redis, key: str, capacity: int) -> None:
        self.connection = connection
        sized = min(capacity, self.MAX_SIZED_IDS)
        self.bits = max(64, int(sized * self.BITS_PER_ID))
        self.key = f"{key}:{self.bits}"  # another size is another filter, never a mix

    def positions(self, sample_id: str) -> list[int]:
        digest = hashlib.sha256(sample_id.encode()).digest()
        return [int.from_bytes(digest[4 * i : 4 * i + 4], "big") % self.bits
                for i in range(self.HASHES)]  # fmt: skip

    def add(self, pipe: Any, sample_ids: Iterable[str]) -> None:
        for sample_id in sample_ids:
            for position in self.positions(sample_id):
                pipe.setbit(self.key, position, 1)

    def maybe(self, sample_ids: list[str]) -> set[str]:
        pipe = self.connection.pipeline(transaction=False)
        for sample_id in sample_ids:
            for position in self.positions(sample_id):
                pipe.getbit(self.key, position)
        bits = pipe.execute()
        found = set()
        for index, sample_id in enumerate(sample_ids):
            if all(bits[index * self.HASHES : (index + 1) * self.HASHES]):
                found.add(sample_id)
        return found


def add_counts(
    connection: redis.Redis,
    queue_name: str,
    counts: Mapping[str, int],
    latencies_s: Iterable[float] = (),
) -> None:
    """Add to the counters (and the latency histogram) in one round trip. A counter that is no
    number (anyone who writes to Redis writes this hash) starts again from what is added: the
    increment Redis refuses on it stopped the worker."""
    key = stats_key(queue_name)
    pipe = connection.pipeline(transaction=False)
    added: list[tuple[str, float]] = []  # (field, amount), in the pipeline's order
    for name, value in counts.items():
        if name not in COUNTERS:
            raise KeyError(f"unknown annotation counter {name!r}")
        if value:
            pipe.hincrby(key, name, value)
            added.append((name, value))
    for seconds in latencies_s:
        pipe.hincrbyfloat(key, "import_seconds_sum", seconds)
        pipe.hincrby(key, "import_seconds_count", 1)
        added += [("import_seconds_sum", seconds), ("import_seconds_count", 1)]
        for bound in LATENCY_BUCKETS_S:
            if seconds <= bound:
                pipe.hincrby(key, f"import_seconds_le_{bound:g}", 1)  # cumulative, as Prometheus
                added.append((f"import_seconds_le_{bound:g}", 1))
    results = pipe.execute(raise_on_error=False)
    for (field, amount), result in zip(added, results, strict=True):
        if isinstance(result, redis.ResponseError):
            connection.hset(key, field, amount)


@dataclass(frozen=True)
class WorkerStats:
    counters: dict[str, int]
    import_seconds_sum: float
    import_seconds_count: int
    import_seconds_buckets: dict[float, int]  # upper bound -> imports at or under it

    @property
    def mean_import_s(self) -> float | None:
        if not self.import_seconds_count:
            return None
        return self.import_seconds_sum / self.import_seconds_count


def read_stats(connection: redis.Redis, queue_name: str) -> WorkerStats:
    """The counters; one that is not a number (anyone who writes to Redis writes this hash)
    reads as 0, so that `lowtide queue status` and /metrics still answer."""
    raw = {
        k.decode("utf-8", "replace"): v.decode("utf-8", "replace")
        for k, v in connection.hgetall(stats_key(queue_name)).items()
    }
    return WorkerStats(
        counters={name: _number(raw.get(name), int) for name in COUNTERS},
        import_seconds_sum=_number(raw.get("import_seconds_sum"), float),
        import_seconds_count=_number(raw.get("import_seconds_count"), int),
        import_seconds_buckets={
            bound: _number(raw.get(f"import_seconds_le_{bound:g}"), int)
            for bound in LATENCY_BUCKETS_S
        },
    )


def _number(stored: str | None, kind: type[int] | type[float]) -> Any:
    try:
        return kind(stored) if stored is not None else kind(0)
    except ValueError:
        return kind(0)


def quarantine(connection: redis.Redis, queue_name: str, entries: list[dict[str, Any]]) -> None:
    """Keep what could not be imported, with the reason, for `lowtide queue quarantined`."""
    if not entries:
        return
    key = quarantine_key(queue_name)
    pipe = connection.pipeline(transaction=False)
    for entry in entries:
        pipe.lpush(key, json.dumps({"at": time.time(), **entry}, ensure_ascii=False, default=str))
    pipe.ltrim(key, 0, QUARANTINE_MAX - 1)
    pipe.execute()


def quarantined(connection: redis.Redis, queue_name: str, limit: int = 50) -> list[dict[str, Any]]:
    """The newest quarantine entries first; one that is not a JSON object (anyone who writes to
    Redis writes this list) as an entry saying so."""
    entries = []
    for raw in connection.lrange(quarantine_key(queue_name), 0, limit - 1):
        try:
            entry = json.loads(raw)
        except (ValueError, RecursionError):
            entry = None
        if not isinstance(entry, dict):
            excerpt = raw[:200].decode("utf-8", "replace")
            entry = {"reason": "unreadable quarantine entry", "record": excerpt}
        entries.append(entry)
    return entries


def record_excerpt(record: Any) -> str:
    """The start of a quarantined record's JSON: a 10 MB record must not fill Redis."""
    try:
        text = json.dumps(record, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        text = repr(record)
    if len(text) <= QUARANTINED_RECORD_CHARS:
        return text
    return text[:QUARANTINED_RECORD_CHARS] + f"… ({len(text)} characters in all)"
