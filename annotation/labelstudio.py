"""lowtide's one way to Label Studio: every HTTP request to it goes through this module.

- `LabelStudioClient`, over label-studio-sdk 2.x: the project, bulk task import, lookup by
  sample_id, reviews;
- `AccountPages`: the web forms a person signs up and logs in with (annotation/accounts.py says
  why reviewer accounts are made there);
- `server_health` and `token_problem`: what `lowtide up` and `status` ask a server.

The SDK's internals are reached only through annotation/labelstudio_sdk.py. Every failure
becomes one `LabelStudioError` whose message says what to do. The API key never appears in a
message: errors are rebuilt from the status and the server's detail, and any echo of the key is
masked anyway.
"""

from __future__ import annotations

import html
import json
import logging
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import httpx
from label_studio_sdk.core.api_error import ApiError

from annotation.config import AnnotationConfig
from annotation.errors import AnnotationError
from annotation.labelstudio_sdk import LightLabelStudio, sdk_headers
from annotation.review_display import (
    format_number,
    reward_beside,
    reward_breakdown,
    trace_line,
    visible_response,
)
from annotation.review_form import ReviewForm
from annotation.review_instructions import (
    VIEW_TITLES,
    review_instructions,
    review_view_data,
)
from annotation.review_results import RATING_KIND
from annotation.task_seal import seal_key
from rl.masking import known_secrets, mask_text
from rl.numbers import finite_or_none

logger = logging.getLogger(__name__)

# The Data Manager query travels in the URL; ~1,000 `in_list` keys already overflow it.
_MAX_QUERY_CHARS = 12_000
_PAGE_SIZE = 1000
_DETAIL_CHARS = 500
_PAGE_READ = 20_000  # of an HTML error page, for its title or first words
_HTML_PAGE = re.compile(r"\s*<(?:!doctype\s+html|html)[\s>]", re.IGNORECASE)
# Tasks with a (not skipped) annotation: skipped (cancelled) ones are counted apart.
_ANNOTATED = {"filter": "filter:tasks:total_annotations", "operator": "greater",
              "type": "Number", "value": 0}  # fmt: skip
# A task a reviewer has been at: annotated, skipped, or with a draft (a review under way).
_REVIEWED_FIELDS = ("total_annotations", "cancelled_annotations", "drafts")
# For the SDK's creates (a project, an annotation): its own retry sends the POST again after a
# 5xx or a cut connection, when the first may have been carried out (a gateway's 502 while
# Label Studio went on), and makes a second one. Sent once: what tries again looks first
# (ensure_project finds a project by its title, the loop's reviewer takes unreviewed tasks).
SEND_ONCE = {"max_retries": 0}


class LabelStudioError(AnnotationError):
    """A Label Studio call failed; the message is meant for the user, without secrets.
    `status`: the HTTP status it answered with, where it answered."""

    status: int | None = None


class LabelStudioAuthError(LabelStudioError):
    """The server rejected the API key: retrying will not help."""


class LabelStudioUnreachable(LabelStudioError):
    """No answer (connection refused, DNS, timeout): worth retrying later."""


class LabelStudioOutcomeUnknown(LabelStudioUnreachable):
    """The request went out and no answer came back (a read timeout, a cut connection): Label
    Studio may have carried it out, or may still, at any time later (a slow upload, a queueing
    proxy). A refused connection is LabelStudioUnreachable: nothing was sent."""


class LabelStudioProjectGone(LabelStudioError):
    """The project was deleted in Label Studio (HTTP 404 for it), and its tasks with it."""

    def __init__(self, message: str, project_id: int) -> None:
        super().__init__(message)
        self.project_id = project_id


