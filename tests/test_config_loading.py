"""Config loading: precedence of file, environment and flags; secrets masked in every output."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from lowtide.config import dump_run_config, load_run_config
from rl.masking import mask_url
from tests.conftest import REPO, invoke

pytestmark = pytest.mark.unit

BASE = "model:\n  actor:\n    model_name_or_path: outputs/tiny/policy\n"


def test_flags_parse_as_yaml_values(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(BASE)
    config = load_run_config(
        tmp_path / "c.yaml",
        [
            "--trainer.num_epochs=3",
            "--trainer.learning_rate", "3e-4",
            "--logger.name=[wandb,tensorboard]",
            "--logger.log_interval=10",
            "--device=cpu",
            "--model.actor.model_name_or_path=/models/2024",
            "--run_id=2024",
        ],
        environ={},
    )  # fmt: skip
    assert config.trainer.num_epochs == 3
    assert config.trainer.learning_rate == pytest.approx(3e-4)
    assert config.logger.name == ["wandb", "tensorboard"]
    assert (config.logger.log_interval.scalars, config.logger.log_interval.tables) == (10, 10)
    assert config.device == "cpu"
    assert config.model.actor.model_name_or_path == "/models/2024"
    assert config.run_id == "2024"  # numbers given for text stay text


def test_flags_win_over_environment_which_wins_over_the_file(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(BASE + "queue:\n  redis_url: redis://file:6379/0\n")
    env = {"REDIS_URL": "redis://env:6379/0"}
    from_env = load_run_config(tmp_path / "c.yaml", [], environ=env)
    assert from_env.queue.redis_url.get_secret_value() == "redis://env:6379/0"
    from_flag = load_run_config(
        tmp_path / "c.yaml", ["--queue.redis_url=redis://flag:1/0"], environ=env
    )
    assert from_flag.queue.redis_url.get_secret_value() == "redis://flag:1/0"
    from_file = load_run_config(tmp_path / "c.yaml", [], environ={})
    assert from_file.queue.redis_url.get_secret_value() == "redis://file:6379/0"


def test_list_entries_can_be_overridden(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(BASE + "hooks:\n  - {type: early_stop, stage: step_end}\n")
    config = load_run_config(
        tmp_path / "c.yaml", ["--hooks.0.every=5", "--hooks.0.params.patience=3"], environ={}
    )
    assert config.hooks[0].every == 5
    assert config.hooks[0].params == {"patience": 3}


def test_secrets_come_from_the_environment_and_are_masked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    secrets = {
        "LABEL_STUDIO_API_KEY": "ls-secret-0123456789",
        "WANDB_API_KEY": "wandb-secret-9876543210",
        "REDIS_URL": "rediss://worker:hunter2-redis-pw@redis.internal:6380/2",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    (tmp_path / "c.yaml").write_text(BASE)
    code, shown, _ = invoke(capsys, "config", "show", "--config", str(tmp_path / "c.yaml"))
    assert code == 0
    for value in (secrets["LABEL_STUDIO_API_KEY"], secrets["WANDB_API_KEY"], "hunter2-redis-pw"):
        assert value not in shown
    data = yaml.safe_load(shown)
    assert data["annotation"]["api_key"] == "**********"
    assert data["logger"]["wandb_api_key"] == "**********"
    assert data["queue"]["redis_url"] == "rediss://worker:****@redis.internal:6380/2"
    # ...while the loaded config still holds the real values for the code that needs them.
    config = load_run_config(tmp_path / "c.yaml", [])
    assert config.annotation.api_key.get_secret_value() == secrets["LABEL_STUDIO_API_KEY"]
    assert "hunter2" not in repr(config) and "hunter2" not in str(config)


def test_dumped_config_loads_back_the_same(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(BASE)
    config = load_run_config(tmp_path / "c.yaml", ["--trainer.seed=7"], environ={})
    (tmp_path / "again.yaml").write_text(dump_run_config(config))
    again = load_run_config(tmp_path / "again.yaml", [], environ={})
    assert again == config


@pytest.mark.parametrize(
    "url, shown",
    [
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
        ("redis://:pw@host:6379/0", "redis://:****@host:6379/0"),
        ("rediss://user:p%40ss@host/1", "rediss://user:****@host/1"),
    ],
)
def test_mask_url(url: str, shown: str) -> None:
    assert mask_url(url) == shown


def test_shipped_configs_are_valid() -> None:
    for path in sorted((REPO / "configs").glob("*.yaml")):
        load_run_config(path, [], environ={})
