"""collate: the padded tensors, cell by cell, against a per-row reference (the element-wise
assignments collate made before it built its rows as lists), and bad rollouts refused."""

from __future__ import annotations

import random

import pytest
import torch

from rlvr.train.batching import collate
from rlvr.types import Rollout


def reference(rollouts, adv, pad_id):
    """Per row and field, the way collate wrote its tensors before 2026-12-02."""
    p = max(len(r.prompt_ids) for r in rollouts)
    t = max(len(r.completion_ids) for r in rollouts)
    b = len(rollouts)
    ids, att = torch.full((b, p + t), pad_id, dtype=torch.long), torch.zeros((b, p + t), dtype=torch.long)
    mask, logp = torch.zeros((b, t)), torch.zeros((b, t))
    for i, r in enumerate(rollouts):
        lp, lc = len(r.prompt_ids), len(r.completion_ids)
        ids[i, p - lp:p] = torch.tensor(r.prompt_ids)
        ids[i, p:p + lc] = torch.tensor(r.completion_ids, dtype=torch.long)
        att[i, p - lp:p + lc] = 1
        mask[i, :lc] = torch.tensor(r.loss_mask, dtype=torch.float) if r.loss_mask else 1.0
        logp[i, :lc] = torch.tensor(r.logprobs)
    return ids, att, mask, logp, adv.float()[:, None] * mask


def rollout(rng: random.Random, multi_turn: bool) -> Rollout:
    lp, lc = rng.randint(1, 9), rng.randint(0, 7)
    return Rollout(prompt_ids=tuple(rng.randrange(3, 100) for _ in range(lp)),
                   completion_ids=tuple(rng.randrange(0, 100) for _ in range(lc)),
                   logprobs=tuple(-rng.random() * 5 for _ in range(lc)), text="", finish_reason="stop",
                   loss_mask=tuple(rng.randint(0, 1) for _ in range(lc)) if multi_turn else ())


@pytest.mark.parametrize("seed", range(5))
def test_collate_equals_the_per_row_reference_bit_for_bit(seed):
    rng = random.Random(seed)
    rollouts = [rollout(rng, multi_turn=seed % 2 == 1 and i % 3 != 0) for i in range(rng.randint(1, 12))]
    rollouts.append(rollout(rng, False))  # a single-turn row beside multi-turn ones
    adv = torch.randn(len(rollouts), generator=torch.Generator().manual_seed(seed))
    batch = collate(rollouts, adv, torch.arange(len(rollouts)), pad_id=1)
    ids, att, mask, logp, token_adv = reference(rollouts, adv, pad_id=1)
    for got, want in ((batch.input_ids, ids), (batch.attention_mask, att), (batch.completion_mask, mask),
                      (batch.old_logp, logp), (batch.adv, token_adv)):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert torch.equal(got, want)


def test_collate_refuses_a_rollout_whose_logprobs_do_not_match_its_tokens():
    bad = Rollout(prompt_ids=(5, 6), completion_ids=(7, 8, 9), logprobs=(-1.0, -2.0), text="", finish_reason="stop")
    with pytest.raises(ValueError, match=r"rollout 0: 2 log-probs .* for 3 completion tokens"):
        collate([bad], torch.zeros(1), torch.zeros(1, dtype=torch.long), pad_id=0)


def test_collate_refuses_a_loss_mask_of_another_length():
    bad = Rollout(prompt_ids=(5,), completion_ids=(7, 8), logprobs=(-1.0, -2.0), text="", finish_reason="stop",
                  loss_mask=(1,))
    with pytest.raises(ValueError, match=r"rollout 0: 1 loss-mask entries"):
        collate([bad], torch.zeros(1), torch.zeros(1, dtype=torch.long), pad_id=0)
