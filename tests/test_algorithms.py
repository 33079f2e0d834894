"""The RL maths on small fixed tensors, against hand-computed numbers or plain-Python references."""

from __future__ import annotations

import math

import pytest
import torch

from rl.algorithms import (
    clipped_policy_loss,
    clipped_value_loss,
    entropy_from_logits,
    gae_advantages,
    grpo_advantages,
    kl_per_token,
    logprobs_from_logits,
    losses,
    masked_mean,
    masked_sum,
    masked_var,
    masked_whiten,
    token_rewards_from_sequence,
)

pytestmark = pytest.mark.unit

NAN = math.nan


def close(actual: torch.Tensor, expected: object, atol: float = 1e-6) -> bool:
    return torch.allclose(actual, torch.as_tensor(expected, dtype=actual.dtype), atol=atol)


def mask_of(lengths: list[int], width: int) -> torch.Tensor:
    """Left-aligned response mask: `length` ones from column 0, then padding."""
    return torch.tensor([[1.0] * n + [0.0] * (width - n) for n in lengths])


# --- masked reductions ---------------------------------------------------------------------------


def test_masked_reductions_ignore_padding_even_when_it_is_nan() -> None:
    x = torch.tensor([[1.0, 2.0, NAN], [4.0, math.inf, 6.0]])
    mask = torch.tensor([[1, 1, 0], [1, 0, 0]], dtype=torch.bool)
    assert close(masked_sum(x, mask), 7.0)
    assert close(masked_mean(x, mask), 7.0 / 3)
    assert close(masked_mean(x, mask, dim=1), [1.5, 4.0])
    assert close(masked_sum(x, mask.float(), dim=0), [5.0, 2.0, 0.0])


def test_masked_mean_of_an_empty_mask_is_zero_not_nan() -> None:
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    mask = torch.tensor([[0.0, 0.0], [1.0, 0.0]])
    assert close(masked_mean(x, torch.zeros_like(x)), 0.0)
    assert close(masked_mean(x, mask, dim=1), [0.0, 3.0])


def test_masked_var_biased_and_unbiased() -> None:
    x = torch.tensor([[1.0, 2.0, 3.0, 99.0], [4.0, 0.0, 0.0, 0.0]])
    mask = mask_of([3, 1], 4)
    # Entries 1, 2, 3, 4: mean 2.5, squared deviations 2.25 + 0.25 + 0.25 + 2.25 = 5.
    assert close(masked_var(x, mask, unbiased=False), 5 / 4)
    assert close(masked_var(x, mask, unbiased=True), 5 / 3)
    assert close(masked_var(x, mask_of([1, 0], 4)), 0.0)  # one entry: no NaN


def test_masked_whiten_zero_mean_unit_variance_on_the_mask_and_zero_on_padding() -> None:
    x = torch.tensor([[1.0, 2.0, 3.0, 99.0], [4.0, 0.0, 0.0, 0.0]])
    mask = mask_of([3, 1], 4)
    whitened = masked_whiten(x, mask)
    std = math.sqrt(5 / 3 + 1e-8)
    expected = [[-1.5 / std, -0.5 / std, 0.5 / std, 0.0], [1.5 / std, 0.0, 0.0, 0.0]]
    assert close(whitened, expected)
    assert close(masked_mean(whitened, mask), 0.0)
    rescaled = masked_whiten(x, mask, shift_mean=False)  # rescaled only, the mean kept
    assert close(rescaled[0, :3], [(v - 2.5) / std + 2.5 for v in (1.0, 2.0, 3.0)])
    assert close(rescaled[0, 3], 0.0)


# --- GRPO ----------------------------------------------------------------------------------------


