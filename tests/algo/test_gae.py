"""Tests for rlvr.algo.gae: GAE (arXiv:1506.02438 eq. 16) and VAPO's decoupled and
length-adaptive lambda (arXiv:2504.05118): lam_policy = 1 - 1/(alpha l), lam_critic = 1.

    delta_t = r_t + gamma V_{t+1} - V_t,   A_t = sum_l (gamma lam)^l delta_{t+l},   V_{T} = 0
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.algo.gae import decoupled_gae, gae_advantages, length_adaptive_lambda
from rlvr.algo.returns import discounted_returns

FAST = settings(max_examples=60, deadline=None)


def t64(x):
    return torch.tensor(x, dtype=torch.float64)


def loop_gae(rewards, values, mask, gamma, lams):
    """The textbook sum, written over the unmasked positions of each row (a masked position is
    skipped: not a step of the episode), with plain floats."""
    out = [[0.0] * len(row) for row in rewards]
    for i, row in enumerate(rewards):
        on = [t for t, m in enumerate(mask[i]) if m]
        deltas = []
        for k, t in enumerate(on):
            v_next = values[i][on[k + 1]] if k + 1 < len(on) else 0.0
            deltas.append(row[t] + gamma * v_next - values[i][t])
        for k, t in enumerate(on):
            out[i][t] = sum((gamma * lams[i]) ** (j - k) * deltas[j] for j in range(k, len(on)))
    return out


def test_hand_computed():
    # gamma = 1, lam = 0.5, one row of 3 tokens, reward 1 at the end, V = [0.5, 0.6, 0.8]:
    # delta_2 = 1 + 0 - 0.8 = 0.2; delta_1 = 0 + 0.8 - 0.6 = 0.2; delta_0 = 0 + 0.6 - 0.5 = 0.1.
    # A_2 = 0.2; A_1 = 0.2 + 0.5 * 0.2 = 0.3; A_0 = 0.1 + 0.5 * 0.3 = 0.25.
    adv = gae_advantages(t64([[0, 0, 1]]), t64([[0.5, 0.6, 0.8]]), torch.ones(1, 3), gamma=1.0, lam=0.5)
    torch.testing.assert_close(adv, t64([[0.25, 0.3, 0.2]]), rtol=1e-12, atol=1e-15)


def test_lambda_one_is_monte_carlo_and_lambda_zero_is_td():
    rewards, values, mask = t64([[0, 0, 1]]), t64([[0.5, 0.6, 0.8]]), torch.ones(1, 3)
    # lam = 1, gamma = 1: A_t = R - V_t = [0.5, 0.4, 0.2].
    mc = gae_advantages(rewards, values, mask, gamma=1.0, lam=1.0)
    torch.testing.assert_close(mc, t64([[0.5, 0.4, 0.2]]), rtol=1e-12, atol=1e-15)
    # lam = 0: A_t = delta_t = [0.1, 0.2, 0.2].
    td = gae_advantages(rewards, values, mask, gamma=1.0, lam=0.0)
    torch.testing.assert_close(td, t64([[0.1, 0.2, 0.2]]), rtol=1e-12, atol=1e-15)


def test_length_adaptive_lambda_hand_computed():
    # alpha = 0.05: l = 100 -> 1 - 1/5 = 0.8; l = 1000 -> 1 - 1/50 = 0.98; l = 20 -> 0;
    # l = 10 -> 1 - 2 = -1, clamped to 0; l = 0 (empty row) -> 0.
    lam = length_adaptive_lambda(torch.tensor([100, 1000, 20, 10, 0]), alpha=0.05)
    torch.testing.assert_close(lam, t64([0.8, 0.98, 0.0, 0.0, 0.0]), rtol=1e-12, atol=1e-15)


def test_decoupled_critic_targets_are_monte_carlo_returns():
    # lam_critic = 1, gamma = 1: V + A^{1} = the return, whatever V (VAPO's unbiased target).
    rewards, mask = t64([[0, 0, 1, 0], [0, 2, 0, 0]]), t64([[1, 1, 1, 0], [1, 1, 0, 0]])
    values = t64([[0.3, -0.2, 0.9, 7.0], [0.1, 0.4, 5.0, 5.0]])
    adv, targets = decoupled_gae(rewards, values, mask, gamma=1.0, lam_policy=0.9, lam_critic=1.0)
    torch.testing.assert_close(targets, discounted_returns(rewards, mask, 1.0), rtol=1e-12, atol=1e-15)
    torch.testing.assert_close(adv, gae_advantages(rewards, values, mask, gamma=1.0, lam=0.9))


@st.composite
def episodes(draw):
    b, t = draw(st.integers(1, 4)), draw(st.integers(1, 7))
    floats = st.floats(-5, 5)
    grid = lambda: draw(st.lists(st.lists(floats, min_size=t, max_size=t), min_size=b, max_size=b))  # noqa: E731
    mask = draw(st.lists(st.lists(st.booleans(), min_size=t, max_size=t), min_size=b, max_size=b))
    lams = draw(st.lists(st.floats(0, 1), min_size=b, max_size=b))
    return grid(), grid(), mask, lams


@FAST
@given(data=episodes(), gamma=st.floats(0, 1), per_row=st.booleans())
def test_vectorised_equals_loop(data, gamma, per_row):
    rewards, values, mask, lams = data
    if not per_row:
        lams = [lams[0]] * len(lams)
    lam = t64(lams) if per_row else lams[0]
    got = gae_advantages(t64(rewards), t64(values), t64(mask), gamma=gamma, lam=lam)
    expected = t64(loop_gae(rewards, values, mask, gamma, lams))
    torch.testing.assert_close(got, expected, rtol=1e-9, atol=1e-9)


@FAST
@given(data=episodes(), gamma=st.floats(0, 1))
def test_padding_columns_change_nothing(data, gamma):
    rewards, values, mask, lams = data
    b = len(rewards)
    pad = lambda x, v: torch.cat([t64(x), torch.full((b, 3), v, dtype=torch.float64)], dim=1)  # noqa: E731
    base = gae_advantages(t64(rewards), t64(values), t64(mask), gamma=gamma, lam=t64(lams))
    padded = gae_advantages(pad(rewards, 9.0), pad(values, -9.0), pad(mask, 0.0), gamma=gamma, lam=t64(lams))
    torch.testing.assert_close(padded[:, :-3], base, rtol=0, atol=0)
    assert not padded[:, -3:].any()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_dtype_is_kept(dtype):
    adv = gae_advantages(torch.zeros(2, 3, dtype=dtype), torch.ones(2, 3, dtype=dtype), torch.ones(2, 3),
                         gamma=1.0, lam=length_adaptive_lambda(torch.tensor([3, 40]), 0.05))
    assert adv.dtype == dtype
