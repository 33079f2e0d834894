"""Drives verl 0.9.1's own reward loop with and without lowtide; run by the verl virtualenv's
python (tests/test_verl_adapter.py), with the checkout on PYTHONPATH. No Ray cluster: verl's
`RewardLoopWorker` is a plain class until Ray wraps it, and its managers run on CPU.

    python verl_reward_loop.py SPEC.json OUT.json

SPEC: tokenizer, queue, down_url (a Redis nobody listens on), spool_dir, dump_dir, threshold;
with `"ray": true`, the same batch through verl's RewardLoopManager on a local Ray instance.
The config is verl's real `ppo_trainer.yaml` composed by Hydra; the data a real `DataProto` of
tokenized prompts (left-padded) and responses (right-padded), 4 prompts x 4 samples, as verl's
trainer lays them out. OUT: per phase what verl got with and without lowtide, and timings.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import verl
from hydra import compose, initialize_config_dir
from verl import DataProto
from verl.experimental.reward_loop import RewardLoopWorker
from verl.experimental.reward_loop.reward_manager import get_reward_manager_cls
from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase
from verl.trainer.ppo.ray_trainer import RayPPOTrainer

from sampling.transport.spool import Spool
from tests.helpers.queued import queued_records
from tests.helpers.verl_reward_fn import GROUPS

HERE = Path(__file__).resolve().parent
REWARD_FN = HERE / "verl_reward_fn.py"
RESPONSE_LENGTH = 16


class OddManager(RewardManagerBase):
    """A user's own manager (wrapped by `module:Class`) whose results lowtide can read only in
    part: numpy and tensor scores, a text score, NaN, no or odd reward_extra_info."""

    def __init__(self, config: Any, tokenizer: Any, compute_score: Any = None, **_: Any) -> None:
        super().__init__(config, tokenizer, compute_score)
        self.returned: list[Any] = []

    async def run_single(self, data: DataProto) -> Any:
        kinds = [
            {"reward_score": np.float32(0.125), "reward_extra_info": {"n": np.int64(3), "ok": True,
                                                                      "seq": [1, 2]}},
            {"reward_score": "n/a", "reward_extra_info": {}},
            {"reward_score": float("nan")},
            {"reward_score": torch.tensor(0.25), "reward_extra_info": None},
        ]  # fmt: skip
        result = kinds[len(self.returned) % len(kinds)]
        self.returned.append(result)
        return result


def data_overrides(spec: dict[str, Any]) -> list[str]:
    """The test's model, data shape, reward function and run name."""
    return [
        f"actor_rollout_ref.model.path={spec['tokenizer']}",
        f"actor_rollout_ref.rollout.n={len(GROUPS[0][2])}",
        f"actor_rollout_ref.rollout.response_length={RESPONSE_LENGTH}",
        f"reward.custom_reward_function.path={REWARD_FN}",
        "reward.custom_reward_function.name=compute_score",
        "trainer.project_name=lowtide-tests",
        f"trainer.experiment_name={spec['queue']}",
    ]


def own_queue(spec: dict[str, Any]) -> list[str]:
    """The test's own queue and spool (forced: the README's values stay underneath)."""
    return [
        f"++lowtide.queue.name={spec['queue']}",
        f"++lowtide.queue.spool_dir={spec['spool_dir']}",
    ]


def compose_config(spec: dict[str, Any], wrapped: bool, **extra: str) -> Any:
    """verl's ppo_trainer.yaml; `wrapped`: with the README's command-line overrides."""
    overrides = data_overrides(spec)
    if wrapped:
        overrides += [
            *spec["readme_overrides"],
            f"++lowtide.sampling.threshold={spec['threshold']}",
            *own_queue(spec),
            "++lowtide.flush_idle_s=0.3",
        ]
    overrides += [f"{key}={value}" for key, value in extra.items()]
    config_dir = Path(verl.__file__).parent / "trainer" / "config"
    with initialize_config_dir(config_dir=str(config_dir), version_base=None):
        return compose("ppo_trainer", overrides=overrides)


