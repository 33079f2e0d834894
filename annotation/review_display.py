"""What a reviewer reads beside a response: the response with its invisible characters made
visible, a trace line back to the run, and the reward broken down by component.

A blind review (`annotation.blind_review`, the default) keeps the reward model's verdict out of
what is read before deciding: the trace line then says only that the sample was picked for
review. Every policy's name or reason says which way the reward pointed (threshold and
low_reward: it was low; audit_high_reward and the hacking watch: it was high; a search quotes
its query, "reward > 2"), and a reviewer told the verdict is pulled toward it.

Label Studio shows task data as given, so these are plain strings computed once at import.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rl.numbers import finite_or_none
from rl.visible_text import visible_char, visible_text

EMPTY_RESPONSE = "(empty response)"
SPACE_MARK = "·"  # a leading or trailing space
TAB_MARK = "→"  # a leading or trailing tab
NEWLINE_MARK = "⏎"  # a leading or trailing line break (the break itself is kept)


def visible_response(text: str) -> str:
    """`text` with nothing a reviewer could miss: spaces, tabs and line breaks at either end
    marked, control characters shown by name (⟨NUL⟩, ⟨ESC⟩) and format characters (zero-width
    spaces, BOM, bidi overrides) by code point (⟨U+200B⟩), as rl/visible_text.py marks them
    everywhere. Line breaks and inner spaces stay as they are: the task is shown as
    preformatted text."""
    if text == "":
        return EMPTY_RESPONSE
    core = text.strip(" \t\r\n")
    if not core:
        return "".join(_edge_mark(char) for char in text)
    start = text.index(core)
    head, tail = text[:start], text[start + len(core) :]
    return (
        "".join(_edge_mark(char) for char in head)
        + visible_text(core)
        + "".join(_edge_mark(char) for char in tail)
    )


def _edge_mark(char: str) -> str:
    if char == " ":
        return SPACE_MARK
    if char == "\t":
        return TAB_MARK
    if char == "\n":
        return NEWLINE_MARK + "\n"
    return visible_char(char)  # "\r"


BLIND_WHY = "picked for review"  # all a blind review says of why: no policy, reason or value


def trace_line(record: Mapping[str, Any], blind: bool = False) -> str:
    """`run r1 · step 3 · sample s-… · picked by threshold: reward 0.05 (threshold 0.2)`, plus
    how many near-identical responses the sample stands for when there are several. `blind`:
    `picked for review` in place of the policy, its reason, query, value and settings."""
    parts = [
        f"run {record['run_id']}",
        f"step {record['step']}",
        f"sample {record['sample_id']}",
    ]
    selection = record.get("selected_by")
    if isinstance(selection, Mapping) and selection.get("policy"):
        parts.append(BLIND_WHY if blind else _why_picked(selection))
        group_size = selection.get("group_size")
        if isinstance(group_size, int) and group_size > 1:
            parts.append(f"stands for {group_size} near-identical responses")
    return " · ".join(parts)


def _why_picked(selection: Mapping[str, Any]) -> str:
    text = f"picked by {selection['policy']}"
    reason = selection.get("reason")
    if reason and reason != selection["policy"]:
        text += f" ({str(reason).replace('_', ' ')})"
    if selection.get("about"):  # the query that found it: `picked by search "reward > 2"`
        text += f" {json.dumps(str(selection['about']), ensure_ascii=False)}"
    value = finite_or_none(selection.get("value"))
    if value is not None:
        text += f": {selection.get('component') or 'reward'} {format_number(value)}"
    parameter = selection.get("parameter") or {}
    if parameter:
        settings = ", ".join(
            f"{name} {format_number(finite_or_none(parameter[name]))}" for name in sorted(parameter)
        )
        text += f" ({settings})"
    return text


def reward_breakdown(
    reward: float | None, details: Mapping[str, Any], weights: Mapping[str, float]
) -> str:
    """One line per component, `name: value × weight = contribution`, then the total. Without
    weights (a trainer that does not report them) the raw values, saying so. A detail with no
    weight where weights are known (`reward_model/spread`) is shown as outside the total."""
    lines = []
    for name in sorted(details):
        value = finite_or_none(details[name])
        if not weights:
            lines.append(f"{name}: {format_number(value)}")
        elif name not in weights:
            lines.append(f"{name}: {format_number(value)} (not part of the total)")
        else:
            weight = float(weights[name])
            contribution = None if value is None else value * weight
            lines.append(
                f"{name}: {format_number(value)} × weight {format_number(weight)} "
                f"= {format_number(contribution)}"
            )
    if not lines:
        lines.append("(no components recorded)")
    total = f"total: {format_number(reward)}"
    if details and not weights:
        total += " (component weights were not recorded by the trainer)"
    elif weights:
        total += " (the sum of the contributions)"
    return "\n".join([*lines, total])


def reward_beside(reward: float | None, breakdown: str) -> str:
    """What a review that is not blind shows beside the response: the reward, then how it was
    computed (`reward_breakdown`)."""
    return (
        f"Reward: {format_number(reward)}\n"
        f"How it was computed (value × weight = contribution):\n{breakdown}"
    )


def format_number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4g}"
