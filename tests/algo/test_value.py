"""Tests for rlvr.algo.value: PPO's clipped value loss and explained variance.

    loss_t = 0.5 max((V - R)^2, (clip(V, V_old - eps, V_old + eps) - R)^2)
    EV     = 1 - Var(R - V) / Var(R)
"""

from __future__ import annotations

import math

import pytest
import torch

from rlvr.algo.value import VALUE_LOSSES, clipped_value_loss, explained_variance, value_mse


def t64(x):
    return torch.tensor(x, dtype=torch.float64)


def test_clipped_value_loss_hand_computed():
    # eps = 0.2, R = 1 everywhere.
    # Token 0: V_old 0, V 0.5 -> clip 0.2: (0.5-1)^2 = 0.25 vs (0.2-1)^2 = 0.64 -> 0.32, clipped, no gradient.
    # Token 1: V_old 0, V 0.1 -> inside: (0.1-1)^2 = 0.81 both -> 0.405, gradient V - R = -0.9.
    # Token 2: V_old 2, V 1.5 -> clip 1.8: (0.5)^2 = 0.25 vs (0.8)^2 = 0.64 -> 0.32, clipped.
    # Token 3: V_old 2, V 1.9 -> clip 1.9 (inside): 0.81 -> 0.405, gradient 0.9.
    values = t64([0.5, 0.1, 1.5, 1.9]).requires_grad_()
    loss, ind = clipped_value_loss(values, t64([0, 0, 2, 2]), torch.ones(4, dtype=torch.float64), clip_eps=0.2)
    torch.testing.assert_close(loss.detach(), t64([0.32, 0.405, 0.32, 0.405]), rtol=1e-12, atol=1e-15)
    assert ind["value_clip"].tolist() == [1.0, 0.0, 1.0, 0.0]
    loss.sum().backward()
    torch.testing.assert_close(values.grad, t64([0.0, -0.9, 0.0, 0.9]), rtol=1e-12, atol=1e-15)


def test_clipped_term_only_ever_adds_loss():
    # Moving toward the target past the clip keeps the unclipped gradient when it is larger.
    # V_old 0, V -0.5, R = -1: clip -0.2 -> (-0.2+1)^2 = 0.64 > (-0.5+1)^2 = 0.25 -> 0.32, clipped.
    loss, ind = clipped_value_loss(t64([-0.5]), t64([0.0]), t64([-1.0]), clip_eps=0.2)
    assert loss.item() == pytest.approx(0.32) and ind["value_clip"].item() == 1.0


def test_mse_is_unclipped():
    loss, ind = value_mse(t64([0.5]), t64([0.0]), t64([1.0]))
    assert loss.item() == 0.125 and ind == {}
    assert set(VALUE_LOSSES) == {"mse", "clipped"}


def test_explained_variance_hand_computed():
    # R = [1, 2, 3, pad], V = [1, 2, 2]: residual [0, 0, 1], population var 2/9; Var(R) = 2/3.
    # EV = 1 - (2/9) / (2/3) = 2/3.
    mask = t64([[1, 1, 1, 0]])
    ev = explained_variance(t64([[1, 2, 2, 50]]), t64([[1, 2, 3, -50]]), mask)
    assert ev.item() == pytest.approx(2 / 3, rel=1e-12)
    assert explained_variance(t64([[1, 2, 3, 0]]), t64([[1, 2, 3, 0]]), mask).item() == 1.0


def test_explained_variance_of_constant_returns_is_nan():
    ev = explained_variance(t64([[0.3, 0.1]]), t64([[1.0, 1.0]]), torch.ones(1, 2))
    assert math.isnan(ev.item())
