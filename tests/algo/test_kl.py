"""Tests for rlvr.algo.kl: Schulman's estimators of KL(pi || pi_ref) ("Approximating KL
divergence", 2020), with d = log pi_ref - log pi at a token sampled from pi:

    k1 = -d,   k2 = d^2 / 2,   k3 = (e^d - 1) - d   (GRPO's choice, arXiv:2402.03300 eq. 4)
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.algo.kl import KL_ESTIMATORS, STRAIGHT_THROUGH, abs_kl, k1, k2, k3, kl_estimate, kl_reward_penalty

FAST = settings(max_examples=50, deadline=None)

logps = st.lists(st.floats(min_value=-30, max_value=0), min_size=1, max_size=8)


def t64(values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


def test_hand_values():
    # pi(y) = 0.5, pi_ref(y) = 0.25: d = log(0.25 / 0.5) = -0.6931471805599453
    # k1 = -d = 0.6931471805599453
    # k2 = d^2 / 2 = 0.4804530139182014 / 2 = 0.2402265069591007
    # k3 = (0.5 - 1) + 0.6931471805599453 = 0.1931471805599453
    logp, ref = t64([math.log(0.5)]), t64([math.log(0.25)])
    assert k1(logp, ref).item() == pytest.approx(0.6931471805599453, rel=1e-14)
    assert k2(logp, ref).item() == pytest.approx(0.2402265069591007, rel=1e-14)
    assert k3(logp, ref).item() == pytest.approx(0.1931471805599453, rel=1e-14)


def test_abs_and_the_straight_through_forms_by_hand():
    # d = log(0.25 / 0.5) = -0.693147 as above: abs = |d| = 0.693147; the "+" forms report
    # k1 / k3 / abs and have k2's gradient d k2 / d logp = logp - ref_logp = 0.693147.
    ref = t64([math.log(0.25)])
    assert abs_kl(t64([math.log(0.5)]), ref).item() == pytest.approx(0.6931471805599453, rel=1e-14)
    for plus, value in [("k1_plus", 0.6931471805599453), ("k3_plus", 0.1931471805599453),
                        ("abs_plus", 0.6931471805599453)]:
        logp = t64([math.log(0.5)]).requires_grad_()
        kl = KL_ESTIMATORS[plus](logp, ref)
        (grad,) = torch.autograd.grad(kl.sum(), logp)
        assert kl.item() == pytest.approx(value, rel=1e-14), plus
        assert grad.item() == pytest.approx(0.6931471805599453, rel=1e-14), plus


def test_a_straight_through_clamp_bounds_the_value_not_the_k2_gradient():
    # d = -15: k3 = e^-15 - 1 + 15 = 14.0000003 -> clamp 10; k2's gradient logp - ref = 15.
    logp = t64([0.0]).requires_grad_()
    kl = kl_estimate("k3_plus", logp, t64([-15.0]), clamp=10.0)
    (grad,) = torch.autograd.grad(kl.sum(), logp)
    assert kl.item() == 10.0 and grad.item() == 15.0


@pytest.mark.parametrize("name", sorted(KL_ESTIMATORS))
@FAST
@given(logp=logps)
def test_zero_when_policies_agree(name, logp):
    x = t64(logp)
    assert KL_ESTIMATORS[name](x, x.clone()).tolist() == [0.0] * len(logp)


@FAST
@given(logp=logps, data=st.data())
def test_k3_is_never_negative(logp, data):
    ref = data.draw(st.lists(st.floats(min_value=-30, max_value=0), min_size=len(logp), max_size=len(logp)))
    assert (k3(t64(logp), t64(ref)) >= 0).all()


@pytest.mark.parametrize("name, grad", [("k2", 0.0), ("k3", 0.0), ("k1", 1.0)])
@FAST
@given(logp=logps)
def test_gradient_at_equal_policies(name, grad, logp):
    # k2 and k3 have their minimum at pi = pi_ref: d k3 / d logp = 1 - e^d = 0 at d = 0.
    # k1 = log pi - log pi_ref is linear, with slope 1.
    x = t64(logp).requires_grad_()
    KL_ESTIMATORS[name](x, x.detach().clone()).sum().backward()
    assert x.grad.tolist() == [grad] * len(logp)


@FAST
@given(
    p=st.lists(st.floats(min_value=0.01, max_value=1), min_size=2, max_size=6),
    data=st.data(),
)
def test_k1_and_k3_are_unbiased(p, data):
    # E_{y ~ pi}[k(y)] = sum_y pi(y) k(y) must equal KL(pi || pi_ref) = sum_y pi log(pi / pi_ref).
    q = data.draw(st.lists(st.floats(min_value=0.01, max_value=1), min_size=len(p), max_size=len(p)))
    pi, ref = t64(p) / sum(p), t64(q) / sum(q)
    kl = (pi * (pi.log() - ref.log())).sum()
    for estimator in (k1, k3):
        torch.testing.assert_close((pi * estimator(pi.log(), ref.log())).sum(), kl, rtol=1e-9, atol=1e-12)


def test_kl_estimate_clamp_hand_computed():
    # d = log pi_ref - log pi = 5: k3 = e^5 - 1 - 5 = 142.4131591025766, clamped to 10;
    # k1 = -5, clamped to -2 by a bound of 2.
    logp, ref = t64([0.0]), t64([5.0])
    assert kl_estimate("k3", logp, ref).item() == pytest.approx(142.4131591025766, rel=1e-12)
    assert kl_estimate("k3", logp, ref, clamp=10.0).item() == 10.0
    assert kl_estimate("k1", logp, ref, clamp=2.0).item() == -2.0


def test_kl_reward_penalty_hand_computed():
    # k1 in the reward: coef * (log pi_old - log pi_ref) = 0.1 * (log 0.5 - log 0.25) = 0.1 log 2
    # = 0.06931471805599453 on unmasked tokens, 0 on the masked one, without gradient.
    old = t64([[math.log(0.5), math.log(0.5), -3.0]]).requires_grad_()
    ref = t64([[math.log(0.25), math.log(0.25), 0.0]])
    got = kl_reward_penalty(old, ref, t64([[1, 1, 0]]), estimator="k1", coef=0.1)
    assert not got.requires_grad
    torch.testing.assert_close(got, t64([[0.06931471805599453, 0.06931471805599453, 0.0]]), rtol=1e-12, atol=0)


def test_clamped_k3_has_a_finite_zero_gradient_where_exp_would_overflow():
    # float32, as the trainer runs: d = log pi_ref - log pi = 95 > log(float32 max) ~ 88.7, so
    # e^d = inf. The clamp makes the value 10 and the true gradient 0 (the clamp is active);
    # unclamped in d first, autograd gave 0 * inf = NaN.
    logp = torch.tensor([-95.0, -1.0], requires_grad=True)
    ref = torch.tensor([0.0, -1.0])
    kl = kl_estimate("k3", logp, ref, clamp=10.0)
    kl.sum().backward()
    assert kl.tolist() == [10.0, 0.0]
    assert logp.grad.tolist() == [0.0, 0.0]


@FAST
@given(d=st.floats(min_value=-40, max_value=40), clamp=st.floats(min_value=0.5, max_value=20))
def test_clamp_in_d_first_keeps_value_and_gradient(d, clamp):
    # In float64 nothing overflows at |d| <= 40, so the plain clamp of the value is the
    # reference: limiting d to +-(clamp + 1) first must not change value or gradient.
    for name in set(KL_ESTIMATORS) - set(STRAIGHT_THROUGH):  # those clamp the value only (below)
        logp = t64([0.0]).requires_grad_()
        ours = kl_estimate(name, logp, t64([d]), clamp=clamp)
        (g_ours,) = torch.autograd.grad(ours.sum(), logp)
        logp2 = t64([0.0]).requires_grad_()
        plain = KL_ESTIMATORS[name](logp2, t64([d])).clamp(-clamp, clamp)
        (g_plain,) = torch.autograd.grad(plain.sum(), logp2)
        torch.testing.assert_close(ours, plain, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(g_ours, g_plain, rtol=1e-12, atol=1e-12)


def _expected_loss_gradient(estimator: str, theta: torch.Tensor, teacher_logp: torch.Tensor) -> torch.Tensor:
    """d/d theta of E_{y ~ pi}[KL_estimator(log pi(y), log pi_T(y))] with the samples fixed (the
    score-function-free gradient a KL term in the loss gives), computed exactly over the vocabulary."""
    logp = torch.log_softmax(theta, dim=0)
    loss = (logp.exp().detach() * KL_ESTIMATORS[estimator](logp, teacher_logp)).sum()
    (grad,) = torch.autograd.grad(loss, theta)
    return grad


@FAST
@given(seed=st.integers(0, 2**16))
def test_k2_in_the_loss_is_reverse_kl_distillation_k3_is_forward(seed):
    # On-policy distillation (model.teacher_path): with the teacher as the reference, k2 in the loss
    # has the gradient of KL(pi || pi_T) (reverse, mode-seeking), k3 that of KL(pi_T || pi) (forward).
    gen = torch.Generator().manual_seed(seed)
    theta = torch.randn(6, generator=gen, dtype=torch.float64).requires_grad_()
    teacher = torch.log_softmax(torch.randn(6, generator=gen, dtype=torch.float64), dim=0)
    logp = torch.log_softmax(theta, dim=0)
    (reverse,) = torch.autograd.grad((logp.exp() * (logp - teacher)).sum(), theta)
    logp = torch.log_softmax(theta, dim=0)
    (forward,) = torch.autograd.grad((teacher.exp() * (teacher - logp)).sum(), theta)
    torch.testing.assert_close(_expected_loss_gradient("k2", theta, teacher), reverse, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(_expected_loss_gradient("k3", theta, teacher), forward, rtol=1e-10, atol=1e-12)
