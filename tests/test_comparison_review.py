"""A comparison review end to end: a prompt group routed as one task, imported by the worker
into a real Label Studio with the comparison form, reviewed in headless Chromium with the keys
(a digit picks the best, shift and a digit the worst, a letter ticks a category), blind (no
reward and no reason for the pick before the best is picked; the rewards on request after),
exported as the preference pairs the verdict gives (checked by hand here), and trained on.

Chromium and its driver come from the system packages (`make browser`). Without them the test
skips with what to install, except in CI (CI=true), where a missing browser fails it.
"""

from __future__ import annotations

import json
import secrets
import time
from pathlib import Path
from typing import Any

import pytest

from annotation.config import AgreementConfig, AnnotationConfig
from annotation.export import ExportPaths, export_annotations
from annotation.review_form import ReviewForm
from annotation.reward_model.data import load_rm_data
from annotation.reward_model.train import RMTrainSettings, train_reward_model
from tests.helpers import browser
from tests.helpers.labelstudio import LabelStudioServer
from tests.helpers.records import comparison_records
from tests.helpers.worker_import import import_through_the_worker
from tests.test_reviewer_ui import (
    REWARD_PANEL,
    assert_blind,
    log_in,
    open_reward_panel,
    page_text,
    press,
    reopen,
    submitted_values,
    wait_for,
)

pytestmark = [pytest.mark.e2e, pytest.mark.labelstudio, pytest.mark.slow, pytest.mark.timeout(900)]

SCREENSHOT = "review_compare.png"  # in docs/images when refreshed (tests/helpers/browser.py)
PROJECT = "comparison review"
WAIT_S = 60
PROMPT = "Name a cool colour in one sentence."
RESPONSES = ["Blue is cool.", "Red.", "Green, I think, is cool.", "No.", "Blue!"]
REWARDS = [0.9, 0.1, 0.6, 0.0, 0.8]


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def worker_config(server: LabelStudioServer) -> AnnotationConfig:
    return AnnotationConfig(
        label_studio_url=server.url, api_key=server.api_key, project=PROJECT,
        review_mode="compare",
    )  # fmt: skip


