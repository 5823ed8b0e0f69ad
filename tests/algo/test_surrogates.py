"""Tests for rlvr.algo.surrogates: PPO's clipped surrogate (Schulman et al. 2017, eq. 7) with
DAPO's decoupled bounds (arXiv:2503.14476, eq. 10):

    loss_t = -min(r_t A_t, clip(r_t, 1 - eps_low, 1 + eps_high) A_t),   r_t = exp(log_ratio_t)
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.algo.ratios import RATIO_LEVELS
from rlvr.algo.surrogates import SURROGATES, ppo_clip

FAST = settings(max_examples=50, deadline=None)
EPS_LOW, EPS_HIGH = 0.2, 0.28  # distinct, so that a swapped bound shows

eps_values = st.floats(min_value=0.0, max_value=0.99)
adv_values = st.floats(min_value=-100, max_value=100, allow_subnormal=False)  # halving is exact

# Strategies for every surrogate's keyword arguments; a new surrogate must add its own here.
SURROGATE_ARGS = {
    "ppo_clip": st.fixed_dictionaries({"eps_low": eps_values, "eps_high": eps_values}),
}


def loss_and_grad(ratio: float, adv: float):
    log_ratio = torch.tensor([math.log(ratio)], dtype=torch.float64, requires_grad=True)
    loss, indicators = ppo_clip(log_ratio, torch.tensor([adv], dtype=torch.float64), eps_low=EPS_LOW, eps_high=EPS_HIGH)
    loss.sum().backward()
    return loss.item(), log_ratio.grad.item(), indicators["clip_low"].item(), indicators["clip_high"].item()


# (ratio, A, loss, d loss / d log_ratio, clip_low, clip_high), eps_low = 0.2, eps_high = 0.28.
HAND_CASES = {
    # r = 1.5 > 1.28, A = 2: min(1.5*2, 1.28*2) = 2.56 -> clipped, no gradient.
    "above_high_pos_adv": (1.5, 2.0, -2.56, 0.0, 0.0, 1.0),
    # r = 0.5 < 0.8, A = -1: min(-0.5, -0.8) = -0.8 -> clipped, no gradient.
    "below_low_neg_adv": (0.5, -1.0, 0.8, 0.0, 1.0, 0.0),
    # r = 1.1 inside [0.8, 1.28], A = 3: loss -3.3, gradient -A r = -3.3.
    "inside_pos_adv": (1.1, 3.0, -3.3, -3.3, 0.0, 0.0),
    # r = 0.9 inside, A = -2: loss 1.8, gradient -A r = 1.8.
    "inside_neg_adv": (0.9, -2.0, 1.8, 1.8, 0.0, 0.0),
    # r = 1.5 > 1.28 but A = -1: min(-1.5, -1.28) = -1.5, the unclipped term keeps its gradient 1.5.
    "above_high_neg_adv": (1.5, -1.0, 1.5, 1.5, 0.0, 0.0),
    # r = 0.5 < 0.8 but A = 1: min(0.5, 0.8) = 0.5, gradient -A r = -0.5.
    "below_low_pos_adv": (0.5, 1.0, -0.5, -0.5, 0.0, 0.0),
    # r = 1.25 is inside only because eps_high = 0.28 > eps_low (DAPO clip-higher).
    "clip_higher_keeps_gradient": (1.25, 1.0, -1.25, -1.25, 0.0, 0.0),
    # A = 0: nothing to learn.
    "zero_adv": (3.0, 0.0, 0.0, 0.0, 0.0, 0.0),
}


@pytest.mark.parametrize("case", HAND_CASES.values(), ids=HAND_CASES.keys())
def test_ppo_clip_hand_computed(case):
    ratio, adv, loss, grad, clip_low, clip_high = case
    got = loss_and_grad(ratio, adv)
    assert got[:2] == pytest.approx((loss, grad), rel=1e-12, abs=1e-15)
    assert got[2:] == (clip_low, clip_high)


def test_every_surrogate_has_test_arguments():
    assert set(SURROGATE_ARGS) == set(SURROGATES)


@FAST
@given(data=st.data(), name=st.sampled_from(sorted(SURROGATES)), seed=st.integers(0, 2**16))
def test_on_policy_gradient_is_vanilla_policy_gradient(data, name, seed):
    # At r = 1 every clipped surrogate is -A log pi up to a constant: d loss / d logp = -A.
    args = data.draw(SURROGATE_ARGS[name])
    adv = torch.tensor(data.draw(st.lists(adv_values, min_size=1, max_size=8)), dtype=torch.float64)
    gen = torch.Generator().manual_seed(seed)
    logp = (-5 * torch.rand(adv.shape, generator=gen, dtype=torch.float64)).requires_grad_()
    mask = torch.ones_like(adv)
    log_ratio = RATIO_LEVELS["token"](logp, logp.detach().clone(), mask)
    loss, indicators = SURROGATES[name](log_ratio, adv, **args)
    loss.sum().backward()
    torch.testing.assert_close(logp.grad, -adv, rtol=1e-12, atol=0)
    torch.testing.assert_close(loss.detach(), -adv, rtol=1e-12, atol=0)
    for v in indicators.values():
        assert not v.any()


@FAST
@given(
    log_ratio=st.lists(st.floats(min_value=-2, max_value=2), min_size=1, max_size=8),
    data=st.data(),
    eps_low=eps_values,
    eps_high=eps_values,
)
def test_gradient_is_zero_exactly_where_clipped(log_ratio, data, eps_low, eps_high):
    lr = torch.tensor(log_ratio, dtype=torch.float64, requires_grad=True)
    n = len(log_ratio)
    adv = torch.tensor(data.draw(st.lists(adv_values, min_size=n, max_size=n)), dtype=torch.float64)
    loss, ind = ppo_clip(lr, adv, eps_low=eps_low, eps_high=eps_high)
    loss.sum().backward()
    ratio = lr.detach().exp()
    clipped = (ind["clip_low"] + ind["clip_high"]).bool()
    expected = torch.where(clipped, torch.zeros_like(adv), -adv * ratio)
    torch.testing.assert_close(lr.grad, expected, rtol=1e-12, atol=1e-12)
    # The clipped objective is a pessimistic bound: -loss <= r A.
    assert (-loss.detach() <= ratio * adv + 1e-12).all()