def reference_grpo(
    rewards: list[float], groups: list[int], valid: list[bool], scale: bool, eps: float
) -> list[float]:
    """Plain-Python GRPO advantages with the Bessel-corrected std, one group at a time."""
    out = [0.0] * len(rewards)
    for group in set(groups):
        members = [i for i, g in enumerate(groups) if g == group and valid[i]]
        if len(members) < 2:
            continue
        mean = sum(rewards[i] for i in members) / len(members)
        std = math.sqrt(sum((rewards[i] - mean) ** 2 for i in members) / (len(members) - 1))
        for i in members:
            out[i] = (rewards[i] - mean) / (std + eps) if scale else rewards[i] - mean
    return out


# Groups interleaved on purpose: 7 (with a NaN reward), 3 (all equal), 5 (singleton),
# 9 (an invalid-but-finite outlier that must not move the stats).
REWARDS = [1.0, 5.0, 0.0, 3.0, NAN, 1.0, 5.0, 2.0, 3.0, 5.0, 100.0]
GROUPS = [7, 3, 7, 5, 7, 9, 3, 7, 9, 3, 9]
VALID = [True, True, True, True, False, True, True, True, True, True, False]


@pytest.mark.parametrize("scale_by_std", [True, False])
def test_grpo_advantages_match_the_reference(scale_by_std: bool) -> None:
    eps = 1e-6
    advantages = grpo_advantages(
        torch.tensor(REWARDS),
        torch.tensor(GROUPS),
        torch.tensor(VALID),
        scale_by_std=scale_by_std,
        eps=eps,
    )
    expected = reference_grpo(REWARDS, GROUPS, VALID, scale_by_std, eps)
    assert close(advantages, expected)
    assert torch.isfinite(advantages).all()


def test_grpo_advantages_hand_values() -> None:
    advantages = grpo_advantages(torch.tensor(REWARDS), torch.tensor(GROUPS), torch.tensor(VALID))
    s7 = 1.0  # group 7: valid rewards 1, 0, 2 -> mean 1, sample std sqrt(2/2) = 1
    s9 = math.sqrt(2)  # group 9: valid rewards 1, 3 -> mean 2, sample std sqrt(2) (100 invalid)
    e = 1e-6
    expected = [0.0, 0.0, -1 / (s7 + e), 0.0, 0.0, -1 / (s9 + e), 0.0, 1 / (s7 + e), 1 / (s9 + e)]
    assert close(advantages, [*expected, 0.0, 0.0])
    unscaled = grpo_advantages(
        torch.tensor(REWARDS), torch.tensor(GROUPS), torch.tensor(VALID), scale_by_std=False
    )
    assert close(unscaled, [0.0, 0.0, -1.0, 0.0, 0.0, -1.0, 0.0, 1.0, 1.0, 0.0, 0.0])


def test_grpo_all_equal_group_is_exactly_zero_and_non_finite_rewards_are_invalid() -> None:
    # In float32 sum([0.7] * 7) / 7 - 0.7 = 6e-8, not 0: without the per-group shift that noise
    # would give small non-zero advantages (0.056 each here).
    rewards = torch.tensor([0.7] * 7 + [1.0, math.inf, 0.0])
    groups = torch.tensor([0] * 7 + [1, 1, 1])
    advantages = grpo_advantages(rewards, groups, torch.ones(10, dtype=torch.bool))
    assert torch.equal(advantages[:7], torch.zeros(7))
    # Group 1: the inf is invalid; 1 and 0 -> mean 0.5, sample std sqrt(0.5).
    s = math.sqrt(0.5)
    assert close(advantages[7:], [0.5 / (s + 1e-6), 0.0, -0.5 / (s + 1e-6)])


def test_grpo_all_invalid_group_and_empty_batch() -> None:
    advantages = grpo_advantages(
        torch.tensor([NAN, NAN]), torch.tensor([4, 4]), torch.tensor([False, False])
    )
    assert torch.equal(advantages, torch.zeros(2))
    empty = torch.empty(0)
    assert grpo_advantages(empty, empty.long(), empty.bool()).shape == (0,)


# --- GAE and token rewards -----------------------------------------------------------------------


