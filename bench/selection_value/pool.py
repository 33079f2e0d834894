"""The pool a selection picks its reviews from, and the pairs its reward model is judged on.

Built once per task and reused while what it is made of stays the same (`pool_digest`):

- the pool: what a run shows a reviewer. The starting policy's samples of the train prompts
  (`start_samples` each, in groups of the task's `samples_per_prompt`, as GRPO groups them), and
  every scored rollout of `policies` runs of the real trainer against the starting reward model
  (`policy_steps` GRPO steps each), so that its blind spot has been learned in part and the
  hacks are in it. Each with the oracle's verdict, the starting reward model's score and the
  frozen features the reward model between batches reads (`features`).
- the evaluation set: samples of the held-out prompts (never in the pool, never offered) by the
  starting policy and by the final policy of each run, and every same-prompt pair of them the
  oracle rates differently: what "the reward model's accuracy" is measured on.
- the reward-hacking watch's report over the runs (as the router would have watched them).

Features: the starting reward model's pooled hidden state (the score head's input,
`RewardModel.features`), so that its score head, the anchor every refit starts from, reads the
same space. The base the reward model was fine-tuned from would be the other choice; the
starting model's features are what a run's reward model has, blind spot included.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import random
import shutil
from dataclasses import dataclass
from pathlib import Path

import torch

from bench.loop_value.provenance import source_digest, tree_digest
from bench.loop_value.rollouts import sample_policy
from bench.loop_value.task import TaskConfig, Verdict
from bench.loop_value.training import Rollout, train_round
from bench.loop_value.watching import WatchedRun
from rl.models.tiny import TinyModelPaths
from rl.rewards.model import RewardModel
from rl.rewards.uncertainty import score_module
from sampling.selection.hacking import WatchReport

POOL_FORMAT = 1  # bump when what a cached pool holds changes


@dataclass
class EvalSet:
    prompts: list[str]  # the held-out prompts
    texts: list[tuple[str, str]]  # (prompt, response)
    ratings: list[int]
    features: torch.Tensor  # (E, hidden)
    first: torch.Tensor  # (P,) index into texts: the pair's member the oracle rates higher
    second: torch.Tensor  # (P,) the other
    prompt_of: torch.Tensor  # (P,) index into prompts

    @property
    def pairs(self) -> int:
        return int(self.first.shape[0])


@dataclass
class Pool:
    rollouts: list[Rollout]  # reward: the starting reward model's score
    verdicts: list[Verdict]
    source: list[str]  # "start" or "policy<k>"
    features: torch.Tensor  # (N, hidden)
    start_head: torch.Tensor  # (hidden,): the starting reward model's score head
    evaluation: EvalSet
    report: WatchReport | None  # the watch over the runs against the starting reward model
    digest: str


# The settings a selection spends the pool by, not what the pool is made of.
SPENDING = {"review_minutes", "batch", "offered"}


def pool_digest(task: TaskConfig, models: TinyModelPaths, start_rm: Path) -> str:
    """What a pool is made of: the policy's and the starting reward model's files, the task's
    prompts, oracle (and its code) and training, the pool's own settings and the code that
    builds it. A change of budget, batch or offer reuses the pool."""
    parts = {
        "format": POOL_FORMAT,
        "policy": tree_digest(Path(models.policy)),
        "start_rm": tree_digest(start_rm),
        "task": task.model_dump(exclude={"pool": SPENDING, "name": True, "threshold": True}),
        "oracle": source_digest(task.oracle_function()),
        "code": hashlib.sha256(
            "".join(inspect.getsource(f) for f in (_build, _eval_set, _watch)).encode()
        ).hexdigest(),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:12]


def load_or_build(
    task: TaskConfig, models: TinyModelPaths, start_rm: Path, out: Path
) -> tuple[Pool, bool]:
    """The task's pool from `out/pool-<task>-<digest>`, built there first when missing; and
    whether it was built now."""
    digest = pool_digest(task, models, start_rm)
    where = out / f"pool-{task.name}-{digest}"
    saved = where / "pool.pt"
    if saved.exists():
        return check_apart(_load(saved, task, digest)), False
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    pool = check_apart(_build(task, models, start_rm, where / "runs", digest))
    _save(pool, saved)
    shutil.rmtree(where / "runs", ignore_errors=True)  # the policies: only their samples stay
    return pool, True


def check_apart(pool: Pool) -> Pool:
    """The pool, after making sure no prompt of its evaluation set is in it: a reward model
    judged on prompts a reviewer saw would be judged on what it was taught."""
    shared = {r.prompt for r in pool.rollouts} & set(pool.evaluation.prompts)
    if shared:
        raise SystemExit(f"the pool holds {len(shared)} evaluation prompt(s), e.g. "
                         f"{sorted(shared)[0]!r}: held-out prompts are never offered")  # fmt: skip
    return pool


def _build(
    task: TaskConfig, models: TinyModelPaths, start_rm: Path, runs: Path, digest: str
) -> Pool:
    settings, oracle = task.pool, task.oracle_function()
    per_group = task.train.samples_per_prompt
    rollouts: list[Rollout] = []
    source: list[str] = []
    started = sample_policy(
        models.policy, task.train_prompts, settings.start_samples, task.train.max_new_tokens, 1
    )
    for index, sample in enumerate(started):
        group = index // per_group  # sample_policy keeps one prompt's completions together
        rollouts.append(Rollout(f"start-{index}", sample.prompt, sample.response, 0.0,
                                {}, 0, group))  # fmt: skip
        source.append("start")
    held = task.held_out_prompts
    evaluated = sample_policy(
        models.policy, held, settings.eval_samples, task.train.max_new_tokens, 2
    )
    for run in range(settings.policies):
        training = train_round(
            task, policy=models.policy, reference=models.policy, reward_model=start_rm,
            out=runs / f"policy{run}", seed=500 + run, steps=settings.policy_steps,
        )  # fmt: skip
        for rollout in training.candidates:
            rollouts.append(Rollout(
                f"policy{run}-{rollout.sample_id}", rollout.prompt, rollout.response, 0.0,
                dict(rollout.reward_details), rollout.step,
                (run + 1) * 10_000_000 + rollout.group_id,
            ))  # fmt: skip
            source.append(f"policy{run}")
        evaluated += sample_policy(
            training.policy, held, settings.eval_samples, task.train.max_new_tokens, 3 + run
        )
    verdicts = [oracle(r.prompt, r.response, r.sample_id) for r in rollouts]
    scorer = RewardModel(start_rm)
    try:
        features = scorer.features([r.prompt for r in rollouts], [r.response for r in rollouts])
        scores = (features @ _head(scorer)).tolist()
        rollouts = [_with_reward(r, score) for r, score in zip(rollouts, scores, strict=True)]
        texts = [(s.prompt, s.response) for s in evaluated]
        eval_features = scorer.features([p for p, _ in texts], [r for _, r in texts])
        head = _head(scorer)
    finally:
        scorer.close()
    ratings = [oracle(p, r, f"eval-{i}").rating for i, (p, r) in enumerate(texts)]
    evaluation = _eval_set(held, texts, ratings, eval_features)
    report = _watch(rollouts, source, settings.policies, settings.policy_steps)
    return Pool(rollouts, verdicts, source, features, head, evaluation, report, digest)


def _watch(rollouts: list[Rollout], source: list[str], runs: int, steps: int) -> WatchReport | None:
    """The watch over the runs against the starting reward model, one after the other, as the
    router would have watched them (deterministic: rebuilt when a cached pool loads)."""
    watched, report = WatchedRun(steps), None
    for run in range(runs):
        mine = [r for r, s in zip(rollouts, source, strict=True) if s == f"policy{run}"]
        report = watched.add_round(run, mine)
    return report


def _head(scorer: RewardModel) -> torch.Tensor:
    head = score_module(scorer.model) if scorer.model is not None else None
    if head is None or head.weight.shape[0] != 1:
        raise SystemExit("the starting reward model has no one-output linear score head")
    return head.weight.detach().float().cpu()[0]


def _with_reward(rollout: Rollout, reward: float) -> Rollout:
    return Rollout(rollout.sample_id, rollout.prompt, rollout.response, reward,
                   rollout.reward_details, rollout.step, rollout.group_id)  # fmt: skip


def _eval_set(
    prompts: list[str], texts: list[tuple[str, str]], ratings: list[int], features: torch.Tensor
) -> EvalSet:
    """Every same-prompt pair the oracle rates differently, the higher-rated first."""
    first, second, prompt_of = [], [], []
    number = {prompt: n for n, prompt in enumerate(prompts)}
    by_prompt: dict[str, list[int]] = {}
    for index, (prompt, _) in enumerate(texts):
        by_prompt.setdefault(prompt, []).append(index)
    for prompt, members in by_prompt.items():
        for position, a in enumerate(members):
            for b in members[position + 1 :]:
                if ratings[a] != ratings[b]:
                    high, low = (a, b) if ratings[a] > ratings[b] else (b, a)
                    first.append(high)
                    second.append(low)
                    prompt_of.append(number[prompt])
    as_long = lambda values: torch.tensor(values, dtype=torch.long)  # noqa: E731
    return EvalSet(prompts, texts, ratings, features, as_long(first), as_long(second),
                   as_long(prompt_of))  # fmt: skip


def offered_rounds(pool: Pool, count: int, rounds: int, seed: int) -> list[list[int]]:
    """What each round offers the selections of one seed: `count` pool rollouts a round, drawn
    without replacement while the pool lasts (then again from the whole pool), whole GRPO
    groups together so that a comparison can show a pick's group. The same for every
    selection of the seed: differences are the selections'."""
    rng = random.Random(seed)
    groups: dict[int, list[int]] = {}
    for index, rollout in enumerate(pool.rollouts):
        groups.setdefault(rollout.group_id, []).append(index)
    order: list[list[int]] = []
    offered: list[list[int]] = []
    for _ in range(rounds):
        taken: list[int] = []
        while len(taken) < count:
            if not order:
                order = list(groups.values())
                rng.shuffle(order)
            taken += order.pop()
        offered.append(taken)
    return offered