class LabelStudioClient:
    def __init__(
        self, url: str, api_key: str, timeout_s: float = 30.0, task_key: str | None = None
    ) -> None:
        # Label Studio takes its token in the Authorization header, where httpx would put a
        # password in the URL's userinfo instead: the userinfo is left out, and a query (a
        # proxy's token) goes with every request, ours and the SDK's.
        self.url, params = _base_and_params(url)
        self._api_key = api_key
        self.seal_key = seal_key(task_key, api_key)  # of task seals: annotation/task_seal.py
        self._http = httpx.Client(timeout=timeout_s, follow_redirects=True, params=params)
        self._timeout_s = timeout_s
        self._sdk = LightLabelStudio(base_url=self.url, api_key=api_key, httpx_client=self._http)

    @classmethod
    def from_config(cls, config: AnnotationConfig) -> LabelStudioClient:
        api_key = config.api_key.get_secret_value() if config.api_key else ""
        task_key = config.task_key.get_secret_value() if config.task_key else None
        return cls(config.label_studio_url, api_key, config.request_timeout_s, task_key)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> LabelStudioClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def ensure_project(
        self, title: str, labeling_config_xml: str, reviews_per_task: int = 1, blind: bool = True
    ) -> int:
        """The id of the project called `title`: created if missing; its labeling config,
        overlap (`reviews_per_task`), instructions and review view (`blind` or not:
        annotation/review_instructions.py) updated in place if they changed (tasks and
        annotations stay)."""
        found = self.find_project(title)
        if found is None:
            with self._errors("creating the project", labeling_config=True):
                created = self._sdk.projects.create(
                    title=title,
                    label_config=labeling_config_xml,
                    **overlap(reviews_per_task),
                    **instruction_settings(labeling_config_xml, blind),
                    request_options=SEND_ONCE,
                )
            self.ensure_review_view(int(created.id), blind)
            return int(created.id)
        with self._errors("reading the project", found):
            project = self._sdk.projects.get(found)
        if (project.label_config or "").strip() != labeling_config_xml.strip():
            try:
                with self._errors(
                    f"updating project {project.id}", project.id, labeling_config=True
                ):
                    self._sdk.projects.update(project.id, label_config=labeling_config_xml)
            except LabelStudioError as error:
                if not _star_reviews_block(project.label_config or "", str(error)):
                    raise
                logger.warning(
                    "project %s keeps its labeling config: its reviews rate quality with stars "
                    "(<Rating>), and Label Studio refuses a config without them while such "
                    "reviews exist. They export as before; for the digit keys of the new "
                    "config, review in a new project (annotation.project)",
                    project.id,
                )
                labeling_config_xml = project.label_config or ""
        wanted = overlap(reviews_per_task)
        if any(getattr(project, key, None) != value for key, value in wanted.items()):
            with self._errors(f"setting the overlap of project {project.id}", project.id):
                self._sdk.projects.update(project.id, **wanted)
        shown = instruction_settings(labeling_config_xml, blind)
        if any(getattr(project, key, None) != value for key, value in shown.items()):
            with self._errors(f"setting the instructions of project {project.id}", project.id):
                self._sdk.projects.update(project.id, **shown)
        self.ensure_review_view(int(project.id), blind)
        return int(project.id)

    def auth_headers(self) -> dict[str, str]:
        """The headers the SDK sends (its token scheme, its user agent), for the calls we send
        ourselves (`_send`: saved views, imports with task ids, and the lookups that ask Label
        Studio for fewer fields than the SDK's methods do). The SDK keeps them on a private
        client wrapper: a reach into its internals (annotation/labelstudio_sdk.py), pinned to
        label-studio-sdk 2.1 in pyproject.toml and checked by
        tests/test_labelstudio_sdk_internals.py."""
        return sdk_headers(self._sdk)

    def ensure_review_view(self, project_id: int, blind: bool = True) -> int:
        """The id of the project's saved Data Manager view of the tasks left to review
        ("Unreviewed" when `blind`, else "Unreviewed, lowest reward first"), created if no view
        of that title exists (one a person changed is left as it is). lowtide's view of the
        other kind (the project's review turned blind, or back) is made into this one."""
        wanted = review_view_data(blind)
        with self._errors("listing the project's Data Manager views", project_id):
            views = _json_list(self._send("GET", "/api/dm/views", params={"project": project_id}))
        titled = {(view.get("data") or {}).get("title"): view for view in views}
        if wanted["title"] in titled:
            return int(titled[wanted["title"]]["id"])
        other = next((titled[t] for t in VIEW_TITLES if t in titled), None)
        body = {"project": project_id, "data": wanted}
        with self._errors("saving the Data Manager view", project_id):
            if other is not None:
                response = self._send("PATCH", f"/api/dm/views/{int(other['id'])}/", json=body)
            else:
                response = self._send("POST", "/api/dm/views", json=body)
        created = _json_or_text(response)
        if isinstance(created.get("id"), int):
            return int(created["id"])
        raise LabelStudioError(  # e.g. a proxy's page in place of Label Studio's answer
            self._mask(
                f"Label Studio at {self.url} answered HTTP {response.status_code} without a view "
                f"id while saving the Data Manager view of project {project_id}: "
                f"{_detail(created)}"
            )
        )

    def show_predictions(self, project_id: int, model_version: str) -> None:
        """Have Label Studio prefill new annotations from the predictions of `model_version`
        ("show predictions to annotators"). It prefills only from the project's model_version,
        which the first import with predictions sets and later ones leave alone, so a judge
        with a new model_version (a retrained reward model) must set it. The server accepts a
        model_version only once some prediction carries it."""
        with self._errors("reading the project", project_id):
            project = self._sdk.projects.get(project_id)
        if project.show_collab_predictions and project.model_version == model_version:
            return
        with self._errors(f"showing predictions in project {project_id}", project_id):
            self._sdk.projects.update(
                project_id, show_collab_predictions=True, model_version=model_version
            )

    def import_tasks(self, project_id: int, tasks: list[dict[str, Any]]) -> list[int]:
        """Create `tasks` (`{"data": {...}}` each) in one request; their ids, in order.

        The POST goes through our httpx client with the SDK's auth headers (legacy or refreshed
        JWT): the SDK's own call re-encodes every task in Python first, ~20 ms per 500 tasks, a
        fifth of the request. One attempt only: a retried import whose first attempt landed
        would duplicate tasks."""
        if not tasks:
            return []
        with self._errors(f"importing {len(tasks)} tasks", project_id):
            response = self._send(
                "POST",
                f"/api/projects/{project_id}/import",
                params={"return_task_ids": "true"},
                json=tasks,
            )
        ids = _json_or_text(response).get("task_ids") if response.content else None
        if not isinstance(ids, list) or len(ids) != len(tasks):
            count = len(ids) if isinstance(ids, list) else "no"
            raise LabelStudioError(
                f"Label Studio at {self.url} returned {count} task ids for {len(tasks)} imported "
                "tasks (an edition that imports asynchronously?)"
            )
        return [int(task_id) for task_id in ids]

    def task_ids_by_sample_id(self, project_id: int, sample_ids: Iterable[str]) -> dict[str, int]:
        """{sample_id: task id} for the given ids that have a task; with duplicates (the same
        sample imported twice), the oldest task."""
        wanted = list(dict.fromkeys(sample_ids))
        found: dict[str, int] = {}
        for chunk in _chunks_for_url(wanted):
            query = json.dumps(_sample_id_filter(chunk))
            keys = set(chunk)
            with self._errors("looking up tasks by sample_id", project_id):
                for task in self._sdk.tasks.list(
                    project=project_id, query=query, fields="task_only", page_size=_PAGE_SIZE
                ):
                    sample_id = (task.data or {}).get("sample_id")
                    if sample_id in keys and task.id is not None:
                        found[sample_id] = min(task.id, found.get(sample_id, task.id))
        return found

    def tasks_by_sample_id(
        self, project_id: int, sample_ids: Iterable[str]
    ) -> dict[str, list[tuple[int, bool]]]:
        """{sample_id: [(task id, reviewed), ...]}, oldest task first, for every task of the
        given ids (task_ids_by_sample_id keeps the oldest only). `reviewed`: the task has an
        annotation, a skipped one or a reviewer's draft."""
        found: dict[str, list[tuple[int, bool]]] = {}
        with self._errors("looking up tasks by sample_id", project_id):
            for chunk in _chunks_for_url(list(dict.fromkeys(sample_ids))):
                keys = set(chunk)
                for task in self._sample_tasks(project_id, chunk):
                    sample_id = (task.get("data") or {}).get("sample_id")
                    if sample_id in keys and isinstance(task.get("id"), int):
                        reviewed = any(task.get(name) for name in _REVIEWED_FIELDS)
                        found.setdefault(sample_id, []).append((task["id"], reviewed))
        return {sample_id: sorted(copies) for sample_id, copies in found.items()}

    def _sample_tasks(self, project_id: int, sample_ids: list[str]) -> Iterator[dict[str, Any]]:
        """The tasks of these ids (one URL's worth), page by page: id, data and what says
        whether a reviewer has been at them."""
        params = {"project": project_id, "query": json.dumps(_sample_id_filter(sample_ids)),
                  "fields": "task_only", "include": ",".join(("id", "data", *_REVIEWED_FIELDS)),
                  "page_size": _PAGE_SIZE}  # fmt: skip
        seen, page_number = 0, 1
        while True:
            response = self._send("GET", "/api/tasks", params={**params, "page": page_number})
            page = _json_or_text(response)
            tasks = self._field(response, page, "tasks", "looking up tasks by sample_id")
            yield from (task for task in tasks if isinstance(task, dict))
            seen += len(tasks)
            total = page.get("total")
            if len(tasks) < _PAGE_SIZE or not isinstance(total, int) or seen >= total:
                return
            page_number += 1

    def delete_task(self, task_id: int) -> bool:
        """Delete one task (and whatever it holds); False when it was already gone."""
        with self._errors(f"deleting task {task_id}"):
            try:
                self._send("DELETE", f"/api/tasks/{int(task_id)}/")
            except ApiError as error:
                if error.status_code == 404:
                    return False
                raise
        return True

    def find_project(self, title: str) -> int | None:
        """The id of the project called exactly `title` (the oldest of several), or None."""
        found = [pid for pid, named in self.projects_titled(title) if named == title]
        return int(min(found)) if found else None

    def projects_titled(self, text: str) -> list[tuple[int, str]]:
        """(id, title) of every project whose title contains `text`, oldest first.

        Asked with `include=id,title`: the SDK's listing has Label Studio count the tasks and
        annotations of every project it returns and reads a second, empty page, about 6x the
        server's CPU (66 against 11 ms a call, 60 projects) on the call a worker and every
        export make to find their project."""
        found: list[tuple[int, str]] = []
        params: dict[str, Any] = {"title": text, "include": "id,title", "page_size": 100}
        with self._errors("finding the project"):
            page_number = 1
            while True:
                response = self._send(
                    "GET", "/api/projects/", params={**params, "page": page_number}
                )
                page = _json_or_text(response)
                results = self._field(response, page, "results", "finding the project")
                found += [(int(p["id"]), str(p["title"])) for p in results]
                if not page.get("next") or len(results) < params["page_size"]:
                    return sorted(found)
                page_number += 1

    def annotated_tasks(
        self, project_id: int, since: str | None = None
    ) -> Iterator[dict[str, Any]]:
        """Tasks with at least one (not skipped) annotation changed after `since` (ISO time;
        None: all), oldest change first, each a dict with its annotations inline. Tasks are
        filtered on `updated_at`, which a new or edited annotation moves. Not on
        `completed_at`: with several reviewers per task it stays empty until the last one
        submits, and it never moves after the first completion."""
        items = [_ANNOTATED]
        if since is not None:
            items.append(
                {"filter": "filter:tasks:updated_at", "operator": "greater",
                 "type": "Datetime", "value": since}
            )  # fmt: skip
        query = {
            "filters": {"conjunction": "and", "items": items},
            "ordering": ["tasks:updated_at"],
        }
        with self._errors("listing annotated tasks", project_id):
            for task in self._sdk.tasks.list(
                project=project_id, query=json.dumps(query), fields="all", page_size=_PAGE_SIZE
            ):
                yield task.model_dump(mode="json") if hasattr(task, "model_dump") else dict(task)

    def annotated_task_count(self, project_id: int) -> int:
        """How many tasks of the project have a (not skipped) annotation: one counted query,
        ~0.08 s at 10,000 tasks (SQLite)."""
        with self._errors("counting annotated tasks", project_id):
            response, page = self._annotated_ids_page(project_id, 1, 1)
        return int(self._field(response, page, "total", "counting annotated tasks") or 0)

    def annotated_task_ids(self, project_id: int) -> set[int]:
        """The ids of every task with a (not skipped) annotation, ids only, paged: ~0.45 s per
        1,000 tasks (SQLite, 10,000 tasks), against ~3.5 s for the same tasks read whole."""
        found: set[int] = set()
        with self._errors("listing annotated task ids", project_id):
            page_number = 1
            while True:
                response, page = self._annotated_ids_page(project_id, page_number, _PAGE_SIZE)
                tasks = self._field(response, page, "tasks", "listing annotated task ids")
                found.update(int(task["id"]) for task in tasks)
                if len(tasks) < _PAGE_SIZE or len(found) >= int(page.get("total") or 0):
                    return found
                page_number += 1

    def _annotated_ids_page(
        self, project_id: int, page: int, page_size: int
    ) -> tuple[httpx.Response, dict[str, Any]]:
        query = json.dumps({"filters": {"conjunction": "and", "items": [_ANNOTATED]}})
        params = {"project": project_id, "query": query, "fields": "task_only", "include": "id",
                  "page": page, "page_size": page_size}  # fmt: skip
        response = self._send("GET", "/api/tasks", params=params)
        return response, _json_or_text(response)

    def project_exists(self, project_id: int) -> bool:
        """Whether the server still holds the project (False: it was deleted)."""
        with self._errors("looking up the project"):
            try:
                self._send("GET", f"/api/projects/{project_id}/", params={"include": "id"})
            except ApiError as error:
                if error.status_code == 404:
                    return False
                raise
        return True

    def organization(self) -> tuple[int, str]:
        """(id, created_at) of the token's organization: what stays the same for a server
        whatever its URL is spelled, and differs for another server."""
        with self._errors("reading the organization"):
            response = self._send("GET", "/api/current-user/whoami")
            organization = self._field(
                response, _json_or_text(response), "active_organization", "reading the user"
            )
            response = self._send("GET", f"/api/organizations/{int(organization)}")
            created = self._field(
                response, _json_or_text(response), "created_at", "reading the organization"
            )
        return int(organization), str(created)

    def unreviewed_tasks(self, project_id: int, run_id: str | None = None) -> list[dict[str, Any]]:
        """Tasks without any annotation yet (of one training run, if given): id and data."""
        unreviewed = {"filter": "filter:tasks:total_annotations", "operator": "equal",
                      "type": "Number", "value": 0}  # fmt: skip
        with self._errors("listing tasks to review", project_id):
            return [
                {"id": task.id, "data": dict(task.data or {})}
                for task in self._run_tasks(project_id, run_id, [unreviewed])
            ]

    def count_run_tasks(self, project_id: int, run_id: str) -> int:
        """How many tasks of one training run the project holds, reviewed or not."""
        with self._errors(f"counting the tasks of {run_id}", project_id):
            return sum(1 for _ in self._run_tasks(project_id, run_id, []))

    def _run_tasks(
        self, project_id: int, run_id: str | None, items: list[dict[str, Any]]
    ) -> Iterator[Any]:
        if run_id is not None:
            items = [*items, {"filter": "filter:tasks:data.run_id", "operator": "equal",
                              "type": "String", "value": run_id}]  # fmt: skip
        query = json.dumps({"filters": {"conjunction": "and", "items": items}})
        return self._sdk.tasks.list(
            project=project_id, query=query, fields="task_only", page_size=_PAGE_SIZE
        )

    def create_annotation(self, task_id: int, result: list[dict[str, Any]]) -> int:
        """Annotate a task through the API, as a reviewer's submit does; the annotation id."""
        with self._errors(f"annotating task {task_id}"):
            created = self._sdk.annotations.create(
                id=task_id, result=result, request_options=SEND_ONCE
            )
            return int(created.id)

    def labeling_config(self, project_id: int) -> str:
        """The project's labeling config as Label Studio holds it (what results must match)."""
        with self._errors("reading the project", project_id):
            return str(self._sdk.projects.get(project_id).label_config or "")

    def project_created_at(self, project_id: int) -> str:
        with self._errors("reading the project", project_id):
            created = self._sdk.projects.get(project_id).created_at
        return created.isoformat() if hasattr(created, "isoformat") else str(created or "")

    def count_tasks(self, project_id: int) -> int:
        """The project's task count, and no other count (`include`: the rest cost the server)."""
        with self._errors("counting tasks", project_id):
            response = self._send(
                "GET", f"/api/projects/{project_id}/", params={"include": "id,task_number"}
            )
        return int(
            self._field(response, _json_or_text(response), "task_number", "counting tasks") or 0
        )

    def _field(self, response: httpx.Response, body: dict[str, Any], key: str, action: str) -> Any:
        """body[key], or a clear error where the answer has none (a proxy's page in place of
        Label Studio's, another API): read as nothing found, a missing project list would have
        a worker make the project again."""
        if key not in body:
            raise LabelStudioError(
                self._mask(
                    f"Label Studio at {self.url} answered HTTP {response.status_code} without "
                    f"`{key}` while {action}: {_detail(body)}"
                )
            )
        return body[key]

    def _send(self, method: str, path: str, **request: Any) -> httpx.Response:
        """One request through our client with the SDK's auth headers, sent once; a refusal
        raised as the SDK raises it (`_errors` turns it into the message)."""
        response = self._http.request(
            method, f"{self.url}{path}", headers=self.auth_headers(), **request
        )
        if response.status_code >= 400:
            raise ApiError(status_code=response.status_code, body=_json_or_text(response))
        return response

    @contextmanager
    def _errors(
        self, action: str, project_id: int | None = None, labeling_config: bool = False
    ) -> Iterator[None]:
        try:
            yield
        except ApiError as error:
            message = self._mask(self._api_message(error, action, project_id, labeling_config))
            if error.status_code == 404 and project_id is not None:
                raise LabelStudioProjectGone(message, project_id) from None
            kind = LabelStudioAuthError if error.status_code in (401, 403) else LabelStudioError
            failure = kind(message)
            failure.status = error.status_code
            raise failure from None
        except httpx.TimeoutException as error:
            # A read or write timeout: the request went out, and may be carried out still.
            sent = not isinstance(error, (httpx.ConnectTimeout, httpx.PoolTimeout))
            raise (LabelStudioOutcomeUnknown if sent else LabelStudioUnreachable)(
                f"Label Studio at {self.url} did not answer within {self._timeout_s:g} s while "
                f"{action}: it may be overloaded or frozen"
            ) from None
        except httpx.InvalidURL as error:
            raise LabelStudioError(
                f"Label Studio request while {action} is not a valid URL ({error}): check "
                "annotation.label_studio_url"
            ) from None
        except httpx.TransportError as error:
            # A connection cut after the request went out (ReadError, RemoteProtocolError):
            # it may have been carried out. A refused one (ConnectError) sent nothing.
            sent = isinstance(error, (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError))
            raise (LabelStudioOutcomeUnknown if sent else LabelStudioUnreachable)(
                f"cannot reach Label Studio at {self.url} while {action} "
                f"({type(error).__name__}): is it running? Start it with `lowtide up`, or set "
                "annotation.label_studio_url to where it runs"
            ) from None

    def _api_message(
        self, error: ApiError, action: str, project_id: int | None, labeling_config: bool
    ) -> str:
        detail = _detail(error.body)
        where = f"Label Studio at {self.url}"
        if error.status_code == 401 or error.status_code == 403:
            if "legacy token" in detail.lower():
                return (
                    f"{where} rejects the API token (LABEL_STUDIO_API_KEY) while {action}: legacy "
                    "API tokens are disabled there. Enable them as an admin (Organization → API "
                    'Tokens Settings, or POST /api/jwt/settings {"legacy_api_tokens_enabled": '
                    "true}), or use a personal access token instead"
                )
            return (
                f"{where} rejects the API token (LABEL_STUDIO_API_KEY) while {action} "
                f"(HTTP {error.status_code}: {detail}): set it to the token under Account & "
                "Settings in Label Studio, or the one `lowtide up` wrote to .env"
            )
        if error.status_code == 404 and project_id is not None:
            return f"{where} has no project {project_id} (while {action}): {detail}"
        if error.status_code == 400 and labeling_config:
            return f"{where} rejected the labeling config (HTTP 400) while {action}: {detail}"
        return f"{where} answered HTTP {error.status_code} while {action}: {detail}"

    def _mask(self, text: str) -> str:
        return mask_text(text, [self._api_key, *known_secrets()])


