"""Masks for samples that have drifted too far off-policy.

DeepSeek-V3.2 (DeepSeek-AI 2025, technical report, its off-policy
sequence masking) leaves a sampled sequence out of the loss when it is both a negative example
and far from the current policy:

    M_i = 0  if  A_i < 0  and  (1/|y_i|) sum_t log(pi_old(y_t) / pi(y_t)) > delta,   else 1

The mean log-ratio is the k1 estimate of KL(pi_old || pi) along the sequence, without gradient.
A negative sequence the policy has already moved away from teaches mostly noise (its
gradient pushes down tokens the policy no longer samples), and off-policy negatives are what
destabilise training with stale or mismatched rollouts; positive sequences are always kept.
TRL's `off_policy_mask_threshold` is the same rule.
"""

from __future__ import annotations

import torch

Tensor = torch.Tensor


def off_policy_sequence_mask(logp: Tensor, old_logp: Tensor, adv: Tensor, mask: Tensor, delta: float) -> Tensor:
    """(B, T) log-probs of the current and behaviour policies, advantages and mask → (B, 1)
    keep mask (1.0 keep, 0.0 drop), no gradient."""
    with torch.no_grad():
        lengths = mask.sum(dim=1, keepdim=True).clamp(min=1)
        mean_kl = ((old_logp - logp) * mask).sum(dim=1, keepdim=True) / lengths
        negative = (adv * mask).sum(dim=1, keepdim=True) < 0
        return (~(negative & (mean_kl > delta))).to(mask.dtype)
