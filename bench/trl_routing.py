"""What routing low-reward rollouts costs a TRL user: lowtide's adapter against no routing and
against the three naive ways of doing it inside a reward function.

1. GRPOTrainer step time (tiny model, 8 prompts x 4 samples, 32 new tokens, fp32, one CPU
   thread), every sample routed, each run its own process, runs interleaved (the order reversed
   every other round) so machine noise hits all alike, first steps dropped as warm-up. Ratios
   are the median over rounds of each run against the `none` run of its round, in wall-clock
   time and in the process's CPU time per step (all its threads: the producer's work counts;
   steadier than wall clock on a shared machine). `none_again` repeats `none`: its ratio is the
   noise floor.
     none       the reward function alone
     lowtide    the same function through `lowtide.trl.route_low_rewards` (goal <= 1.02x none)
     rq_sync    one synchronous RQ enqueue per sample
     ls_bulk    one Label Studio `import_tasks` per step
     ls_create  one Label Studio `tasks.create` per sample
   The naive ones send what lowtide sends: the record's fields for RQ, and for Label Studio the
   task the review form needs (`annotation.labelstudio.task_from_record`: a task that misses a
   field the form shows is refused). The Label Studio ones use the one at LABEL_STUDIO_URL with
   LABEL_STUDIO_API_KEY if it answers, else start one with the repo's own service code
   (installing its virtualenv first if needed); BENCH_LABEL_STUDIO=0 skips them, saying so.
2. Trainer-thread time the adapter adds per step with 256 samples: TRL's own
   `_calculate_rewards` on a real GRPOTrainer with two wrapped reward functions, the time spent
   in lowtide's part of the wrappers measured directly (goal p99 <= 1 ms), for the default
   `sampling` config and for one that routes every sample, in wall-clock and in the thread's
   CPU time (wall clock also counts the moments a busy shared machine gives the core to
   someone else); 10 ms of torch work between calls stands for the rest of a step. The same
   call without lowtide is timed alongside (interleaved) for scale.

Knobs: BENCH_RUNS (5), BENCH_STEPS (20), BENCH_CALLS (1000), BENCH_LABEL_STUDIO (1).
"""

from __future__ import annotations

import itertools
import json
import os
import random
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _child_run import REPO, child_main, own_redis_server, percentile, run_child
from _quick import announce, knob, repeat_or_measure, sized, tiny_models

