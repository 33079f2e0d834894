"""Records into Label Studio as the annotation worker imports them, without a queue or a worker."""

from __future__ import annotations

from typing import Any

from annotation.config import AnnotationConfig
from annotation.importer import ImportContext, JobMemo, import_records


def import_through_the_worker(
    config: AnnotationConfig, records: list[dict[str, Any]], queue_name: str
) -> int:
    """The project and tasks as the worker makes them (every record imported); the project id."""
    import redis

    connection = redis.Redis.from_url("redis://127.0.0.1:6379/0")
    context = ImportContext.create(config, connection, queue_name=queue_name)
    try:
        outcome = import_records(records, context, JobMemo(queue_name, {}))
        assert outcome.imported == len(records)
        return context.project_id()
    finally:
        context.client.close()
