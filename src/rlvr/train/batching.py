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
    # Rows built as Python lists and converted once: a tensor per row and field cost ~0.1 ms of
    # dispatch each, 15 ms a step at the demo's 128 rows (benchmarks/README.md, step overhead).
    ids, attention, mask, old_logp = [], [], [], []
    for i, r in enumerate(rollouts):
        lp, lc = len(r.prompt_ids), len(r.completion_ids)
        _check_lengths(i, r)
        ids.append([pad_id] * (p - lp) + list(r.prompt_ids) + list(r.completion_ids) + [pad_id] * (t - lc))
        attention.append([0] * (p - lp) + [1] * (lp + lc) + [0] * (t - lc))
        mask.append([float(m) for m in r.loss_mask] + [0.0] * (t - lc) if r.loss_mask else [1.0] * lc + [0.0] * (t - lc))
        old_logp.append(list(r.logprobs) + [0.0] * (t - lc))
    input_ids, attention = torch.tensor(ids, dtype=torch.long), torch.tensor(attention, dtype=torch.long)
    mask, old_logp = torch.tensor(mask), torch.tensor(old_logp)  # the default dtype, as torch.zeros gave
    return Batch(input_ids=input_ids, attention_mask=attention, completion_mask=mask,
                 old_logp=old_logp, adv=adv.float()[:, None] * mask, group_ids=group_ids,
                 support=collate_support(rollouts, t))


def _check_lengths(i: int, r: Rollout) -> None:
    lc = len(r.completion_ids)
    if len(r.logprobs) != lc:
        raise ValueError(f"rollout {i}: {len(r.logprobs)} log-probs (Rollout.logprobs) for {lc} completion tokens")
    if r.loss_mask and len(r.loss_mask) != lc:
        raise ValueError(f"rollout {i}: {len(r.loss_mask)} loss-mask entries (Rollout.loss_mask) for "
                         f"{lc} completion tokens")


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
