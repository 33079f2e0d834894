"""Token-level values in the trajectory: per response token, what the update used (log-prob, KL,
token reward, advantage), kept in the run's rollout files, read back, logged as a histogram and
shown by `lowtide logs show --sample ID --tokens`. Real tiny-model runs on CPU."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import torch

from rl.config import HookSpec, LoggerConfig, ModelRef
from rl.models.loading import load_causal_lm
from rl.rollout import Rollout, token_logprobs
from rl.samples import Sample, make_sample_id
from rl.tracking import RunInfo, Tracker, read_run
from rl.tracking.backends.local_files import TOKENS_DIR
from tests.conftest import invoke
from tests.helpers import trainer_plugins
from tests.test_trainer import make_trainer

pytestmark = pytest.mark.unit

RECORDER = "tests.helpers.trainer_plugins:make_recorder"


def train_logged(tmp_path: Path, tiny_models, intervals: dict[str, int], **overrides) -> Path:
    """A run with local logs only; step_end hooks record the samples. Returns the log dir."""
    trainer_plugins.RECORDED.clear()
    hooks = [HookSpec(type=RECORDER, stage="step_end", params={"tag": "end"})]
    trainer = make_trainer(tmp_path, tiny_models, hooks=hooks, **overrides)
    save_dir = tmp_path / "logs"
    config = LoggerConfig(name=["jsonl"], log_interval=intervals, save_dir=str(save_dir))
    run_dir = save_dir / "run"
    trainer.tracker = Tracker.from_config(config, RunInfo("run", "run", save_dir, run_dir, {}))
    trainer.train()
    return run_dir


def recorded() -> dict[int, tuple[Sample, ...]]:
    return {call["step"]: call["samples"] for call in trainer_plugins.RECORDED}


def token_lines(run_dir: Path) -> dict[int, list[dict]]:
    """step -> the lines of its tokens file."""
    out: dict[int, list[dict]] = {}
    for file in sorted((run_dir / TOKENS_DIR).glob("*.jsonl")):
        for line in file.read_text().splitlines():
            row = json.loads(line)
            out.setdefault(row["step"], []).append(row)
    return out


def histogram_steps(run_dir: Path, name: str) -> dict[int, list[float]]:
    lines = [json.loads(line) for line in (run_dir / "histograms.jsonl").read_text().splitlines()]
    return {row["step"]: row["values"] for row in lines if row["name"] == name}


@pytest.mark.slow
def test_ppo_token_rewards_are_what_gae_consumed(tmp_path: Path, tiny_models) -> None:
    kl_coef = 0.1
    run_dir = train_logged(
        tmp_path, tiny_models, {"scalars": 1, "histograms": 2, "tables": 3},
        algorithm="ppo", kl_mode="reward", kl_coef=kl_coef, max_steps=4,
    )  # fmt: skip
    samples_at = recorded()
    # Only the steps that log them (histograms at 2 and 4, the table at 3) build them.
    assert [step for step, samples in samples_at.items() if samples[0].tokens] == [2, 3, 4]

    lines = token_lines(run_dir)
    assert list(lines) == [3]  # with the rollout table only
    logs = read_run(run_dir)
    rows = logs.rollouts.set_index("sample_id")
    assert sorted(line["sample_id"] for line in lines[3]) == sorted(rows.index)
    moved = 0
    for line in lines[3]:
        row = rows.loc[line["sample_id"]]
        length = row["response_length"]
        for key in ("token_ids", "tokens", "logprobs", "kl", "token_rewards", "advantages"):
            assert len(line[key]) == length, key
        assert all(value <= 0 for value in line["logprobs"])
        kl, rewards = line["kl"], line["token_rewards"]
        # The score sits on the last token; every token carries its KL penalty.
        assert rewards[-1] == pytest.approx(row["reward"] - kl_coef * kl[-1], abs=1e-5)
        assert rewards[:-1] == pytest.approx([-kl_coef * value for value in kl[:-1]], abs=1e-6)
        assert sum(rewards) == pytest.approx(row["reward"] - kl_coef * sum(kl), abs=1e-4)
        moved += any(abs(value) > 1e-4 for value in kl)
    assert moved  # after two updates the policy left the reference: the KL terms are tested

    # read_run: one row per token, the same values as the file.
    assert len(logs.tokens) == rows["response_length"].sum()
    first = lines[3][0]
    tokens = logs.tokens[logs.tokens["sample_id"] == first["sample_id"]]
    assert tokens["position"].tolist() == list(range(len(first["tokens"])))
    assert tokens["token"].tolist() == first["tokens"]
    assert tokens["token_reward"].tolist() == first["token_rewards"]
    assert tokens["kl"].tolist() == first["kl"]

    # The histogram of every response token's reward, at the histogram interval only.
    histograms = histogram_steps(run_dir, "reward/token_distribution")
    assert list(histograms) == [2, 4]
    for step, values in histograms.items():
        in_memory = [v for s in samples_at[step] if s.tokens for v in s.tokens.rewards]
        assert sorted(values) == pytest.approx(sorted(in_memory))
        assert len(values) == sum(len(s.response_ids) for s in samples_at[step])


@pytest.mark.slow
def test_grpo_token_values_are_the_sampling_logprobs_and_the_sequence_advantage(
    tmp_path: Path, tiny_models, capsys: pytest.CaptureFixture[str]
) -> None:
    # kl_mode loss and one pass: the sampling log-probs come from the update's own forward pass.
    run_dir = train_logged(tmp_path, tiny_models, {"scalars": 1, "histograms": 1, "tables": 1},
                           algorithm="grpo", kl_mode="loss", kl_coef=0.05, max_steps=1)  # fmt: skip
    samples = recorded()[1]
    lines = {line["sample_id"]: line for line in token_lines(run_dir)[1]}

    # The log-probs are those of the policy that sampled (the starting model at step 1).
    model = ModelRef(model_name_or_path=str(tiny_models.policy))
    policy = load_causal_lm(model, torch.device("cpu"), torch.float32).eval()
    for sample in samples:
        tokens = sample.tokens
        assert tokens is not None and tokens.ids == sample.response_ids
        expected = sampled_logprobs(policy, sample)
        assert list(tokens.logprobs) == pytest.approx(expected, abs=1e-4)
        # GRPO: the sequence advantage on every token; the score on the last one (kl in loss).
        before_last = [0.0] * (len(tokens.ids) - 1)
        assert list(tokens.advantages) == pytest.approx([sample.advantage] * len(tokens.ids))
        assert list(tokens.rewards) == pytest.approx([*before_last, sample.reward])
        assert tokens.kl is not None and len(tokens.kl) == len(sample.response_ids)
        line = lines[sample_id(sample)]
        assert line["logprobs"] == pytest.approx(list(tokens.logprobs), rel=1e-5)
        assert line["tokens"] == list(tokens.texts)

    histograms = histogram_steps(run_dir, "reward/token_distribution")
    assert len(histograms[1]) == sum(len(s.response_ids) for s in samples)

    # One sample's tokens on the command line.
    sample = samples[0]
    wanted = sample_id(sample)
    code, out, err = invoke(capsys, "logs", "show", str(run_dir), "--sample", wanted, "--tokens")
    assert code == 0, err
    assert wanted in out and "token reward" in out and "logprob" in out
    for text, logprob in zip(sample.tokens.texts, sample.tokens.logprobs, strict=True):
        assert json.dumps(text, ensure_ascii=False) in out
        assert f"{logprob:.4g}" in out
    export = tmp_path / "export"
    code, _, err = invoke(capsys, "logs", "export", str(run_dir), "--format=csv", f"--out={export}")
    assert code == 0, err
    exported = pd.read_csv(export / "tokens.csv")  # one row per token
    assert exported["token_id"].tolist() == [t for s in ordered(samples) for t in s.response_ids]
    code, _, err = invoke(capsys, "logs", "show", str(run_dir), "--tokens")
    assert code == 2 and "--sample" in err
    code, _, err = invoke(capsys, "logs", "show", str(run_dir), "--sample", wanted[:-1] + "x")
    assert code == 2 and f"did you mean {wanted}?" in err


def ordered(samples: tuple[Sample, ...]) -> list[Sample]:
    """In the order of the run's tokens file: the table's rows, by batch position."""
    return sorted(samples, key=lambda sample: sample.index)


def sample_id(sample: Sample) -> str:
    """The id its table row got: run "run", step 1, rank 0."""
    return make_sample_id("run", 1, 0, sample.index, sample.prompt, sample.response)


def sampled_logprobs(policy: torch.nn.Module, sample: Sample) -> list[float]:
    """The sample's response log-probs under `policy`, scored alone (no padding)."""
    prompt = torch.tensor([sample.prompt_ids])
    response = torch.tensor([sample.response_ids])
    rollout = Rollout(
        prompts=[sample.prompt], group_ids=torch.tensor([0]), prompt_ids=prompt,
        prompt_mask=torch.ones_like(prompt), response_ids=response,
        response_mask=torch.ones_like(response, dtype=torch.float32),
        responses=[sample.response], truncated=torch.tensor([sample.truncated]),
    )  # fmt: skip
    with torch.no_grad():
        logp, _ = token_logprobs(policy, rollout)
    return [float(value) for value in logp[0]]


def test_a_run_without_token_values_reads_back_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Runs logged before per-token values: read_run gives an empty frame, logs show says why."""
    run_dir = tmp_path / "old"
    (run_dir / "rollouts").mkdir(parents=True)
    (run_dir / "metrics.jsonl").write_text(json.dumps({"step": 1, "reward/mean": 0.5}) + "\n")
    row = {"step": 1, "sample_id": "s-1", "prompt": "p", "response": "r", "reward": 0.5}
    (run_dir / "rollouts" / "rollout_samples-step-0000001.jsonl").write_text(json.dumps(row))
    assert read_run(run_dir).tokens.empty
    code, out, err = invoke(capsys, "logs", "show", str(run_dir), "--sample", "0", "--tokens")
    assert code == 1 and "s-1" in out and "no per-token values" in err
