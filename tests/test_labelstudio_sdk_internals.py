"""What annotation/labelstudio.py takes from the Label Studio SDK beyond its public API: the
auth headers on its private client wrapper. A new SDK that moves them fails here, in a second,
rather than as 401s from a running worker."""

from __future__ import annotations

import re
from importlib.metadata import version

import pytest

from annotation.labelstudio import LabelStudioClient
from tests.conftest import REPO

pytestmark = pytest.mark.unit


def test_the_sdk_checked_here_is_the_one_pyproject_pins() -> None:
    pin = re.search(r'"label-studio-sdk>=(\d+\.\d+)[^"]*"', (REPO / "pyproject.toml").read_text())
    assert pin is not None
    assert version("label-studio-sdk").startswith(pin.group(1) + "."), pin.group(0)


def test_the_sdk_gives_the_headers_it_authenticates_with() -> None:
    client = LabelStudioClient("http://127.0.0.1:9", "a-legacy-token")  # nothing is sent
    try:
        headers = client.auth_headers()
    finally:
        client.close()
    assert headers.get("Authorization") == "Token a-legacy-token"
    assert headers.get("User-Agent", "").startswith("label_studio_sdk/")