def compose_readme_file(spec: dict[str, Any]) -> Any:
    """The docs' verl config file, composed as `main_ppo --config-name` composes it."""
    folder = Path(spec["dump_dir"]).parent / "user-config"
    folder.mkdir(exist_ok=True)
    (folder / "my_ppo.yaml").write_text(spec["readme_yaml"])
    with initialize_config_dir(config_dir=str(folder), version_base=None):
        return compose("my_ppo", overrides=[*data_overrides(spec), *own_queue(spec)])


def make_batch(tokenizer: Any, groups: list, meta: dict[str, Any]) -> DataProto:
    """verl's layout after rollout: prompts left-padded, responses right-padded, one uid per
    prompt shared by its samples, the dataset's reward_model.ground_truth."""
    pad = tokenizer.pad_token_id
    rows = [
        (prompt, truth, response) for prompt, truth, responses in groups for response in responses
    ]
    prompt_ids = [tokenizer(p, add_special_tokens=False)["input_ids"] for p, _, _ in rows]
    response_ids = [tokenizer(r, add_special_tokens=False)["input_ids"] for _, _, r in rows]
    width = max(map(len, prompt_ids))
    assert max(map(len, response_ids)) <= RESPONSE_LENGTH
    prompts = torch.tensor([[pad] * (width - len(ids)) + ids for ids in prompt_ids])
    responses = torch.tensor([ids + [pad] * (RESPONSE_LENGTH - len(ids)) for ids in response_ids])
    mask = torch.tensor(
        [
            [0] * (width - len(p)) + [1] * len(p) + [1] * len(r) + [0] * (RESPONSE_LENGTH - len(r))
            for p, r in zip(prompt_ids, response_ids, strict=True)
        ]
    )
    uids = [f"uid-{meta.get('global_steps', 'x')}-{groups.index(g)}" for g in groups for _ in g[2]]
    return DataProto.from_dict(
        tensors={
            "prompts": prompts,
            "responses": responses,
            "attention_mask": mask,
            "input_ids": torch.cat([prompts, responses], dim=1),
        },
        non_tensors={
            "data_source": np.array(["lowtide-tests"] * len(rows), dtype=object),
            "reward_model": np.array([{"ground_truth": t} for _, t, _ in rows], dtype=object),
            "uid": np.array(uids, dtype=object),
        },
        meta_info=meta,
    )


