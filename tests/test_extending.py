"""The recipes of docs/extending.md, run as the page writes them: each module the page shows is
written to a directory outside the tree, its YAML is the config, and the piece runs end to end
(the tracker's files, or records on a real Redis queue). A recipe that no longer works, or a page
that no longer matches the code, fails here."""

from __future__ import annotations

import json
import re
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import yaml

import rl.tracking.backends.base as backends
import sampling.redaction.finders as finders
import sampling.selection.policies.registry as policies
import sampling.selection.shares.registry as shares
from lowtide.integrations import router_from_config
from rl.config import LoggerConfig
from rl.tracking import RunInfo, Tracker
from sampling.batch import BatchInfo, PlainSample
from sampling.sources.idle_window import IdleWindow
from tests.helpers.docs import page
from tests.helpers.pipeline import REDIS_URL
from tests.helpers.queued import queued_records

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]
FENCE = re.compile(r"```(python|yaml)\n(.*?)```", re.S)


def recipe(title: str) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """The modules (by the file name their first line gives) and the YAML blocks of one section."""
    text = page("extending.md")
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    section = text[start : end if end > 0 else len(text)]
    modules: dict[str, str] = {}
    configs: list[dict[str, Any]] = []
    for language, body in FENCE.findall(section):
        if language == "yaml":
            configs.append(yaml.safe_load(body))
        elif match := re.match(r"# (\w+)\.py\n", body):
            modules[match.group(1)] = body
    assert modules, f"no module in the section {title!r}"
    return modules, configs


@pytest.fixture
def outside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory outside the tree on sys.path; the modules written there are forgotten after,
    and so are the policies, shares, backends and finders they registered (later tests expect
    none)."""
    folder = tmp_path / "outside"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    finders.finder_names()  # the built-in finders registered first: they stay
    registries = ((policies, "_REGISTRY"), (shares, "_SHARES"), (backends, "_REGISTRY"),
                  (finders, "_REGISTRY"), (finders, "_OUTSIDE_KINDS"))  # fmt: skip
    for registry, name in registries:
        monkeypatch.setattr(registry, name, dict(getattr(registry, name)))
    before = set(sys.modules)
    yield folder
    for name in set(sys.modules) - before:
        if getattr(sys.modules[name], "__file__", "") and str(folder) in sys.modules[name].__file__:
            del sys.modules[name]


def install(title: str, folder: Path) -> list[dict[str, Any]]:
    """The recipe's modules written into `folder`; its YAML blocks."""
    modules, configs = recipe(title)
    for name, source in modules.items():
        (folder / f"{name}.py").write_text(source, encoding="utf-8")
    return configs


@pytest.fixture
def queue(tmp_path: Path) -> Iterator[tuple[str, list[str]]]:
    """A fresh queue on the real Redis, and the overrides that route to it."""
    name = f"test-extending-{uuid.uuid4().hex[:8]}"
    overrides = [f"--queue.name={name}", f"--queue.spool_dir={tmp_path / 'spool'}",
                 "--queue.max_latency_ms=20"]  # fmt: skip
    yield name, overrides
    connection = redis.Redis.from_url(REDIS_URL)
    for key in connection.scan_iter(f"*{name}*"):
        connection.delete(key)