class AccountPages:
    """Label Studio as a reviewer account is made there (annotation/accounts.py says why):
    the admin's API for the users and the invite link, a browser's cookie session on the
    sign-up and login forms, then the API as the signed-in user. Use inside `account_errors`."""

    def __init__(self, url: str, admin_api_key: str, timeout_s: float = 30.0) -> None:
        self._api = httpx.Client(timeout=timeout_s, follow_redirects=True)
        self._browser = httpx.Client(base_url=url, timeout=timeout_s, follow_redirects=True)
        self._url = url
        self._admin = LightLabelStudio(base_url=url, api_key=admin_api_key, httpx_client=self._api)

    def close(self) -> None:
        self._browser.close()
        self._api.close()

    def __enter__(self) -> AccountPages:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def has_user(self, email: str) -> bool:
        """Whether the admin's organisation has a user with this (lower-case) e-mail."""
        return any((user.email or "").lower() == email for user in self._admin.users.list())

    def invite_token(self) -> str:
        return str(self._admin.organizations.invites.get_invite_link().token)

    def whoami(self, api_key: str) -> tuple[str, int | None]:
        """(e-mail, user id) of the account `api_key` belongs to."""
        sdk = LightLabelStudio(base_url=self._url, api_key=api_key, httpx_client=self._api)
        me = sdk.users.whoami()
        return me.email or "", me.id

    def sign_up(self, email: str, password: str, invite_token: str) -> None:
        form = {"email": email, "password": password, "allow_newsletters": "", "how_find_us": ""}
        response = self._post_form(f"/user/signup/?token={invite_token}", form)
        if not self._signed_in():
            raise LabelStudioError(
                f"Label Studio at {self._browser.base_url} did not create the reviewer account "
                f"{email} (HTTP {response.status_code} from the sign-up form): "
                f"{_form_error(response.text) or 'no reason given'}"
            )

    def log_in(self, email: str, password: str) -> None:
        self._post_form("/user/login/", {"email": email, "password": password})
        if not self._signed_in():
            raise LabelStudioError(
                f"Label Studio at {self._browser.base_url} has an account {email}, but lowtide "
                "cannot sign in to it: it was made by a person, or by lowtide with another admin "
                "token. Give the scripted reviewer another e-mail"
            )

    def current_user_token(self, email: str) -> str:
        """The API token of the account signed in (`email`, for the message)."""
        response = self._browser.get("/api/current-user/token")
        try:
            body = response.json() if response.status_code == 200 else None
        except ValueError:  # not JSON: not Label Studio's answer
            body = None
        token = body.get("token") if isinstance(body, dict) else None
        if not isinstance(token, str) or not token:
            raise LabelStudioError(
                f"Label Studio at {self._browser.base_url} gave no API token for {email} "
                f"(HTTP {response.status_code})"
            )
        return token

    def _post_form(self, path: str, form: dict[str, str]) -> httpx.Response:
        """A browser's form submit: the CSRF cookie from the page first, then the POST."""
        self._browser.get(path)
        csrf = self._browser.cookies.get("csrftoken", "")
        return self._browser.post(
            path,
            data={**form, "csrfmiddlewaretoken": csrf},
            headers={"Referer": f"{self._browser.base_url}{path}", "X-CSRFToken": csrf},
        )

    def _signed_in(self) -> bool:
        return self._browser.get("/api/current-user/whoami").status_code == 200


