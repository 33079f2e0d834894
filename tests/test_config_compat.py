"""What today's version accepts keeps loading: every config shipped in `configs/`, a run
directory's saved `config.yaml`, and the settings a loop directory is bound to."""

from __future__ import annotations

from pathlib import Path

import pytest

from lowtide.config import dump_run_config, load_run_config
from tests.conftest import REPO

pytestmark = pytest.mark.unit

SAVED_RUN_CONFIG = REPO / "tests" / "data" / "saved_run_config.yaml"
# What `lowtide loop` with its default options bound a loop directory to (loop.json's
# settings.loop), as saved when loop directories were first made with these settings.
LOOP_BOUND_TO = {
    "eval_prompts": None,
    "reviewer": None,
    "reviewer_email": "scripted-reviewer@lowtide.local",
    "rm_epochs": 3,
    "rm_learning_rate": 0.0003,
    "start": "previous",
    "steps": None,
}


@pytest.mark.parametrize("path", sorted((REPO / "configs").glob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_config_loads(path: Path) -> None:
    config = load_run_config(path, environ={})
    assert config.model.actor.model_name_or_path


def test_a_saved_run_directory_config_loads_as_it_was_saved(tmp_path: Path) -> None:
    config = load_run_config(SAVED_RUN_CONFIG, environ={})
    assert config.run_id == "quickstart-20261206-090000"
    assert (config.sampling.policy, config.sampling.review_budget.reviews) == ("budget", 50)
    assert config.sampling.compare_size == config.annotation.compare.size == 4
    assert config.logger.name == ["console", "jsonl"]
    # Saved again, it loads again (a run resumed from its own directory).
    again = tmp_path / "config.yaml"
    again.write_text(dump_run_config(config))
    assert load_run_config(again, environ={}) == config


def test_a_loop_directory_made_with_the_default_options_still_resumes() -> None:
    from lowtide.loop.settings import LoopSettings, bound_settings

    config = load_run_config(SAVED_RUN_CONFIG, environ={})
    assert bound_settings(LoopSettings(), config)["loop"] == LOOP_BOUND_TO
