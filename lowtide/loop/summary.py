"""The loop's table, one row per round, from state.json: printed, and saved as summary.json and
summary.md in the loop directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lowtide.loop.state import LoopState, write_json

COLUMNS = (
    ("round", "round"),
    ("stage", "stage reached"),
    ("routed", "routed"),
    ("budget_shares", "shares random/audit/uncertain/lowest"),
    ("imported", "imported"),
    ("reviewed", "reviewed"),
    ("unreviewed_failures", "reviewer failed"),
    ("rm_heldout_accuracy", "RM held-out acc."),
    ("policy_score", "policy score"),
    ("suggestions_accepted", "suggestions accepted"),
)


def summary_rows(state: LoopState, rounds: int) -> list[dict[str, Any]]:
    rows = []
    for number in range(1, rounds + 1):
        train = state.done(number, "train") or {}
        imported = state.done(number, "import") or {}
        review = state.done(number, "review") or {}
        model = state.done(number, "reward_model") or {}
        evaluated = state.done(number, "evaluate") or {}
        exported = state.done(number, "export") or {}
        rows.append(
            {
                "round": number,
                "stage": state.reached(number),
                "run_id": train.get("run_id"),
                "routed": train.get("routed"),
                "budget_shares": _shares_cell(train.get("budget_shares")),
                "imported": imported.get("imported"),
                "reviewed": review.get("reviewed"),
                "unreviewed_failures": len(review["failures"]) if "failures" in review else None,
                "rm_heldout_accuracy": model.get("heldout_pair_accuracy"),
                "policy_score": evaluated.get("policy_score"),
                "suggestions_accepted": _acceptance_rate(exported.get("data"), train.get("run_id")),
                "reward_model": model.get("path"),
            }
        )
    return rows


def columns_for(rows: list[dict[str, Any]]) -> tuple[tuple[str, str], ...]:
    """The table's columns: the budget shares only where a round used the budget policy."""
    if any(row.get("budget_shares") for row in rows):
        return COLUMNS
    return tuple(column for column in COLUMNS if column[0] != "budget_shares")


def save_summary(loop_dir: Path, rows: list[dict[str, Any]]) -> tuple[Path, Path]:
    json_path, markdown_path = loop_dir / "summary.json", loop_dir / "summary.md"
    write_json(json_path, rows)
    columns = columns_for(rows)
    header = "| " + " | ".join(title for _, title in columns) + " |"
    rule = "|" + "|".join("---:" for _ in columns) + "|"
    lines = [header, rule]
    lines += ["| " + " | ".join(cell(row, key) for key, _ in columns) + " |" for row in rows]
    markdown_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return json_path, markdown_path


def cell(row: dict[str, Any], key: str) -> str:
    value = row.get(key)
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _shares_cell(shares: dict[str, float] | None) -> str | None:
    """A round's budget shares as `0.10/0.20/0.30/0.40` (None: not the budget policy)."""
    if not shares:
        return None
    order = ("random", "audit", "uncertain", "low_reward")
    return "/".join(f"{shares[bucket]:.2f}" for bucket in order)


def _acceptance_rate(reviews: str | None, run_id: str | None) -> float | None:
    """How often the round's reviewers accepted the machine suggestions (None: none shown)."""
    from annotation.suggestions import acceptance

    if not reviews or not run_id or not Path(reviews).is_file():
        return None
    lines = Path(reviews).read_text(encoding="utf-8").splitlines()
    rows = [row for row in map(json.loads, filter(str.strip, lines))
            if row["meta"].get("run_id") == run_id]  # fmt: skip
    return acceptance(rows).rate