def _form_error(html: str) -> str:
    """The first error Django rendered into the form, if it is easy to find."""
    marker = 'class="errorlist'
    start = html.find(marker)
    if start < 0:
        return ""
    text = html[start : start + 400].split("<li>", 1)[-1].split("</li>", 1)[0]
    return " ".join(text.split())


@contextmanager
def account_errors(url: str, action: str, secret: str) -> Iterator[None]:
    """Failures while making an account as LabelStudioError, with no token in the message."""
    where = f"Label Studio at {url}"
    try:
        yield
    except ApiError as error:
        kind = LabelStudioAuthError if error.status_code in (401, 403) else LabelStudioError
        detail = str(error.body)[:300].replace(secret, "***")
        hint = (
            ": is LABEL_STUDIO_API_KEY an admin's token of that Label Studio?"
            if kind is LabelStudioAuthError
            else ""
        )
        raise kind(
            f"{where} answered HTTP {error.status_code} while {action}: {detail}{hint}"
        ) from None
    except httpx.TransportError as error:
        raise LabelStudioUnreachable(
            f"cannot reach {where} while {action} ({type(error).__name__}): is it running?"
        ) from None


def server_health(url: str, timeout_s: float = 2.0) -> bool:
    """Whether Label Studio at `url` answers its health check as up."""
    try:
        response = httpx.get(f"{url.rstrip('/')}/health", timeout=timeout_s)
        return response.status_code == 200 and response.json().get("status") == "UP"
    except (httpx.HTTPError, ValueError):
        return False


