"""A job for tests/test_rq_internals.py: what RQ's started registry holds while the job runs."""

from __future__ import annotations

from typing import Any

from rq import Queue, get_current_job
from rq.executions import Execution
from rq.registry import StartedJobRegistry


def started_members() -> dict[str, Any]:
    job = get_current_job()
    assert job is not None
    connection = job.connection
    registry = StartedJobRegistry(queue=Queue(job.origin, connection=connection))
    pairs = registry.get_job_and_execution_ids(cleanup=False)
    execution = Execution.fetch(pairs[0][1], job.id, connection)
    return {
        "job_id": job.id,
        "members": [member.decode() for member in connection.zrange(registry.key, 0, -1)],
        "pairs": [list(pair) for pair in pairs],
        "worker": execution.worker_name,
    }
