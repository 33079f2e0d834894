"""What annotation/labelstudio.py takes from the Label Studio SDK beyond its public API: the
auth headers on its private client wrapper, and (annotation/labelstudio_sdk.py) the SDK's
pager that ends a listing at Label Studio's 404 past the last page. A new SDK that moves them
fails here, in a second, rather than as 401s or a failed listing in a running worker."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib.metadata import version

import httpx
import pytest

from annotation.labelstudio import LabelStudioClient, LabelStudioError
from annotation.labelstudio_sdk import LightLabelStudio
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


def _paged_server(seen: list[httpx.Request]) -> httpx.Client:
    """Label Studio's listings as 1.23 pages them: two items a page, 404 past the last page."""

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        page = int(request.url.params.get("page", "1"))
        if page > 2:
            return httpx.Response(404, json={"detail": "Invalid page."})
        ids = [2 * page - 1, 2 * page]
        if request.url.path.endswith("/api/projects/"):
            results = [{"id": i, "title": f"p{i}"} for i in ids]
        else:
            results = [{"id": i, "data": {"sample_id": f"s{i}"}} for i in ids]
        key = "tasks" if request.url.path.endswith("/api/tasks/") else "results"
        body = {key: results, "total": 6, "count": 6, "next": "more", "previous": None}
        return httpx.Response(200, json=body)

    return httpx.Client(transport=httpx.MockTransport(answer), base_url="http://ls.test")


@pytest.mark.parametrize("what", ["projects", "tasks"])
def test_the_light_client_lists_what_the_sdk_client_lists(what: str) -> None:
    """The same items, the same requests (tasks with fields=all), and the 404 past the last
    page is the end of the listing, not an error, as the SDK's LabelStudio does it."""
    from label_studio_sdk import LabelStudio  # here: its module is heavy (tests/helpers)

    listings = {}
    for client_class in (LabelStudio, LightLabelStudio):
        seen: list[httpx.Request] = []
        sdk = client_class(base_url="http://ls.test", api_key="k", httpx_client=_paged_server(seen))
        listing = sdk.projects.list(page_size=2) if what == "projects" else sdk.tasks.list(
            project=1, page_size=2)  # fmt: skip
        items = [item.id for item in listing]
        listings[client_class.__name__] = (items, [str(request.url) for request in seen])
    assert listings["LightLabelStudio"] == listings["LabelStudio"]
    items, urls = listings["LightLabelStudio"]
    assert items == [1, 2, 3, 4]
    if what == "tasks":
        assert all("fields=all" in url for url in urls)


def test_a_project_lookup_asks_for_ids_and_titles_only_on_every_page() -> None:
    """Our own listing (annotation/labelstudio.py `projects_titled`): `include=id,title`, so
    that Label Studio counts nothing, read page after page until `next` is empty."""
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        page, size = int(request.url.params["page"]), int(request.url.params["page_size"])
        ids = range(250)[(page - 1) * size : page * size]
        more = "more" if page * size < 250 else None
        results = [{"id": 1000 - i, "title": f"run {i}"} for i in ids]
        return httpx.Response(200, json={"count": 250, "next": more, "results": results})

    client = LabelStudioClient("http://ls.test", "k")
    client._http = httpx.Client(transport=httpx.MockTransport(answer))
    try:
        found = client.projects_titled("run ")
    finally:
        client.close()
    assert len(found) == 250 and found == sorted(found) and found[0] == (751, "run 249")
    assert [request.url.params["page"] for request in seen] == ["1", "2", "3"]
    assert {request.url.params["include"] for request in seen} == {"id,title"}
    assert {request.url.params["title"] for request in seen} == {"run "}


@pytest.mark.parametrize("call", ["projects_titled", "count_tasks"])
def test_an_answer_that_is_not_label_studio_s_is_one_clear_error(call: str) -> None:
    """A proxy's page with HTTP 200 is not "no project" (a worker would make it again) nor "no
    tasks": it is an error that says what answered."""
    page = httpx.Response(200, text="<html>Please sign in to the proxy</html>")
    client = LabelStudioClient("http://ls.test", "k")
    client._http = httpx.Client(transport=httpx.MockTransport(lambda request: page))
    try:
        with pytest.raises(LabelStudioError) as raised:
            client.projects_titled("run ") if call == "projects_titled" else client.count_tasks(7)
    finally:
        client.close()
    assert "answered HTTP 200 without" in str(raised.value)
    assert "Please sign in to the proxy" in str(raised.value)


@pytest.mark.integration  # a fresh interpreter: what a worker's start imports
def test_talking_to_label_studio_does_not_import_pandas() -> None:
    """What the light client is for: a worker's start does not pay for the SDK's export
    helpers (pandas, the labeling-config parser)."""
    code = (
        "import json, sys\n"
        "from annotation.labelstudio import LabelStudioClient\n"
        "import annotation.accounts\n"
        "client = LabelStudioClient('http://127.0.0.1:9', 'k')\n"
        "client._sdk.projects, client._sdk.tasks, client._sdk.annotations\n"
        "print(json.dumps(sorted(m for m in ('pandas', 'jsf') if m in sys.modules)))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []
