"""The comparison review's form and task data (`annotation.review_mode: compare`).

A task shows one prompt and `size` responses of its group, labelled A, B, ...; the reviewer
picks the best (keys 1..size) and the worst (shift+1..shift+size), may tick what went wrong
with the worst (the failure categories of the single review form, with their keys), and may
write a better response. The form is generated for the size (`labeling_config`), so a
configured size and the form cannot disagree; the control names are what the export reads
(annotation/review_results.py).

Task data: `prompt`, `trace`, `sample_id` (the comparison's id), `run_id`, `step`, `reward` (of
the selected response), `selected_by`, `blind`, per label `response_A` (as shown: invisible
characters marked) and `reward_A` (its reward as text, beside it; empty in a blind review), and
`rewards_text` (every label's reward, for the panel that opens once the best is picked);
`compare` keeps each response verbatim with its sample id and reward, for the export.

A blind review (`annotation.blind_review`, the default) shows no reward beside the responses
and a trace line that says only that the group was picked for review: a reviewer who knows
which response the reward model liked is pulled toward it. The responses are already in an
order drawn from the group's id (sampling/selection/comparisons.py), not by reward.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

from annotation.comparison import labels_for
from annotation.review_display import (
    format_number,
    trace_line,
    visible_response,
)
from annotation.review_form import FormChoice, ReviewForm
from annotation.review_results import (
    BEST_FIELD,
    BETTER_FIELD,
    FAILURE_FIELD,
    NOTE_FIELD,
    WORST_FIELD,
)
from rl.numbers import finite_or_none

SINGLE_FORM = Path(__file__).resolve().parent.parent / "configs" / "label_studio" / "review.xml"
TARGET = "prompt"  # the object every control labels: the comparison as a whole
REWARDS_FIELD = "rewards_text"  # every response's reward, in the panel opened after deciding
RESPONSES_STYLE = (
    "white-space: pre-wrap; font-family: monospace; background: #f7f7f5; "
    "border: 1px solid #ddd; border-radius: 4px; padding: 0.5em"
)


def best_key(position: int) -> str:
    return str(position + 1)


def worst_key(position: int) -> str:
    return f"shift+{position + 1}"


def labeling_config(size: int, failures: Sequence[FormChoice] | None = None) -> str:
    """The comparison form for `size` responses. `failures`: the categories the worst may be
    ticked with (default: those of the single review form, configs/label_studio/review.xml)."""
    labels = labels_for(size)
    if failures is None:
        failures = ReviewForm.from_file(SINGLE_FORM).failures
    responses = "\n".join(
        f"""    <View style="flex: 1 1 45%; min-width: 20em">
      <Header value="{label}" size="4"/>
      <View style="{RESPONSES_STYLE}">
        <Text name="response_{label}" value="$response_{label}"/>
      </View>
      <Text name="reward_{label}" value="$reward_{label}"/>
    </View>"""
        for label in labels
    )
    keys = ", ".join(f"{best_key(i)} for {label}" for i, label in enumerate(labels))
    return f"""<!-- Comparison review (annotation/compare_form.py writes this form; do not edit the
     generated copy). Keys: 1..{size} pick the best, shift+1..shift+{size} the worst. -->
<View>
  <View style="color: #666; font-size: 12px; font-family: monospace; margin-bottom: 0.5em">
    <Text name="trace" value="$trace"/>
  </View>
  <Header value="Prompt"/>
  <View style="white-space: pre-wrap">
    <Text name="{TARGET}" value="${TARGET}"/>
  </View>
  <Header value="Responses (at either end · is a space, → a tab, ⏎ a line break)"/>
  <View style="display: flex; flex-wrap: wrap; gap: 1em">
{responses}
  </View>
  <Header value="Best (required): press {keys}"/>
{_picks(BEST_FIELD, labels, best_key, "the best")}
  <Header value="Worst (required): press shift and the same digit"/>
{_picks(WORST_FIELD, labels, worst_key, "the worst")}
  <Header value="What went wrong with the worst (any that apply; the key is in brackets)"/>
  <Choices name="{FAILURE_FIELD}" toName="{TARGET}" choice="multiple" showInline="true">
{_failures(failures)}
  </Choices>
  <Header value="A better response than the best (optional)"/>
  <TextArea name="{BETTER_FIELD}" toName="{TARGET}" rows="6" editable="true" maxSubmissions="1"/>
  <Header value="Note (optional)"/>
  <TextArea name="{NOTE_FIELD}" toName="{TARGET}" rows="2" editable="true" maxSubmissions="1"/>
  <View visibleWhen="choice-selected" whenTagName="{BEST_FIELD}">
    <Collapse>
      <Panel value="The rewards: open it once you have decided">
        <View style="white-space: pre-wrap; font-family: monospace; color: #555">
          <Text name="{REWARDS_FIELD}" value="${REWARDS_FIELD}"/>
        </View>
      </Panel>
    </Collapse>
  </View>
</View>
"""


def _picks(name: str, labels: Sequence[str], key, what: str) -> str:
    choices = "\n".join(
        f'    <Choice value="{label}" hotkey="{key(i)}"/>' for i, label in enumerate(labels)
    )
    return (
        f'  <Choices name="{name}" toName="{TARGET}" choice="single-radio" showInline="true" '
        f'required="true"\n           requiredMessage="Please pick {what} response.">\n'
        f"{choices}\n  </Choices>"
    )


def _failures(failures: Sequence[FormChoice]) -> str:
    return "\n".join(
        f"    <Choice value={quoteattr(choice.value)}"
        + (f" hotkey={quoteattr(choice.hotkey)}" if choice.hotkey else "")
        + (f" hint={quoteattr(choice.hint)}" if choice.hint else "")
        + "/>"
        for choice in failures
    )


def comparison_task(record: Mapping[str, Any], size: int, blind: bool = True) -> dict[str, Any]:
    """The Label Studio task of a comparison record (its `compare` holds 2..size responses, in
    label order). A form with more labels than the group has responses shows the rest as
    missing; picking one of those is refused by the export. `blind`: no reward beside the
    responses and no reason in the trace line (module docstring)."""
    labels = labels_for(size)
    members = list(record["compare"])[:size]
    reward = finite_or_none(record.get("reward"))
    data: dict[str, Any] = {
        "sample_id": str(record["sample_id"]),
        "run_id": str(record["run_id"]),
        "step": int(record["step"]),
        "prompt": str(record.get("prompt", "")),
        "trace": trace_line(record, blind),
        "blind": blind,
        "compare": [
            {
                "label": label,
                "sample_id": str(member["sample_id"]),
                "response": str(member["response"]),
                "reward": finite_or_none(member.get("reward")),
            }
            for label, member in zip(labels, members, strict=False)
        ],
    }
    if isinstance(record.get("selected_by"), Mapping):  # why it was picked, for the export
        data["selected_by"] = dict(record["selected_by"])
    rewards = []
    for position, label in enumerate(labels):
        if position < len(members):
            member = members[position]
            data[f"response_{label}"] = visible_response(str(member["response"]))
            said = f"reward {format_number(finite_or_none(member['reward']))}"
            data[f"reward_{label}"] = "" if blind else said
            rewards.append(f"{label}: {said}")
        else:
            data[f"response_{label}"] = f"(this group has no response {label})"
            data[f"reward_{label}"] = ""
    data[REWARDS_FIELD] = "\n".join(rewards)
    if reward is not None:
        data["reward"] = reward
    return {"data": data}
