"""Tests for rlvr.algo.returns: token rewards, discounted returns, batch whitening, REINFORCE++.

REINFORCE++ (arXiv:2501.03262 §3): G_t = sum_{s >= t} gamma^{s-t} r_s with
r_t = 1[t = last] r - beta KL_t; A = (G - mean_batch(G)) / std_batch(G) over all tokens.
REINFORCE++-baseline: r minus its group mean first.
"""

from __future__ import annotations

import math
import statistics

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.algo.returns import (
    discounted_returns,
    last_token_index,
    masked_whiten,
    outcome_token_rewards,
    reinforce_pp_advantages,
)

FAST = settings(max_examples=50, deadline=None)


def t64(x):
    return torch.tensor(x, dtype=torch.float64)


def test_outcome_reward_lands_on_the_last_unmasked_token():
    mask = t64([[1, 1, 1, 0], [1, 0, 0, 0], [0, 0, 0, 0], [1, 0, 1, 0]])  # row 3 has a hole
    assert last_token_index(mask).tolist() == [2, 0, 0, 2]
    got = outcome_token_rewards(t64([2, 3, 4, 5]), mask)
    assert got.tolist() == [[0, 0, 2, 0], [3, 0, 0, 0], [0, 0, 0, 0], [0, 0, 5, 0]]


def test_discounted_returns_hand_computed():
    # gamma = 0.5. Row 0: r = [1, 0, 2, pad]: G2 = 2, G1 = 0 + 0.5 * 2 = 1, G0 = 1 + 0.5 * 1 = 1.5.
    # Row 1 has a masked hole at column 1 (an observation, its 9 is not the policy's):
    # G2 = 2, G1 = 0 (masked), G0 = 1 + 0.5 * 2 = 2 (the hole does not discount).
    rewards = t64([[1, 0, 2, 0], [1, 9, 2, 0]])
    mask = t64([[1, 1, 1, 0], [1, 0, 1, 0]])
    assert discounted_returns(rewards, mask, 0.5).tolist() == [[1.5, 1, 2, 0], [2, 0, 2, 0]]


