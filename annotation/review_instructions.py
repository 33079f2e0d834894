"""What a review project explains and how its Data Manager opens: the instruction panel (what
each rating means, what each failure category covers, how the reward was computed, the keys) and
the saved "Unreviewed, lowest reward first" view.

The rating and category keys are read from the labeling config itself, so the instructions
never disagree with the controls a reviewer sees.
"""

from __future__ import annotations

import html
from typing import Any

from annotation.review_form import ReviewForm
from annotation.review_results import RATING_KIND

REVIEW_VIEW_TITLE = "Unreviewed, lowest reward first"
REWARD_COLUMN = "tasks:data.reward"

RATINGS = (
    (1, "unusable: wrong, harmful, or no answer at all"),
    (2, "poor: the right idea, but mistakes a user would be hurt by"),
    (3, "acceptable: correct in substance, with flaws of form or completeness"),
    (4, "good: correct and useful, minor polish missing"),
    (5, "excellent: what an expert would have written"),
)

# Data Manager columns nobody needs while reviewing; hiding them brings reward, run and step
# next to the task id. Ids are Label Studio's (`tasks:<column>`, task data as `tasks:data.<key>`).
_HIDDEN_IN_LIST = (
    "tasks:inner_id",
    "tasks:cancelled_annotations",
    "tasks:total_predictions",
    "tasks:annotations_results",
    "tasks:annotations_ids",
    "tasks:predictions_model_versions",
    "tasks:predictions_results",
    "tasks:file_upload",
    "tasks:storage_filename",
    "tasks:created_at",
    "tasks:updated_at",
    "tasks:updated_by",
    "tasks:avg_lead_time",
    "tasks:draft_exists",
    "tasks:data.response",  # response_visible shows it
    "tasks:data.reward_text",  # reward shows it, as a number
    "tasks:data.reward_details",
    "tasks:data.trace",
    "tasks:data.sample_id",
)
# Beside the task being labeled, only what orients: which task, its reward, done or not.
_SHOWN_WHILE_LABELING = ("tasks:id", "tasks:completed_at", REWARD_COLUMN)
_OTHER_COLUMNS = (
    "tasks:total_annotations",
    "tasks:annotators",
    "tasks:predictions_score",
    "tasks:data.run_id",
    "tasks:data.step",
    "tasks:data.prompt",
    "tasks:data.response_visible",
)


def review_view_data() -> dict[str, Any]:
    """The `data` of the saved Data Manager view: tasks that still need a review (Label Studio
    sets `completed_at` once a task has all the reviews the project's overlap asks for), lowest
    reward first. The reward column is displayed as a number, which is also what makes Label
    Studio sort it numerically (10 after 9) and give it numeric filters (`less than 0.2`)."""
    all_columns = (*_HIDDEN_IN_LIST, *_SHOWN_WHILE_LABELING, *_OTHER_COLUMNS)
    return {
        "title": REVIEW_VIEW_TITLE,
        "type": "list",
        "target": "tasks",
        "filters": {
            "conjunction": "and",
            "items": [
                {
                    "filter": "filter:tasks:completed_at",
                    "operator": "empty",
                    "type": "Datetime",
                    "value": True,
                }
            ],
        },
        "ordering": [REWARD_COLUMN],
        "hiddenColumns": {
            "explore": list(_HIDDEN_IN_LIST),
            "labeling": [c for c in all_columns if c not in _SHOWN_WHILE_LABELING],
        },
        "columnsDisplayType": {REWARD_COLUMN: "Number", "tasks:data.step": "Number"},
        # Narrower columns (default ~170 px each): with the defaults the reward, which Label
        # Studio lists after the labeling config's fields, starts off screen.
        "columnsWidth": {
            "tasks:completed_at": 110,
            "tasks:annotators": 110,
            "tasks:predictions_score": 110,
            "tasks:data.prompt": 170,
            "tasks:data.response_visible": 220,
            "tasks:data.run_id": 110,
            "tasks:data.step": 80,
        },
    }


def review_instructions(labeling_config_xml: str) -> str:
    """The instruction panel's HTML for a project with this labeling config."""
    form = ReviewForm.read(labeling_config_xml)
    control = form.quality
    if control is not None and control.kind == RATING_KIND:  # an older project: stars
        ratings = "".join(
            f"<li><b>{count} star{'s' if count > 1 else ''}</b>: {html.escape(meaning)}</li>"
            for count, meaning in RATINGS
        )
        how = "<p>Click a star, or press its key to add one (after five it clears).</p>"
    else:
        keys = dict(control.keys) if control is not None else {}
        ratings = "".join(
            f"<li><b>{count}</b>"
            f"{f' (key <kbd>{html.escape(keys[count])}</kbd>)' if keys.get(count) else ''}"
            f": {html.escape(meaning)}</li>"
            for count, meaning in RATINGS
        )
        how = "<p>Press the rating's number, or click it; another number replaces it.</p>"
    categories = "".join(
        f"<li><b>{html.escape(c.value)}</b>"
        f"{f' (key <kbd>{html.escape(c.hotkey)}</kbd>)' if c.hotkey else ''}"
        f"{f': {html.escape(c.hint)}' if c.hint else ''}</li>"
        for c in form.failures
    )
    return (
        "<h3>Reviewing a response</h3>"
        "<p>Each task is one response the model gave during training that the reward function "
        "scored low, or that was picked for an audit. Judge the response to the prompt as a "
        "careful user would; the reward is a hint, not the answer.</p>"
        f"<h4>Quality (required)</h4><ul>{ratings}</ul>{how}"
        "<h4>What went wrong (any that apply)</h4>"
        f"<ul>{categories or '<li>(no categories in this project)</li>'}</ul>"
        "<h4>How the reward was computed</h4>"
        "<p>The reward is a weighted sum of components. Each component is listed as "
        "<code>value × weight = contribution</code>, and the contributions add up to the total. "
        "Details without a weight (such as a reward model's <code>/spread</code>) are shown "
        "for information and are not part of the total.</p>"
        "<h4>The response as generated</h4>"
        "<p>The response is shown as preformatted text: <code>·</code> marks a space, "
        "<code>→</code> a tab and <code>⏎</code> a line break at its start or end; "
        "control characters appear by name (<code>⟨NUL⟩</code>, <code>⟨ESC⟩</code>) and other "
        "invisible ones by code point (<code>⟨U+200B⟩</code>). The small grey line at the top "
        "traces the task to its run, step and sample, and says why it was picked.</p>"
        "<h4>Keys</h4><p>Submit: <kbd>Ctrl</kbd>+<kbd>Enter</kbd>. Keys do nothing while you "
        "type in a text box.</p>"
    )
