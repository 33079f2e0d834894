"""What a review project explains and how its Data Manager opens: the instruction panel (what
each rating means, what each failure category covers, how the reward was computed, the keys) and
the saved view of the tasks left to review.

The rating and category keys are read from the labeling config itself, so the instructions
never disagree with the controls a reviewer sees.

A blind review (`annotation.blind_review`, the default; annotation/review_display.py says why)
reaches the Data Manager too: its view is "Unreviewed", in the order the tasks came, with every
column that holds the reward or the reason for the pick hidden, where a review that is not blind
gets "Unreviewed, lowest reward first" with the reward beside each task. The Data Manager
cannot keep a reviewer who asks for those columns from seeing them: blind is what the review
shows, not an access control.
"""

from __future__ import annotations

import html
from typing import Any

from annotation.comparison import LABELS
from annotation.review_form import ReviewForm
from annotation.review_results import RATING_KIND

REVIEW_VIEW_TITLE = "Unreviewed, lowest reward first"
BLIND_VIEW_TITLE = "Unreviewed"
VIEW_TITLES = (REVIEW_VIEW_TITLE, BLIND_VIEW_TITLE)  # lowtide's views: a project has one
REWARD_COLUMN = "tasks:data.reward"
TASK_ID_COLUMN = "tasks:id"

_OPEN_TASK = (
    "one response the model gave during training that the reward function scored low, or that "
    "was picked for an audit."
)
_BLIND_TASK = "one response the model gave during training, picked for review."  # not why
_OPEN_WORDS = "the reward is a hint, not the answer."
_BLIND_WHERE = " (in the panel at the end, once you have decided)"
_BLIND_WORDS = (
    "the reward is not shown until you have decided, so that your judgement is your own: a "
    "review is what corrects the reward, and one who has seen it tends to agree with it. Once "
    "you have rated (a comparison: picked the best), the panel at the end shows it on request, "
    "as it does on a submitted review."
)

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
_SHOWN_WHILE_LABELING = (TASK_ID_COLUMN, "tasks:completed_at", REWARD_COLUMN)
# What a blind review hides besides: the reward in any form (a comparison's per response) and
# why the task was picked, and the prediction columns (a suggestion is a machine's verdict).
_REWARD_COLUMNS = (
    REWARD_COLUMN,
    "tasks:data.reward_shown",
    "tasks:data.rewards_text",
    *(f"tasks:data.reward_{label}" for label in LABELS),
    "tasks:data.compare",
    "tasks:data.selected_by",
    "tasks:predictions_score",
    "tasks:predictions_results",
    "tasks:predictions_model_versions",
    "tasks:data.blind",
)
_OTHER_COLUMNS = (
    "tasks:total_annotations",
    "tasks:annotators",
    "tasks:predictions_score",
    "tasks:data.run_id",
    "tasks:data.step",
    "tasks:data.prompt",
    "tasks:data.response_visible",
)


def review_view_data(blind: bool = True) -> dict[str, Any]:
    """The `data` of the saved Data Manager view: tasks that still need a review (Label Studio
    sets `completed_at` once a task has all the reviews the project's overlap asks for), lowest
    reward first. The reward column is displayed as a number, which is also what makes Label
    Studio sort it numerically (10 after 9) and give it numeric filters (`less than 0.2`).
    `blind`: in the order they came, and no column that holds the reward or why it was picked
    (module docstring)."""
    all_columns = (*_HIDDEN_IN_LIST, *_SHOWN_WHILE_LABELING, *_OTHER_COLUMNS)
    hidden = [*_HIDDEN_IN_LIST, *(_REWARD_COLUMNS if blind else ())]
    shown_labeling = [c for c in _SHOWN_WHILE_LABELING if not (blind and c in _REWARD_COLUMNS)]
    return {
        "title": BLIND_VIEW_TITLE if blind else REVIEW_VIEW_TITLE,
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
        "ordering": [TASK_ID_COLUMN if blind else REWARD_COLUMN],
        "hiddenColumns": {
            "explore": list(dict.fromkeys(hidden)),
            "labeling": list(
                dict.fromkeys(c for c in (*all_columns, *hidden) if c not in shown_labeling)
            ),
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


def review_instructions(labeling_config_xml: str, blind: bool = True) -> str:
    """The instruction panel's HTML for a project with this labeling config. `blind`: it says
    the reward is kept back until the reviewer has decided, and why."""
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
        f"<p>Each task is {_BLIND_TASK if blind else _OPEN_TASK} Judge the response to the "
        f"prompt as a careful user would; {_BLIND_WORDS if blind else _OPEN_WORDS}</p>"
        f"<h4>Quality (required)</h4><ul>{ratings}</ul>{how}"
        "<h4>What went wrong (any that apply)</h4>"
        f"<ul>{categories or '<li>(no categories in this project)</li>'}</ul>"
        f"<h4>How the reward was computed{_BLIND_WHERE if blind else ''}</h4>"
        "<p>The reward is a weighted sum of components. Each component is listed as "
        "<code>value × weight = contribution</code>, and the contributions add up to the total. "
        "Details without a weight (such as a reward model's <code>/spread</code>) are shown "
        "for information and are not part of the total.</p>"
        "<h4>The response as generated</h4>"
        "<p>The response is shown as preformatted text: <code>·</code> marks a space, "
        "<code>→</code> a tab and <code>⏎</code> a line break at its start or end; "
        "control characters appear by name (<code>⟨NUL⟩</code>, <code>⟨ESC⟩</code>) and other "
        "invisible ones by code point (<code>⟨U+200B⟩</code>). The small grey line at the top "
        "traces the task to its run, step and sample"
        f"{'.' if blind else ', and says why it was picked.'}</p>"
        "<h4>Keys</h4><p>Submit: <kbd>Ctrl</kbd>+<kbd>Enter</kbd>. Keys do nothing while you "
        "type in a text box.</p>"
    )