def run(worker: RewardLoopWorker, coroutine: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    try:
        result: Any = worker.loop.run_until_complete(coroutine)
    except Exception as error:  # what verl's loop would see
        result = {"raised": type(error).__name__, "message": str(error)}
    return result, time.perf_counter() - started


def settle(worker: RewardLoopWorker, seconds: float) -> None:
    """Let the worker's event loop run on, as a Ray actor's does between requests."""
    worker.loop.run_until_complete(asyncio.sleep(seconds))


def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text())
    out: dict[str, Any] = {}
    plain = RewardLoopWorker(compose_config(spec, wrapped=False))
    tokenizer = plain.input_tokenizer

    # 1. A batch that carries verl's step (as the trainer's colocated-reward path sends it).
    batch = make_batch(tokenizer, GROUPS, {"global_steps": 7})
    wrapped = RewardLoopWorker(compose_config(spec, wrapped=True))
    manager = wrapped.reward_manager
    got_plain, plain_s = run(plain, plain.compute_score_batch(batch))
    got_wrapped, wrapped_s = run(wrapped, wrapped.compute_score_batch(batch))
    pending = manager.batcher.waiting
    settle(wrapped, 0.9)  # three idle periods: the timer flushes once
    out["step"] = {
        "manager": type(manager).__name__,
        "wrapped_manager": type(manager.wrapped).__name__,
        "plain": got_plain,
        "wrapped": got_wrapped,
        "pending_before_idle": pending,
        "rounds_after_idle": manager.batcher.rounds,
        "totals": dict(manager.batcher.totals),
        "plain_s": plain_s,
        "wrapped_s": wrapped_s,
    }

    # 2. Streaming, as the agent loop sends them: one request per sample, no meta_info.
    stream = make_batch(tokenizer, GROUPS[:2], {})
    requests = [stream[i : i + 1] for i in range(len(stream))]
    got_plain, _ = run(plain, asyncio.gather(*(plain.compute_score(r) for r in requests)))
    got_wrapped, _ = run(wrapped, asyncio.gather(*(wrapped.compute_score(r) for r in requests)))
    settle(wrapped, 0.9)
    out["stream"] = {
        "plain": got_plain,
        "wrapped": got_wrapped,
        "rounds_after_idle": manager.batcher.rounds,
    }

    # 3. A reward function that raises: verl sees the same error with lowtide as without.
    failing = make_batch(tokenizer, [("Say hello.", "raise", ["hello"])], {"global_steps": 9})
    out["raises"] = {
        "plain": run(plain, plain.compute_score_batch(failing))[0],
        "wrapped": run(wrapped, wrapped.compute_score_batch(failing))[0],
    }
    settle(wrapped, 0.6)
    manager.close()
    out["problems"] = dict(manager.batcher.problems)

    # 4. Redis down: the same scores, no stall; the records wait in the spool.
    spec["redis_url"] = os.environ["REDIS_URL"]
    os.environ["REDIS_URL"] = spec["down_url"]
    down = RewardLoopWorker(compose_config(spec, wrapped=True))
    down_batch = make_batch(tokenizer, GROUPS, {"global_steps": 8})
    got_plain, plain_s = run(plain, plain.compute_score_batch(down_batch))
    got_down, down_s = run(down, down.compute_score_batch(down_batch))
    settle(down, 0.6)
    started = time.perf_counter()
    down.reward_manager.close(deadline_s=5)
    out["redis_down"] = {
        "plain": got_plain,
        "wrapped": got_down,
        "plain_s": plain_s,
        "wrapped_s": down_s,
        "close_s": time.perf_counter() - started,
        "spooled": down.reward_manager.batcher.router.producer.stats.spooled,
        "spool": [  # before the next producer, with Redis up, replays it
            {"batch_id": batch.batch_id, "records": batch.records}
            for batch in Spool(spec["spool_dir"]).pending()
        ],
    }

    # 5. A user's own manager, named by `module:Class`, without uids: what lowtide cannot read
    # is passed through and left unrouted; verl gets the very objects the manager returned.
    os.environ["REDIS_URL"] = spec["redis_url"]
    odd = RewardLoopWorker(
        compose_config(
            spec,
            wrapped=True,
            **{"lowtide.wrap": "pkg://tests.helpers.verl_reward_loop:OddManager"},
        )
    )
    odd_batch = make_batch(tokenizer, GROUPS[:1], {"global_steps": 10})
    odd_batch.non_tensor_batch.pop("uid")
    got_odd, _ = run(odd, odd.compute_score_batch(odd_batch))
    odd.reward_manager.close()
    out["odd"] = {
        "wrapped_manager": type(odd.reward_manager.wrapped).__name__,
        "same_objects": all(
            got is returned
            for got, returned in zip(got_odd, odd.reward_manager.wrapped.returned, strict=True)
        ),
        "problems": dict(odd.reward_manager.batcher.problems),
    }

    # 6. Mistakes in the `lowtide` section stop the worker at start with one clear message; the
    # registry knows the manager as `lowtide` once lowtide.verl is imported.
    mistakes = {
        "wrap": {"lowtide.wrap": "naiv"},
        "key": {"+lowtide.treshold": "0.3"},
        "idle": {"lowtide.flush_idle_s": "-1"},
        "sampling": {"+lowtide.sampling.treshold": "0.3"},
        "run_id": {"+lowtide.run_id": "5"},
    }
    out["mistakes"] = {}
    for name, extra in mistakes.items():
        try:
            RewardLoopWorker(compose_config(spec, wrapped=True, **extra))
            out["mistakes"][name] = None
        except Exception as error:
            out["mistakes"][name] = f"{type(error).__name__}: {error}"
    by_name = RewardLoopWorker(
        compose_config(spec, wrapped=True, **{"reward.reward_manager.source": "register",
                                              "reward.reward_manager.name": "lowtide"})
    )  # fmt: skip
    by_name.reward_manager.close()
    out["registry"] = {
        "lowtide": get_reward_manager_cls("lowtide").__name__,
        "by_name": type(by_name.reward_manager).__name__,
    }

    # 7. The README's config file as it stands (its threshold, 0.2), composed by Hydra.
    from_file = RewardLoopWorker(compose_readme_file(spec))
    file_batch = make_batch(tokenizer, GROUPS, {"global_steps": 12})
    got_file, _ = run(from_file, from_file.compute_score_batch(file_batch))
    from_file.reward_manager.close()
    out["readme_file"] = {
        "manager": type(from_file.reward_manager).__name__,
        "wrapped_manager": type(from_file.reward_manager.wrapped).__name__,
        "same_scores": got_file == run(plain, plain.compute_score_batch(file_batch))[0],
    }

    # 8. verl's own rollout dump of batch 1, written as `_log_rollout_data` writes it.
    scores = plain.reward_manager.assemble_rm_scores(
        batch, [o["reward_score"] for o in out["step"]["plain"]]
    )
    extra = {
        key: np.array([o["reward_extra_info"][key] for o in out["step"]["plain"]]).tolist()
        for key in out["step"]["plain"][0]["reward_extra_info"]
    }
    RayPPOTrainer._write_generations(
        inputs=tokenizer.batch_decode(batch.batch["prompts"], skip_special_tokens=True),
        outputs=tokenizer.batch_decode(batch.batch["responses"], skip_special_tokens=True),
        gts=[item.non_tensor_batch["reward_model"]["ground_truth"] for item in batch],
        scores=scores.sum(-1).tolist(),
        reward_extra_infos_dict=extra,
        dump_path=spec["dump_dir"],
        global_steps=7,
    )
    # 6. The budget policy: verl's reward workers share one budget (none sees WORLD_SIZE).
    budgeted = RewardLoopWorker(
        compose_config(spec, wrapped=True, **{
            "reward.num_workers": "3", "++lowtide.sampling.policy": "budget",
            "++lowtide.sampling.review_budget.reviews": "7",
        })
    )  # fmt: skip
    out["budget"] = {"processes": budgeted.reward_manager.batcher.router.selector.processes}
    budgeted.reward_manager.close()
    Path(sys.argv[2]).write_text(json.dumps(out, default=repr))