def reference_gae(
    rewards: list[float], values: list[float], gamma: float, lam: float
) -> tuple[list[float], list[float]]:
    """GAE over one response (no padding), explicit backward loop, V after the end = 0."""
    advantages = [0.0] * len(rewards)
    running = 0.0
    for t in reversed(range(len(rewards))):
        next_value = values[t + 1] if t + 1 < len(rewards) else 0.0
        delta = rewards[t] + gamma * next_value - values[t]
        running = delta + gamma * lam * running
        advantages[t] = running
    return advantages, [a + v for a, v in zip(advantages, values, strict=True)]


LENGTHS = [4, 2, 5, 0]  # one row fills the width, one is empty
WIDTH = 5
TOKEN_REWARDS = [
    [0.5, -0.2, 0.0, 1.0, 99.0],
    [0.3, 2.0, 99.0, 99.0, 99.0],
    [0.1, 0.2, -0.3, 0.4, 1.5],
    [99.0, 99.0, 99.0, 99.0, 99.0],
]
VALUES = [
    [0.4, 0.1, -0.6, 0.8, 77.0],
    [1.0, 0.5, NAN, 77.0, 77.0],
    [0.2, 0.0, 0.3, -0.1, 0.9],
    [77.0, 77.0, 77.0, 77.0, 77.0],
]


@pytest.mark.parametrize(("gamma", "lam"), [(1.0, 1.0), (0.9, 0.8), (0.99, 0.95)])
def test_gae_matches_the_reference_with_different_lengths(gamma: float, lam: float) -> None:
    advantages, returns = gae_advantages(
        torch.tensor(TOKEN_REWARDS),
        torch.tensor(VALUES),
        mask_of(LENGTHS, WIDTH),
        gamma=gamma,
        lam=lam,
    )
    for row, n in enumerate(LENGTHS):
        expected_adv, expected_ret = reference_gae(
            TOKEN_REWARDS[row][:n], VALUES[row][:n], gamma, lam
        )
        padding = [0.0] * (WIDTH - n)
        assert close(advantages[row], expected_adv + padding, atol=1e-5)
        assert close(returns[row], expected_ret + padding, atol=1e-5)


def test_gae_with_gamma_and_lambda_one_is_reward_to_go_minus_value() -> None:
    rewards = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]])
    values = torch.tensor([[0.5, 1.0, 1.5], [2.0, 3.0, 8.0]])
    advantages, returns = gae_advantages(rewards, values, mask_of([3, 2], 3), gamma=1.0, lam=1.0)
    assert close(returns, [[6.0, 5.0, 3.0], [9.0, 5.0, 0.0]])  # reward-to-go
    assert close(advantages, [[5.5, 4.0, 1.5], [7.0, 2.0, 0.0]])


def test_gae_hand_values_gamma_09_lambda_08() -> None:
    # One row of 2 tokens: r = (0, 1), V = (0.5, 0.2), V_2 = 0 (end of episode).
    # delta_1 = 1 - 0.2 = 0.8; delta_0 = 0 + 0.9 * 0.2 - 0.5 = -0.32;
    # A_1 = 0.8; A_0 = -0.32 + 0.9 * 0.8 * 0.8 = 0.256.
    advantages, returns = gae_advantages(
        torch.tensor([[0.0, 1.0, 5.0]]),
        torch.tensor([[0.5, 0.2, 5.0]]),
        mask_of([2], 3),
        gamma=0.9,
        lam=0.8,
    )
    assert close(advantages, [[0.256, 0.8, 0.0]])
    assert close(returns, [[0.756, 1.0, 0.0]])


def test_gae_outputs_are_detached() -> None:
    values = torch.tensor([[0.5, 0.2]], requires_grad=True)
    advantages, returns = gae_advantages(
        torch.tensor([[0.0, 1.0]]), values, torch.ones(1, 2), gamma=1.0, lam=0.9
    )
    assert not advantages.requires_grad and not returns.requires_grad


