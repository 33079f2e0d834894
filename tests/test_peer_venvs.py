"""Other trainers' cached virtualenvs (lowtide.services.peer_venvs): what makes one current, how
a cached one is found and linked without rebuilding, and how a failed build reads. The real
builds run in `make test` (peer-venvs) and are used by the adapters' tests."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import tomllib

from lowtide.errors import UserError
from lowtide.services import peer_venvs
from tests.conftest import REPO

pytestmark = pytest.mark.unit

PROJECT_PINS = (REPO / "pyproject.toml").read_text()


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("LOWTIDE_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def fake_installed(peer: peer_venvs.PeerVenv, project: Path) -> None:
    """What a finished build leaves: the venv's python and the markers with the recipe's and the
    installed source's prints."""
    (peer.dir / "bin").mkdir(parents=True)
    peer.python.write_text("")
    (peer.dir / ".lowtide-installed").write_text(peer.fingerprint(project))
    (peer.dir / ".lowtide-source").write_text(peer_venvs.source_fingerprint(project))


def fake_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "sampling").mkdir(parents=True)
    (project / "sampling" / "routing.py").write_text("# the routing core\n")
    (project / "pyproject.toml").write_text(PROJECT_PINS)
    return project


def test_the_base_install_is_the_routing_core_without_what_would_move_a_trainers_pins() -> None:
    base = tomllib.loads(PROJECT_PINS)["project"]["dependencies"]
    names = {re.split(r"[<>=!~;\[ ]", spec, maxsplit=1)[0].lower() for spec in base}
    assert not names & {"torch", "transformers", "wandb", "datasets", "label-studio-sdk", "trl"}
    assert {"pydantic", "redis", "rq", "phonenumbers", "python-stdnum", "typer"} <= names
    extras = tomllib.loads(PROJECT_PINS)["project"]["optional-dependencies"]
    assert {"review", "train", "all", "dev"} <= set(extras)


@pytest.mark.parametrize("name", ["trl", "verl", "openrlhf"])
def test_each_trainers_page_gives_the_one_install_line_the_peer_venvs_run(name: str) -> None:
    """The line the peer venvs are built with is the page's, word for word; the README says it
    too. No `--no-deps` list to keep in step with the imports any more."""
    from tests.helpers.docs import page

    text = page(f"integrations/{name}.md")
    assert f"`{peer_venvs.INSTALL_LINE}`" in text
    assert "--no-deps" not in text
    assert f"`{peer_venvs.INSTALL_LINE}`" in (REPO / "README.md").read_text()
    command = peer_venvs.install_command(Path("/venv/bin/python"), Path("/src/lowtide"))
    assert command == ["/venv/bin/python", "-m", "pip", "install", "/src/lowtide", "--quiet"]
    spaced = peer_venvs.install_command(Path("/venv/bin/python"), Path("/my src/lowtide"))
    assert spaced[4] == "/my src/lowtide"


def test_a_changed_recipe_or_base_dependency_makes_the_cached_venv_stale(
    cache: Path, tmp_path: Path
) -> None:
    project = fake_project(tmp_path)
    peer = peer_venvs.VERL
    fake_installed(peer, project)
    assert peer.is_installed(project) and peer.has_current_lowtide(project)
    assert str(peer.dir).startswith(str(cache))
    assert not dataclasses.replace(peer, steps=(*peer.steps, ("extra",))).is_installed(project)
    (project / "pyproject.toml").write_text(PROJECT_PINS.replace('"rq>=2.12,<2.13"', '"rq>=3"'))
    assert not peer.is_installed(project)


def test_changed_code_or_extras_reinstall_only_lowtide(cache: Path, tmp_path: Path) -> None:
    project = fake_project(tmp_path)
    peer = peer_venvs.VERL
    fake_installed(peer, project)
    (project / "sampling" / "routing.py").write_text("# changed\n")
    assert peer.is_installed(project) and not peer.has_current_lowtide(project)
    fake_installed_source = peer_venvs.source_fingerprint(project)
    (peer.dir / ".lowtide-source").write_text(fake_installed_source)
    (project / "pyproject.toml").write_text(PROJECT_PINS.replace('"ruff>=0.6"', '"ruff>=0.7"'))
    assert peer.is_installed(project) and not peer.has_current_lowtide(project)