def token_problem(url: str, api_key: str) -> str | None:
    """None if the token works with the legacy `Token` header (what `up` enables), else why not."""
    try:
        response = httpx.get(
            f"{url.rstrip('/')}/api/current-user/whoami",
            headers={"Authorization": f"Token {api_key}"},
            timeout=10,
        )
    except httpx.HTTPError as exc:
        return f"no answer from {url} ({type(exc).__name__})"
    if response.status_code == 200:
        return None
    if "legacy token" in response.text.lower():
        return (
            "legacy API tokens are disabled on that server (enable them as an admin with "
            'POST /api/jwt/settings {"legacy_api_tokens_enabled": true})'
        )
    return f"HTTP {response.status_code}"


def quiet_request_logs() -> None:
    """The HTTP library logs every request at INFO: a worker's log keeps one line per batch."""
    for name in ("httpx", "httpcore"):
        logging.getLogger(name).setLevel(logging.WARNING)


def _base_and_params(url: str) -> tuple[str, list[tuple[str, str]]]:
    """`https://u:pw@ls:8080/x/?token=t` -> (`https://ls:8080/x`, [("token", "t")])."""
    try:
        parts = urlsplit(url.strip())
        host = parts.netloc.rpartition("@")[2]
        params = parse_qsl(parts.query, keep_blank_values=True)
        return urlunsplit(parts._replace(netloc=host, query="", fragment="")).rstrip("/"), params
    except ValueError:  # the request says the URL is invalid, in the words of the error path
        return url.rstrip("/"), []


