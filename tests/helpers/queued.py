"""What is waiting on an annotation queue: the records inside its RQ jobs, read back the way the
worker reads them (JSON serializer; every job must name the worker's one function)."""

from __future__ import annotations

from typing import Any

import redis
from rq import Queue
from rq.job import Job
from rq.serializers import JSONSerializer

from sampling.records import JOB_FUNCTION


def queued_records(url: str, name: str) -> list[dict[str, Any]]:
    connection = redis.Redis.from_url(url)
    queue = Queue(name, connection=connection, serializer=JSONSerializer)
    records: list[dict[str, Any]] = []
    for job_id in queue.job_ids:
        job = Job.fetch(job_id, connection=connection, serializer=JSONSerializer)
        assert job.func_name == JOB_FUNCTION
        records += job.args[0]
    return records


def queued_sample_ids(url: str, name: str) -> list[str]:
    return [record["sample_id"] for record in queued_records(url, name)]
