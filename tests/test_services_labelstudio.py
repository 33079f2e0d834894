"""`lowtide demo/up/status/down` with a real Label Studio (installed once per machine, 20-80 s
start): one server start covers the whole loop of the demo (train with the sampler, worker
imports, scripted reviews, export, `rm train`, a second training against the new reward model)
and the service commands."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import httpx
import pytest

from lowtide.services.credentials import read_env_file
from lowtide.services.process import free_port, is_running, port_is_free
from tests.conftest import REPO, SECRET_VARS, run_cli
from tests.helpers.labelstudio_template import migrated_copy

pytestmark = [pytest.mark.e2e, pytest.mark.labelstudio, pytest.mark.slow, pytest.mark.timeout(900)]


def test_demo_then_status_token_down(tmp_path: Path, own_redis) -> None:
    port = free_port()
    env = {
        "REDIS_URL": own_redis.url,  # the demo routes rollouts: to a Redis of this test's own
        "LOWTIDE_STATE_DIR": str(tmp_path / ".lowtide"),
        "LOWTIDE_ENV_FILE": str(tmp_path / ".env"),
        **{name: "" for name in SECRET_VARS},  # generated into .env, not inherited
    }
    shutil.copytree(REPO / "configs", tmp_path / "configs")
    # Label Studio's first start migrates an empty database (~20 s of CPU, more under the
    # suite's load): the demo starts on a migrated copy, as the suite's other servers do. A
    # first start, and the account `up` makes for it, are tested in tests/test_up_postgres.py.
    account = migrated_copy(tmp_path / ".lowtide", tmp_path / ".env")
    (tmp_path / ".env").write_text(
        f"LABEL_STUDIO_USERNAME={account.username}\nLABEL_STUDIO_PASSWORD={account.password}\n"
        f"LABEL_STUDIO_API_KEY={account.api_key}\n"
    )
    up = run_cli(
        "demo", "--label-studio-port", str(port), "--steps", "6", "--simulate-review",
        "--second-steps", "3", cwd=tmp_path, env=env,
    )  # fmt: skip
    try:
        assert up.returncode == 0, up.stderr
        assert (tmp_path / "outputs" / "tiny" / "policy" / "config.json").exists()
        assert "'Name a color.'" in up.stderr  # the tiny model answered
        assert ": 6 steps in" in up.stdout and ": 3 steps in" in up.stdout  # both trainings

        # Every hop of the loop, counted: routed = imported = reviewed = exported.
        hop = re.search(r"routed (\d+) low-reward rollouts \(reward < 0.2\); (\d+) are now "
                        r"review tasks", up.stderr)  # fmt: skip
        assert hop is not None, up.stderr
        routed, imported = int(hop[1]), int(hop[2])
        assert routed == imported and routed >= 20
        reviewed = re.search(r"reviewed (\d+) tasks .*; exported (\d+) rating rows, (\d+) "
                             r"preference rows", up.stderr)  # fmt: skip
        assert reviewed is not None and int(reviewed[1]) == int(reviewed[2]) == routed
        exported = (tmp_path / "data" / "reward_model" / "annotations.jsonl").read_text()
        assert len(exported.splitlines()) == routed
        pairs = int(reviewed[3])
        assert pairs > 0 and len(
            (tmp_path / "data" / "reward_model" / "annotations.preferences.jsonl")
            .read_text().splitlines()
        ) == pairs  # fmt: skip

        # The new reward model beats chance on held-out reviewed pairs, and a run used it.
        accuracy = re.search(r"new pair accuracy ([0-9.]+) on (\d+) pairs", up.stderr)
        assert accuracy is not None and int(accuracy[2]) >= 3
        assert float(accuracy[1]) > 0.5, up.stderr
        rm_dirs = list((tmp_path / "outputs" / "reward_models").iterdir())
        assert len(rm_dirs) == 1 and (rm_dirs[0] / "README.md").exists()
        second_config = [p for p in (tmp_path / "outputs").glob("*/config.yaml")
                         if f"reward_models/{rm_dirs[0].name}" in p.read_text()]  # fmt: skip
        assert len(second_config) == 1  # the second run's reward is the new model
        assert "run 2 (new reward model): blue/green rate" in up.stdout

        runs = [p for p in (tmp_path / "outputs").glob("2*") if p.is_dir()]
        assert len(runs) == 2 and any((r / "checkpoints" / "step-000006").exists() for r in runs)
        secrets = read_env_file(tmp_path / ".env")
        api_key = secrets["LABEL_STUDIO_API_KEY"]
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
    finally:  # whatever failed above, stop what the demo started
        state = tmp_path / ".lowtide" / "services.json"
        services = json.loads(state.read_text()) if state.exists() else {}
        down = run_cli("down", cwd=tmp_path, env=env)
    assert down.returncode == 0, down.stderr
    label_studio = services["label-studio"]
    assert not is_running(label_studio["pid"])
    assert port_is_free(port)
    if services["redis"]["pid"] is None:  # an external Redis is never stopped by us
        assert "left running" in down.stderr
