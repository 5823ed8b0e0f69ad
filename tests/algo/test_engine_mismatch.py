"""Truncated and masked importance sampling for the engine/trainer mismatch."""

from __future__ import annotations

import math

import torch

from rlvr.algo import Objective
from rlvr.algo.engine_mismatch import mismatch_kl, sequence_mis, sequence_tis, token_mis, token_tis
from rlvr.types import Batch

MASK = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])


def test_token_tis_hand_case():
    # ratios pi/mu: e^0.5 = 1.6487, e^-0.5 = 0.6065, (masked), e^2 = 7.389 -> capped at 2
    trainer = torch.tensor([[-1.0, -2.0, -9.0], [0.0, 0.0, 0.0]])
    engine = torch.tensor([[-1.5, -1.5, 0.0], [-2.0, 0.0, 0.0]])
    w = token_tis(trainer, engine, MASK, cap=2.0)
    torch.testing.assert_close(w, torch.tensor([[math.exp(0.5), math.exp(-0.5), 1.0], [2.0, 1.0, 1.0]]))


def test_sequence_tis_is_the_capped_product():
    # row 0: exp(0.5 - 0.5) = 1; row 1: exp(2) capped at 2; masked tokens weigh 1
    trainer = torch.tensor([[-1.0, -2.0, -9.0], [0.0, 0.0, 0.0]])
    engine = torch.tensor([[-1.5, -1.5, 0.0], [-2.0, 0.0, 0.0]])
    w = sequence_tis(trainer, engine, MASK, cap=2.0)
    torch.testing.assert_close(w, torch.tensor([[1.0, 1.0, 1.0], [2.0, 1.0, 1.0]]))
    long = sequence_tis(torch.zeros(1, 3), torch.full((1, 3), -400.0), torch.ones(1, 3), cap=3.0)
    assert torch.isfinite(long).all() and long.max().item() == 3.0


def test_token_mis_drops_instead_of_truncating():
    # ratios pi/mu: e^0.5 = 1.6487 inside [0.5, 2] -> kept as is; e^-0.5 = 0.6065 inside -> kept;
    # e^2 = 7.389 above 2 -> 0 (TIS would give 2); masked tokens weigh 1.
    trainer = torch.tensor([[-1.0, -2.0, -9.0], [0.0, 0.0, 0.0]])
    engine = torch.tensor([[-1.5, -1.5, 0.0], [-2.0, 0.0, 0.0]])
    w = token_mis(trainer, engine, MASK, cap=2.0, low=0.5)
    torch.testing.assert_close(w, torch.tensor([[math.exp(0.5), math.exp(-0.5), 1.0], [0.0, 1.0, 1.0]]))
    # A ratio below `low` is dropped too (two-sided): e^-0.5 = 0.61 < 0.7.
    assert token_mis(trainer, engine, MASK, cap=2.0, low=0.7)[0, 1].item() == 0.0


def test_sequence_mis_drops_whole_sequences():
    # row 0: product exp(0.5 - 0.5) = 1 -> kept, weight 1; row 1: exp(2) > 2 -> every token 0;
    # a 400-nat gap stays finite (decided in log space).
    trainer = torch.tensor([[-1.0, -2.0, -9.0], [0.0, 0.0, 0.0]])
    engine = torch.tensor([[-1.5, -1.5, 0.0], [-2.0, -1.0, 0.0]])
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
    w = sequence_mis(trainer, engine, mask, cap=2.0, low=0.5)
    torch.testing.assert_close(w, torch.tensor([[1.0, 1.0, 1.0], [0.0, 0.0, 1.0]]))
    long = sequence_mis(torch.zeros(1, 3), torch.full((1, 3), -400.0), torch.ones(1, 3), cap=3.0, low=0.5)
    assert long.tolist() == [[0.0, 0.0, 0.0]]


def test_mismatch_kl_is_zero_when_equal_and_positive_otherwise():
    x = torch.randn(2, 3)
    assert mismatch_kl(x, x, MASK).item() == 0.0
    assert mismatch_kl(x, x - 0.3 * MASK, MASK).item() > 0


def test_the_weight_scales_the_policy_term():
    b, t = 2, 3
    logp = torch.full((b, t), -1.0, requires_grad=True)
    batch = Batch(input_ids=torch.zeros(b, 4 + t, dtype=torch.long), attention_mask=torch.ones(b, 4 + t, dtype=torch.long),
                  completion_mask=MASK, old_logp=torch.full((b, t), -1.0), adv=torch.ones(b, t) * MASK,
                  group_ids=torch.tensor([0, 0]))
    obj = Objective(aggregation="token_mean")
    w = obj.weights(MASK, batch.group_ids)
    plain, _ = obj.loss(logp, batch, w)
    doubled, _ = obj.loss(logp, Batch(**{**batch.__dict__, "is_weight": torch.full((b, t), 2.0)}), w)
    assert math.isclose(doubled.item(), 2 * plain.item())