def _save(pool: Pool, path: Path) -> None:
    evaluation = pool.evaluation
    torch.save(
        {
            "rollouts": [
                r.__dict__ | {"reward_details": dict(r.reward_details)} for r in pool.rollouts
            ],
            "verdicts": [[v.rating, list(v.categories), v.better] for v in pool.verdicts],
            "source": pool.source,
            "features": pool.features,
            "start_head": pool.start_head,
            "eval": {
                "prompts": evaluation.prompts,
                "texts": evaluation.texts,
                "ratings": evaluation.ratings,
                "features": evaluation.features,
            },
        },
        path,
    )


def _load(path: Path, task: TaskConfig, digest: str) -> Pool:
    saved = torch.load(path, weights_only=True)
    rollouts = [Rollout(**row) for row in saved["rollouts"]]
    verdicts = [Verdict(rating, tuple(categories), better)
                for rating, categories, better in saved["verdicts"]]  # fmt: skip
    held = saved["eval"]
    texts = [tuple(pair) for pair in held["texts"]]
    evaluation = _eval_set(held["prompts"], texts, held["ratings"], held["features"])
    runs = task.pool.policies
    report = _watch(rollouts, saved["source"], runs, task.pool.policy_steps)
    return Pool(rollouts, verdicts, saved["source"], saved["features"], saved["start_head"],
                evaluation, report, digest)  # fmt: skip


class TextFeatures:
    """Features of any (prompt, response): the pool's from the pool, a reviewer's better answer
    encoded once by the starting reward model and remembered (across seeds)."""

    def __init__(self, pool: Pool, scorer: RewardModel) -> None:
        self.scorer = scorer
        self.known: dict[tuple[str, str], torch.Tensor] = {}
        for rollout, row in zip(pool.rollouts, pool.features, strict=True):
            self.known.setdefault((rollout.prompt, rollout.response), row)

    def __call__(self, texts) -> torch.Tensor:
        missing = sorted({text for text in texts if text not in self.known})
        if missing:
            rows = self.scorer.features([p for p, _ in missing], [r for _, r in missing])
            self.known.update(zip(missing, rows, strict=True))
        if not texts:
            return torch.zeros((0, len(next(iter(self.known.values())))))
        return torch.stack([self.known[text] for text in texts])