def test_token_rewards_put_the_sequence_reward_on_the_last_token() -> None:
    mask = mask_of([3, 1, 0], 4)
    kl = torch.tensor([[0.1, -0.2, 0.3, 9.0], [0.5, 9.0, 9.0, 9.0], [9.0, 9.0, 9.0, 9.0]])
    rewards = token_rewards_from_sequence(torch.tensor([1.0, 2.0, 3.0]), mask, kl, kl_coef=0.1)
    expected = [
        [-0.01, 0.02, -0.03 + 1.0, 0.0],
        [-0.05 + 2.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 0.0],  # empty response: nowhere to put the reward
    ]
    assert close(rewards, expected)
    plain = token_rewards_from_sequence(torch.tensor([1.0, 2.0, 3.0]), mask.bool())
    assert close(plain, [[0.0, 0.0, 1.0, 0.0], [2.0, 0.0, 0.0, 0.0], [0.0] * 4])


# --- KL estimators -------------------------------------------------------------------------------


def test_kl_estimators_on_known_values() -> None:
    logp = torch.tensor([-1.0, -2.0, -0.5])
    ref_logp = torch.tensor([-1.0, -1.0, -2.0])
    # log r = ref - logp = (0, 1, -1.5)
    assert close(kl_per_token(logp, ref_logp, "k1"), [0.0, -1.0, 1.5])  # negative when pi < ref
    assert close(kl_per_token(logp, ref_logp, "k2"), [0.0, 0.5, 1.125])
    k3 = kl_per_token(logp, ref_logp, "k3")
    assert close(k3, [0.0, math.e - 2.0, math.exp(-1.5) + 0.5])
    assert k3[0] == 0.0


def test_k3_is_non_negative_zero_at_equality_and_finite_far_away() -> None:
    generator = torch.Generator().manual_seed(0)
    logp = -torch.rand(1000, generator=generator) * 5
    ref_logp = logp + torch.randn(1000, generator=generator) * 1e-4  # near-equal: rounding regime
    assert (kl_per_token(logp, ref_logp, "k3") >= 0).all()
    assert torch.equal(kl_per_token(logp, logp, "k3"), torch.zeros(1000))
    far = kl_per_token(torch.tensor([0.0, -500.0]), torch.tensor([-500.0, 0.0]), "k3")
    assert torch.isfinite(far).all()
    assert close(far, [19.0 + math.exp(-20.0), math.exp(20.0) - 21.0], atol=1.0)


def test_k1_and_k3_are_unbiased_estimates_of_the_exact_kl() -> None:
    pi = torch.tensor([0.5, 0.2, 0.2, 0.1])
    ref = torch.tensor([0.25, 0.25, 0.25, 0.25])
    exact = float((pi * (pi / ref).log()).sum())
    generator = torch.Generator().manual_seed(0)
    samples = torch.multinomial(pi, 200_000, replacement=True, generator=generator)
    logp, ref_logp = pi.log()[samples], ref.log()[samples]
    for estimator in ("k1", "k3"):
        assert kl_per_token(logp, ref_logp, estimator).mean().item() == pytest.approx(
            exact, abs=3e-3
        )


def test_unknown_kl_estimator_is_rejected() -> None:
    with pytest.raises(ValueError, match="k4"):
        kl_per_token(torch.zeros(1), torch.zeros(1), "k4")  # type: ignore[arg-type]


# --- policy and value losses ---------------------------------------------------------------------

# Six response tokens and one padding token; clip range 0.2.
#   A = +2: ratio 1.1 inside   -> -2.2 (unclipped); ratio 1.5 above -> -2.4 (clipped);
#           ratio 0.5 below    -> -1.0 (unclipped: the min surrogate keeps the worse one)
#   A = -1: ratio 0.5 below    ->  0.8 (clipped);   ratio 1.5 above ->  1.5 (unclipped);
#           ratio 0.9 inside   ->  0.9 (unclipped)
RATIOS = [1.1, 1.5, 0.5, 0.5, 1.5, 0.9]
ADVANTAGES = [2.0, 2.0, 2.0, -1.0, -1.0, -1.0]
TOKEN_LOSSES = [-2.2, -2.4, -1.0, 0.8, 1.5, 0.9]
CLIPPED = [False, True, False, True, False, False]


