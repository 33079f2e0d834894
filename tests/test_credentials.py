"""Label Studio credentials: from the environment, else `.env`, else generated once into `.env`."""

from __future__ import annotations

from pathlib import Path

import pytest

from lowtide.services.credentials import ensure_credentials, read_env_file

pytestmark = pytest.mark.unit


def test_generated_once_and_appended_to_a_hand_written_env_file(workdir: Path) -> None:
    (workdir / ".env").write_text("WANDB_MODE=offline")  # no final newline
    first = ensure_credentials()
    values = read_env_file(workdir / ".env")
    assert values["WANDB_MODE"] == "offline"
    assert values["LABEL_STUDIO_API_KEY"] == first.api_key
    assert "@" in first.username  # Label Studio wants an email-like login
    assert ensure_credentials() == first  # stable once written
    assert (workdir / ".env").stat().st_mode & 0o077 == 0


def test_the_environment_wins_and_nothing_is_written(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "from-the-environment-123")
    monkeypatch.setenv("LABEL_STUDIO_USERNAME", "me@example.org")
    monkeypatch.setenv("LABEL_STUDIO_PASSWORD", "a-password")
    credentials = ensure_credentials()
    assert credentials.api_key == "from-the-environment-123"
    assert not (workdir / ".env").exists()


def test_a_new_setup_gets_a_task_seal_key_and_an_existing_one_keeps_its_own(
    workdir: Path,
) -> None:
    ensure_credentials()
    key = read_env_file(workdir / ".env")["LOWTIDE_TASK_KEY"]
    assert len(key) == 64
    # A setup whose API token is already written seals tasks with the key derived from it: a
    # new key would not match the seals of the tasks it holds.
    existing = workdir / "existing.env"
    existing.write_text("LABEL_STUDIO_API_KEY=an-older-token-1234\n")
    ensure_credentials(existing)
    assert "LOWTIDE_TASK_KEY" not in read_env_file(existing)
    ensure_credentials()
    assert read_env_file(workdir / ".env")["LOWTIDE_TASK_KEY"] == key  # stable once written


def test_a_trainers_script_finds_the_redis_password_up_kept_without_its_environment_changing(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The adapters (TRL, verl, OpenRLHF) build their router from `.env` as the commands do,
    and leave os.environ as it was; a LOWTIDE_CONFIG there is never followed."""
    import os

    from lowtide.integrations import routing_settings

    (workdir / ".env").write_text(
        "REDIS_URL=redis://:kept-by-up-55@127.0.0.1:6391/0\nLOWTIDE_CONFIG=/nowhere.yaml\n"
    )
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:6391/0")  # as the user set it
    settings = routing_settings()
    assert settings.queue.redis_url.get_secret_value() == "redis://:kept-by-up-55@127.0.0.1:6391/0"
    assert (
        os.environ["REDIS_URL"] == "redis://127.0.0.1:6391/0" and "LOWTIDE_CONFIG" not in os.environ
    )
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:6392/0")  # another server: not its password
    assert routing_settings().queue.redis_url.get_secret_value() == "redis://127.0.0.1:6392/0"
