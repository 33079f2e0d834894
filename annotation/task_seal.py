"""A task's text tied to the record it came from: the seal the worker puts in a task's data.

Label Studio's community edition has no roles: any reviewer account may rewrite a task's data
through the API (`PATCH /api/tasks/<id>`), and the export builds its rows (prompt, response,
chosen and rejected texts, sample_id) from that data. So the worker adds `data.seal`, an
HMAC-SHA256 over the texts the export reads (`sealed_fields`), and the export checks it
(`check_seal`): a task whose text no longer matches is refused, never exported.

The key: `LOWTIDE_TASK_KEY` (`annotation.task_key`; `lowtide up` writes one to `.env` for a new
local setup), else one derived from `LABEL_STUDIO_API_KEY`, the token lowtide talks to Label
Studio with, which reviewers with accounts of their own do not hold. The worker and the export
must see the same key.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from enum import Enum
from typing import Any

SEAL_FIELD = "seal"
TASK_KEY_VAR = "LOWTIDE_TASK_KEY"
_VERSION = "v1"
_DERIVED_FROM_API_KEY = b"lowtide task seal v1"  # a key for the seal, not the API token itself


class SealCheck(Enum):
    MATCHES = "matches"
    UNSEALED = "unsealed"  # no seal: made before seals existed, or its data was replaced
    BROKEN = "broken"  # its text no longer matches its seal
    UNCHECKABLE = "uncheckable"  # sealed, but there is no key to check it with


def seal_key(task_key: str | None, api_key: str | None) -> bytes | None:
    """The seal's key: `task_key` (LOWTIDE_TASK_KEY), else one derived from the API token;
    None with neither (then tasks go unsealed)."""
    if task_key:
        return task_key.encode()
    if api_key:
        return hmac.new(api_key.encode(), _DERIVED_FROM_API_KEY, hashlib.sha256).digest()
    return None


def sealed_fields(data: Mapping[str, Any]) -> bytes:
    """The texts a task's rows are built from, in one unambiguous encoding: its sample_id,
    prompt and response (a single review), or each shown response of a comparison with its
    label and sample id, in label order (annotation/compare_form.py)."""
    compare = data.get("compare")
    members = compare if isinstance(compare, list) else []
    shown = [
        [m.get("label"), m.get("sample_id"), m.get("response")] if isinstance(m, Mapping) else m
        for m in members
    ]
    fields = [_VERSION, data.get("sample_id"), data.get("prompt"), data.get("response"), shown]
    # JSON escapes every separator inside a string: no two field lists encode alike.
    return json.dumps(fields, ensure_ascii=False, separators=(",", ":")).encode()


def seal_of(data: Mapping[str, Any], key: bytes) -> str:
    digest = hmac.new(key, sealed_fields(data), hashlib.sha256).hexdigest()
    return f"{_VERSION}:{digest}"


def sealed(task: dict[str, Any], key: bytes | None) -> dict[str, Any]:
    """`task` (`{"data": {...}, ...}`) with its seal added; as it was without a key."""
    if key is not None:
        task["data"][SEAL_FIELD] = seal_of(task["data"], key)
    return task


def check_seal(data: Mapping[str, Any], key: bytes | None) -> SealCheck:
    seal = data.get(SEAL_FIELD)
    if seal is None:
        return SealCheck.UNSEALED
    if key is None:
        return SealCheck.UNCHECKABLE
    if isinstance(seal, str) and hmac.compare_digest(seal, seal_of(data, key)):
        return SealCheck.MATCHES
    return SealCheck.BROKEN