def policy_inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    old_logp = torch.tensor([[-1.0, -2.0, -0.5, -1.5, -3.0, -0.7, 0.0]])
    logp = old_logp + torch.tensor([[*(math.log(r) for r in RATIOS), 0.0]])
    logp[0, -1] = NAN  # padding: must not reach the loss or the gradient
    advantages = torch.tensor([[*ADVANTAGES, 5.0]])
    mask = torch.tensor([[1.0] * 6 + [0.0]])
    return logp.requires_grad_(), old_logp, advantages, mask


def test_clipped_policy_loss_values_and_clip_fraction() -> None:
    logp, old_logp, advantages, mask = policy_inputs()
    out = clipped_policy_loss(logp, old_logp, advantages, mask, clip_range=0.2)
    assert close(out.loss, sum(TOKEN_LOSSES) / 6)  # -0.4
    assert close(out.loss, -0.4)
    assert close(out.clip_fraction, 2 / 6)
    assert close(out.approx_kl, sum(0.5 * math.log(r) ** 2 for r in RATIOS) / 6)
    assert close(out.ratio_mean, sum(RATIOS) / 6)
    assert not out.approx_kl.requires_grad and not out.clip_fraction.requires_grad


def test_clipped_policy_loss_gradient_flows_only_through_unclipped_response_tokens() -> None:
    logp, old_logp, advantages, mask = policy_inputs()
    clipped_policy_loss(logp, old_logp, advantages, mask, clip_range=0.2).loss.backward()
    assert logp.grad is not None
    # d/dlogp (-A ratio) = -A ratio on unclipped tokens; clipped tokens and padding give 0.
    expected = [
        0.0 if c else -a * r / 6 for a, r, c in zip(ADVANTAGES, RATIOS, CLIPPED, strict=True)
    ]
    assert close(logp.grad, [[*expected, 0.0]])


def test_sequence_advantages_broadcast_and_the_mean_is_over_tokens() -> None:
    generator = torch.Generator().manual_seed(0)
    old_logp = -torch.rand(2, 4, generator=generator)
    logp = old_logp + 0.3 * torch.randn(2, 4, generator=generator)
    mask = mask_of([4, 1], 4)
    per_sequence = torch.tensor([1.0, -2.0])
    out = clipped_policy_loss(logp, old_logp, per_sequence, mask, clip_range=0.2)
    per_token = clipped_policy_loss(
        logp, old_logp, per_sequence[:, None].expand(2, 4), mask, clip_range=0.2
    )
    assert close(out.loss, per_token.loss)
    ratio = (logp - old_logp).exp()
    token_losses = torch.maximum(
        -per_sequence[:, None] * ratio, -per_sequence[:, None] * ratio.clamp(0.8, 1.2)
    )
    # All five tokens weigh the same (not the mean of the two per-sequence means).
    assert close(out.loss, (token_losses[0].sum() + token_losses[1, 0]) / 5)
    with pytest.raises(ValueError, match="advantages"):
        clipped_policy_loss(logp, old_logp, torch.zeros(2, 4, 1), mask, clip_range=0.2)


