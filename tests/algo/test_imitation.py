"""VAPO's positive-example LM loss (arXiv:2504.05118, eqs. 9-10): hand-computed values, the
gradient it adds, and exact splitting over micro-batches."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.algo import Objective
from rlvr.algo.imitation import positive_lm_loss, positive_lm_weights
from rlvr.types import Batch

MASK = torch.tensor([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
LOGP = torch.tensor([[-1.0, -2.0, -3.0], [-0.5, -9.0, -9.0], [-4.0, -1.0, -9.0], [-9.0, -9.0, -9.0]])


def test_weights_and_loss_by_hand():
    # rows 0 and 2 are correct: 3 + 2 = 5 positive tokens
    w = positive_lm_weights(MASK, torch.tensor([1.0, 0.0, 1.0, 1.0]))
    assert w.sum().item() == pytest.approx(1.0)
    assert w[1].abs().sum() == 0 and w[3].abs().sum() == 0
    assert positive_lm_loss(LOGP, w).item() == pytest.approx((1 + 2 + 3 + 4 + 1) / 5)


def test_no_positive_sample_gives_zero_not_nan():
    w = positive_lm_weights(MASK, torch.tensor([0.0, 0.5, 0.0, 0.0]))
    assert torch.equal(w, torch.zeros_like(MASK))
    assert positive_lm_loss(LOGP, w).item() == 0.0


def test_partial_credit_is_not_positive_unless_threshold_lowered():
    rewards = torch.tensor([0.9, 0.0, 0.0, 0.0])
    assert positive_lm_weights(MASK, rewards).sum() == 0
    assert positive_lm_weights(MASK, rewards, threshold=0.5).sum().item() == pytest.approx(1.0)


def _batch(mask, lm_weight):
    b, t = mask.shape
    return Batch(input_ids=torch.zeros(b, 2 + t, dtype=torch.long), attention_mask=torch.ones(b, 2 + t, dtype=torch.long),
                 completion_mask=mask, old_logp=LOGP.clone(), adv=torch.zeros(b, t),
                 group_ids=torch.tensor([0, 0, 1, 1]), lm_weight=lm_weight)


def test_objective_adds_mu_times_nll_and_its_gradient():
    rewards = torch.tensor([1.0, 0.0, 1.0, 0.0])
    batch = _batch(MASK, positive_lm_weights(MASK, rewards))
    mu = 0.1
    with_lm, without = Objective(positive_lm_coef=mu), Objective()
    logp = LOGP.clone().requires_grad_(True)
    loss, metrics = with_lm.loss(logp, batch, with_lm.weights(MASK, batch.group_ids))
    loss.backward()
    base, _ = without.loss(LOGP, batch, without.weights(MASK, batch.group_ids))
    assert (loss - base).item() == pytest.approx(mu * 11 / 5)
    assert metrics["loss/positive_lm"].item() == pytest.approx(11 / 5)
    # zero advantages: the only gradient is -mu / 5 on each positive token
    expected = -mu / 5 * MASK * rewards[:, None]
    torch.testing.assert_close(logp.grad, expected)


def test_objective_without_weights_in_the_batch_refuses():
    with pytest.raises(ValueError, match="lm_weight"):
        Objective(positive_lm_coef=0.1).loss(LOGP, _batch(MASK, None), torch.ones_like(MASK))


def test_negative_coefficient_is_refused_at_load():
    from rlvr.config import load_config
    from rlvr.errors import ConfigError

    with pytest.raises(ConfigError, match="algo.positive_lm_coef: Input should be greater than or equal to 0"):
        load_config(None, ["algo.positive_lm_coef=-0.1"])


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=2, max_size=7), st.data())
def test_micro_batches_sum_to_the_full_batch_term(lengths, data):
    t = max(max(lengths), 1)
    mask = (torch.arange(t) < torch.tensor(lengths)[:, None]).double()
    rewards = torch.tensor(data.draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=len(lengths),
                                              max_size=len(lengths))), dtype=torch.float64)
    logp = -torch.rand(len(lengths), t, dtype=torch.float64)
    w = positive_lm_weights(mask, rewards)
    full = positive_lm_loss(logp, w)
    split = data.draw(st.integers(1, len(lengths) - 1))
    parts = positive_lm_loss(logp[:split], w[:split]) + positive_lm_loss(logp[split:], w[split:])
    assert parts.item() == pytest.approx(full.item(), abs=1e-12)
    # the full term is the mean NLL over the positive tokens
    pos = mask * (rewards[:, None] >= 1)
    expected = -(logp * pos).sum() / pos.sum() if pos.sum() > 0 else torch.tensor(0.0)
    assert full.item() == pytest.approx(expected.item(), abs=1e-12)
