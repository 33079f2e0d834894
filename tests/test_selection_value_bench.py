"""The pool bench (bench/selection_value.py) can tell "no difference" from a real one, keeps its
pool and evaluation set apart, and reuses a pool it built.

A synthetic pool stands in for the tiny models' one (building that trains two policies): texts
with features in a small space where the oracle's rating is one direction and the starting
reward model's head is tilted toward another (its blind spot). The selections, the reviews, the
head refits and the bootstrap are the bench's own code. The bench's quick run on the real tiny
models is tests/test_benches.py's.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest
import torch

from bench.loop_value.task import PoolSettings, TaskConfig, Verdict
from bench.loop_value.training import Rollout
from bench.selection_value import pool as pool_module
from bench.selection_value.model import EnsembleSettings
from bench.selection_value.pool import EvalSet, Pool, _eval_set, offered_rounds
from bench.selection_value.run import SeedPlan, hacks_of, run_selection
from bench.selection_value.selections import SELECTIONS, Offer, Selection, _random
from bench.selection_value.stats import bootstrap, curves, final_difference, replicates

pytestmark = pytest.mark.unit

HIDDEN = 8
OFFSET = 0.8  # a failure is a rollout below -OFFSET along the oracle's direction: about 1 in 5
BETTER = "Better answer."


def _rating(quality: float) -> int:
    return 5 if quality > 1 else 4 if quality > 0 else 2 if quality > -1 else 1


def _verdict(quality: float, kind: str) -> Verdict:
    rating = _rating(quality)
    failing = rating <= 2
    return Verdict(rating, (kind,) if failing else (), BETTER if failing else None)


def _text(index: int) -> str:
    return hashlib.sha256(str(index).encode()).hexdigest()[:24]  # no two near-duplicates


def synthetic_pool(seed: int = 0, size: int = 480, held_out: int = 4) -> tuple[Pool, dict]:
    generator = torch.Generator().manual_seed(seed)
    truth = torch.zeros(HIDDEN)
    truth[0] = 1.0
    blind = torch.zeros(HIDDEN)
    blind[1] = 1.0  # what the starting reward model pays for instead
    features = torch.randn(size, HIDDEN, generator=generator)
    kinds = ["verbose" if row[2] > 0 else "off-topic" for row in features]
    rollouts, verdicts = [], []
    for index, row in enumerate(features):
        rollouts.append(Rollout(f"p{index}", f"prompt {index // 4 % 12}", _text(index), 0.0, {},
                                0, index // 4))  # fmt: skip
        verdicts.append(_verdict(float(row @ truth) + OFFSET, kinds[index]))
    start_head = 0.3 * truth + blind
    rollouts = [
        Rollout(r.sample_id, r.prompt, r.response, float(f @ start_head), {}, 0, r.group_id)
        for r, f in zip(rollouts, features, strict=True)
    ]
    held = [f"held {n}" for n in range(held_out)]
    eval_features = torch.randn(held_out * 30, HIDDEN, generator=generator)
    texts = [(held[i % held_out], _text(10_000 + i)) for i in range(len(eval_features))]
    ratings = [_rating(float(row @ truth) + OFFSET) for row in eval_features]
    evaluation = _eval_set(held, texts, ratings, eval_features)
    known = {(r.prompt, r.response): f for r, f in zip(rollouts, features, strict=True)}
    better = 3 * truth
    pool = Pool(rollouts, verdicts, ["start"] * size, features, start_head, evaluation, None, "x")
    return pool, {"known": known, "better": better}


def features_of(known: dict, better: torch.Tensor):
    def encode(texts):
        if not texts:
            return torch.zeros((0, HIDDEN))
        return torch.stack([better if text[1] == BETTER else known[text] for text in texts])

    return encode


def task(threshold: float = 0.0) -> TaskConfig:
    return TaskConfig(
        name="synthetic", prompts=[f"prompt {n}" for n in range(12)],
        oracle="bench.loop_value.oracles:cool_colour",
        starting_reward_model="bench.loop_value.cool_and_short:build_starting_reward_model",
        threshold=threshold, pool=PoolSettings(review_minutes=12, batch=4, offered=60),
    )  # fmt: skip


def run_all(pool: Pool, extra: dict, names: list[str], seeds: range) -> dict:
    config = task()
    encode = features_of(extra["known"], extra["better"])
    tracks = {}
    for seed in seeds:
        plan = SeedPlan(offered_rounds(pool, 60, 40, seed), hacks_of(pool), 12.0, 4, 4,
                        EnsembleSettings(steps=60), pool.features.mean(0))  # fmt: skip
        tracks[seed] = {name: run_selection(name, pool, config, plan, seed, encode)
                        for name in names}  # fmt: skip
    return tracks


@pytest.fixture
def random_again(monkeypatch):
    """A selection that is random by construction: uniform, from another stream of draws."""

    def pick(offer: Offer) -> dict[int, str]:
        moved = Offer(offer.rollouts, offer.flags, offer.reviewed, offer.batch, offer.bar,
                      offer.seed + 7919, offer.verdicts)  # fmt: skip
        return _random(moved)

    monkeypatch.setitem(SELECTIONS, "random_again", Selection("random_again", pick))


def _difference(tracks, pool: Pool, name: str):
    totals = np.bincount(pool.evaluation.prompt_of.numpy(), minlength=len(pool.evaluation.prompts))
    data = curves(tracks, ["random", name], totals, 12.0, "reading, deciding, writing")
    return bootstrap(data, final_difference(data, name, "random"), replicates(data, 400))


def test_a_selection_random_by_construction_sits_inside_randoms_interval(random_again) -> None:
    pool, extra = synthetic_pool()
    tracks = run_all(pool, extra, ["random", "random_again"], range(8))
    difference = _difference(tracks, pool, "random_again")
    assert difference.low < 0 < difference.high, difference.text()


def test_a_selection_that_sees_the_oracle_beats_random_by_more_than_the_interval() -> None:
    pool, extra = synthetic_pool()
    tracks = run_all(pool, extra, ["random", "oracle"], range(8))
    difference = _difference(tracks, pool, "oracle")
    assert difference.low > 0, difference.text()


def test_every_selection_ends_within_the_same_budget() -> None:
    pool, extra = synthetic_pool()
    names = [n for n in SELECTIONS if n != "oracle"] + ["compare:random"]
    tracks = run_all(pool, extra, names, range(1))
    for name, track in tracks[0].items():
        spent = track.points[-1].minutes["reading, deciding, writing"]
        assert spent <= 12.0 + 1e-9, name
        assert track.points[-1].reviews > 0, name


def test_the_learned_detector_sends_reviews_to_the_failures_reviewers_named() -> None:
    """Failures of one kind sit in one direction; once reviewers have named some, the failure
    share's picks hold more of them than random picks do."""
    pool, extra = synthetic_pool()
    tracks = run_all(pool, extra, ["random", "failure"], range(4))
    shown = {
        name: sum(by[name].failures_shown for by in tracks.values())
        / sum(by[name].shown for by in tracks.values())
        for name in ("random", "failure")
    }
    assert shown["failure"] > shown["random"] + 0.1, shown
    rounds = [row for by in tracks.values() for row in by["failure"].detector]
    assert rounds and np.nanmean([r[0] for r in rounds]) > np.nanmean([r[2] for r in rounds])