def test_a_cached_venv_is_linked_into_the_project_without_building(
    cache: Path, tmp_path: Path
) -> None:
    project = fake_project(tmp_path)
    peer = dataclasses.replace(peer_venvs.VERL, steps=(("never-installed",),))
    fake_installed(peer, project)
    started = time.monotonic()
    python = peer_venvs.ensure(peer, project)
    assert time.monotonic() - started < 1  # no venv, no pip: only the lock and the link
    assert python == peer.python
    assert (project / ".venv-verl").resolve() == peer.dir.resolve()
    # The tests' helpers import from the checkout; lowtide there is the installed copy's code.
    assert peer.environ(project, {"PYTHONPATH": "/x"})["PYTHONPATH"] == f"{project}:/x"


ROUTE_A_BATCH = """
import json, sys
import lowtide
from lowtide.integrations import router_from_config
from sampling.routing import BatchInfo, PlainSample

queue, spool = sys.argv[1], sys.argv[2]
router = router_from_config(overrides=[
    f"--queue.name={queue}", f"--queue.spool_dir={spool}", "--sampling.policy=threshold",
    "--sampling.threshold=0.5",
])
samples = [PlainSample("Name a color.", "I cannot say.", 0.1),
           PlainSample("Name a color.", "Blue.", 0.9, index=1)]
counts = router.route(samples, BatchInfo(run_id="light-install", step=1))
router.close()
print(json.dumps({"lowtide": lowtide.__file__, "submitted": counts.submitted}))
"""


@pytest.mark.slow
@pytest.mark.parametrize("name", ["verl", "openrlhf"])
@pytest.mark.e2e
def test_the_docs_install_line_alone_routes_a_batch_to_redis(name: str, tmp_path: Path) -> None:
    """The trainer's venv, with lowtide installed by the page's line and nothing of the checkout
    on the path, imports the routing core and queues the low-reward sample in a real Redis."""
    import redis
    from rq import Queue
    from rq.serializers import JSONSerializer

    from tests.helpers.pipeline import REDIS_URL
    from tests.helpers.queued import queued_records

    peer = peer_venvs.PEERS[name]
    python = peer_venvs.ensure(peer, REPO)
    queue = f"test-light-{name}-{uuid.uuid4().hex[:8]}"
    env = {key: value for key, value in os.environ.items() if key not in {"PYTHONPATH"}}
    env["REDIS_URL"] = REDIS_URL
    try:
        result = subprocess.run(
            [str(python), "-c", ROUTE_A_BATCH, queue, str(tmp_path / "spool")],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr[-3000:]
        out = json.loads(result.stdout.strip().splitlines()[-1])
        assert out["submitted"] == 1
        assert not out["lowtide"].startswith(str(REPO)), out  # the installed copy
        records = queued_records(REDIS_URL, queue)
        assert [record["response"] for record in records] == ["I cannot say."]
    finally:
        connection = redis.Redis.from_url(REDIS_URL)
        Queue(queue, connection=connection, serializer=JSONSerializer).delete(delete_jobs=True)


@pytest.mark.slow
@pytest.mark.e2e
def test_a_failed_build_is_one_message_and_leaves_nothing_current(
    cache: Path, tmp_path: Path
) -> None:
    project = fake_project(tmp_path)
    # Without the base dependencies pip has ~10 packages fewer to install (~5 s of CPU); the
    # real builds install them (`make test`'s peer-venvs, the adapters' tests).
    pins = (project / "pyproject.toml").read_text()
    bare = re.sub(r"(?ms)^dependencies = \[.*?^\]", "dependencies = [\n]", pins, count=1)
    assert bare != pins
    (project / "pyproject.toml").write_text(bare)
    broken = peer_venvs.PeerVenv(name="broken", version="0", steps=(), check="import no_such_mod")
    # Only the check fails (no steps to install): pip installs the project by the docs' line.
    with pytest.raises(UserError) as failure:
        peer_venvs.ensure(broken, project)
    message = str(failure.value)
    assert message.startswith(f"checking the broken 0 virtualenv in {broken.dir} failed")
    assert "No module named 'no_such_mod'" in message
    assert "Traceback" not in message.splitlines()[0]
    assert not broken.has_current_lowtide(project)  # the next ensure tries the line again


@pytest.mark.integration
def test_the_command_names_the_known_venvs_on_a_wrong_name() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "lowtide.services.peer_venvs", "verll"],
        capture_output=True, text=True, cwd=REPO,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"usage: python -m lowtide.services.peer_venvs {{{','.join(peer_venvs.PEERS)}}}..."
    )