RUNS = knob("RUNS", 5, 1)
STEPS = knob("STEPS", 20, 1)
CALLS = knob("CALLS", 1000, 3)
# First calls pay one-time costs (torch kernels, the trainer's settings read). Quick: one.
CALL_WARMUP = min(sized(50, 1), CALLS // 2)
# Between calls, the rest of a step (generation, backward): torch work on this thread, which
# leaves the caches as a real step does (sleeping instead would idle the core).
STEP_GAP_S = 0.01
WARMUP = sized(2, 0)  # quick: one step, measured (its figure means nothing anyway)
# Quick: the same trainers and routes on a smaller batch.
PROMPTS, SAMPLES, NEW_TOKENS = sized((8, 4, 32), (2, 2, 4))
GROUPS, PER_GROUP = sized(64, 4), 4  # part 2's batch: 256 samples
QUEUE = "bench-trl"
ROUTE_ALL = [
    "--sampling.threshold=1e30",
    "--sampling.max_per_step=1000000",
    "--sampling.max_per_minute=1000000000",
]
KINDS = ("none", "none_again", "lowtide", "rq_sync", "ls_bulk", "ls_create")


# ---- 1. step time, one run per process ------------------------------------------------------


def naive_router(kind: str, settings: dict[str, Any]):
    """What a user writes without lowtide: a call per sample (or per step) from the reward."""
    if kind == "rq_sync":
        import redis
        from rq import Queue
        from rq.serializers import JSONSerializer

        queue = Queue(QUEUE, connection=redis.Redis.from_url(settings["redis_url"]),
                      serializer=JSONSerializer)  # fmt: skip

        def send(records: list[dict]) -> None:
            for record in records:
                queue.enqueue("annotation.jobs.import_batch", [record])

        return send
    from label_studio_sdk import LabelStudio

    from annotation.labelstudio import task_from_record

    sdk = LabelStudio(base_url=settings["ls_url"], api_key=settings["ls_key"])
    project = settings["ls_project"]
    if kind == "ls_bulk":

        def import_all(records: list[dict]) -> None:
            sdk.projects.import_tasks(project, request=[task_from_record(r) for r in records])

        return import_all

    def create(records: list[dict]) -> None:
        for record in records:
            sdk.tasks.create(project=project, data=task_from_record(record)["data"])

    return create


def run_steps(kind: str, model: str, settings: dict[str, Any], out: Path) -> dict[str, list]:
    import torch
    from datasets import Dataset
    from trainer_vs_trl import prompts, quickstart_rewards
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from rl.rewards import RewardBatch, RewardSet

    torch.set_num_threads(1)
    rewards = RewardSet.from_specs(quickstart_rewards())

    def keyword_reward(prompts, completions, **_):  # TRL hands the rendered prompts back
        raw = [p.rsplit("User: ", 1)[-1].split("\n")[0] for p in prompts]
        return rewards.score(RewardBatch(raw, list(completions), [False] * len(raw))).total

    funcs: Any
    if kind in ("none", "none_again"):
        funcs = [keyword_reward]
    elif kind == "lowtide":
        from lowtide.trl import route_low_rewards

        os.environ["REDIS_URL"] = settings["redis_url"]
        funcs = route_low_rewards([keyword_reward], overrides=[
            *ROUTE_ALL, f"--queue.name={QUEUE}", f"--queue.spool_dir={out / 'spool'}"])  # fmt: skip
        own_cpu = lowtide_cpu_clock(funcs.routing)
    else:
        send = naive_router(kind, settings)

        def naive_reward(prompts, completions, trainer_state, **kwargs):
            scores = keyword_reward(prompts, completions)
            step = trainer_state.global_step + 1
            rows = enumerate(zip(prompts, completions, scores, strict=True))
            send([{"prompt": p, "response": c, "reward": r,
                   "reward_details": {"keyword_reward": r}, "run_id": "bench",
                   "sample_id": f"bench-{os.getpid()}-{step}-{i}", "step": step}
                  for i, (p, c, r) in rows])  # fmt: skip
            return scores

        naive_reward.__name__ = "keyword_reward"
        funcs = [naive_reward]

    tokenizer = AutoTokenizer.from_pretrained(model)
    data = Dataset.from_dict(
        {"prompt": [tokenizer.apply_chat_template([{"role": "user", "content": p}],
                    add_generation_prompt=True, tokenize=False) for p in prompts()]}
    )  # fmt: skip
    stamps: list[tuple[float, float, float]] = []

    def stamp() -> None:
        own = own_cpu() if kind == "lowtide" else 0.0
        stamps.append((time.perf_counter(), time.process_time(), own))

    class StepTimer(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            stamp()

    config = GRPOConfig(
        output_dir=str(out), per_device_train_batch_size=PROMPTS * SAMPLES,
        num_generations=SAMPLES, max_completion_length=NEW_TOKENS, learning_rate=2e-4, beta=0.05,
        max_steps=STEPS, temperature=1.0, top_p=1.0, top_k=0, bf16=False, fp16=False,
        gradient_checkpointing=False, use_cpu=True, report_to="none", logging_steps=10_000,
        save_strategy="no", seed=0, dataloader_num_workers=0, disable_tqdm=True,
    )  # fmt: skip
    trainer = GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(model), reward_funcs=funcs, args=config,
        train_dataset=data, processing_class=tokenizer, callbacks=[StepTimer()],
    )  # fmt: skip
    stamp()
    trainer.train()
    if kind == "lowtide":
        funcs.close()
    steps = list(itertools.pairwise(stamps))
    return {
        which: [b[i] - a[i] for a, b in steps] for i, which in enumerate(("wall", "cpu", "own"))
    }


def lowtide_cpu_clock(routing: Any) -> Any:
    """CPU seconds lowtide itself has used so far: its part of the wrapper calls on the trainer
    thread, and its producer thread (building records, talking to Redis)."""
    observe, spent = routing._observe, [0.0]

    def timed(*args: Any) -> None:
        began = time.thread_time()
        observe(*args)
        spent[0] += time.thread_time() - began

    routing._observe = timed
    producer = time.pthread_getcpuclockid(routing.router.producer._worker.thread.ident)
    return lambda: spent[0] + time.clock_gettime(producer)


# ---- 2. trainer-thread time per step --------------------------------------------------------


def text(rng: random.Random, words: int) -> str:
    vocabulary = ("the", "tide", "moon", "sea", "blue", "green", "color", "cat", "dog", "fox")
    return " ".join(rng.choice(vocabulary) for _ in range(words))


def rest_of_step(seconds: float, _matrix: list[Any] = []) -> None:  # noqa: B006 - a cache
    import torch

    if not _matrix:
        _matrix.append(torch.randn(512, 512))
    until = time.perf_counter() + seconds
    while time.perf_counter() < until:
        _matrix[0] @ _matrix[0]


def thread_time(model: str, settings: dict[str, Any], out: Path) -> dict[str, Any]:
    """Per call of TRL's `_calculate_rewards` with 256 samples: seconds spent in lowtide (the
    wrappers' own work) for each config, and the whole call with and without lowtide."""
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from lowtide.trl import route_low_rewards

    torch.set_num_threads(1)
    os.environ["REDIS_URL"] = settings["redis_url"]
    rng = random.Random(0)
    prompts = [f"<|bos|>User: {text(rng, 60)}?\nAssistant:" for _ in range(GROUPS)]
    prompts = [p for p in prompts for _ in range(PER_GROUP)]
    completions = [text(rng, 120) for _ in prompts]
    completion_ids = [[rng.randrange(600) for _ in range(150)] for _ in prompts]
    inputs = [{"prompt": p, "topic": "colors"} for p in prompts]
    scores = [[rng.random() for _ in prompts] for _ in range(2)]

    def correctness(completions, **_):
        return scores[0]

    def fmt(completions, **_):
        return scores[1]

    tokenizer = AutoTokenizer.from_pretrained(model)
    policy = AutoModelForCausalLM.from_pretrained(model)
    data = Dataset.from_dict({"prompt": prompts[:8]})

    def make(funcs: list, name: str) -> Any:
        config = GRPOConfig(output_dir=str(out / name), per_device_train_batch_size=8,
                            num_generations=4, use_cpu=True, bf16=False, report_to="none",
                            reward_weights=[1.0, 0.5], disable_tqdm=True)  # fmt: skip
        trainer = GRPOTrainer(model=policy, reward_funcs=funcs, args=config, train_dataset=data,
                              processing_class=tokenizer)  # fmt: skip
        trainer.model.train()
        return trainer

    routed = {
        "default": route_low_rewards([correctness, fmt], overrides=[
            f"--queue.name={QUEUE}", f"--queue.spool_dir={out / 'spool'}"]),
        "every sample": route_low_rewards([correctness, fmt], overrides=[
            *ROUTE_ALL, f"--queue.name={QUEUE}", f"--queue.spool_dir={out / 'spool'}"]),
    }  # fmt: skip
    trainers = {"none": make([correctness, fmt], "none")}
    spent: dict[str, list[float]] = {}
    for name, funcs in routed.items():
        trainers[name] = make(list(funcs), name.replace(" ", "-"))
        routing = funcs.routing
        observe = routing._observe  # lowtide's part of each wrapper call
        spent[name] = []

        def timed(*args: Any, _observe=observe, _spent=spent[name]) -> None:
            began, cpu = time.perf_counter(), time.thread_time()
            _observe(*args)
            _spent.append((time.perf_counter() - began, time.thread_time() - cpu))

        routing._observe = timed
    whole: dict[str, list[float]] = {name: [] for name in trainers}
    for call in range(CALLS):
        for name, trainer in trainers.items():  # interleaved: noise hits all alike
            trainer.state.global_step = call  # a new step each time: nothing deduped away
            began = time.perf_counter()
            trainer._calculate_rewards(inputs, prompts, completions, completion_ids)
            whole[name].append(time.perf_counter() - began)
            trainer._pending_metrics.clear()  # TRL clears them after each batch
            rest_of_step(STEP_GAP_S)
    for funcs in routed.values():
        funcs.close()
    routed_counts = {name: funcs.routing.routed.batches for name, funcs in routed.items()}
    assert all(count == CALLS for count in routed_counts.values()), routed_counts
    # Two wrapper calls per step (two reward functions); the first calls are warm-up.
    per_step = {name: [(a[0] + b[0], a[1] + b[1]) for a, b in zip(v[::2], v[1::2], strict=True)]
                for name, v in spent.items()}  # fmt: skip
    return {
        "wall": {name: [w for w, _ in v[CALL_WARMUP:]] for name, v in per_step.items()},
        "cpu": {name: [c for _, c in v[CALL_WARMUP:]] for name, v in per_step.items()},
        "whole": {name: v[CALL_WARMUP:] for name, v in whole.items()},
    }


def child(kind: str, model: str, settings_json: str) -> None:
    settings = json.loads(settings_json)
    with tempfile.TemporaryDirectory() as out:
        if kind == "thread":
            print(json.dumps(thread_time(model, settings, Path(out))))
        else:
            print(json.dumps(run_steps(kind, model, settings, Path(out))))


# ---- the run ---------------------------------------------------------------------------------


def label_studio(tmp: Path) -> tuple[dict[str, Any], Any, str | None]:
    """(settings, stop, why skipped): a Label Studio started with the repo's own service code,
    and a project for the naive importers."""
    if os.environ.get("BENCH_LABEL_STUDIO", "1") == "0":
        return {}, lambda: None, "BENCH_LABEL_STUDIO=0"
    from annotation_throughput import REVIEW_XML
    from annotation_throughput import label_studio as start_label_studio

    from annotation.labelstudio import LabelStudioClient

    url, key, stop = start_label_studio(tmp)
    client = LabelStudioClient(url, key)
    project = client.ensure_project(f"bench trl {secrets.token_hex(3)}", REVIEW_XML.read_text())
    return {"ls_url": url, "ls_key": key, "ls_project": project}, stop, None


def main() -> None:
    announce()
    with (
        tempfile.TemporaryDirectory() as tmp,
        own_redis_server() as redis_url,
        tiny_models() as models,
    ):
        model = str(models.policy)
        ls_settings, stop_ls, skipped = label_studio(Path(tmp))
        settings = json.dumps({"redis_url": redis_url, **ls_settings})
        try:
            kinds = [k for k in KINDS if not (skipped and k.startswith("ls_"))]
            # per kind, per clock: one median step time per round
            rounds = {k: {"wall": [], "cpu": [], "own": []} for k in kinds}
            last: dict[str, dict] = {}  # each kind's latest run
            for run in range(RUNS):
                for kind in kinds if run % 2 == 0 else kinds[::-1]:
                    got = repeat_or_measure(
                        kind, last, lambda kind: run_child(__file__, kind, model, settings)
                    )
                    for clock in ("wall", "cpu"):
                        rounds[kind][clock].append(statistics.median(got[clock][WARMUP:]))
                    # the mean: the producer's work comes in bursts (one RQ job per batch)
                    rounds[kind]["own"].append(statistics.mean(got["own"][WARMUP:]))
                    print(f"round {run + 1}/{RUNS} {kind:10} median step "
                          f"{rounds[kind]['wall'][-1]:.3f} s, "
                          f"CPU {rounds[kind]['cpu'][-1]:.3f} s", flush=True)  # fmt: skip
            print(f"measuring trainer-thread time per step ({GROUPS * PER_GROUP} samples)...",
                  flush=True)  # fmt: skip
            thread = run_child(__file__, "thread", model, settings)
        finally:
            stop_ls()

    def ratio(kind: str, clock: str) -> float:
        return statistics.median(
            a / b for a, b in zip(rounds[kind][clock], rounds["none"][clock], strict=True)
        )

    print(f"\nGRPOTrainer, {PROMPTS} prompts x {SAMPLES} samples, {NEW_TOKENS} new tokens, "
          f"{STEPS} steps x {RUNS} rounds, every sample routed; x: against none")  # fmt: skip
    for kind in KINDS:
        if kind in rounds:
            wall, cpu = (statistics.median(rounds[kind][c]) for c in ("wall", "cpu"))
            print(f"  {kind:10} step {wall:.3f} s  {ratio(kind, 'wall'):5.2f}x   "
                  f"CPU {cpu:.3f} s  {ratio(kind, 'cpu'):5.2f}x")  # fmt: skip
        else:
            print(f"  {kind:10} skipped: {skipped}")
    noise = f"wall {ratio('none_again', 'wall'):.3f}, CPU {ratio('none_again', 'cpu'):.3f}"
    print(f"step time lowtide / no routing: wall {ratio('lowtide', 'wall'):.3f}, "
          f"CPU {ratio('lowtide', 'cpu'):.3f}  (goal <= 1.02; noise floor: {noise})")  # fmt: skip
    own = statistics.median(rounds["lowtide"]["own"])
    base = statistics.median(rounds["none"]["cpu"])
    print(f"lowtide's own CPU per step (trainer thread + producer thread): {own * 1e3:.2f} ms, "
          f"{1 + own / base:.3f}x a step without routing (goal <= 1.02)")  # fmt: skip

    print(f"\ntrainer-thread time added per step by the TRL adapter, {GROUPS * PER_GROUP} samples, "
          f"{CALLS - CALL_WARMUP} steps (goal p99 <= 1 ms)")  # fmt: skip
    for clock, label in (("wall", "wall clock"), ("cpu", "thread CPU")):
        for name, values in thread[clock].items():
            p50, p99 = percentile(values, 0.5) * 1e3, percentile(values, 0.99) * 1e3
            print(f"  {label:10} {name:12} p50 {p50:.3f} ms  p99 {p99:.3f} ms  "
                  f"max {max(values) * 1e3:.3f} ms")  # fmt: skip
    whole = {name: statistics.median(v) * 1e3 for name, v in thread["whole"].items()}
    print("  TRL's _calculate_rewards, median: "
          + ", ".join(f"{name} {ms:.3f} ms" for name, ms in whole.items()))  # fmt: skip


if __name__ == "__main__":
    if not child_main(child):
        sys.path.insert(0, str(REPO))
        main()