def merged(base: dict[str, Any], more: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in more.items():
        both = isinstance(value, dict) and isinstance(out.get(key), dict)
        out[key] = merged(out[key], value) if both else value
    return out


def config_file(tmp_path: Path, *sections: dict[str, Any]) -> Path:
    config: dict[str, Any] = {}
    for section in sections:
        config = merged(config, section)
    path = tmp_path / "lowtide.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def route_one_batch(config: Path, overrides: list[str], samples: list[PlainSample]) -> None:
    """One batch of a run of its own (sample ids, and so job ids, are never those of an earlier
    run: the queue would rightly refuse a job it has seen)."""
    router = router_from_config(config, overrides, environ={"REDIS_URL": REDIS_URL})
    router.route(samples, BatchInfo(f"recipe-{uuid.uuid4().hex}", step=1))
    router.close(deadline_s=10)


def test_the_logger_backend_recipe_writes_what_the_tracker_logs(
    tmp_path: Path, outside: Path
) -> None:
    configs = install("A logging backend of your own", outside)
    names = configs[0]["logger"]["name"]
    for name in (names, ["console", "jsonl_scalars"]):  # by path; then by the name it registered
        run_dir = tmp_path / "-".join(name).replace(":", "-")
        info = RunInfo("r", "r", tmp_path, run_dir, {})
        tracker = Tracker.from_config(LoggerConfig(name=name), info)
        tracker.on_stage("step_end", 3, {"reward/mean": 0.25}, [])
        tracker.close()
        lines = (run_dir / "scalars.jsonl").read_text(encoding="utf-8").splitlines()
        assert json.loads(lines[-1]) == {"step": 3, "reward/mean": 0.25}, name


def test_the_policy_recipe_selects_the_two_lowest_rewards(
    tmp_path: Path, outside: Path, queue: tuple[str, list[str]]
) -> None:
    configs = install("A selection policy of your own", outside)
    name, overrides = queue
    rewards = [0.9, 0.1, 0.5, 0.2, 0.8]
    samples = [PlainSample(f"prompt {i}", "answer", r, index=i) for i, r in enumerate(rewards)]
    route_one_batch(config_file(tmp_path, *configs), overrides, samples)
    records = queued_records(REDIS_URL, name)
    assert sorted(r["reward"] for r in records) == [0.1, 0.2]
    assert {r["selected_by"]["policy"] for r in records} == {"two_lowest"}


def test_the_budget_share_recipe_takes_its_part_for_the_longest_answers(
    tmp_path: Path, outside: Path, queue: tuple[str, list[str]]
) -> None:
    configs = install("A budget share of your own", outside)
    name, overrides = queue
    only_its_share = {"sampling": {"budget": {"audit_share": 0, "random_share": 0,
                                              "uncertainty_share": 0}}}  # fmt: skip
    config = config_file(tmp_path, configs[0], only_its_share)
    rewards = [0.9, 0.1, 0.8, 0.2, 0.7, 0.6, 0.5, 0.4] * 5  # 40 samples, a budget of 50
    lengths = [400, 5, 300, 6, 10, 11, 12, 13] * 5
    samples = [  # no two alike: near-duplicates would be one group
        PlainSample(f"prompt {i}", " ".join(f"w{i}x{k}" for k in range(n // 4)), r, index=i)
        for i, (r, n) in enumerate(zip(rewards, lengths, strict=True))
    ]
    route_one_batch(config, overrides, samples)  # a round's budget is spent when it ends
    records = queued_records(REDIS_URL, name)
    longest = [r for r in records if r["selected_by"].get("reason") == "longest"]
    assert len(longest) == 5  # its tenth of 50 reviews
    assert sorted(len(r["response"].split()) for r in longest) == [100] * 5  # the longest answers


def test_the_redaction_recipe_removes_the_employee_id_before_the_queue(
    tmp_path: Path, outside: Path, queue: tuple[str, list[str]]
) -> None:
    configs = install("A redaction kind of your own", outside)
    name, overrides = queue
    text = "Reach me as EMP-123456 at the front desk."
    route_one_batch(config_file(tmp_path, *configs), [*overrides, "--sampling.threshold=0.5"],
                    [PlainSample("who are you?", text, 0.1)])  # fmt: skip
    (record,) = queued_records(REDIS_URL, name)
    assert "EMP-123456" not in json.dumps(record)
    assert record["response"] == "Reach me as <EMPLOYEE_ID_1> at the front desk."


def test_the_trainer_recipe_routes_what_the_trainer_scores_and_flushes_at_close(
    tmp_path: Path, outside: Path, queue: tuple[str, list[str]]
) -> None:
    install("A trainer of your own", outside)
    from my_trainer_routing import MyTrainerRouting

    name, overrides = queue
    router = router_from_config(None, [*overrides, "--sampling.threshold=0.5"],
                                environ={"REDIS_URL": REDIS_URL})  # fmt: skip
    routing = MyTrainerRouting(router, run_id=name)
    routing.scored.window = IdleWindow(60.0, max_samples=256)  # no quiet gap before close()
    for i, reward in enumerate([0.1, 0.9, 0.2, 0.8, 0.3, 0.7]):
        routing.on_scored(f"prompt {i}", f"answer {i}", reward)
    routing.close()  # what the burst still holds is routed, then flushed to Redis
    records = queued_records(REDIS_URL, name)
    assert sorted(r["prompt"] for r in records) == ["prompt 0", "prompt 2", "prompt 4"]
    assert routing.routed.samples == 6 and not routing.problems