def _star_reviews_block(current_xml: str, error: str) -> bool:
    """Did Label Studio refuse the new config because the project has reviews made with its
    star Rating for quality (projects made before the rating became one choice of 1-5)?"""
    control = ReviewForm.read(current_xml).quality
    return (
        control is not None
        and control.kind == RATING_KIND
        and "incompatible" in error
        and "type=rating" in error
    )


def instruction_settings(labeling_config_xml: str, blind: bool = True) -> dict[str, Any]:
    """The instruction panel, shown before a reviewer's first task: what the ratings and the
    categories mean, how the reward was computed (`blind`: once they have decided), the keys."""
    return {
        "expert_instruction": review_instructions(labeling_config_xml, blind),
        "show_instruction": True,
    }


def overlap(reviews_per_task: int) -> dict[str, int]:
    """Label Studio's overlap settings for `reviews_per_task` reviewers on every task: a task
    is served to that many distinct users before it counts as labeled (skips do not count).
    The server does not stop a further annotation written through the API: the export counts
    each reviewer's vote, however many there are."""
    return {"maximum_annotations": reviews_per_task, "overlap_cohort_percentage": 100}


def task_from_record(record: Mapping[str, Any], blind: bool = True) -> dict[str, Any]:
    """The Label Studio task of one RolloutRecord (as a dict): the fields review.xml shows plus
    the keys to find it again. `reward` is a number, and absent when it was not finite: the
    Data Manager sorts and filters it numerically, and a missing key sorts last and passes no
    numeric filter, where a JSON null counts as 0 (Label Studio 1.23, SQLite). Text tags do not
    render numbers, so `reward_text` carries its display form. `response` stays verbatim (the
    export reads it); `response_visible` is what the reviewer sees. `blind` (a blind review,
    annotation/review_display.py says why): nothing beside the response names the reward
    (`reward_shown` empty, the trace line without the reason); the form's reward panel
    (`reward_text`, `reward_details`) opens once a rating is chosen."""
    reward = finite_or_none(record.get("reward"))
    details = record.get("reward_details") or {}
    breakdown = reward_breakdown(reward, details, record.get("reward_weights") or {})
    task = {
        "data": {
            "sample_id": str(record["sample_id"]),
            "run_id": str(record["run_id"]),
            "step": int(record["step"]),
            "prompt": str(record.get("prompt", "")),
            "response": str(record.get("response", "")),
            "response_visible": visible_response(str(record.get("response", ""))),
            "reward_text": format_number(reward),
            "reward_details": breakdown,
            "reward_shown": "" if blind else reward_beside(reward, breakdown),
            "trace": trace_line(record, blind),
            "blind": blind,
        }
    }
    if isinstance(record.get("selected_by"), Mapping):  # why it was picked, for the export
        task["data"]["selected_by"] = dict(record["selected_by"])
    if reward is not None:
        task["data"]["reward"] = reward
    return task


