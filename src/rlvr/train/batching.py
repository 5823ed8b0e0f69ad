"""Rollouts and advantages → the padded tensors of one training batch."""

from __future__ import annotations

import torch

from rlvr.types import Batch, Rollout


def collate(rollouts: list[Rollout], adv: torch.Tensor, group_ids: torch.Tensor, pad_id: int) -> Batch:
    """Left-pad prompts to P, right-pad completions to T, and give each completion token its
    row's advantage. rollouts: B, adv (B,), group_ids (B,) → `Batch`.

    Every sampled token enters the loss, the EOS included: when EOS doubles as padding the
    mask (not the token id) tells the first EOS, which was sampled, from the padding after it.
    A multi-turn episode's completion also holds the environment's tokens: its `loss_mask`
    keeps them out of the loss (rlvr.envs.trajectory). `support` (sampling-mask replay) is
    filled when some rollout recorded one, 0 elsewhere (the full vocabulary).
    """
    p = max(len(r.prompt_ids) for r in rollouts)
    t = max(len(r.completion_ids) for r in rollouts)
    b = len(rollouts)
    input_ids = torch.full((b, p + t), pad_id, dtype=torch.long)
    attention = torch.zeros((b, p + t), dtype=torch.long)
    mask = torch.zeros((b, t))
    old_logp = torch.zeros((b, t))
    for i, r in enumerate(rollouts):
        lp, lc = len(r.prompt_ids), len(r.completion_ids)
        input_ids[i, p - lp:p] = torch.tensor(r.prompt_ids)
        input_ids[i, p:p + lc] = torch.tensor(r.completion_ids)
        attention[i, p - lp:p + lc] = 1
        mask[i, :lc] = torch.tensor(r.loss_mask, dtype=torch.float) if r.loss_mask else 1.0
        old_logp[i, :lc] = torch.tensor(r.logprobs)
    return Batch(input_ids=input_ids, attention_mask=attention, completion_mask=mask,
                 old_logp=old_logp, adv=adv.float()[:, None] * mask, group_ids=group_ids,
                 support=collate_support(rollouts, t))


def collate_support(rollouts: list[Rollout], t: int) -> torch.Tensor | None:
    """(B, T) long kept-set sizes of the rollouts that recorded them (0 elsewhere), or None
    when none did."""
    if not any(r.support for r in rollouts):
        return None
    support = torch.zeros((len(rollouts), t), dtype=torch.long)
    for i, r in enumerate(rollouts):
        if r.support and len(r.support) != len(r.completion_ids):
            raise ValueError(f"rollout {i}: {len(r.support)} kept-set sizes (Rollout.support) for "
                             f"{len(r.completion_ids)} completion tokens")
        support[i, :len(r.support)] = torch.tensor(r.support, dtype=torch.long)
    return support