def test_offers_never_hold_an_evaluation_prompt_and_cover_the_pool() -> None:
    pool, _ = synthetic_pool()
    offers = offered_rounds(pool, 60, 12, seed=3)
    held = set(pool.evaluation.prompts)
    seen = {i for offer in offers for i in offer}
    assert not {pool.rollouts[i].prompt for i in seen} & held
    assert len(seen) == len(pool.rollouts)  # 12 rounds of 60 pass the 480 once, then again
    groups = {pool.rollouts[i].group_id for i in offers[0]}
    assert all(sum(pool.rollouts[i].group_id == g for i in offers[0]) == 4 for g in groups)


def test_a_pool_that_shares_a_prompt_with_its_evaluation_set_is_refused() -> None:
    pool, _ = synthetic_pool()
    leaked = EvalSet([pool.rollouts[0].prompt], [(pool.rollouts[0].prompt, "x")], [5],
                     torch.zeros(1, HIDDEN), *(torch.zeros(0, dtype=torch.long),) * 3)  # fmt: skip
    pool.evaluation = leaked
    with pytest.raises(SystemExit, match="evaluation prompt"):
        pool_module.check_apart(pool)


def test_a_pool_is_built_once_and_reused_while_its_inputs_stay(tmp_path, monkeypatch) -> None:
    built = []
    synthetic, _ = synthetic_pool(size=40)

    def build(task, models, start_rm, runs, digest):
        built.append(digest)
        return Pool(synthetic.rollouts, synthetic.verdicts, synthetic.source, synthetic.features,
                    synthetic.start_head, synthetic.evaluation, None, digest)  # fmt: skip

    monkeypatch.setattr(pool_module, "_build", build)
    models = type("Models", (), {"policy": tmp_path / "policy", "reward_model": tmp_path / "rm"})
    (tmp_path / "policy").mkdir()
    (tmp_path / "policy" / "weights").write_bytes(b"policy")
    start_rm = tmp_path / "start_rm"
    start_rm.mkdir()
    (start_rm / "weights").write_bytes(b"rm")
    config = task().model_copy(update={"pool": PoolSettings(policies=0)})
    first, fresh = pool_module.load_or_build(config, models, start_rm, tmp_path)
    spending = config.model_copy(update={"pool": PoolSettings(policies=0, review_minutes=5)})
    again, fresh_again = pool_module.load_or_build(spending, models, start_rm, tmp_path)
    assert (fresh, fresh_again) == (True, False) and len(built) == 1
    assert again.digest == first.digest
    assert torch.equal(again.features, first.features)
    assert [r.response for r in again.rollouts] == [r.response for r in first.rollouts]
    assert again.evaluation.pairs == first.evaluation.pairs
    (start_rm / "weights").write_bytes(b"another rm")  # a new starting reward model
    third, fresh_third = pool_module.load_or_build(config, models, start_rm, tmp_path)
    assert fresh_third and third.digest != first.digest and len(built) == 2
    more = config.model_copy(update={"pool": PoolSettings(policies=0, start_samples=8)})
    assert pool_module.load_or_build(more, models, start_rm, tmp_path)[1]  # another pool