def _sample_id_filter(sample_ids: list[str]) -> dict[str, Any]:
    item = {
        "filter": "filter:tasks:data.sample_id",
        "operator": "in_list",
        "type": "String",
        "value": sample_ids,
    }
    return {"filters": {"conjunction": "and", "items": [item]}}


def _chunks_for_url(sample_ids: list[str]) -> Iterator[list[str]]:
    """Consecutive chunks whose JSON, percent-encoded, stays well under URL limits."""
    chunk: list[str] = []
    size = 0
    for sample_id in sample_ids:
        cost = 3 * len(json.dumps(sample_id)) + 6  # worst case: every character percent-encoded
        if chunk and size + cost > _MAX_QUERY_CHARS:
            yield chunk
            chunk, size = [], 0
        chunk.append(sample_id)
        size += cost
    if chunk:
        yield chunk


def _json_list(response: httpx.Response) -> list[dict[str, Any]]:
    try:
        body = response.json()
    except ValueError:
        return []
    return [item for item in body if isinstance(item, dict)] if isinstance(body, list) else []


def _json_or_text(response: httpx.Response) -> Any:
    try:
        body = response.json()
    except ValueError:
        return {"detail": response.text[:_DETAIL_CHARS]}
    return body if isinstance(body, dict) else {"detail": str(body)[:_DETAIL_CHARS]}


