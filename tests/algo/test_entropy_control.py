"""Tests for rlvr.algo.entropy_control and the Objective's Clip-Cov / KL-Cov (Cui et al. 2025,
arXiv:2505.22617): cov_t = (A_t - mean A)(log pi_t - mean log pi) over the valid tokens."""

from __future__ import annotations

import pytest
import torch

from rlvr.algo import Objective
from rlvr.algo.entropy_control import clip_cov_select, kl_cov_select, token_covariance
from rlvr.types import Batch

MASK = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]], dtype=torch.float64)
ADV = torch.tensor([[1.0, 1.0, 0.0], [-1.0, -1.0, -1.0]], dtype=torch.float64)
LOGP = torch.tensor([[-0.5, -3.0, -9.0], [-0.5, -2.0, -1.0]], dtype=torch.float64)


def test_covariance_hand_computed():
    # 5 valid tokens: mean A = (1 + 1 - 3) / 5 = -0.2; mean log pi = (-0.5 - 3 - 0.5 - 2 - 1) / 5 = -1.4.
    # Row 0: (1.2)(0.9) = 1.08, (1.2)(-1.6) = -1.92; row 1: (-0.8)(0.9) = -0.72,
    # (-0.8)(-0.6) = 0.48, (-0.8)(0.4) = -0.32; padding 0.
    expected = torch.tensor([[1.08, -1.92, 0.0], [-0.72, 0.48, -0.32]], dtype=torch.float64)
    torch.testing.assert_close(token_covariance(ADV, LOGP, MASK), expected, rtol=1e-12, atol=1e-12)


def test_kl_cov_selects_the_largest_covariances():
    assert kl_cov_select(ADV, LOGP, MASK, ratio=0.2).tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    # ratio 0.4 of 5 tokens = 2: 1.08 and 0.48; never a padding token even at ratio 1.
    assert kl_cov_select(ADV, LOGP, MASK, ratio=0.4).tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    assert (kl_cov_select(ADV, LOGP, MASK, ratio=1.0) == MASK).all()


def test_clip_cov_picks_only_inside_the_band():
    # Band (0.4, 1.1) holds 1.08 and 0.48; at ratio 0.2 one of them is picked at random.
    for seed in range(10):
        select = clip_cov_select(ADV, LOGP, MASK, ratio=0.2, low=0.4, high=1.1,
                                 generator=torch.Generator().manual_seed(seed))
        assert select.sum() == 1 and (select * torch.tensor([[1.0, 0, 0], [0, 1.0, 0]])).sum() == 1
    assert not clip_cov_select(ADV, LOGP, MASK, ratio=1.0, low=5.0, high=9.0).any()


def batch_with(select: torch.Tensor) -> Batch:
    return Batch(input_ids=torch.zeros(2, 4, dtype=torch.long), attention_mask=torch.ones(2, 4, dtype=torch.long),
                 completion_mask=MASK, old_logp=LOGP, adv=ADV, group_ids=torch.tensor([0, 0]), cov_select=select)


@pytest.mark.parametrize("mode", ["clip_cov", "kl_cov"])
def test_objective_acts_only_on_selected_tokens(mode):
    select = torch.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]], dtype=torch.float64)
    obj, plain = Objective(entropy_control=mode, kl_cov_coef=0.5), Objective()
    logp = (LOGP + 0.1 * MASK).requires_grad_()
    logp_plain = (LOGP + 0.1 * MASK).requires_grad_()
    weights = obj.weights(MASK, torch.tensor([0, 0]))
    loss, metrics = obj.loss(logp, batch_with(select), weights)
    loss_plain, _ = plain.loss(logp_plain, batch_with(select), weights)
    loss.backward(), loss_plain.backward()
    diff = logp.grad - logp_plain.grad
    assert diff[0, 0] != 0 and not diff.flatten()[1:].any()
    if mode == "clip_cov":  # the selected token's policy gradient is gone
        assert logp.grad[0, 0] == 0
    else:  # + 0.5 |0.1| on token (0, 0), weighted 1/2 (row mean) / 2 (rows)
        assert (loss - loss_plain).item() == pytest.approx(0.5 * 0.1 / 2 / 2, rel=1e-9)
    assert metrics["policy/cov_selected_frac"].item() == pytest.approx(0.25)


def test_missing_selection_is_an_error():
    with pytest.raises(ValueError, match="needs cov_select"):
        Objective(entropy_control="kl_cov").loss(LOGP.clone(), batch_with(None), MASK)


def test_kl_cov_ties_take_the_earliest_tokens():
    # 20 tokens: token 0 has A = 1, log pi = 0, the rest A = 0, log pi = -1. mean A = 0.05,
    # mean log pi = -0.95: cov_0 = 0.95 * 0.95, every other cov = (-0.05)(-0.05), all tied.
    # k = 3 takes token 0 and the two earliest of the tie (flat 1, 2), whatever the size;
    # torch.topk, on this size, takes others (13, 14 on this CPU build).
    adv = torch.zeros(4, 5, dtype=torch.float64)
    logp = -torch.ones(4, 5, dtype=torch.float64)
    adv[0, 0], logp[0, 0] = 1.0, 0.0
    select = kl_cov_select(adv, logp, torch.ones(4, 5, dtype=torch.float64), ratio=0.15)
    assert select.flatten().nonzero().flatten().tolist() == [0, 1, 2]