def test_masked_whiten_hand_computed():
    # Unmasked [1, 2, 3] (the masked 100 is ignored): mean 2, unbiased var (1 + 0 + 1) / 2 = 1.
    values, mask = t64([[1, 2, 100], [3, 0, 0]]), t64([[1, 1, 0], [1, 0, 0]])
    got = masked_whiten(values, mask, eps=0.0)
    assert got.tolist() == [[-1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]


@pytest.mark.parametrize("values", [[[5.0, 5.0], [5.0, 0.0]], [[7.0, 0.0], [0.0, 0.0]]])
def test_masked_whiten_constant_or_single_entry_is_zero_not_nan(values):
    mask = t64([[1, 1], [1, 0]]) if values[0][1] == 5.0 else t64([[1, 0], [0, 0]])
    got = masked_whiten(t64(values), mask, eps=0.0)
    assert got.tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_reinforce_pp_hand_computed():
    # rewards [1, 0], lengths 2 and 1, gamma 1: token returns [1, 1] and [0].
    # mean 2/3; unbiased var ((1/3)^2 * 2 + (2/3)^2) / 2 = 1/3; std 0.5773502691896258.
    # A = (1/3) / std = 0.5773502691896258 and (-2/3) / std = -1.1547005383792517.
    mask = t64([[1, 1], [1, 0]])
    adv = reinforce_pp_advantages(t64([1, 0]), torch.tensor([0, 0]), mask, eps=0.0)
    a, b = 0.5773502691896258, -1.1547005383792517
    torch.testing.assert_close(adv, t64([[a, a], [b, 0]]), rtol=1e-12, atol=1e-15)


def test_reinforce_pp_kl_in_the_reward_hand_computed():
    # r = 1, per-token penalty beta KL = [0.1, 0.2, 0.3]: token rewards [-0.1, -0.2, 0.7],
    # returns (gamma 1) G = [0.4, 0.5, 0.7]; mean 1.6/3; unbiased var
    # ((-0.4/3)^2 + (-0.1/3)^2 + (0.5/3)^2) / 2 = (0.42/9) / 2 = 0.02333...
    mask = torch.ones(1, 3, dtype=torch.float64)
    penalty = t64([[0.1, 0.2, 0.3]])
    returns = discounted_returns(outcome_token_rewards(t64([1.0]), mask) - penalty, mask, 1.0)
    torch.testing.assert_close(returns, t64([[0.4, 0.5, 0.7]]), rtol=1e-12, atol=1e-15)
    std = math.sqrt(0.42 / 9 / 2)
    expected = t64([[-0.4 / 3 / std, -0.1 / 3 / std, 0.5 / 3 / std]])
    adv = reinforce_pp_advantages(t64([1.0]), torch.tensor([0]), mask, kl_penalty=penalty, eps=0.0)
    torch.testing.assert_close(adv, expected, rtol=1e-10, atol=1e-12)


def test_reinforce_pp_baseline_zero_variance_group_is_shifted_by_the_batch_mean():
    # Group 0 [1, 0] -> centred [0.5, -0.5]; group 1 [1, 1] -> [0, 0] (zero variance).
    # Lengths 2, 1, 1, 3: token values [.5, .5 | -.5 | 0 | 0, 0, 0], mean 0.5 / 7 = 1/14,
    # sum of squared deviations 5/7, unbiased var 5/42, std 0.3450327796711771.
    # The whitening shifts the zero-variance group's tokens to -(1/14) / std = -0.2070196678027063:
    # as in OpenRLHF and verl; the group still carries (a small, length-driven) gradient.
    mask = t64([[1, 1, 0], [1, 0, 0], [1, 0, 0], [1, 1, 1]])
    adv = reinforce_pp_advantages(t64([1, 0, 1, 1]), torch.tensor([0, 0, 1, 1]), mask,
                                  baseline="group_mean", eps=0.0)
    std = math.sqrt(5 / 42)
    assert adv[2, 0].item() == pytest.approx(-(1 / 14) / std, rel=1e-12)
    assert adv[0, 0].item() == pytest.approx((0.5 - 1 / 14) / std, rel=1e-12)
    assert (adv * (1 - mask)).abs().sum().item() == 0.0


def test_reinforce_pp_baseline_singleton_group_gets_zero_before_whitening():
    # A singleton's centred reward is 0 (no baseline but itself); verl instead keeps r.
    mask = torch.ones(3, 1, dtype=torch.float64)
    adv = reinforce_pp_advantages(t64([1, 0, 9]), torch.tensor([0, 0, 1]), mask, baseline="group_mean", eps=0.0)
    # centred [0.5, -0.5, 0]: mean 0, unbiased var 0.25, std 0.5 -> [1, -1, 0].
    assert adv.flatten().tolist() == [1.0, -1.0, 0.0]


@st.composite
def ragged(draw):
    b, t = draw(st.integers(1, 5), ), draw(st.integers(1, 6))
    bits = draw(st.lists(st.lists(st.booleans(), min_size=t, max_size=t), min_size=b, max_size=b))
    values = draw(st.lists(st.lists(st.floats(-10, 10), min_size=t, max_size=t), min_size=b, max_size=b))
    return t64(values), t64(bits)


@FAST
@given(data=ragged(), gamma=st.floats(0.0, 1.0))
def test_discounted_returns_equal_loop(data, gamma):
    rewards, mask = data
    expected = torch.zeros_like(rewards)
    for i in range(rewards.shape[0]):
        on = [t for t in range(rewards.shape[1]) if mask[i, t]]
        for k, t in enumerate(on):
            expected[i, t] = sum(gamma ** (j - k) * rewards[i, s].item() for j, s in enumerate(on) if j >= k)
    torch.testing.assert_close(discounted_returns(rewards, mask, gamma), expected, rtol=1e-9, atol=1e-9)


@FAST
@given(data=ragged())
def test_masked_whiten_equals_statistics(data):
    values, mask = data
    picked = [v for v, m in zip(values.flatten().tolist(), mask.flatten().tolist()) if m]
    got = masked_whiten(values, mask, eps=1e-8)
    if len(picked) < 2 or statistics.pvariance(picked) == 0:
        expected = [0.0] * len(picked)
    else:
        mean, var = statistics.fmean(picked), statistics.variance(picked)
        expected = [(v - mean) / math.sqrt(var + 1e-8) for v in picked]
    torch.testing.assert_close(got[mask.bool()], t64(expected), rtol=1e-7, atol=1e-7)
    assert not got[~mask.bool()].any()
