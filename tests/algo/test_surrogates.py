"""Tests for rlvr.algo.surrogates, with r_t = exp(log_ratio_t):

    ppo_clip   PPO (arXiv:1707.06347 eq. 7), DAPO bounds (arXiv:2503.14476 eq. 10):
               -min(r A, clip(r, 1 - eps_low, 1 + eps_high) A)
    dual_clip  (arXiv:1912.09729): for A < 0, min(ppo_clip, -c A)
    cispo      (arXiv:2506.13585): -sg(clip(r, 1 - eps_low, 1 + eps_high)) A log r
    sapo       (arXiv:2511.20347): -(4 / tau) sigmoid(tau (r - 1)) A, tau by the sign of A
    gmpo       (arXiv:2507.20673): -A exp(mean_t of the pessimistically clipped log r_t), per row
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.algo.ratios import RATIO_LEVELS
from rlvr.algo.surrogates import (SURROGATES, cispo, dppo_kl, dppo_tv, dro, dual_clip, gmpo, ppo_clip, reinforce, sapo,
                                  vespo)

FAST = settings(max_examples=50, deadline=None)
EPS_LOW, EPS_HIGH = 0.2, 0.28  # distinct, so that a swapped bound shows

eps_values = st.floats(min_value=0.0, max_value=0.99)
adv_values = st.floats(min_value=-100, max_value=100, allow_subnormal=False)  # halving is exact

# Strategies for every surrogate's keyword arguments; a new surrogate must add its own here.
SURROGATE_ARGS = {
    "ppo_clip": st.fixed_dictionaries({"eps_low": eps_values, "eps_high": eps_values}),
    "dual_clip": st.fixed_dictionaries(
        {"eps_low": eps_values, "eps_high": eps_values, "clip_c": st.floats(min_value=1.001, max_value=10)}),
    # CISPO's lower side may be unbounded (eps_low >= 1), as in the paper.
    "cispo": st.fixed_dictionaries({"eps_low": st.floats(min_value=0.0, max_value=5.0), "eps_high": eps_values}),
    "sapo": st.fixed_dictionaries({"tau_pos": st.floats(0.1, 10), "tau_neg": st.floats(0.1, 10)}),
    "gmpo": st.fixed_dictionaries({"eps_low": eps_values, "eps_high": eps_values}),
    "reinforce": st.fixed_dictionaries({}),
    "dro": st.fixed_dictionaries({"beta": st.floats(1e-3, 10)}),
    "dppo_tv": st.fixed_dictionaries({"eps_low": eps_values, "eps_high": eps_values,
                                      "clip_c": st.floats(min_value=1.001, max_value=30)}),
    "dppo_kl": st.fixed_dictionaries({"eps_low": eps_values, "eps_high": eps_values,
                                      "clip_c": st.floats(min_value=1.001, max_value=30)}),
    "vespo": st.fixed_dictionaries({"k_pos": st.floats(0, 5), "lambda_pos": st.floats(1e-3, 5),
                                    "k_neg": st.floats(0, 5), "lambda_neg": st.floats(1e-3, 5)}),
}
# Loss at r = 1: the vanilla PG value -A, except CISPO's log-ratio form, which reads 0, and
# SAPO's gate, worth 2 / tau there (its slope, not its value, is 1).
ON_POLICY_VALUE = {
    "ppo_clip": lambda adv, args: -adv, "dual_clip": lambda adv, args: -adv, "gmpo": lambda adv, args: -adv,
    "cispo": lambda adv, args: 0 * adv, "reinforce": lambda adv, args: 0 * adv, "dro": lambda adv, args: 0 * adv,
    "vespo": lambda adv, args: 0 * adv, "dppo_tv": lambda adv, args: 0 * adv, "dppo_kl": lambda adv, args: 0 * adv,
    "sapo": lambda adv, args: -2 / torch.where(adv > 0, torch.tensor(args["tau_pos"], dtype=adv.dtype),
                                               torch.tensor(args["tau_neg"], dtype=adv.dtype)) * adv,
}
# GMPO's objective is one per row: its invariants hold for an advantage constant along the row.
ROW_CONSTANT_ADV = {"gmpo"}


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
    if name in ROW_CONSTANT_ADV:
        adv = adv[:1].expand(adv.shape).clone()
    gen = torch.Generator().manual_seed(seed)
    logp = (-5 * torch.rand(adv.shape, generator=gen, dtype=torch.float64)).requires_grad_()
    mask = torch.ones_like(adv)
    log_ratio = RATIO_LEVELS["token"](logp, logp.detach().clone(), mask)
    loss, indicators = SURROGATES[name](log_ratio, adv, mask, logp.detach(), **args)
    loss.sum().backward()
    torch.testing.assert_close(logp.grad, -adv, rtol=1e-12, atol=0)
    torch.testing.assert_close(loss.detach(), ON_POLICY_VALUE[name](adv, args), rtol=1e-12, atol=0)
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


def test_every_surrogate_has_an_on_policy_value():
    assert set(ON_POLICY_VALUE) == set(SURROGATES)


# --- dual clip ---------------------------------------------------------------------------------


def dual_loss_and_grad(ratio: float, adv: float, clip_c: float = 3.0):
    log_ratio = torch.tensor([math.log(ratio)], dtype=torch.float64, requires_grad=True)
    loss, ind = dual_clip(log_ratio, torch.tensor([adv], dtype=torch.float64),
                          eps_low=EPS_LOW, eps_high=EPS_HIGH, clip_c=clip_c)
    loss.sum().backward()
    return loss.item(), log_ratio.grad.item(), ind["clip_low"].item(), ind["clip_high"].item(), ind["clip_dual"].item()


# (ratio, A, loss, d loss / d log_ratio, clip_low, clip_high, clip_dual); c = 3.
DUAL_CASES = {
    # r = 4 > c, A = -1: PPO gives max(4, 1.28) * 1 = 4; the dual bound caps it at c |A| = 3, no gradient.
    "far_above_c_neg_adv": (4.0, -1.0, 3.0, 0.0, 0.0, 0.0, 1.0),
    # r = 2 < c, A = -1: PPO's 2 is below the bound 3, gradient -A r = 2.
    "below_c_neg_adv": (2.0, -1.0, 2.0, 2.0, 0.0, 0.0, 0.0),
    # r = 4, A = +2: the dual bound only acts on A < 0; PPO clips high: -1.28 * 2 = -2.56.
    "far_above_c_pos_adv": (4.0, 2.0, -2.56, 0.0, 0.0, 1.0, 0.0),
    # r = 0.5, A = -1: PPO clips low to 0.8 (< 3), no gradient.
    "below_low_neg_adv": (0.5, -1.0, 0.8, 0.0, 1.0, 0.0, 0.0),
}


@pytest.mark.parametrize("case", DUAL_CASES.values(), ids=DUAL_CASES.keys())
def test_dual_clip_hand_computed(case):
    ratio, adv, loss, grad, *flags = case
    got = dual_loss_and_grad(ratio, adv)
    assert got[:2] == pytest.approx((loss, grad), rel=1e-12, abs=1e-15)
    assert list(got[2:]) == flags


@FAST
@given(log_ratio=st.lists(st.floats(min_value=-3, max_value=3), min_size=1, max_size=8), data=st.data(),
       clip_c=st.floats(min_value=1.001, max_value=10))
def test_dual_clip_bounds_negative_advantages_and_leaves_positive_alone(log_ratio, data, clip_c):
    n = len(log_ratio)
    lr = torch.tensor(log_ratio, dtype=torch.float64, requires_grad=True)
    adv = torch.tensor(data.draw(st.lists(adv_values, min_size=n, max_size=n)), dtype=torch.float64)
    loss, ind = dual_clip(lr, adv, eps_low=EPS_LOW, eps_high=EPS_HIGH, clip_c=clip_c)
    ppo, _ = ppo_clip(lr.detach(), adv, eps_low=EPS_LOW, eps_high=EPS_HIGH)
    assert (loss.detach() <= -clip_c * adv + 1e-12)[adv < 0].all()
    assert torch.equal(loss.detach()[adv >= 0], ppo[adv >= 0])
    loss.sum().backward()
    cut = (ind["clip_low"] + ind["clip_high"] + ind["clip_dual"]).bool()
    expected = torch.where(cut, torch.zeros_like(adv), -adv * lr.detach().exp())
    torch.testing.assert_close(lr.grad, expected, rtol=1e-12, atol=1e-12)


# --- CISPO -------------------------------------------------------------------------------------


def cispo_loss_and_grad(ratio: float, adv: float):
    log_ratio = torch.tensor([math.log(ratio)], dtype=torch.float64, requires_grad=True)
    loss, ind = cispo(log_ratio, torch.tensor([adv], dtype=torch.float64), eps_low=EPS_LOW, eps_high=EPS_HIGH)
    loss.sum().backward()
    return loss.item(), log_ratio.grad.item(), ind["weight_clip_low"].item(), ind["weight_clip_high"].item()


# (ratio, A, loss, d loss / d log_ratio, weight_clip_low, weight_clip_high); eps 0.2 / 0.28.
CISPO_CASES = {
    # r = 1.5 -> w = 1.28, A = 2: loss -1.28 * 2 * log 1.5 = -2.56 * 0.4054651081081644
    # = -1.0379906767569008; gradient -w A = -2.56, kept although the weight was clipped.
    "above_high_pos_adv": (1.5, 2.0, -1.0379906767569008, -2.56, 0.0, 1.0),
    # r = 0.5 -> w = 0.8, A = -1: loss 0.8 * log 0.5 = -0.5545177444479562; gradient +0.8.
    "below_low_neg_adv": (0.5, -1.0, -0.5545177444479562, 0.8, 1.0, 0.0),
    # r = 1.5 -> w = 1.28, A = -1: PPO would keep r (gradient 1.5); CISPO caps the weight at 1.28.
    # loss 1.28 * log 1.5 = 0.5189953383784504.
    "above_high_neg_adv": (1.5, -1.0, 0.5189953383784504, 1.28, 0.0, 1.0),
    # r = 1.1 inside, A = 3: loss -3.3 log 1.1 = -3.3 * 0.09531017980432493 = -0.3145235933542723.
    "inside": (1.1, 3.0, -0.3145235933542723, -3.3, 0.0, 0.0),
}


@pytest.mark.parametrize("case", CISPO_CASES.values(), ids=CISPO_CASES.keys())
def test_cispo_hand_computed(case):
    ratio, adv, loss, grad, *flags = case
    got = cispo_loss_and_grad(ratio, adv)
    assert got[:2] == pytest.approx((loss, grad), rel=1e-12)
    assert list(got[2:]) == flags


@FAST
@given(log_ratio=st.lists(st.floats(min_value=-3, max_value=3), min_size=1, max_size=8), data=st.data(),
       eps_low=st.floats(min_value=0.0, max_value=5.0), eps_high=eps_values)
def test_cispo_never_drops_a_gradient(log_ratio, data, eps_low, eps_high):
    # d loss / d log r = -clip(r) A everywhere: clipped tokens are down-weighted, not cut.
    n = len(log_ratio)
    lr = torch.tensor(log_ratio, dtype=torch.float64, requires_grad=True)
    adv = torch.tensor(data.draw(st.lists(adv_values, min_size=n, max_size=n)), dtype=torch.float64)
    loss, _ = cispo(lr, adv, eps_low=eps_low, eps_high=eps_high)
    loss.sum().backward()
    weight = lr.detach().exp().clamp(1 - eps_low, 1 + eps_high)
    torch.testing.assert_close(lr.grad, -weight * adv, rtol=1e-12, atol=1e-12)


# --- SAPO ----------------------------------------------------------------------------------------


def test_sapo_hand_computed():
    # tau_pos = 1, tau_neg = 2. Token 0: r = 1.5, A = 2: x = 1 * 0.5, sigma(0.5) = 0.6224593312018546,
    # loss = -(4/1) * 0.6224593312018546 * 2 = -4.979674649614837; d loss / d log r
    # = -A * 4 sigma (1 - sigma) r = -2 * 4 * 0.6224593312018546 * 0.3775406687981454 * 1.5
    # = -2.820044546419134 (the gate's slope at r = 1.5 is 0.94 of the on-policy one).
    # Token 1: r = 0.5, A = -1, tau = 2: x = -1, sigma(-1) = 0.2689414213699951,
    # loss = -(4/2) * 0.2689414213699951 * -1 = 0.5378828427399902;
    # gradient = 1 * 4 * 0.2689414213699951 * 0.7310585786300049 * 0.5 = 0.3932238664829637,
    # under half the on-policy weight: `gate_weak`.
    log_ratio = torch.tensor([math.log(1.5), math.log(0.5)], dtype=torch.float64, requires_grad=True)
    loss, ind = sapo(log_ratio, torch.tensor([2.0, -1.0], dtype=torch.float64), tau_pos=1.0, tau_neg=2.0)
    loss.sum().backward()
    torch.testing.assert_close(loss.detach(), torch.tensor([-4.979674649614837, 0.5378828427399902],
                                                           dtype=torch.float64), rtol=1e-12, atol=0)
    torch.testing.assert_close(log_ratio.grad, torch.tensor([-2.820044546419134, 0.3932238664829637],
                                                            dtype=torch.float64), rtol=1e-12, atol=0)
    assert ind["gate_weak"].tolist() == [0.0, 1.0]


def test_sapo_gradient_decays_smoothly_and_stays_finite_far_off_policy():
    # Far from r = 1 the gate is flat: the gradient weight 4 sigma (1 - sigma) r (A = 1, tau = 1)
    # is 1 at r = 1, ~1e-7 at r = e^3 (x = 19), and exactly 0, not NaN, at log r = 95.
    log_ratio = torch.tensor([0.0, 3.0, 5.0, 95.0], dtype=torch.float64, requires_grad=True)
    loss, ind = sapo(log_ratio, torch.ones(4, dtype=torch.float64), tau_pos=1.0, tau_neg=1.05)
    loss.sum().backward()
    weights = -log_ratio.grad
    assert torch.isfinite(weights).all()
    assert weights[0].item() == pytest.approx(1.0, rel=1e-12)
    assert 0 < weights[1] < 1e-6 and weights[2] < weights[1] and weights[3] == 0.0
    assert ind["gate_weak"].tolist() == [0.0, 1.0, 1.0, 1.0]


# --- GMPO ----------------------------------------------------------------------------------------


def test_gmpo_hand_computed():
    # eps = 0.2 both sides, one row of 3 tokens with A = +1 and log r = [0.5, -0.5, 0.1]: for A > 0
    # the pessimistic choice is min(l, clip(l)) = [0.2, -0.5, 0.1] (the high side clips, the
    # low side does not); mean = -0.2 / 3; loss on each token = -exp(-0.0666...) =
    # -0.9355069850316178. Gradient of the row's loss (one token copy): -exp(m) / 3 on the
    # unclipped tokens, 0 on the clipped one.
    log_ratio = torch.tensor([[0.5, -0.5, 0.1]], dtype=torch.float64, requires_grad=True)
    adv, mask = torch.ones(1, 3, dtype=torch.float64), torch.ones(1, 3, dtype=torch.float64)
    loss, ind = gmpo(log_ratio, adv, mask, eps_low=0.2, eps_high=0.2)
    torch.testing.assert_close(loss.detach(), torch.full((1, 3), -0.9355069850316178, dtype=torch.float64),
                               rtol=1e-12, atol=0)
    loss[0, 0].backward()
    g = 0.9355069850316178 / 3
    torch.testing.assert_close(log_ratio.grad, torch.tensor([[0.0, -g, -g]], dtype=torch.float64),
                               rtol=1e-12, atol=0)
    assert ind["clip_high"].tolist() == [[1.0, 0.0, 0.0]] and not ind["clip_low"].any()


def test_gmpo_ignores_masked_tokens_and_negative_advantage_clips_low():
    # A = -1: pessimistic is max(l, clip(l)): [0.5 -> 0.5 kept, -0.5 -> -0.2 clipped]; the masked
    # token (log r = 9) is left out of the mean: exp((0.5 - 0.2) / 2) = exp(0.15).
    log_ratio = torch.tensor([[0.5, -0.5, 9.0]], dtype=torch.float64)
    mask = torch.tensor([[1.0, 1.0, 0.0]], dtype=torch.float64)
    loss, ind = gmpo(log_ratio, -torch.ones(1, 3, dtype=torch.float64), mask, eps_low=0.2, eps_high=0.2)
    assert loss[0, 0].item() == pytest.approx(math.exp(0.15), rel=1e-12)
    assert ind["clip_low"][0, :2].tolist() == [0.0, 1.0]


def test_reinforce_and_dro_hand_computed():
    # log r = 0.5, A = 2: REINFORCE loss -1.0, gradient -2 (no clip, however far r moved);
    # DRO beta = 4: loss -(1.0 - 2 * 0.25) = -0.5, gradient -(A - beta log r) = -(2 - 2) = 0:
    # the quadratic trust region has stopped the update at log r = A / beta.
    for fn, args, loss_value, grad_value in ((reinforce, {}, -1.0, -2.0), (dro, {"beta": 4.0}, -0.5, 0.0)):
        log_ratio = torch.tensor([0.5], dtype=torch.float64, requires_grad=True)
        loss, _ = fn(log_ratio, torch.tensor([2.0], dtype=torch.float64), **args)
        loss.sum().backward()
        assert (loss.item(), log_ratio.grad.item()) == pytest.approx((loss_value, grad_value), abs=1e-15)


def test_vespo_hand_computed():
    # One row, log r = [0.1, -0.3]: log w = -0.2, w = e^-0.2 = 0.8187307530779818.
    # A = +1, (k, lam) = (2, 3): phi = e^(3 + 2 (-0.2) - 3 w) = e^0.14380774076605451 = 1.1546620927338898;
    # A = -1, (k, lam) = (3, 2): phi = e^(2 + 3 (-0.2) - 2 w) = e^-0.23746150615596373 = 0.7886272476910751.
    # loss_t = -phi A log r_t; d loss / d log r_t = -phi A (phi has no gradient).
    args = {"k_pos": 2.0, "lambda_pos": 3.0, "k_neg": 3.0, "lambda_neg": 2.0}
    for a, phi in ((1.0, 1.1546620927338898), (-1.0, 0.7886272476910751)):
        log_ratio = torch.tensor([[0.1, -0.3]], dtype=torch.float64, requires_grad=True)
        loss, ind = vespo(log_ratio, torch.full((1, 2), a, dtype=torch.float64), torch.ones(1, 2), **args)
        loss.sum().backward()
        torch.testing.assert_close(loss.detach(), torch.tensor([[-0.1, 0.3]], dtype=torch.float64) * phi * a)
        torch.testing.assert_close(log_ratio.grad, torch.full((1, 2), -phi * a, dtype=torch.float64))
        assert not ind["weight_low"].any()


def test_dppo_hand_computed():
    # Token 0: p_old = 0.5 -> p = 0.65 (log r = log 1.3), A = +1: moved 0.15 up.
    # Token 1: p_old = 0.01 -> p = 0.05 (log r = log 5), A = +1: moved 0.04 up, ratio 5.
    # Token 2: p_old = 0.5 -> p = 0.3 (log r = log 0.6), A = -1: moved 0.2 down.
    # TV, eps 0.1: tokens 0 and 2 leave (0.15 > 0.1, 0.2 > 0.1); token 1 stays although its
    # ratio 5 is far outside PPO's clip. Its loss -min(5, C=3) A log 5 = -3 log 5, gradient -3.
    # Binary KL, eps 0.05: D_0 = 0.5 log(0.5/0.65) + 0.5 log(0.5/0.35) = 0.0472 (stays),
    # D_1 = 0.01 log(0.2) + 0.99 log(0.99/0.95) = 0.0247 (stays), D_2 = 0.5 log(0.5/0.3) +
    # 0.5 log(0.5/0.7) = 0.0872 (leaves).
    old = torch.tensor([[0.5, 0.01, 0.5]], dtype=torch.float64).log()
    adv = torch.tensor([[1.0, 1.0, -1.0]], dtype=torch.float64)
    args = {"eps_low": 0.1, "eps_high": 0.1, "clip_c": 3.0}
    for fn, kept, kl_args in ((dppo_tv, [0.0, 1.0, 0.0], args), (dppo_kl, [1.0, 1.0, 0.0], args | {"eps_low": 0.05,
                                                                                              "eps_high": 0.05})):
        log_ratio = torch.tensor([[1.3, 5.0, 0.6]], dtype=torch.float64).log().requires_grad_()
        loss, ind = fn(log_ratio, adv, None, old, **kl_args)
        loss.sum().backward()
        weight = torch.tensor([[1.3, 3.0, 0.6]], dtype=torch.float64)
        torch.testing.assert_close(log_ratio.grad, -weight * adv * torch.tensor([kept], dtype=torch.float64))
        assert ind["masked"][0].tolist() == [1 - k for k in kept], fn.__name__
    with pytest.raises(ValueError, match="need the behaviour log-probs"):
        dppo_tv(log_ratio, adv, None, None, **args)