def test_minutes_to_reach_reads_never_as_never() -> None:
    from bench.selection_value.stats import reach

    grid = np.linspace(0, 10, 11)
    assert reach(np.linspace(0.5, 0.6, 11), grid, 0.55, 10) == 0.5
    assert math.isinf(reach(np.full(11, 0.5), grid, 0.55, 10))


def test_newtons_method_reaches_the_optimum_adam_approaches() -> None:
    """The refit solves the objective of the heads `rm train` fits (heads.fit_linear) to its
    optimum: many Adam steps end where a dozen Newton steps do."""
    from annotation.reward_model.heads import HeadSettings, fit_linear
    from bench.selection_value.model import objective, solve

    generator = torch.Generator().manual_seed(0)
    start = torch.randn(3, HIDDEN, generator=generator)
    margins = torch.randn(3, 20, HIDDEN, generator=generator)
    rated = torch.randn(3, 15, HIDDEN, generator=generator)
    targets = torch.randn(3, 15, generator=generator)
    newton = solve(start, margins, rated, targets, 0.05, 0.5, 25)
    settings = HeadSettings(count=3, steps=3000, learning_rate=0.01, anchor=0.05)
    adam, _, _ = fit_linear(start, margins, rated, targets, settings, bias=False)
    at_newton = objective(newton, start.double(), margins.double(), rated.double(),
                          targets.double(), 0.05, 0.5)  # fmt: skip
    at_adam = objective(adam.double(), start.double(), margins.double(), rated.double(),
                        targets.double(), 0.05, 0.5)  # fmt: skip
    assert torch.all(at_newton <= at_adam + 1e-6)
    assert torch.allclose(newton.float(), adam, atol=2e-3)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("name: x\nprompts: [a, b, c, d]\n", "oracle: Field required"),
        ("[1, 2]\n", "not a mapping"),
        ("name: [unclosed\n", "not valid YAML"),
    ],
)
def test_a_task_file_that_is_not_a_task_is_one_line(tmp_path, text: str, says: str) -> None:
    from bench.loop_value.task import load_task

    path = tmp_path / "task.yaml"
    path.write_text(text)
    with pytest.raises(SystemExit) as ended:
        load_task(path)
    said = str(ended.value)
    assert said.startswith(f"--task {path}: ") and says in said and "\n" not in said
    with pytest.raises(SystemExit, match="FileNotFoundError"):
        load_task(tmp_path / "missing.yaml")
