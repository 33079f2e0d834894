"""One real Label Studio for the test session, in its own virtualenv, on SQLite or on a
PostgreSQL database of its own, that tests may stop and start again (outage tests). Its first
start is on a copy of a migrated Label Studio (tests/helpers/labelstudio_template.py)."""

from __future__ import annotations

import secrets
from pathlib import Path

import httpx
import pytest

from annotation.labelstudio import LabelStudioClient
from lowtide.services.credentials import Credentials
from lowtide.services.labelstudio import ensure_installed, ensure_label_studio, stop_label_studio
from lowtide.services.postgres import PostgresDatabase
from lowtide.services.process import free_port, is_running
from lowtide.services.state import ServiceRegistry
from tests.helpers.labelstudio_template import migrated_copy, migrated_database

REPO = Path(__file__).resolve().parent.parent.parent
REVIEW_XML_PATH = REPO / "configs" / "label_studio" / "review.xml"


def sdk_client(url: str, api_key: str):
    """The SDK's own `LabelStudio` client, for tests that read Label Studio as a user of the SDK
    would. Imported on first use: `label_studio_sdk`'s top module pulls in pandas and the
    labeling-config parser (jsf, faker), ~1 s of CPU in each test process that only collects
    the tests that use it."""
    from label_studio_sdk import LabelStudio

    return LabelStudio(base_url=url, api_key=api_key)


class LabelStudioServer:
    def __init__(self, root: Path, database: PostgresDatabase | None = None) -> None:
        self.database = database  # None: SQLite, in the state directory under root
        self.credentials = Credentials(
            "admin@lowtide.local", secrets.token_urlsafe(12), secrets.token_hex(20), root / ".env"
        )
        self.registry = ServiceRegistry(root)
        self.port = free_port()
        self.url = ""
        self.pid: int | None = None
        self._started = False

    @property
    def api_key(self) -> str:
        return self.credentials.api_key

    def start(self) -> None:
        ensure_installed(REPO)
        if not self._started:  # the first start: on a copy of a migrated Label Studio
            env_file = self.credentials.env_file
            if self.database is None:
                self.credentials = migrated_copy(self.registry.root, env_file)
            else:  # None: no copy on this server, this server's own account on an empty one
                self.credentials = migrated_database(self.database, env_file) or self.credentials
            self._started = True
        with pytest.MonkeyPatch.context() as patch:
            patch.delenv("LABEL_STUDIO_URL", raising=False)  # start our own, never reuse one
            record, _ = ensure_label_studio(
                self.registry, self.credentials, self.port, database=self.database
            )
        self.url, self.pid = record.url, record.pid

    def stop(self) -> None:
        stop_label_studio(self.registry)
        assert self.pid is not None and not is_running(self.pid)

    def client(self, api_key: str | None = None) -> LabelStudioClient:
        return LabelStudioClient(self.url, api_key or self.api_key, timeout_s=30)

    def env(self) -> dict[str, str]:
        """What a worker or export process needs to reach this server."""
        return {"LABEL_STUDIO_URL": self.url, "LABEL_STUDIO_API_KEY": self.api_key}

    def get(self, path: str, **params: object) -> httpx.Response:
        response = httpx.get(
            f"{self.url}{path}",
            params=params,
            headers={"Authorization": f"Token {self.api_key}"},
            timeout=30,
        )
        response.raise_for_status()
        return response