def main_ray() -> None:
    """verl's `RewardLoopManager` with two reward worker actors on a local Ray instance, as
    the trainer runs them: each worker routes its own chunk, under its own rank."""
    import ray
    from transformers import AutoTokenizer
    from verl.experimental.reward_loop import RewardLoopManager

    spec = json.loads(Path(sys.argv[1]).read_text())
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        object_store_memory=100 * 2**20,
        runtime_env={"env_vars": {name: os.environ[name] for name in ("PYTHONPATH", "REDIS_URL")}},
    )
    try:
        manager = RewardLoopManager(
            compose_config(spec, wrapped=True, **{"reward.num_workers": "2"})
        )
        tokenizer = AutoTokenizer.from_pretrained(spec["tokenizer"])
        scored = manager.compute_rm_score(make_batch(tokenizer, GROUPS, {"global_steps": 11}))
        scores = scored.batch["rm_scores"].sum(-1).tolist()
        # The workers' idle timers (0.3 s) and producers (0.5 s) hand over; on a loaded machine
        # an actor's first routing (redaction's tables, the first Redis connection) takes longer.
        # Ray kills the actors at shutdown, so wait for what the threshold selects, and a beat
        # more for any duplicate.
        low = sum(score < spec["threshold"] for score in scores)
        deadline = time.monotonic() + 180  # ends at once when they are there
        while len(queued_records(os.environ["REDIS_URL"], spec["queue"])) < low:
            if time.monotonic() > deadline:
                break  # the test says what is missing
            time.sleep(0.2)
        time.sleep(0.5)
        out = {"scores": scores}
    finally:
        ray.shutdown()
    Path(sys.argv[2]).write_text(json.dumps(out))


if __name__ == "__main__":
    if json.loads(Path(sys.argv[1]).read_text()).get("ray"):
        main_ray()
    else:
        main()
