"""The TRL adapter (`lowtide.trl.route_low_rewards`) in real TRL runs on the tiny model, on CPU:
the records queued are exactly the samples TRL scored with the totals it logged (its own
`log_completions` files are the reference), once each; TRL sees the same rewards and raises the
same errors with lowtide as without; a Redis outage loses and stalls nothing; each process of an
`accelerate launch` run routes its own samples; a worker puts them in Label Studio once."""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import math
import os
import random
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import torch
from transformers import TrainerCallback

from lowtide.errors import UsageError
from lowtide.services.process import free_port
from lowtide.trl import route_low_rewards
from sampling.sources import group_id_of
from sampling.sources.trl.rewards import reward_columns, weighted_totals
from sampling.transport.spool import Spool
from tests.conftest import REPO
from tests.helpers.queued import queued_records
from tests.helpers.redis_server import OwnRedis
from tests.helpers.trl_run import (
    ROUTE_ALL,
    CompletionTable,
    completion_rows,
    nan_to_none,
    trainer,
)

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server"),
    pytest.mark.timeout(300),
]
WEIGHTS = [1.0, 0.5]


@pytest.fixture
def model(tiny_models) -> str:
    return str(tiny_models.policy)


def routed(funcs: list, tmp_path: Path, queue: str = "trl-test", *extra: str):
    """`route_low_rewards` routing every sample to `queue`, its spool under tmp_path."""
    return route_low_rewards(
        funcs,
        overrides=[*ROUTE_ALL, f"--queue.name={queue}", f"--queue.spool_dir={tmp_path}/spool",
                   "--queue.max_latency_ms=50", *extra],
    )  # fmt: skip


def expected_from_completions(rows: list[dict[str, Any]], names: list[str]) -> Counter:
    """What should be queued, from TRL's completion logs: the total TRL optimises (weighted
    nansum, float32, as TRL computes it); rows no function scored are never selected."""
    keys = []
    for row in rows:
        values = torch.tensor([[row[name] for name in names]], dtype=torch.float32)
        if torch.isnan(values).all():
            continue
        total = (values * torch.tensor(WEIGHTS[: len(names)])).nansum(dim=1).item()
        details = tuple(sorted((name, nan_to_none(row[name])) for name in names))
        keys.append((row["step"], row["prompt"], row["completion"], total, details))
    return Counter(keys)


def record_keys(records: list[dict[str, Any]]) -> Counter:
    return Counter(
        (
            r["step"],
            r["prompt"],
            r["response"],
            r["reward"],
            tuple(sorted(r["reward_details"].items())),
        )
        for r in records
    )


