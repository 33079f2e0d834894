"""`lowtide demo/up/status/down` with a real Label Studio (installed once per machine, 20-80 s
start): one server start covers the demo and the service commands."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import httpx
import pytest

from lowtide.services.credentials import read_env_file
from lowtide.services.process import free_port, is_running, port_is_free
from tests.conftest import REPO, SECRET_VARS, run_cli

pytestmark = [pytest.mark.labelstudio, pytest.mark.slow, pytest.mark.timeout(900)]


def test_demo_then_status_token_down(tmp_path: Path, own_redis) -> None:
    port = free_port()
    env = {
        "REDIS_URL": own_redis.url,  # the demo routes rollouts: to a Redis of this test's own
        "LOWTIDE_STATE_DIR": str(tmp_path / ".lowtide"),
        "LOWTIDE_ENV_FILE": str(tmp_path / ".env"),
        **{name: "" for name in SECRET_VARS},  # generated into .env, not inherited
    }
    shutil.copytree(REPO / "configs", tmp_path / "configs")
    up = run_cli("demo", "--label-studio-port", str(port), "--steps", "3", cwd=tmp_path, env=env)
    assert up.returncode == 0, up.stderr
    try:
        assert (tmp_path / "outputs" / "tiny" / "policy" / "config.json").exists()
        assert "'Name a color.'" in up.stderr  # the tiny model answered
        assert ": 3 steps in" in up.stdout  # it trained, and printed the summary
        assert "low-reward rollouts (reward < 0.2) to queue 'lowtide-annotate'" in up.stderr
        runs = [p for p in (tmp_path / "outputs").iterdir() if p.name != "tiny"]
        assert len(runs) == 1 and (runs[0] / "checkpoints" / "step-000003").exists()
        secrets = read_env_file(tmp_path / ".env")
        api_key = secrets["LABEL_STUDIO_API_KEY"]
        assert (
            len(api_key) >= 20
            and secrets["LABEL_STUDIO_USERNAME"]
            and secrets["LABEL_STUDIO_PASSWORD"]
        )
        assert (tmp_path / ".env").stat().st_mode & 0o077 == 0  # only the owner can read it
        printed = up.stdout + up.stderr
        assert f"http://127.0.0.1:{port}" in printed
        assert secrets["LABEL_STUDIO_USERNAME"] in printed and str(tmp_path / ".env") in printed
        assert api_key not in printed and secrets["LABEL_STUDIO_PASSWORD"] not in printed

        status = run_cli("status", cwd=tmp_path, env=env)
        rows = [
            line for line in status.stdout.splitlines() if "redis" in line or "label-studio" in line
        ]
        assert len(rows) == 2 and all("healthy" in row for row in rows), status.stdout

        # The printed token works against the real API, with the legacy Token header.
        response = httpx.get(
            f"http://127.0.0.1:{port}/api/projects",
            headers={"Authorization": f"Token {api_key}"},
            timeout=30,
        )
        assert response.status_code == 200, response.text

        again = run_cli("up", "--label-studio-port", str(port), cwd=tmp_path, env=env)
        assert again.returncode == 0 and "already running" in again.stderr

        wrong_env = {**env, "LABEL_STUDIO_API_KEY": "not-the-token"}
        wrong = run_cli(
            "up",
            "--only",
            "label-studio",
            "--label-studio-port",
            str(port),
            cwd=tmp_path,
            env=wrong_env,
        )
        assert wrong.returncode == 1
        assert "rejects the API token" in wrong.stderr and "Traceback" not in wrong.stderr
    finally:
        services = json.loads((tmp_path / ".lowtide" / "services.json").read_text())
        down = run_cli("down", cwd=tmp_path, env=env)
    assert down.returncode == 0, down.stderr
    label_studio = services["label-studio"]
    assert not is_running(label_studio["pid"])
    assert port_is_free(port)
    if services["redis"]["pid"] is None:  # an external Redis is never stopped by us
        assert "left running" in down.stderr