def test_clipped_value_loss_values_clip_fraction_and_gradient() -> None:
    old = torch.tensor([[1.0, 1.0, 1.0, 1.0, 0.0]])
    values = torch.tensor([[1.1, 1.5, 0.5, 0.5, math.inf]], requires_grad=True)
    returns = torch.tensor([[2.0, 2.0, 0.0, 1.0, 0.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0, 1.0, 0.0]])
    out = clipped_value_loss(values, old, returns, mask, clip_range=0.2)
    # v_clip = (1.1, 1.2, 0.8, 0.8): max of squared errors = (0.81, 0.64, 0.64, 0.25),
    # the clipped one larger on tokens 2 and 3.
    assert close(out.loss, 0.5 * (0.81 + 0.64 + 0.64 + 0.25) / 4)
    assert close(out.clip_fraction, 0.5)
    out.loss.backward()
    assert values.grad is not None
    # 0.5 * d/dv (v - R)^2 / 4 = (v - R) / 4 where unclipped; 0 where the clipped term is
    # constant in v (v outside old +- eps) and on padding.
    assert close(values.grad, [[-0.9 / 4, 0.0, 0.0, -0.5 / 4, 0.0]])


# --- logits reductions ---------------------------------------------------------------------------


def plain_entropy(logits: list[float]) -> float:
    z = sum(math.exp(x) for x in logits)
    probs = [math.exp(x) / z for x in logits]
    return -sum(p * math.log(p) for p in probs if p > 0)


def test_entropy_matches_minus_p_log_p() -> None:
    rows = [[0.1, -0.3, 2.0], [1.0, 1.0, -1.0], [0.0, 5.0, -5.0]]
    logits = torch.tensor(rows).reshape(1, 3, 3)
    assert close(entropy_from_logits(logits), [[plain_entropy(row) for row in rows]])


def test_entropy_of_uniform_logits_is_log_v_and_masked_vocab_is_safe() -> None:
    assert close(entropy_from_logits(torch.full((2, 3, 7), 3.0)), torch.full((2, 3), math.log(7)))
    logits = torch.tensor([[[0.0, 0.0, -math.inf]]], requires_grad=True)
    entropy = entropy_from_logits(logits)
    assert close(entropy, [[math.log(2)]])
    entropy.sum().backward()
    assert logits.grad is not None and torch.isfinite(logits.grad).all()


def test_entropy_of_large_logits_is_stable() -> None:
    assert close(entropy_from_logits(torch.tensor([[1000.0, 1000.0, 0.0]])), [math.log(2)])


def test_logprobs_match_log_softmax_gather() -> None:
    generator = torch.Generator().manual_seed(0)
    logits = (torch.randn(2, 3, 11, generator=generator) * 4).requires_grad_()
    tokens = torch.randint(0, 11, (2, 3), generator=generator)
    expected = torch.log_softmax(logits, dim=-1).gather(-1, tokens[..., None]).squeeze(-1)
    logp = logprobs_from_logits(logits, tokens)
    assert logp.shape == (2, 3) and logp.dtype == torch.float32
    assert close(logp, expected.detach(), atol=1e-5)
    (grad,) = torch.autograd.grad(logp.sum(), logits)
    (expected_grad,) = torch.autograd.grad(expected.sum(), logits)
    assert close(grad, expected_grad, atol=1e-5)


def test_logits_reductions_upcast_bf16_and_chunking_changes_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    generator = torch.Generator().manual_seed(1)
    logits = torch.randn(3, 5, 13, generator=generator).to(torch.bfloat16)
    tokens = torch.randint(0, 13, (3, 5), generator=generator)
    upcast = logits.float()
    expected_logp = torch.log_softmax(upcast, -1).gather(-1, tokens[..., None]).squeeze(-1)
    expected_entropy = -(upcast.softmax(-1) * upcast.log_softmax(-1)).sum(-1)
    whole_logp, whole_entropy = logprobs_from_logits(logits, tokens), entropy_from_logits(logits)
    assert whole_logp.dtype == whole_entropy.dtype == torch.float32
    assert close(whole_logp, expected_logp, atol=1e-5)
    assert close(whole_entropy, expected_entropy, atol=1e-5)
    monkeypatch.setattr(losses, "LOGITS_CHUNK_ELEMENTS", 13 * 2)  # two rows per chunk: 8 chunks
    assert torch.equal(logprobs_from_logits(logits, tokens), whole_logp)
    assert torch.equal(entropy_from_logits(logits), whole_entropy)