def same_rows(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> bool:
    clean = [[{k: nan_to_none(v) for k, v in row.items()} for row in rows] for rows in (a, b)]
    return clean[0] == clean[1]


# ---- reward functions a user might pass -------------------------------------------------------


def format_reward(
    completions: list[str], kind: list[str], log_extra, log_metric, **_: Any
) -> list[float | None]:
    """Reads the extra dataset column `kind`; abstains on rows of kind "unscored"; logs a
    column and a metric through TRL's callbacks."""
    pairs = zip(completions, kind, strict=True)
    rewards = [None if k == "unscored" else len(c) / 10 for c, k in pairs]
    log_extra("format_kind", list(kind))
    log_metric("format/abstained", sum(r is None for r in rewards))
    return rewards


async def judge(completions: list[str], kind: list[str], **_: Any) -> list[float | None]:
    """An async reward (an LLM judge, say); abstains where nobody scores and on "no_judge"."""
    await asyncio.sleep(0.001)
    pairs = zip(completions, kind, strict=True)
    return [None if k in ("unscored", "no_judge") else float(c.count("e")) for c, k in pairs]


KINDS = ("plain", "no_judge", "unscored", "plain")


# ---- fast checks ------------------------------------------------------------------------------


def test_wrappers_keep_the_names_and_kinds_trl_sees() -> None:
    # Here, not at the top: importing trl is ~3 s of CPU in every test process that collects
    # this module, of which one runs it.
    from trl.trainer.utils import get_callable_name, is_async_callable

    class Scorer:
        def __call__(self, completions: list[str], **_: Any) -> list[float]:
            return [0.0] * len(completions)

    class AsyncScorer:
        async def __call__(self, completions: list[str], **_: Any) -> list[float]:
            return [0.0] * len(completions)

    originals = [format_reward, judge, functools.partial(format_reward), Scorer(), AsyncScorer()]
    funcs = route_low_rewards(originals, overrides=["--queue.spool_dir=/nonexistent/never-used"])
    try:
        assert [get_callable_name(f) for f in funcs] == [get_callable_name(f) for f in originals]
        assert [is_async_callable(f) for f in funcs] == [False, True, False, False, True]
        # Outside a trainer the functions still answer as themselves.
        logs = {"log_extra": lambda *_: None, "log_metric": lambda *_: None}
        assert funcs[0](prompts=["p"], completions=["abc"], kind=["plain"], **logs) == [0.3]
        assert asyncio.run(funcs[1](prompts=["p"], completions=["e"], kind=["plain"])) == [1.0]
    finally:
        funcs.close(deadline_s=0.5)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"overrides": ["--sampling.treshold=0.1"]}, "did you mean threshold"),
        ({"reward_weights": [1.0]}, "1 reward weights for 2 reward functions"),
    ],
)
def test_mistakes_are_refused_before_training(kwargs: dict, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        route_low_rewards([format_reward, judge], **kwargs)


@pytest.mark.parametrize("functions", [1, 2, 3])
@pytest.mark.unit
def test_totals_are_trls_float32_nansum_to_the_last_bit(functions: int) -> None:
    """The adapter's total against TRL's own expression, on values that probe the edges: None
    and NaN (alone and in every position), infinities, zeros of both signs, huge and tiny
    numbers, zero and negative weights."""
    rng = random.Random(functions)
    specials = [None, math.nan, math.inf, -math.inf, 0.0, -0.0, 1e38, -3e38, 1e-45, 7, True]
    rows = 20_000

    def value() -> object:
        if rng.random() < 0.3:
            return rng.choice(specials)
        return rng.uniform(-1, 1) * 10 ** rng.randint(-30, 30)

    outputs = [[value() for _ in range(rows)] for _ in range(functions)]
    for weights in ([1.0] * functions, [rng.uniform(-3, 3) for _ in range(functions)],
                    [0.0] + [0.5] * (functions - 1)):  # fmt: skip
        columns = reward_columns(outputs, rows)
        assert columns is not None
        ours = weighted_totals(columns, weights)
        # TRL: None -> NaN, float32 tensors, weighted nansum, NaN where no function scored.
        table = torch.stack(
            [torch.tensor([math.nan if v is None else v for v in o], dtype=torch.float32)
             for o in outputs], dim=1,
        )  # fmt: skip
        trl = (table * torch.tensor(weights, dtype=torch.float32).unsqueeze(0)).nansum(dim=1)
        trl[torch.isnan(table).all(dim=1)] = math.nan
        assert torch.equal(torch.tensor(ours).isnan(), trl.isnan())
        assert [t for t in ours if t == t] == [t for t in trl.tolist() if t == t]


@pytest.mark.unit
def test_group_ids_are_one_stable_52_bit_hash_for_every_adapter() -> None:
    """TRL, verl and OpenRLHF records name a prompt's group the same way, in every process and
    version, and exactly in JSON readers that hold numbers as doubles."""
    assert group_id_of("What is 2+2?") == 2617794300148219
    assert group_id_of("uid-1") == 3495654959828029  # verl's uid hash, as before
    assert all(0 <= group_id_of(str(i)) < 2**52 for i in range(1000))
    assert group_id_of("\ud800") != group_id_of("?")  # lone surrogates hash as they are


def test_a_reward_model_name_is_refused() -> None:
    with pytest.raises(UsageError, match="cannot be wrapped"):
        route_low_rewards(["some/reward-model"])  # type: ignore[list-item]


# ---- real TRL runs ------------------------------------------------------------------------------


def test_grpo_queues_exactly_the_samples_trl_scored_once(
    model: str, own_redis: OwnRedis, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDIS_URL", own_redis.url)
    settings = {"kinds": KINDS, "log_completions": True, "num_completions_to_print": 1,
                "reward_weights": WEIGHTS}  # fmt: skip
    plain = trainer("grpo", model, tmp_path / "plain", [format_reward, judge], 3, **settings)
    plain.train()
    funcs = routed([format_reward, judge], tmp_path)
    run = trainer("grpo", model, tmp_path / "routed", funcs, 3, **settings)
    run.train()
    funcs.close()

    # TRL saw exactly what it sees without lowtide: same completions, rewards, advantages, and
    # what the functions logged through it.
    rows = completion_rows(tmp_path / "routed")
    assert len(rows) == 3 * 16 and same_rows(rows, completion_rows(tmp_path / "plain"))
    assert {row["format_kind"] for row in rows} == set(KINDS)
    abstained = [[e["format/abstained"] for e in r.state.log_history if "format/abstained" in e]
                 for r in (plain, run)]  # fmt: skip
    assert len(abstained[0]) == 3 and abstained[0] == abstained[1]
    assert any(math.isnan(r["format_reward"]) for r in rows)  # NaN-aware totals are exercised
    assert any(math.isnan(r["judge"]) and not math.isnan(r["format_reward"]) for r in rows)

    records = queued_records(own_redis.url, "trl-test")
    assert record_keys(records) == expected_from_completions(rows, ["format_reward", "judge"])
    assert len({r["sample_id"] for r in records}) == len(records)  # once each
    assert len(records) == sum(1 for r in rows if not math.isnan(r["format_reward"]))
    by_group: dict[tuple[int, int], set[str]] = {}
    for record in records:
        by_group.setdefault((record["step"], record["group_id"]), set()).add(record["prompt"])
        assert record["rank"] == 0 and record["model"]["name_or_path"] == model
        assert record["model"]["checkpoint_step"] == record["step"] - 1
        assert record["generation"]["num_generations"] == 4
        assert record["generation"]["max_new_tokens"] == 12
        # what reviewers are shown: each function's weight, as TRL combined them
        assert record["reward_weights"] == {"format_reward": 1.0, "judge": 0.5}  # WEIGHTS
    assert all(len(prompts) == 1 for prompts in by_group.values())  # one prompt per group
    logged = [entry for entry in run.state.log_history if "sampling/selected" in entry]
    assert len(logged) == 3 and sum(entry["sampling/selected"] for entry in logged) == len(records)


def test_rloo_queues_exactly_the_samples_trl_scored_once(
    model: str, own_redis: OwnRedis, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDIS_URL", own_redis.url)
    funcs = routed([format_reward, format_reward_again], tmp_path)
    run = trainer("rloo", model, tmp_path / "rloo", funcs, 2, kinds=KINDS, reward_weights=WEIGHTS)
    table = CompletionTable(run)  # RLOO keeps GRPO's completions table but writes no parquet
    run.train()
    funcs.close()
    rows = table.rows
    records = queued_records(own_redis.url, "trl-test")
    names = ["format_reward", "format_reward_again"]
    assert len(rows) == 2 * 16
    assert record_keys(records) == expected_from_completions(rows, names)
    assert len({r["sample_id"] for r in records}) == len(records)


def test_generation_batches_that_share_a_step_get_their_own_ids(
    model: str, own_redis: OwnRedis, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With steps_per_generation below the gradient accumulation steps TRL generates twice per
    optimizer step: both batches are routed, under the same step, with distinct ids."""
    monkeypatch.setenv("REDIS_URL", own_redis.url)
    seen: list[tuple[int, str, str]] = []

    def recorded(prompts: list[str], completions: list[str], trainer_state, **_: Any):
        step = trainer_state.global_step + 1
        seen.extend((step, p, c) for p, c in zip(prompts, completions, strict=True))
        return [0.0] * len(completions)

    funcs = routed([recorded], tmp_path)
    run = trainer("grpo", model, tmp_path / "out", funcs, 2, gradient_accumulation_steps=2,
                  steps_per_generation=1)  # fmt: skip
    run.train()
    funcs.close()
    records = queued_records(own_redis.url, "trl-test")
    assert len(seen) == 2 * 2 * 16
    assert Counter((r["step"], r["prompt"], r["response"]) for r in records) == Counter(seen)
    assert len({r["sample_id"] for r in records}) == len(records)
    for step in (1, 2):
        assert sorted(r["index"] for r in records if r["step"] == step) == list(range(32))


def test_evaluation_batches_are_not_routed(
    model: str, own_redis: OwnRedis, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDIS_URL", own_redis.url)
    modes: list[bool] = []

    def recorded(completions: list[str], **_: Any) -> list[float]:
        modes.append(run.model.training)
        return [0.0] * len(completions)

    funcs = routed([recorded], tmp_path)
    run = trainer("grpo", model, tmp_path / "out", funcs, 2, evaluate=True, eval_strategy="steps",
                  eval_steps=1, per_device_eval_batch_size=16)  # fmt: skip
    run.train()
    funcs.close()
    assert modes.count(False) >= 2 and modes.count(True) == 2  # TRL scored eval batches too
    records = queued_records(own_redis.url, "trl-test")
    assert len(records) == 2 * 16 and {r["step"] for r in records} == {1, 2}


def format_reward_again(completions: list[str], **_: Any) -> list[float]:
    return [float(len(c.split())) for c in completions]


def raises_at_second_batch():
    calls = []

    def flaky(completions: list[str], **_: Any) -> list[float]:
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("the reward server said no")
        return [0.0] * len(completions)

    return flaky


BAD_REWARDS = {
    "raises": raises_at_second_batch,
    "wrong_length": lambda: lambda completions, **_: [0.0] * (len(completions) - 1),
    "not_a_number": lambda: lambda completions, **_: ["high"] * len(completions),
    "all_none": lambda: lambda completions, **_: [None] * len(completions),
    "nan": lambda: lambda completions, **_: [math.nan] * len(completions),
}


@pytest.mark.parametrize("bad", sorted(BAD_REWARDS))
def test_a_bad_reward_function_behaves_as_without_lowtide(
    bad: str, model: str, own_redis: OwnRedis, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDIS_URL", own_redis.url)

    def outcome(funcs: list, out: Path) -> tuple[str, Any]:
        run = trainer("grpo", model, out, funcs, 2, log_completions=True,
                      num_completions_to_print=1, reward_weights=WEIGHTS)  # fmt: skip
        try:
            run.train()
        except Exception as error:
            return "raised", (type(error), str(error))
        return "finished", completion_rows(out)

    without = outcome([format_reward_again, BAD_REWARDS[bad]()], tmp_path / "plain")
    funcs = routed([format_reward_again, BAD_REWARDS[bad]()], tmp_path)
    with_lowtide = outcome(list(funcs), tmp_path / "routed")
    funcs.close()

    assert with_lowtide[0] == without[0]
    records = queued_records(own_redis.url, "trl-test")
    if without[0] == "raised":
        assert with_lowtide[1] == without[1]  # same error, same message (same function name)
        # Only batches TRL scored completely were routed (the first one, for "raises").
        assert len(records) == (16 if bad == "raises" else 0)
    else:
        rows = with_lowtide[1]
        assert same_rows(rows, without[1])
        names = ["format_reward_again", "<lambda>"]
        assert record_keys(records) == expected_from_completions(rows, names)
        assert len(records) == 32


def test_a_reward_function_left_unwrapped_stops_routing_with_one_warning(
    model: str,
    own_redis: OwnRedis,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """lowtide cannot see the total TRL optimises, so it routes nothing rather than the wrong
    samples, and says which function to wrap."""
    monkeypatch.setenv("REDIS_URL", own_redis.url)
    funcs = routed([format_reward_again], tmp_path)
    run = trainer("grpo", model, tmp_path / "out", [*funcs, lengths], 2)
    with caplog.at_level(logging.WARNING, logger="lowtide.trl"):
        run.train()
    funcs.close()
    warnings = [r.getMessage() for r in caplog.records if r.name == "lowtide.trl"]
    assert len(warnings) == 1 and "did not wrap (lengths)" in warnings[0]
    assert queued_records(own_redis.url, "trl-test") == []


def lengths(completions: list[str], **_: Any) -> list[float]:
    return [float(len(c)) for c in completions]


class RedisOutage(TrainerCallback):
    """Kills Redis after step 3, starts it again 10 s later, and stops training once the
    producer has replayed its spool (or after 60 s); times every step."""

    def __init__(self, server: OwnRedis, spool: Spool, producer: Any) -> None:
        self.server, self.spool, self.producer = server, spool, producer
        self.stamps: list[float] = []
        self.restarted_at: float | None = None
        self.began = time.monotonic()

    def on_step_end(self, args, state, control, **kwargs):
        now = time.monotonic()
        self.stamps.append(now)
        if state.global_step == 3:
            self.server.kill()
            threading.Timer(10.0, self._restart).start()
        back = self.restarted_at is not None and now - self.restarted_at > 1.0
        if back and self.producer.stats.redis_up and self.spool.pending_batches() == 0:
            control.should_training_stop = True
        if now - self.began > 60:
            control.should_training_stop = True

    def _restart(self) -> None:
        self.server.start()
        self.restarted_at = time.monotonic()


@pytest.mark.slow
def test_redis_down_for_10_s_loses_duplicates_and_stalls_nothing(
    model: str, own_redis: OwnRedis, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDIS_URL", own_redis.url)
    seen: list[tuple[int, int, str, str]] = []

    def recorded(prompts: list[str], completions: list[str], trainer_state, **_: Any):
        step = trainer_state.global_step + 1
        seen.extend(
            (step, i, p, c) for i, (p, c) in enumerate(zip(prompts, completions, strict=True))
        )
        return [len(c) / 10 for c in completions]

    funcs = routed([recorded], tmp_path)
    spool = Spool(tmp_path / "spool")
    outage = RedisOutage(own_redis, spool, funcs.routing.router.producer)
    run = trainer("grpo", model, tmp_path / "out", funcs, 1000, callbacks=[outage],
                  logging_steps=1000)  # fmt: skip
    run.train()
    funcs.close()

    assert outage.restarted_at is not None, "training ended before Redis came back"
    stats = funcs.routing.router.producer.stats
    assert stats.spooled > 0 and stats.replayed == stats.spooled and stats.dropped == 0
    assert spool.pending_batches() == 0
    records = queued_records(own_redis.url, "trl-test")
    assert len({r["sample_id"] for r in records}) == len(records)  # nothing twice
    got = Counter((r["step"], r["index"], r["prompt"], r["response"]) for r in records)
    assert got == Counter(seen)  # nothing lost
    durations = sorted(b - a for a, b in zip(outage.stamps, outage.stamps[1:], strict=False))
    usual = durations[len(durations) // 2]
    assert durations[-1] <= usual + 1.0, (usual, durations[-5:])


@pytest.mark.slow
def test_each_accelerate_process_routes_its_own_samples_once(
    model: str, own_redis: OwnRedis, tmp_path: Path
) -> None:
    """Two processes under `accelerate launch` on CPU (gloo). accelerate's `--cpu` flag starts a
    single process unless MPI is set up; `--multi_gpu` on a machine without CUDA runs the
    MULTI_CPU path (torch.distributed on gloo), which is what a CPU cluster job uses."""
    out = tmp_path / "out"
    command = [
        str(Path(sys.executable).parent / "accelerate"), "launch", "--multi_gpu",
        "--num_processes", "2", "--num_machines", "1", "--mixed_precision", "no",
        "--dynamo_backend", "no", "--main_process_port", str(free_port()),
        str(REPO / "tests" / "helpers" / "trl_run.py"), model, str(out), "trl-test",
        own_redis.url, "3",
    ]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}
    env["PYTHONPATH"] = str(REPO)
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr[-3000:]

    reports = [json.loads((out / f"seen-{rank}.json").read_text()) for rank in (0, 1)]
    assert all(r["world"] == 2 and "MULTI_CPU" in r["distributed"] for r in reports)
    records = queued_records(own_redis.url, "trl-test")
    assert len({r["sample_id"] for r in records}) == len(records) == 2 * 3 * 8
    for report in reports:
        mine = [r for r in records if r["rank"] == report["rank"]]
        got = Counter((r["step"], r["prompt"], r["response"], r["reward"]) for r in mine)
        want = Counter(
            (s["step"], s["prompt"], s["completion"], torch.tensor(s["reward"]).item())
            for s in report["seen"]
        )
        assert got == want and len(mine) == 3 * 8


@pytest.mark.labelstudio
@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.e2e
def test_routed_samples_become_label_studio_tasks_once(
    model: str, label_studio, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.helpers.pipeline import REDIS_URL, Setup

    setup = Setup(label_studio, workdir)
    monkeypatch.setenv("REDIS_URL", REDIS_URL)
    funcs = routed([format_reward_again], workdir, setup.queue_name)
    run = trainer("grpo", model, workdir / "out", funcs, 2, run_name=f"trl-{uuid.uuid4().hex[:8]}")
    run.train()
    funcs.close()
    records = queued_records(REDIS_URL, setup.queue_name)
    assert len(records) == 32

    for _ in range(2):  # a second worker finds nothing new to create
        result = setup.cli("worker", "--burst")
        assert result.returncode == 0, result.stderr
    assert setup.sample_id_counts() == Counter(r["sample_id"] for r in records)
    tasks = {task["sample_id"]: task for task in setup.tasks()}
    for record in records:
        task = tasks[record["sample_id"]]
        assert (task["prompt"], task["response"], task["reward"]) == (
            record["prompt"], record["response"], record["reward"],
        )  # fmt: skip
    setup.assert_no_key_leaked()
