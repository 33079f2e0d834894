"""The Label Studio SDK client lowtide talks through: `LabelStudio` without the weight.

`label_studio_sdk.LabelStudio` swaps in the SDK's extended projects client, whose module
imports pandas and the labeling-config parser (jsf) for its export helpers and
`get_label_interface`: about 0.55 s of CPU in every process that talks to Label Studio (each
worker, `lowtide export`, `annotation init`, the loop), none of which uses them. This client is
the SDK's public `LabelStudioBase` with the two parts of `LabelStudio`'s extensions lowtide
does rely on, taken from the SDK itself, not copied:
- listings end at the 404 Label Studio answers past the last page (`SyncPagerExt`), for
  projects as for tasks;
- a task listing asks for every field (`TasksClientExt`: `fields=all`).
`_extensions.pager_ext` is a private module of the SDK, and the headers the SDK authenticates
with live on its private client wrapper (`sdk_headers`): this module holds lowtide's every reach
into the SDK's internals, pinned to label-studio-sdk 2.1 in pyproject.toml, and
tests/test_labelstudio_sdk_internals.py checks that these clients list what `LabelStudio`'s do
and that the headers authenticate. Only annotation/labelstudio.py, the client, uses it.
"""

from __future__ import annotations

from typing import Any

from label_studio_sdk._extensions.pager_ext import SyncPagerExt
from label_studio_sdk.base_client import LabelStudioBase
from label_studio_sdk.projects.client import ProjectsClient
from label_studio_sdk.tasks.client_ext import TasksClientExt


class _Projects(ProjectsClient):
    def list(self, **kwargs: Any) -> SyncPagerExt[Any]:  # type: ignore[override]
        return SyncPagerExt.from_sync_pager(super().list(**kwargs))


class LightLabelStudio(LabelStudioBase):
    """`LabelStudio`'s projects and tasks as lowtide uses them (module docstring); every other
    part is the SDK's base client."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._light_projects: _Projects | None = None
        self._light_tasks: TasksClientExt | None = None

    @property
    def projects(self) -> _Projects:  # type: ignore[override]
        if self._light_projects is None:
            self._light_projects = _Projects(client_wrapper=self._client_wrapper)
        return self._light_projects

    @property
    def tasks(self) -> TasksClientExt:  # type: ignore[override]
        if self._light_tasks is None:
            self._light_tasks = TasksClientExt(client_wrapper=self._client_wrapper)
        return self._light_tasks


def sdk_headers(client: LabelStudioBase) -> dict[str, str]:
    """The headers `client` sends (its token scheme, legacy or refreshed JWT, its user agent),
    for the requests lowtide sends without the SDK's methods."""
    return dict(client._client_wrapper.get_headers())
