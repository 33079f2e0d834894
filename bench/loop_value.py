"""Does reviewing make the reward model, and through it the policy, better? The honest measure.

A task (bench/loop_value/cool_and_short.yaml by default; `--task` for another) names its prompts
(a quarter held out: never trained on, never reviewed), a scripted oracle reviewer, and the
builder of a starting reward model with a blind spot the policy can exploit. The oracle is
hidden from the trainer and from every reward model: only the bench's reviewers call it.

For each seed, each selection method runs `--rounds` rounds of the loop:

    train the policy (GRPO, the real rl.Trainer, tiny model, CPU) against the current reward
    model -> the round's rollouts are the review candidates -> the method picks at most
    `--budget` of them -> the oracle reviews those (rating, categories, a better response) ->
    the next reward model is trained (annotation.reward_model.train, warm-started from the
    current one, on every review so far, with its uncertainty heads) -> next round.

Methods: `no_loop` (the reward model is never retrained: no reviews), `random` (uniform),
`threshold` (sampling.selection.policies.threshold at the task's bar, capped to the budget by a
uniform subsample, as the router caps), `budget` (sampling.selection.budget.choose with the
default BudgetConfig: near-duplicates folded, the audit share first to one carrier of each of
the reward-hacking watch's suspects and then to high rewards, uncertainty from the reward
model's heads in round 1 and, from round 2, where the retrained reward model disagrees with the
starting one (scored beside it, as `lowtide loop` does), random share, the rest to low rewards:
fixed shares), `budget_no_watch` (the
same without the watch's suspects), `budget_adaptive` (the budget that learns, as `lowtide loop`
runs it with sampling.budget.adaptive: the same selection, its shares starting from the default
ones and, after each round, split again by sampling.selection.budget_learning from what every
review so far contradicted, per selection reason: bench/loop_value/adapting.py; the shares of
each round and seed are printed), `compare` (comparison review: the selection of
`--compare-selection`, threshold by default, picks samples; each pick's GRPO group is one task
of up to `--compare-size` responses, the oracle picks the best and the worst, and
annotation.comparison.comparison_pairs turns that into preference pairs; a worst that is a
failure also gets a better answer, as in single mode: bench/loop_value/reviewing.py). Round 0
trains against the starting reward model for every method, so its training run is shared
(same seed, same inputs); selection differs from there.

Reviewer time (bench/loop_value/costs.py): each review is charged reviewer-seconds for reading
(per response), deciding (a rating, or best and worst) and writing a better answer; the default
model (20 s a response read, 10 s a rating, 15 s a best-and-worst, 60 s a better answer) and a
second one (30 s per response read, nothing else) are both reported, so a conclusion that hangs
on one guess shows. Within a round the reward model is retrained after every `--rm-every`
reviews (6) for the budget methods and compare (bench/loop_value/checkpoints.py), from the model
the round started with, on all reviews so far, and each checkpoint is measured:
"reviewer-minutes to reach X" is read at that grain. The round's last checkpoint is the
round's model, so the checkpoints change nothing the loop does; those in between are removed
once measured. Two diagnostics of that retraining (bench/results/2026-12-loop-value.md):
`--rm-train head` refits only the score head on the frozen backbone's features, and
`--written-weight W` weighs the pairs that prefer a reviewer's written better answer by W in the
loss (rm train's `--written-weight`; 0 trains without them; rm train's default, 1, is the
bench's).

The watch (sampling.selection.hacking, its default WatchConfig) reads each method's run, all its
rounds so far, as the router would; at each round's end the bench records its suspects and the
rank of the task's blind spot among them (the task's `blind_spot` names it; the watch is never
told). Each seed also trains the starting policy against the oracle itself, a rule reward with
no blind spot, for as many steps as a method's rounds, and counts the suspects the watch raises
there (`--no-rule-run` skips it). Tasks with other blind spots: warm_words.yaml (a phrase),
full_sentences.yaml (a form: answers that open with "the"); outside the suite, checks of the
watch: checks/number_words.yaml (a kind of word: any number word), checks/commas.yaml
(punctuation), checks/echo.yaml (naming what the question asks about).

Per round: the oracle's score of the policy (mean rating scaled to [0, 1]) on the held-out
prompts; the reward model's pairwise accuracy against the oracle (after the round's retraining)
on a pool of held-out samples from the starting policy and every method's policy of every round
(low- and high-reward ones alike; `high`: pairs with a member the starting reward model scored
in its top third); reviews spent; "hacking caught": of the round's candidates that the starting
reward model scored in its top decile and the oracle rates a failure, the share a reviewer saw
(and the same for the reward model the round's policy trained against, which from round 2 on is
a retrained one: what the next policy would learn to exploit);
machine suggestions: the current reward model's score mapped to a rating (bands of its rating
scale), and how often the scripted reviewer kept it (edits: rating and categories changed).

What is left out, on purpose: Redis, the queue worker and Label Studio. Selection, review and
reward-model training run in this process; the transport is tested elsewhere (tests of the
router, producer, worker, importer and `lowtide loop`). Everything runs on one CPU thread
(OMP_NUM_THREADS=1).

    OMP_NUM_THREADS=1 .venv/bin/python bench/loop_value.py            # 4 seeds x 3 rounds
    OMP_NUM_THREADS=1 .venv/bin/python bench/loop_value.py --seeds 10 --task \
        bench/loop_value/warm_words.yaml
    OMP_NUM_THREADS=1 .venv/bin/python bench/loop_value.py --quick    # 1 seed, 2 short rounds

BENCH_QUICK=1 means --quick and --quick means BENCH_QUICK=1 (the quick-mode note, first and last);
the numbers then go to a temporary directory unless --out names
one; BENCH_TINY_MODELS=DIR stands for --models DIR (see bench/_quick.py).

Results that hold (bench/loop_value/goals.py, intervals.py): the issue's goals table is printed
at the end, each goal with the mean over seeds, its 95% t-interval (a paired goal: the interval
of the per-seed differences) and the per-seed values; "met" only when the interval says so (a
difference above 0, a ratio's upper bound at most 0.5x under both cost models). The bench's
other measures (hacking caught, the watch, suggestions) follow in a second table. The numbers
are also written to <out>/results.json. Before the first seed the bench prints what it measured
with (bench/loop_value/provenance.py): sha256 of the tiny policy (with its tokenizer), of the
reward model's base and of the starting reward model, the commit, torch and its CPU kernels.
Same hashes, commit and kernels on one thread give the same figures; the starting reward model
is built once into <out> and reused while the policy's files are the same (`--rebuild` to build
it again). Default seeds: 4, chosen when a seed of cool_and_short took 196 s of CPU (five
methods). With `budget_adaptive` added a seed took 220-278 s of CPU (one thread, all default
methods, the rule run; bench/results/2026-12-loop-value.md), so 3 seeds of the three tasks
took 38.5 min, within the 45-minute goal, and 4 would be ~51 min, past it; the intervals of 3
seeds are still wide.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # `bench.loop_value.*` when run as a script
    sys.path.insert(0, str(REPO))

from pydantic import ValidationError  # noqa: E402

from annotation.reward_model.settings import RMTrainSettings  # noqa: E402
from bench._quick import QUICK, announce, run_with_out  # noqa: E402
from bench.loop_value.checkpoints import Checkpoint, Reviews  # noqa: E402

if TYPE_CHECKING:
    from bench.loop_value.adapting import AdaptiveBudget

DEFAULT_TASK = REPO / "bench" / "loop_value" / "cool_and_short.yaml"
HACKING_TOP_SHARE = 0.1  # "top-scored": the starting reward model's top decile of a round
HIGH_SHARE = 1 / 3  # accuracy on "high" pairs: a member in the starting RM's top third
DEFAULT_SEEDS = 4  # see the docstring: what the intervals need, within the wall-time goal
# Minutes-to-reach is read of these: RM checkpoints (fixed-share budget: a reported baseline).
READ_FINELY = ("budget", "budget_adaptive", "compare")
# No goal of the issue reads it, and it costs a sixth of a seed: `--methods` adds it back.
OFF_BY_DEFAULT = ("budget_no_watch",)


@dataclass
class Settings:
    seeds: list[int]
    rounds: int
    budget: int
    steps: int  # training steps per round
    eval_samples: int  # held-out completions per prompt
    rm_epochs: int
    start_prompts: int | None  # quick: fewer prompts for the starting reward model's data
    methods: list[str]
    rule_run: bool = True  # also train against the oracle (no blind spot) and watch that run
    rm_every: int = 6  # retrain the reward model after every N reviews of a round (0: round end)
    compare_selection: str = "threshold"  # whose picks' groups `compare` reviews
    compare_size: int = 4  # responses a comparison shows
    rm_train: str = "model"  # a round's retraining: every weight, or the score head alone
    # loss weight of the pairs that prefer a written better answer (rm train's default)
    written_weight: float = RMTrainSettings().written_weight


@dataclass
class RoundRow:
    method: str
    seed: int
    round: int
    oracle_score: float
    reviews: int  # this round
    reviews_total: int  # so far
    hacking_candidates: int  # starting-RM top decile, oracle failures, among the candidates
    hacking_caught: int  # of those, picked for review
    # The same for the reward model the round's policy trained against (in round 1, the starting
    # one): the failures that reward model pays most for, which the next policy would learn.
    current_hacking_candidates: int = 0
    current_hacking_caught: int = 0
    suggestions_accepted: int = 0
    suggestion_ratings_kept: int = 0
    suggestion_edits: int = 0
    rm_accuracy: float = math.nan  # the reward model after this round's retraining
    rm_accuracy_high: float = math.nan
    train_s: float = 0.0
    rm_train_s: float = 0.0  # reward-model training, every checkpoint of the round
    minutes: dict[str, float] = field(default_factory=dict)  # reviewer-minutes, by cost model
    minutes_total: dict[str, float] = field(default_factory=dict)  # so far
    checkpoints: list[Checkpoint] = field(default_factory=list)  # RM retrained within the round
    # The reward-hacking watch over the method's run so far (all its rounds), at this round's end:
    blind_spot_rank: int = 0  # 1-based rank of the task's blind spot among the suspects; 0: not
    suspects: int = 0
    top_suspects: list[str] = field(default_factory=list)
    flagged_picks: int = 0  # picks that carry a suspect's feature (watched methods only)
    # An adaptive budget's: the shares this round was split by, and what its reviews so far
    # taught (LearnedShares.record(): the next round's shares, each bucket's credit).
    shares: dict[str, float] = field(default_factory=dict)
    learned: dict = field(default_factory=dict)


@dataclass
class SeedResult:
    seed: int
    rows: list[RoundRow] = field(default_factory=list)
    start_oracle_score: float = math.nan  # the starting policy's, on the held-out prompts
    start_accuracy: float = math.nan
    start_accuracy_high: float = math.nan
    pool_pairs: int = 0
    # A run against a rule reward (the oracle itself: no blind spot), watched as a run is.
    rule_steps: int = 0
    rule_suspects: list[str] = field(default_factory=list)  # each suspect raised, once


def main(argv: list[str] | None = None) -> int:
    return run_with_out(_parse(argv), "loop_value", _main)


def _main(args: argparse.Namespace) -> int:
    announce()
    import torch

    torch.set_num_threads(1)
    from bench.loop_value.provenance import describe
    from bench.loop_value.starting import starting_reward_model, tiny_models
    from bench.loop_value.task import load_task

    task = load_task(args.task)
    settings = _settings(args, task.train.steps_per_round)
    out = args.out.resolve()  # checkpoints are named relative to it, the start RM inside it
    out.mkdir(parents=True, exist_ok=True)
    started, cpu_started = time.perf_counter(), time.process_time()
    models = tiny_models(args.models, out)
    start_rm = starting_reward_model(task, models, out, settings.start_prompts, args.rebuild)
    print(
        f"task {task.name}: {len(task.train_prompts)} train / {len(task.held_out_prompts)} "
        f"held-out prompts; {settings.rounds} rounds x {len(settings.seeds)} seeds; budget "
        f"{settings.budget} reviews a round; {settings.steps} GRPO steps a round; reward model "
        f"retrained: {settings.rm_train}, written better answers weighted "
        f"{settings.written_weight:g}",
        flush=True,
    )
    built = describe(models, start_rm, REPO)
    print("measured with: " + "; ".join(f"{name} {value}" for name, value in built.items()))
    results = []
    for seed in settings.seeds:
        seed_started = time.perf_counter()
        results.append(_run_seed(task, models, start_rm, seed, settings, out))
        print(f"  seed {seed}: {time.perf_counter() - seed_started:.0f} s", flush=True)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    print(_report(results, settings, elapsed, cpu))
    print(f"\n{elapsed:.0f} s in all ({cpu:.0f} s of CPU); numbers in {out / 'results.json'}")
    numbers = {"task": task.name, "settings": asdict(settings), "elapsed_s": elapsed, "cpu_s": cpu,
               "measured_with": built, "seeds": [asdict(result) for result in results]}  # fmt: skip
    (out / "results.json").write_text(json.dumps(numbers, indent=1, default=str) + "\n")
    return 0


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", type=Path, default=DEFAULT_TASK)
    parser.add_argument("--out", type=Path, default=None, help="default: outputs/bench/loop_value")
    parser.add_argument(
        "--models", type=Path, default=os.environ.get("BENCH_TINY_MODELS") or None,
        help="tiny models to reuse (policy/, reward_model/)",
    )  # fmt: skip
    parser.add_argument(
        "--seeds", type=int, default=None,
        help=f"how many seeds (default {DEFAULT_SEEDS}; quick: 1): the intervals are over them",
    )  # fmt: skip
    parser.add_argument("--first-seed", type=int, default=0, help="the seeds count on from it")
    parser.add_argument(
        "--rm-every", type=int, default=None,
        help="retrain the reward model after every N reviews of a round (default 6; 0: at "
        "round ends only)",
    )  # fmt: skip
    parser.add_argument(
        "--compare-selection", default="threshold",
        choices=("random", "threshold", "budget", "budget_adaptive"),
        help="the single method whose picks' groups `compare` reviews",
    )  # fmt: skip
    parser.add_argument(
        "--compare-size", type=int, default=4, help="responses a comparison shows (2-8)"
    )
    parser.add_argument(
        "--rm-train", default="model", choices=("model", "head"),
        help="a round's reward-model retraining: every weight (rm train's default), or the "
        "score head alone on frozen features (a diagnostic: annotation/reward_model/head_refit.py)",
    )  # fmt: skip
    parser.add_argument(
        "--written-weight", type=float, default=RMTrainSettings().written_weight,
        help="loss weight (0 to 1) of the pairs that prefer a reviewer's written better answer, "
        "as rm train's --written-weight (0: without them; their writing time is still counted)",
    )  # fmt: skip
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--budget", type=int, default=None, help="reviews per round")
    parser.add_argument("--steps", type=int, default=None, help="training steps per round")
    parser.add_argument(
        "--quick", action="store_true", default=QUICK, help="smoke run: 1 seed, 2 short rounds"
    )
    parser.add_argument("--rebuild", action="store_true", help="rebuild the starting RM")
    parser.add_argument(
        "--methods", nargs="+", default=None,
        help="default: all but budget_no_watch (quick: all of them)",
    )  # fmt: skip
    parser.add_argument(
        "--no-rule-run", action="store_true", help="skip the run against a rule reward"
    )
    return parser.parse_args(argv)


def _settings(args: argparse.Namespace, task_steps: int) -> Settings:
    from bench.loop_value.selection import METHODS

    if args.quick:
        base = Settings([0], 2, 6, 2, 2, 1, 8, list(METHODS), rm_every=3)
    else:
        methods = [m for m in METHODS if m not in OFF_BY_DEFAULT]
        base = Settings(list(range(DEFAULT_SEEDS)), 3, 24, task_steps, 8, 3, None, methods)
    if args.seeds is not None and args.seeds < 1:
        raise SystemExit("--seeds: at least 1")
    count = args.seeds or len(base.seeds)
    base.seeds = list(range(args.first_seed, args.first_seed + count))
    base.rm_every = base.rm_every if args.rm_every is None else args.rm_every
    base.compare_selection, base.compare_size = args.compare_selection, args.compare_size
    base.rm_train, base.written_weight = args.rm_train, args.written_weight
    try:  # training's own check, before any policy trains
        RMTrainSettings(written_weight=base.written_weight)
    except ValidationError as error:
        problem = error.errors()[0]["msg"].removeprefix("Value error, ")
        raise SystemExit(f"--{problem}".replace("_", "-", 1)) from None
    if not 2 <= base.compare_size <= 8:
        raise SystemExit("--compare-size: 2 to 8 responses")
    base.rounds = args.rounds or base.rounds
    base.budget = args.budget or base.budget
    base.steps = args.steps or base.steps
    unknown = sorted(set(args.methods or ()) - set(METHODS))
    if unknown:
        raise SystemExit(f"--methods: no method {', '.join(unknown)}; the methods: "
                         f"{', '.join(METHODS)}")  # fmt: skip
    base.methods = args.methods or base.methods
    base.rule_run = not args.no_rule_run
    return base


@dataclass
class MethodState:
    policy: Path
    reward_model: Path
    reviews: Reviews = field(default_factory=Reviews)
    adaptive: AdaptiveBudget | None = None  # the shares an adaptive budget has learned


def _run_seed(task, models, start_rm: Path, seed: int, settings: Settings, out: Path):
    from bench.loop_value.adapting import AdaptiveBudget, evidence
    from bench.loop_value.checkpoints import prune, retrain
    from bench.loop_value.measures import oracle_score, suggestion_outcome, top_share
    from bench.loop_value.reviewing import compare_tasks, groups_of, single_tasks
    from bench.loop_value.rollouts import sample_policy
    from bench.loop_value.selection import ADAPTIVE, BUDGETED, COMPARE, WATCHED, picked
    from bench.loop_value.training import train_round
    from bench.loop_value.watching import WatchedRun, blind_spot_rank, flags_for
    from rl.rewards.model import RewardModel

    oracle = task.oracle_function()
    blind_spot = task.blind_spot_function()
    watched = {method: WatchedRun(settings.steps) for method in settings.methods}
    seed_dir = out / f"seed{seed}"
    shutil.rmtree(seed_dir, ignore_errors=True)
    result = SeedResult(seed)

    def evaluate(policy: Path, round_number: int) -> list:
        # The same sampling seed for every method in a round: differences are the policies'.
        return sample_policy(
            policy, task.held_out_prompts, settings.eval_samples, task.train.max_new_tokens,
            10_000 + 100 * seed + round_number,
        )  # fmt: skip

    pool = evaluate(models.policy, 99)  # the starting policy's held-out samples
    result.start_oracle_score = oracle_score(
        [oracle(s.prompt, s.response, f"start-{i}") for i, s in enumerate(pool)]
    )
    start_scorer = RewardModel(start_rm)

    def chooser(method: str) -> str:
        return settings.compare_selection if method == COMPARE else method

    states = {
        method: MethodState(models.policy, start_rm, adaptive=(
            AdaptiveBudget() if chooser(method) in ADAPTIVE else None))
        for method in settings.methods
    }  # fmt: skip
    rm_after: dict[tuple[str, int], Path] = {}
    shared: dict[str, object] = {}
    for round_number in range(settings.rounds):
        for method in settings.methods:
            state = states[method]
            run = "shared" if round_number == 0 else method
            if round_number == 0 and "training" in shared:
                training, held_samples = shared["training"], shared["held"]
                verdicts, start_scores = shared["verdicts"], shared["start_scores"]
            else:
                training = train_round(
                    task, policy=state.policy, reference=models.policy,
                    reward_model=state.reward_model, out=seed_dir / run / f"round{round_number}",
                    seed=1000 * seed + round_number, steps=settings.steps,
                    previous=start_rm if round_number and chooser(method) in BUDGETED else None,
                )  # fmt: skip
                held_samples = evaluate(training.policy, round_number)
                pool.extend(held_samples)
                verdicts = [
                    oracle(c.prompt, c.response, f"s{seed}-r{round_number}-{run}-{c.sample_id}")
                    for c in training.candidates
                ]
                start_scores = start_scorer.score_pairs(
                    [c.prompt for c in training.candidates],
                    [c.response for c in training.candidates],
                )
                if round_number == 0:
                    shared.update(training=training, held=held_samples, verdicts=verdicts,
                                  start_scores=start_scores)  # fmt: skip
            candidates = training.candidates
            held_verdicts = [
                oracle(s.prompt, s.response, f"eval-{i}") for i, s in enumerate(held_samples)
            ]
            top = top_share(start_scores, HACKING_TOP_SHARE)
            hacking = {i for i, verdict in enumerate(verdicts) if top[i] and verdict.failure}
            # What the reward model this round trained against paid (the total where the
            # component is missing): the suggestions' scores and its own top decile.
            paid = [c.reward_details.get("reward_model", c.reward) for c in candidates]
            paid_most = top_share(paid, HACKING_TOP_SHARE)
            current = {i for i, verdict in enumerate(verdicts) if paid_most[i] and verdict.failure}
            if round_number == 0 and "report" in shared:  # the same rollouts: the same analysis
                report = shared["report"]
                watched[method].rows = list(shared["watched_rows"])
            else:
                report = watched[method].add_round(round_number, candidates)
                if round_number == 0:
                    shared.update(report=report, watched_rows=list(watched[method].rows))
            flags = flags_for(report, candidates) if chooser(method) in WATCHED else []
            config = state.adaptive.config() if state.adaptive else None
            reasons = picked(chooser(method), candidates, settings.budget, task.threshold,
                             1000 * seed + round_number, flags, config)  # fmt: skip
            picks = sorted(reasons)
            prefix = f"s{seed}-r{round_number}-{run}"
            if method == COMPARE:
                groups = groups_of(candidates, picks, settings.compare_size)
                tasks = compare_tasks(candidates, verdicts, groups, prefix)
            else:
                tasks = single_tasks(candidates, verdicts, picks, prefix)
            shown = {index for reviewed in tasks for index in reviewed.picks}
            flagged = set().union(*(flag.carriers for flag in flags)) if flags else set()
            row = RoundRow(
                method=method, seed=seed, round=round_number,
                oracle_score=oracle_score(held_verdicts), reviews=len(tasks),
                reviews_total=len(state.reviews.works) + len(tasks),
                hacking_candidates=len(hacking), hacking_caught=len(hacking & shown),
                current_hacking_candidates=len(current),
                current_hacking_caught=len(current & shown),
                train_s=training.seconds, blind_spot_rank=blind_spot_rank(report, blind_spot),
                suspects=len(report.suspects),
                top_suspects=[suspect.label() for suspect in report.suspects[:3]],
                flagged_picks=len(flagged & shown),
            )  # fmt: skip
            if method != COMPARE:  # a suggestion is a rating: single mode's
                for index in picks:
                    outcome = suggestion_outcome(paid[index], verdicts[index])
                    row.suggestions_accepted += outcome.accepted
                    row.suggestion_ratings_kept += outcome.rating_kept
                    row.suggestion_edits += outcome.edits
            shares_line = ""
            if state.adaptive:  # what this round's reviews teach splits the next round
                row.shares = state.adaptive.shares.as_dict()
                used = state.adaptive.shares.line()
                found = evidence(tasks, reasons, candidates, verdicts, f"round{round_number}")
                taught = state.adaptive.learn(*found)
                row.learned = taught.record()
                shares_line = f"\n    shares {used}; next {taught.line()}"
            before = state.reviews.minutes()
            retrained = retrain(
                tasks, state.reviews, start=state.reward_model, seed_dir=seed_dir,
                name=f"{method}/rm{round_number}",
                every=settings.rm_every if method in READ_FINELY else 0,
                epochs=settings.rm_epochs, seed=seed, source=method, train=settings.rm_train,
                written_weight=settings.written_weight,
            )  # fmt: skip
            state.reward_model = retrained.reward_model
            row.checkpoints, row.rm_train_s = retrained.checkpoints, retrained.seconds
            row.minutes_total = state.reviews.minutes()
            row.minutes = {name: row.minutes_total[name] - before[name] for name in before}
            rm_after[(method, round_number)] = state.reward_model
            if task.train.continue_policy:
                state.policy = training.policy
            result.rows.append(row)
            print(
                f"  seed {seed} round {round_number} {method:9} oracle {row.oracle_score:.3f} "
                f"reviews {row.reviews:3} caught {row.hacking_caught}/{row.hacking_candidates} "
                f"train {training.seconds:.0f} s, RM {row.rm_train_s:.0f} s "
                f"({len(row.checkpoints)}x); suspects {row.suspects}, blind spot at "
                f"{row.blind_spot_rank or '-'} ({', '.join(row.top_suspects) or 'none'})"
                f"{shares_line}",
                flush=True,
            )
    _accuracies(result, pool, oracle, start_scorer, start_rm, rm_after, seed_dir)
    start_scorer.close()
    prune(seed_dir)
    if settings.rule_run:
        _rule_run(task, models, seed, settings, seed_dir, result)
    return result


def _rule_run(task, models, seed: int, settings: Settings, seed_dir: Path, result) -> None:
    """The starting policy trained against the oracle itself (a reward without a blind spot)
    for as many steps as a method's rounds, watched as the router watches: every suspect the
    watch would announce is counted once."""
    from types import SimpleNamespace

    from bench.loop_value.training import train_round
    from bench.loop_value.watching import CONFIG
    from sampling.routing import PlainSample
    from sampling.selection.hacking import HackingWatch

    steps = settings.steps * settings.rounds
    training = train_round(
        task, policy=models.policy, reference=models.policy, reward_model=None,
        out=seed_dir / "rule", seed=1000 * seed + 77, steps=steps,
    )  # fmt: skip
    raised: list[str] = []
    watch = HackingWatch(CONFIG, on_suspect=lambda s: raised.append(s.describe()), start=False)
    by_step: dict[int, list] = {}
    for c in training.candidates:
        by_step.setdefault(c.step, []).append(c)
    for step in sorted(by_step):
        samples = [PlainSample(c.prompt, c.response, c.reward, dict(c.reward_details),
                               c.group_id, i) for i, c in enumerate(by_step[step])]  # fmt: skip
        watch.observe(samples, SimpleNamespace(step=step, run_id="rule", rank=0))
        if step % CONFIG.analyze_every_steps == 0:
            watch.analyze_now()
    watch.close()
    result.rule_steps, result.rule_suspects = steps, raised
    print(f"  seed {seed} rule reward: {steps} steps, {len(raised)} suspects raised"
          + "".join(f"\n    {line}" for line in raised), flush=True)  # fmt: skip


def _accuracies(
    result: SeedResult, pool: list, oracle, start_scorer, start_rm, rm_after, seed_dir: Path
) -> None:
    """Every reward model of the seed (round ends and the checkpoints in between) on one pool
    of held-out samples, against the oracle."""
    from annotation.reward_model.train import distinct_scores
    from bench.loop_value.measures import pairwise_accuracy, top_share
    from rl.rewards.model import RewardModel

    prompts = [sample.prompt for sample in pool]
    responses = [sample.response for sample in pool]
    ratings = [oracle(sample.prompt, sample.response, f"pool-{i}").rating
               for i, sample in enumerate(pool)]  # fmt: skip
    # Each distinct text scored once per model: a sixth of a cool_and_short pool was repeats.
    texts = list(zip(prompts, responses, strict=True))
    start_scores = distinct_scores(start_scorer, texts)
    high = top_share(start_scores, HIGH_SHARE)
    paths = {*rm_after.values()} - {start_rm}
    paths |= {seed_dir / point.rm for row in result.rows for point in row.checkpoints}
    measured = {start_rm: pairwise_accuracy(prompts, start_scores, ratings, high)}
    for path in paths:
        scorer = RewardModel(path)
        measured[path] = pairwise_accuracy(prompts, distinct_scores(scorer, texts), ratings, high)
        scorer.close()
    start = measured[start_rm]
    result.start_accuracy, result.start_accuracy_high = start.overall, start.high
    result.pool_pairs = start.pairs
    for row in result.rows:
        accuracy = measured[rm_after[(row.method, row.round)]]
        row.rm_accuracy, row.rm_accuracy_high = accuracy.overall, accuracy.high
        for point in row.checkpoints:
            point.rm_accuracy = measured[seed_dir / point.rm].overall


def _report(results: list[SeedResult], settings: Settings, elapsed_s: float, cpu_s: float) -> str:
    from bench.loop_value.goals import issue_goals
    from bench.loop_value.report import goals, goals_table, round_table, shares_table

    suite = len(list((REPO / "bench" / "loop_value").glob("*.yaml")))
    found = issue_goals(results, settings.methods, settings.rounds, settings.compare_selection,
                        elapsed_s, cpu_s, suite)  # fmt: skip
    other = goals(results, settings.methods, settings.rounds, settings.compare_selection)
    learned = shares_table(results, settings.methods)
    if learned:
        learned = (f"\n\nThe adaptive budget's shares, per seed and round (split by "
                   f"sampling.selection.budget_learning from the reviews before the round; "
                   f"starting from the configured ones):\n\n{learned}")  # fmt: skip
    return (
        f"\nPer round (mean over seeds {settings.seeds}; oracle score [min..max]; RM accuracy: "
        f"after the round's retraining, on {results[0].pool_pairs} held-out pairs of seed "
        f"{results[0].seed}; reviewer-minutes by the default cost model, the round's and in "
        f"all):\n\n"
        f"{round_table(results, settings.methods, settings.rounds)}{learned}\n\n"
        f"Goals (95% t-intervals over {len(results)} seeds):\n\n{goals_table(found)}\n\n"
        f"Other measures:\n\n{goals_table(other)}"
    )


if __name__ == "__main__":
    sys.exit(main())