_PAGE_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_PAGE_CODE = re.compile(r"<(script|style)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]*(?:>|$)")  # a tag, or one the page was cut in


def _page_words(page: str) -> str:
    """What an HTML page says, on one short line: its title, else its visible text (who
    answered: `Please sign in to the proxy`, `Not Found`)."""
    title = _PAGE_TITLE.search(page[:_PAGE_READ])
    text = title.group(1) if title else _TAG.sub(" ", _PAGE_CODE.sub(" ", page[:_PAGE_READ]))
    text = " ".join(html.unescape(text).split())
    return text if len(text) <= _DETAIL_CHARS else text[:_DETAIL_CHARS] + "…"


def _detail(body: Any) -> str:
    """The server's reason, short: `detail` plus any validation errors."""
    if isinstance(body, Mapping):
        parts = [str(body["detail"])] if body.get("detail") else []
        if body.get("validation_errors"):
            parts.append(json.dumps(body["validation_errors"], ensure_ascii=False))
        text = "; ".join(parts) or json.dumps(body, ensure_ascii=False, default=str)
    else:
        text = str(body) if body is not None else "no details"
    if _HTML_PAGE.match(text):  # an error page (Label Studio's 404, a proxy's sign-in page)
        shown = _page_words(text)
        return "an HTML page, not an API answer" + (f": {shown}" if shown else "")
    text = " ".join(text.split())  # one log line
    return text if len(text) <= _DETAIL_CHARS else text[:_DETAIL_CHARS] + "…"
