"""Which rollouts are worth a reviewer's minute? A pool bench, with the power to tell selections
apart.

The policy-in-the-loop bench (bench/loop_value.py) mixes that question with the noise of
training a policy: one seed moves a task's final accuracy more than any difference between
selections. Here, as in the pool-based experiments of the field, a task's pool and evaluation
set are fixed (bench/selection_value/pool.py: built once per task and cached by hash), and each
selection spends the same reviewer-minutes (the task file's `pool.review_minutes`, by the default
cost model) picking reviews from the pool in rounds, through the code a run uses (the routing
core's threshold policy, the budget selector and its shares, comparison groups:
bench/selection_value/selections.py). Between batches the reward model is an ensemble of heads
refit on frozen features (bench/selection_value/model.py), which makes 20 seeds affordable;
`--check-retrain` checks the ordering of the selections against `rm train` fine-tuning every
weight at three budget points.

The seed moves what each round offers, the heads' draws and the ties; the pool and the
evaluation set stay. Intervals are bootstrapped over seeds and held-out prompts together
(bench/selection_value/stats.py); each difference is printed with its interval, its half-width
and the per-seed values.

    OMP_NUM_THREADS=1 .venv/bin/python bench/selection_value.py                 # cool_and_short
    OMP_NUM_THREADS=1 .venv/bin/python bench/selection_value.py \
        --task bench/loop_value/warm_words.yaml
    OMP_NUM_THREADS=1 .venv/bin/python bench/selection_value.py --quick         # a smoke run

BENCH_QUICK=1 means --quick: a tiny pool, 2 seeds, a small budget; its figures mean nothing.
BENCH_TINY_MODELS=DIR stands for --models DIR. The numbers go to <out>/results.json.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # `bench.selection_value.*` when run as a script
    sys.path.insert(0, str(REPO))

from bench._quick import QUICK, announce, run_with_out  # noqa: E402

DEFAULT_TASK = REPO / "bench" / "loop_value" / "cool_and_short.yaml"
DEFAULT_SEEDS = 20


def main(argv: list[str] | None = None) -> int:
    return run_with_out(_parse(argv), "selection_value", _main)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    from bench.selection_value.model import EnsembleSettings
    from bench.selection_value.selections import DEFAULT

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", type=Path, default=DEFAULT_TASK)
    parser.add_argument("--out", type=Path, default=None,
                        help="default: outputs/bench/selection_value")  # fmt: skip
    parser.add_argument(
        "--models", type=Path, default=os.environ.get("BENCH_TINY_MODELS") or None,
        help="tiny models to reuse (policy/, reward_model/)",
    )  # fmt: skip
    parser.add_argument("--seeds", type=int, default=None,
                        help=f"how many seeds (default {DEFAULT_SEEDS}; quick: 2)")  # fmt: skip
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--selections", nargs="+", default=list(DEFAULT),
                        help="default: " + " ".join(DEFAULT))  # fmt: skip
    parser.add_argument("--replicates", type=int, default=2000, help="bootstrap replicates")
    parser.add_argument(
        "--written-weight", type=float, default=EnsembleSettings().written_weight,
        help="loss weight (0 to 1) of the pairs that prefer a reviewer's written better answer",
    )  # fmt: skip
    parser.add_argument(
        "--anchor", type=float, default=EnsembleSettings().anchor,
        help="the refit heads' pull toward their starts, in the starting head's size",
    )  # fmt: skip
    parser.add_argument("--quick", action="store_true", default=QUICK,
                        help="smoke run: a tiny pool, 2 seeds")  # fmt: skip
    parser.add_argument(
        "--rebuild",
        action="store_true",
        help="rebuild the starting reward model (the pool follows its hash)",
    )
    parser.add_argument(
        "--check-retrain", action="store_true",
        help="also retrain with rm train (every weight) at three budget points on three seeds "
        "and compare the ordering of the selections",
    )  # fmt: skip
    parser.add_argument("--retrain-seeds", type=int, default=3,
                        help="seeds --check-retrain trains on (the first N)")  # fmt: skip
    args = parser.parse_args(argv)
    if args.seeds is not None and args.seeds < 2:
        parser.error("--seeds: at least 2 (the intervals are over seeds)")
    if not 0 <= args.written_weight <= 1:
        parser.error("--written-weight: from 0 to 1")
    if not args.anchor > 0:
        parser.error("--anchor: above 0")
    return args


def _main(args: argparse.Namespace) -> int:
    announce()
    import torch

    torch.set_num_threads(1)
    from bench.loop_value.costs import MODELS
    from bench.loop_value.provenance import describe
    from bench.loop_value.starting import starting_reward_model, tiny_models
    from bench.loop_value.task import load_task
    from bench.selection_value.model import EnsembleSettings
    from bench.selection_value.pool import TextFeatures, load_or_build, offered_rounds
    from bench.selection_value.run import SeedPlan, hacks_of, run_selection
    from bench.selection_value.selections import selection
    from rl.rewards.model import RewardModel

    for name in args.selections:
        selection(name)  # a misspelled name ends the bench before anything is built
    task = load_task(args.task)
    if args.quick:
        task = task.model_copy(update={"pool": task.pool.model_copy(update={
            "review_minutes": 8.0, "batch": 4, "offered": 40, "start_samples": 4,
            "policies": 1, "policy_steps": 2, "eval_samples": 4})})  # fmt: skip
    count = args.seeds or (2 if args.quick else DEFAULT_SEEDS)
    seeds = list(range(args.first_seed, args.first_seed + count))
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    started, cpu_started = time.perf_counter(), time.process_time()
    models = tiny_models(args.models, out)
    start_rm = starting_reward_model(task, models, out, 8 if args.quick else None, args.rebuild)
    pool, built = load_or_build(task, models, start_rm, out)
    settings = task.pool
    evaluation = pool.evaluation
    hacks = hacks_of(pool)
    failing = sum(v.failure for v in pool.verdicts)
    suspects = [s.describe() for s in pool.report.suspects[:3]] if pool.report else []
    print(
        f"task {task.name}: pool {pool.digest} ({'built now' if built else 'cached'}, "
        f"{time.perf_counter() - started:.0f} s): {len(pool.rollouts)} rollouts of "
        f"{len(task.train_prompts)} train prompts ({failing} failures by the oracle, "
        f"{len(hacks)} of them in the starting RM's top decile); evaluation: {evaluation.pairs} "
        f"pairs of {len(evaluation.texts)} samples of {len(evaluation.prompts)} held-out prompts "
        f"(never offered); watch's top suspects: {'; '.join(suspects) or 'none'}",
        flush=True,
    )
    print(f"budget {settings.review_minutes:g} reviewer-minutes a selection (default cost "
          f"model), {settings.batch} reviews a batch, {settings.offered} rollouts offered a "
          f"round; {len(seeds)} seeds")  # fmt: skip
    print("measured with: " + "; ".join(f"{k} {v}" for k, v in
                                        describe(models, start_rm, REPO).items()))  # fmt: skip
    ensemble = EnsembleSettings(anchor=args.anchor, written_weight=args.written_weight)
    scorer = RewardModel(start_rm)
    features = TextFeatures(pool, scorer)
    rounds = math.ceil(settings.review_minutes * 60 / (settings.batch * 30)) * 4 + 4
    tracks: dict[int, dict[str, object]] = {}
    for seed in seeds:
        seed_started = time.process_time()
        plan = SeedPlan(offered_rounds(pool, settings.offered, rounds, seed), hacks,
                        settings.review_minutes, settings.batch, 4, ensemble,
                        pool.features.mean(0))  # fmt: skip
        tracks[seed] = {}
        for name in args.selections:
            at = time.process_time()
            track = run_selection(name, pool, task, plan, seed, features)
            track.seconds = time.process_time() - at
            tracks[seed][name] = track
        print(f"  seed {seed}: {time.process_time() - seed_started:.0f} s of CPU", flush=True)
    checked = None
    if args.check_retrain:
        from bench.selection_value.retrain import check

        checked = check(pool, tracks, seeds[: args.retrain_seeds], args.selections, start_rm, out,
                        args.written_weight)  # fmt: skip
    scorer.close()
    from bench.selection_value.report import report

    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    text, numbers = report(tracks, args.selections, pool, task, [m.name for m in MODELS],
                           args.replicates, cpu, checked)  # fmt: skip
    print(text)
    print(f"\n{elapsed:.0f} s in all ({cpu:.0f} s of CPU); numbers in {out / 'results.json'}")
    record = {"task": task.name, "pool": pool.digest, "seeds": seeds, "cpu_s": cpu,
              "elapsed_s": elapsed, "goals": numbers,
              "tracks": {str(s): {n: asdict(t) for n, t in by.items()} for s, by in
                         tracks.items()}}  # fmt: skip
    (out / "results.json").write_text(json.dumps(record, indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
