"""The loop directory's memory: which config made it, and how far each round got.

`<loop_dir>/loop.json` holds the settings that decide what the rounds compute (compared by
fingerprint; a difference is named); `<loop_dir>/state.json` holds, per round, each
stage that finished and what it measured. Both are replaced atomically: a crash leaves the
previous version, never half a file, so a rerun resumes at the first stage not recorded.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lowtide.errors import UsageError
from rl.atomic_file import write_text_atomically
from rl.jsonl import parse_value

STAGES = ("train", "import", "review", "export", "reward_model", "evaluate")
SETTINGS_FILE, STATE_FILE = "loop.json", "state.json"


def fingerprint(settings: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16]


def open_loop_dir(loop_dir: Path, settings: dict[str, Any]) -> str:
    """The loop's id: made with the directory, or read back if these settings made it. A
    directory made with other settings is refused, naming what differs."""
    path = loop_dir / SETTINGS_FILE
    if not path.exists():
        if loop_dir.exists() and any(loop_dir.iterdir()):
            raise UsageError(
                f"{loop_dir} is not empty and holds no {SETTINGS_FILE}: it is not a loop "
                "directory; give another --dir"
            )
        loop_id = f"loop-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
        write_json(path, {"loop_id": loop_id, "settings": settings})
        return loop_id
    stored = read_json(path)
    if fingerprint(stored.get("settings") or {}) != fingerprint(settings):
        differ = _differences(stored.get("settings") or {}, settings)
        raise UsageError(
            f"{loop_dir} was made by a loop with another config ({', '.join(differ[:5]) or '?'}"
            f"{', ...' if len(differ) > 5 else ''} differ): rerun it with the same config and "
            "options to resume, or give another --dir"
        )
    return str(stored["loop_id"])


class LoopState:
    """Per round: {stage: what it recorded}; a stage is done once it is recorded."""

    def __init__(self, loop_dir: Path) -> None:
        self.path = loop_dir / STATE_FILE
        self.rounds: dict[str, dict[str, dict[str, Any]]] = (
            read_json(self.path).get("rounds", {}) if self.path.exists() else {}
        )

    def done(self, round_number: int, stage: str) -> dict[str, Any] | None:
        return self.rounds.get(str(round_number), {}).get(stage)

    def record(self, round_number: int, stage: str, details: dict[str, Any]) -> None:
        self.rounds.setdefault(str(round_number), {})[stage] = details
        write_json(self.path, {"rounds": self.rounds})

    def reached(self, round_number: int) -> str:
        """The last stage recorded for a round, or 'not started'."""
        stages = [s for s in STAGES if self.done(round_number, s) is not None]
        return stages[-1] if stages else "not started"


def read_json(path: Path) -> dict[str, Any]:
    try:
        value = parse_value(path.read_text(encoding="utf-8"))  # nesting bounded
    except (OSError, ValueError) as error:
        raise UsageError(
            f"{path}: cannot read it ({error}): move the loop directory away"
        ) from None
    if not isinstance(value, dict):
        raise UsageError(f"{path}: not a JSON object: move the loop directory away")
    return value


def write_json(path: Path, value: Any) -> None:
    write_text_atomically(path, json.dumps(value, indent=2) + "\n")


def _differences(old: Mapping[str, Any], new: Mapping[str, Any], prefix: str = "") -> list[str]:
    found = []
    for key in sorted(set(old) | set(new)):
        name = f"{prefix}{key}"
        before, after = old.get(key), new.get(key)
        if isinstance(before, Mapping) and isinstance(after, Mapping):
            found += _differences(before, after, f"{name}.")
        elif before != after:
            found.append(name)
    return found
