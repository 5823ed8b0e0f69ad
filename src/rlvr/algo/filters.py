"""Dynamic sampling: which prompt groups carry a learning signal (DAPO, arXiv:2503.14476 §3.2).

Under a group baseline, a group whose rewards are all equal (all right or all wrong) has
advantage 0 for every completion and contributes no gradient, only a smaller effective batch.
DAPO over-samples and keeps the groups with 0 < accuracy < 1 until the batch is full; ScaleRL
(arXiv:2510.13786) drops them from the loss ("zero-variance filtering"). The refill loop
(generate more, cap the extra rounds) belongs to the orchestrator; this is its pure part.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

Tensor = torch.Tensor

# Rewards closer than this count as equal. Rewards lie in [0, 1]; rounding gives differences of
# ~1e-16 in float64 (0.1 + 0.2 = 0.30000000000000004 vs 0.3) and up to ~1e-7 per float32 op
# (eps = 1.19e-7 at 1.0), so a few float32 operations stay well under 1e-6. A real difference
# d below it is no signal worth a gradient: under group_std scaling with adv_eps = 1e-4 its
# advantage is (d/2) / (d/2 + 1e-4) < 0.005 of a real one, and with adv_eps = 0 it would be
# rounding noise blown up to a full +-1 advantage.
ZERO_VARIANCE_ATOL = 1e-6


@dataclass(frozen=True)
class GroupFilter:
    """keep_rows (B,) bool, keep_groups (n_groups,) bool (indexed by group id; ids that do not
    occur are False), kept / dropped: 0-dim long tensors counting groups present in the batch."""

    keep_rows: Tensor
    keep_groups: Tensor
    kept: Tensor
    dropped: Tensor


def nonzero_variance_groups(rewards: Tensor, group_ids: Tensor, atol: float = ZERO_VARIANCE_ATOL) -> GroupFilter:
    """Keep the groups whose rewards are not all equal up to rounding: max - min > `atol`
    (`ZERO_VARIANCE_ATOL` = 1e-6; 0 compares exactly).

    rewards (B,), group_ids (B,) long → `GroupFilter`. A singleton group has zero variance
    and is dropped, like any group whose advantage would be 0. Compared in float64: pass
    float64 rewards to keep differences below float32's resolution.
    """
    n_groups = int(group_ids.max()) + 1 if group_ids.numel() else 0
    high = torch.full((n_groups,), float("-inf"), dtype=torch.float64).scatter_reduce(
        0, group_ids, rewards.double(), "amax")
    low = torch.full((n_groups,), float("inf"), dtype=torch.float64).scatter_reduce(
        0, group_ids, rewards.double(), "amin")
    present = torch.bincount(group_ids, minlength=n_groups) > 0
    keep_groups = present & (high - low > atol)
    return GroupFilter(keep_rows=keep_groups[group_ids], keep_groups=keep_groups,
                       kept=keep_groups.sum(), dropped=(present & ~keep_groups).sum())
