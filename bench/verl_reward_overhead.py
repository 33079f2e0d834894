"""verl's reward loop with lowtide's reward manager against verl's own, in one process.

1,024 samples (256 prompts x 4) through verl's `RewardLoopWorker.compute_score_batch` (what
each reward worker actor runs) with the tests' rule-based reward function, interleaved runs:
NaiveRewardManager alone, then LowtideRewardManager wrapping it (threshold 0.5, no caps: 448
of 1,024 selected, the worst case for the flush). Prints medians and the ratio:
  scoring time, lowtide / plain, end to end (the fastest runs: verl's thread-pool executor
  makes single runs vary up to 2x on a busy machine)
  lowtide's own time in each request, timed where it runs, as a share of the scoring time
  (goal <= 1.05: what verl waits for)
  the flush (selection, the texts of selected samples, the hand-over to the producer), which
  runs on the worker's event loop after a burst, per sample (report)
Runs in the verl virtualenv (built once per user, as for the tests): started from another
python, it builds the tiny tokenizer there and re-runs itself in that virtualenv. Routes to the
Redis at REDIS_URL when that is set, else to a redis-server of its own (a queue of its own,
deleted at the end). Knob: BENCH_RUNS (15).
"""

from __future__ import annotations

import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from _quick import announce, knob, sized, tiny_models

REPO = Path(__file__).resolve().parent.parent
RUNS = knob("RUNS", 15, 1)
PROMPTS, SAMPLES = sized(256, 16), 4  # quick: each of the reward function's groups 4 times
GOAL = 1.05


def in_verl_venv(tokenizer: str) -> None:
    sys.path.insert(0, str(REPO))
    import redis
    from rq import Queue
    from rq.serializers import JSONSerializer
    from verl.experimental.reward_loop import RewardLoopWorker

    from tests.helpers.verl_reward_fn import GROUPS
    from tests.helpers.verl_reward_loop import compose_config, make_batch

    queue = f"bench-verl-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as work:
        spec = {
            "tokenizer": tokenizer,
            "queue": queue,
            "spool_dir": f"{work}/spool",
            "threshold": 0.5,
            "readme_overrides": [
                "reward.reward_manager.source=importlib",
                "reward.reward_manager.name=LowtideRewardManager",
                "reward.reward_manager.module.path=pkg://lowtide.verl",
                "+lowtide.wrap=naive",
            ],
        }
        plain = RewardLoopWorker(compose_config(spec, wrapped=False))
        uncapped = {
            "lowtide.flush_idle_s": "3600",  # flushed by hand below, to time it apart
            "++lowtide.sampling.max_per_step": "100000",
            "++lowtide.sampling.max_per_minute": "10000000",
        }
        wrapped = RewardLoopWorker(compose_config(spec, wrapped=True, **uncapped))
        batcher = wrapped.reward_manager.batcher
        add_s: list[float] = []  # lowtide's own work in each request, timed where it runs
        keep = batcher.add

        def timed_add(data, result) -> None:
            started = time.perf_counter()
            keep(data, result)
            add_s.append(time.perf_counter() - started)

        batcher.add = timed_add
        groups = [
            (f"{prompt} ({i})", truth, responses)
            for i in range(PROMPTS // len(GROUPS))
            for prompt, truth, responses in GROUPS
        ]
        timings: dict[str, list[float]] = {"plain": [], "lowtide": [], "flush": []}
        for run in range(RUNS + 1):  # the first is warm-up
            batch = make_batch(plain.input_tokenizer, groups, {"global_steps": run})
            pair = [("plain", plain), ("lowtide", wrapped)]
            for name, worker in pair if run % 2 else pair[::-1]:  # alternate: no order bias
                started = time.perf_counter()
                worker.loop.run_until_complete(worker.compute_score_batch(batch))
                timings[name].append(time.perf_counter() - started)
            started = time.perf_counter()
            wrapped.reward_manager.flush()
            timings["flush"].append(time.perf_counter() - started)
        wrapped.reward_manager.close()
        routed = wrapped.reward_manager.batcher.totals["submitted"]
        connection = redis.Redis.from_url(os.environ["REDIS_URL"])
        Queue(queue, connection=connection, serializer=JSONSerializer).delete(delete_jobs=True)
    median = {name: statistics.median(values[1:]) for name, values in timings.items()}
    least = {name: min(values[1:]) for name, values in timings.items()}
    samples = PROMPTS * SAMPLES
    ratio = least["lowtide"] / least["plain"]
    add_us = 1e6 * statistics.median(add_s[samples:])
    add_p99_us = 1e6 * statistics.quantiles(add_s[samples:], n=100)[98]
    direct = (median["plain"] + add_us * samples / 1e6) / median["plain"]
    print(f"verl reward loop, {samples} samples a batch, median of {RUNS} runs")
    for name in ("plain", "lowtide"):
        print(
            f"  {name:8} {1000 * median[name]:8.1f} ms a batch (fastest {1000 * least[name]:.1f})"
        )
    print(f"  ratio    {ratio:8.3f}  (fastest runs, end to end: verl's thread-pool executor "
          "makes single runs vary up to 2x)")  # fmt: skip
    print(
        f"  in each request lowtide adds {add_us:.1f} us (p99 {add_p99_us:.1f} us) to "
        f"{1e6 * median['plain'] / samples:.0f} us of scoring a sample"
    )
    verdict = "met" if direct <= GOAL else "NOT met"
    print(
        f"  ratio    {direct:8.3f}  (scoring + lowtide's part / scoring; goal <= {GOAL}: {verdict})"
    )
    per_sample = 1e6 * median["flush"] / samples
    print(f"  flush    {1000 * median['flush']:8.1f} ms a batch, {per_sample:.1f} us a sample "
          f"(after the burst; {routed} records routed in all)")  # fmt: skip


def main() -> None:
    try:
        import verl  # noqa: F401
    except ImportError:  # our own virtualenv: build the tokenizer here, run in verl's
        from _child_run import own_redis_server

        from lowtide.services import peer_venvs

        announce()
        python = peer_venvs.ensure(peer_venvs.VERL, REPO)
        with contextlib.ExitStack() as stack:
            policy = stack.enter_context(tiny_models(sft_steps=0, any_weights=True)).policy
            url = os.environ.get("REDIS_URL") or stack.enter_context(own_redis_server())
            env = peer_venvs.VERL.environ(REPO, {**os.environ, "REDIS_URL": url})
            command = [str(python), __file__, str(policy)]
            returncode = subprocess.run(command, env=env, check=False).returncode
        sys.exit(returncode)
    in_verl_venv(sys.argv[1])


if __name__ == "__main__":
    main()
