"""A redis-server of the test's own, on a free port, that a test may kill and restart."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import redis

from lowtide.services.process import free_port


class OwnRedis:
    """A redis-server on a free port with an fsynced append-only file: it can be killed with
    SIGKILL and restarted with what it had acknowledged."""

    def __init__(self, directory: Path, password: str | None = None) -> None:
        self.port = free_port()
        self.directory = directory
        self.password = password
        auth = f":{password}@" if password else ""
        self.url = f"redis://{auth}127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "yes", "--appendfsync", "always", "--dir", str(self.directory),
             *(["--requirepass", self.password] if self.password else [])],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        client = redis.Redis.from_url(self.url)
        for _ in range(100):
            try:
                client.ping()
                return
            except redis.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait()