def test_a_group_is_one_task_reviewed_with_keys_exported_as_pairs_and_trained_on(
    label_studio: LabelStudioServer, tiny_models, tmp_path: Path
) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    run_id = f"cmp-{secrets.token_hex(3)}"
    records = comparison_records(run_id, PROMPT, RESPONSES, REWARDS)
    assert len(records) == 1  # two picks of one group ("Red.", "No."): one task
    shown = [member["response"] for member in records[0]["compare"]]
    # The selected one, the group's best and a spread of the rest; a near-copy left out.
    assert sorted(shown) == sorted(["Blue is cool.", "Red.", "Green, I think, is cool.", "No."])
    project_id = import_through_the_worker(worker_config(label_studio), records, "comparison-test")
    with label_studio.client() as client:
        form = ReviewForm.read(client.labeling_config(project_id))
        assert form.is_comparison and form.labels == ("A", "B", "C", "D")
        task_id = client.task_ids_by_sample_id(project_id, [records[0]["sample_id"]])[
            records[0]["sample_id"]
        ]

    with browser.headless_chrome("1500,1400", WAIT_S) as driver:
        log_in(driver, label_studio)
        driver.get(f"{label_studio.url}/projects/{project_id}/data?task={task_id}")
        wait_for(driver, ".lsf-choice, .ant-checkbox-wrapper, .ant-radio-wrapper")
        time.sleep(1.0)  # the editor binds its hotkeys after rendering
        text = page_text(driver)
        assert PROMPT in text
        for response in shown:
            assert response in text
        assert_blind(text)  # blind: no response's reward, no reason for the pick
        assert REWARD_PANEL not in text
        best = "ABCD"[shown.index("Blue is cool.")]
        worst = "ABCD"[shown.index("No.")]
        driver.find_element(By.TAG_NAME, "body").click()
        press(driver, str("ABCD".index(best) + 1))
        chain = ActionChains(driver).key_down(Keys.SHIFT).send_keys(str("ABCD".index(worst) + 1))
        chain.key_up(Keys.SHIFT).perform()
        time.sleep(0.2)
        press(driver, "i")  # the worst hallucinates, say
        text = page_text(driver)  # the best picked: the rewards' panel, closed
        assert REWARD_PANEL in text and "A: reward" not in text
        browser.save_screenshot(driver, SCREENSHOT)
        values = submitted_values(driver, label_studio, task_id)
        # After submitting, each response's reward, on request.
        reopen(driver, label_studio, project_id, task_id)
        rewards = open_reward_panel(driver)
    assert values["best"] == {"choices": [best]} and values["worst"] == {"choices": [worst]}
    assert values["failure"] == {"choices": ["hallucination"]}
    for label, member in zip("ABCD", records[0]["compare"], strict=True):
        assert f"{label}: reward {member['reward']:.4g}" in rewards

    out = tmp_path / "data" / "annotations.jsonl"
    with label_studio.client() as client:
        summary = export_annotations(client, PROJECT, out, since="all")
    assert summary.comparison_rows >= 1
    paths = ExportPaths.beside(out)
    ours = [row for row in rows(paths.comparisons) if row["meta"]["run_id"] == run_id]
    assert len(ours) == 1 and ours[0]["meta"]["reviews"][0]["categories"] == ["hallucination"]
    pairs = {
        (row["chosen"], row["rejected"])
        for row in rows(paths.preferences)
        if row["sample_id"] == records[0]["sample_id"]
    }
    # Best over each other one, each other one over the worst: 5 of the 6 orders.
    assert pairs == {
        ("Blue is cool.", "Red."),
        ("Blue is cool.", "Green, I think, is cool."),
        ("Blue is cool.", "No."),
        ("Red.", "No."),
        ("Green, I think, is cool.", "No."),
    }

    data = load_rm_data(out)
    assert len([p for p in data.pairs if p.sample_id == records[0]["sample_id"]]) == 5
    report = train_reward_model(
        data, tiny_models.reward_model, tmp_path / "rm", RMTrainSettings(epochs=1, holdout=0.0)
    )
    assert report is not None and (tmp_path / "rm").is_dir()


def test_two_reviewers_who_disagree_on_the_best_give_no_pair_between_those_two() -> None:
    from annotation.comparison_rows import comparison_preferences, comparison_row

    task = {
        "id": 7,
        "data": {
            "sample_id": "c-1", "run_id": "r", "step": 0, "prompt": "p",
            "compare": [{"label": label, "sample_id": f"s{label}", "response": f"text {label}"}
                        for label in "ABCD"],
        },
    }  # fmt: skip
    reviews = [
        {"reviewer": 1, "annotation_id": 1, "annotated_at": "1", "best": "A", "worst": "D",
         "categories": [], "better_response": None, "note": None},
        {"reviewer": 2, "annotation_id": 2, "annotated_at": "2", "best": "B", "worst": "D",
         "categories": [], "better_response": None, "note": None},
    ]  # fmt: skip
    row = comparison_row(task, reviews, AgreementConfig())
    assert row is not None
    assert row["meta"]["agreed"] is False and row["meta"]["disputed"] == [["sA", "sB"]]
    pairs = {(p["chosen"], p["rejected"]) for p in comparison_preferences(row)}
    # Both say A and B beat C and D, and C beats D; nobody agrees on A against B.
    assert pairs == {
        ("text A", "text C"), ("text A", "text D"), ("text B", "text C"), ("text B", "text D"),
        ("text C", "text D"),
    }  # fmt: skip
    assert ("text A", "text B") not in pairs and ("text B", "text A") not in pairs
    # 5 orders agreed by both, the disputed pair split 1:1.
    assert row["meta"]["agreement"] == round((5 + 0.5) / 6, 4)
    everything = comparison_preferences(row, AgreementConfig(preferences="all"))
    assert len(everything) == 5  # a 1:1 split is no majority either
