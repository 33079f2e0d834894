"""Which tasks of one project the export takes, by their seals (annotation/task_seal.py).

A task whose text no longer matches its seal is refused, with the reason. A task without a
seal is taken (counted as unsealed: made before seals existed) unless a task made before it in
the same project has one: the worker seals every task it makes, so such a task's data was
replaced (a `PATCH` that rewrites `data` drops the seal with the text). Task ids grow with
creation, so "made before" is a lower id; the lowest sealed id is remembered between exports
(`ProjectState.sealed_from`), and within one export the unsealed tasks wait for the end of
their project's read, when every sealed task of it has been seen.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from annotation.task_seal import SealCheck, check_seal

REASONS = {
    SealCheck.BROKEN: "its text does not match its seal: edited in Label Studio after import "
    "(or sealed with another LOWTIDE_TASK_KEY than this export's)",
    SealCheck.UNCHECKABLE: "sealed, but this export has no key to check it with: set "
    "LOWTIDE_TASK_KEY (or LABEL_STUDIO_API_KEY) as the worker had it",
}
SEAL_REMOVED = "no seal, though an earlier task of its project has one: its data was replaced"


@dataclass(frozen=True)
class Refusal:
    task_id: int
    sample_id: str  # as the task's data says now
    reason: str


@dataclass
class SealGate:
    key: bytes | None
    sealed_from: int | None  # the lowest task id of the project seen with a seal
    refused: list[Refusal] = field(default_factory=list)
    unsealed: int = 0
    _waiting: list[dict[str, Any]] = field(default_factory=list)

    def admit(self, task: dict[str, Any]) -> bool:
        """Whether to export `task` now; False for one refused (in `refused`) or held back
        until `rest()`."""
        data, task_id = _data(task), int(task["id"])
        verdict = check_seal(data, self.key)
        if verdict is SealCheck.UNSEALED:
            if self._after_a_sealed_one(task_id):
                self._refuse(task, SEAL_REMOVED)
            else:
                self._waiting.append(task)
            return False
        self.sealed_from = task_id if self.sealed_from is None else min(self.sealed_from, task_id)
        if verdict is SealCheck.MATCHES:
            return True
        self._refuse(task, REASONS[verdict])
        return False

    def rest(self) -> list[dict[str, Any]]:
        """The unsealed tasks held back that were made before any sealed one: to export."""
        taken = []
        for task in self._waiting:
            if self._after_a_sealed_one(int(task["id"])):
                self._refuse(task, SEAL_REMOVED)
            else:
                taken.append(task)
        self.unsealed += len(taken)
        self._waiting = []
        return taken

    def _after_a_sealed_one(self, task_id: int) -> bool:
        return self.sealed_from is not None and task_id > self.sealed_from

    def _refuse(self, task: Mapping[str, Any], reason: str) -> None:
        sample_id = str(_data(task).get("sample_id") or "")
        self.refused.append(Refusal(int(task["id"]), sample_id, reason))


def _data(task: Mapping[str, Any]) -> Mapping[str, Any]:
    data = task.get("data")
    return data if isinstance(data, Mapping) else {}
