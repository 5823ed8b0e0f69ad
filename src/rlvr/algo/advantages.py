"""Advantage estimators for outcome rewards, as a chain of small steps.

A group is the G completions of one prompt. GRPO (Shao et al. 2024, arXiv:2402.03300, §4.1.2,
outcome supervision; the advantage that eq. 3 uses) sets, for completion i of group g,

    A_i = (r_i - mean_g(r)) / (std_g(r) + eps)

and gives every token of the completion that advantage. Dr. GRPO (Liu et al. 2025,
arXiv:2503.20783) drops the division; ScaleRL (arXiv:2510.13786) divides by the batch std.
RLOO (Ahmadian et al. 2024, arXiv:2402.14740, §2.3; Kool et al. 2019) uses the mean of the
*other* G - 1 completions as the baseline. REINFORCE++ (arXiv:2501.03262) has no baseline here
(`none`) and normalises token returns over the batch instead (`rlvr.algo.returns`).

Conventions (the same as TRL's and verl's GRPO): std is the unbiased sample std (n - 1).
A singleton group has no baseline but itself, so its advantage is 0 and it gets no gradient.
A zero-variance group gives 0, never NaN, because its centred rewards are exactly 0.
"""

from __future__ import annotations

from typing import Callable

import torch

from rlvr import names

Tensor = torch.Tensor


def group_sizes(group_ids: Tensor, n_groups: int) -> Tensor:
    """(B,) long → (n_groups,) float count of rows in each group."""
    return torch.bincount(group_ids, minlength=n_groups).to(torch.float64)


def group_mean(values: Tensor, group_ids: Tensor) -> Tensor:
    """(B,) → (B,): the mean of each row's group, broadcast back to the rows."""
    n_groups = int(group_ids.max()) + 1 if group_ids.numel() else 0
    sums = torch.zeros(n_groups, dtype=torch.float64).index_add_(0, group_ids, values.double())
    means = sums / group_sizes(group_ids, n_groups).clamp(min=1)
    return means[group_ids].to(values.dtype)


def group_std(values: Tensor, group_ids: Tensor) -> Tensor:
    """(B,) → (B,): the unbiased std of each row's group (0 for a singleton group)."""
    n_groups = int(group_ids.max()) + 1 if group_ids.numel() else 0
    centred = values.double() - group_mean(values, group_ids).double()
    sq = torch.zeros(n_groups, dtype=torch.float64).index_add_(0, group_ids, centred**2)
    dof = (group_sizes(group_ids, n_groups) - 1).clamp(min=1)
    return (sq / dof).sqrt()[group_ids].to(values.dtype)


def _safe_divide(adv: Tensor, denom: Tensor) -> Tensor:
    """adv / denom, with 0 where denom is 0 (then adv is 0 too: a zero-variance group, eps=0)."""
    return adv / torch.where(denom > 0, denom, torch.ones_like(denom))


def subtract_group_mean(rewards: Tensor, group_ids: Tensor) -> Tensor:
    """The group-mean baseline: r_i - mean_g(r). (B,) → (B,).

    A group of equal rewards gets exactly 0 (a float mean of equal values can be off by an ulp).
    """
    n_groups = int(group_ids.max()) + 1 if group_ids.numel() else 0
    spread = (torch.full((n_groups,), float("-inf"), dtype=rewards.dtype).scatter_reduce(0, group_ids, rewards, "amax")
              - torch.full((n_groups,), float("inf"), dtype=rewards.dtype).scatter_reduce(0, group_ids, rewards, "amin"))
    centred = rewards - group_mean(rewards, group_ids)
    return torch.where(spread[group_ids] == 0, torch.zeros_like(centred), centred)


def scale_by_group_std(adv: Tensor, rewards: Tensor, group_ids: Tensor, eps: float) -> Tensor:
    """GRPO: divide by the std of the rewards in the row's group, plus eps. (B,) → (B,)."""
    return _safe_divide(adv, group_std(rewards, group_ids) + eps)


def scale_by_batch_std(adv: Tensor, rewards: Tensor, group_ids: Tensor, eps: float) -> Tensor:
    """ScaleRL batch-level normalisation: divide by the std of the group-centred advantages over
    the batch (not of the raw rewards: that is `batch_std_raw`). (B,) → (B,)."""
    std = adv.std() if adv.numel() > 1 else adv.new_zeros(())
    return _safe_divide(adv, std + eps)


def scale_by_batch_std_raw(adv: Tensor, rewards: Tensor, group_ids: Tensor, eps: float) -> Tensor:
    """TRL's `scale_rewards = "batch"`: divide by the std of the *raw* rewards over the batch.

    Differs from `batch_std` (ScaleRL) whenever group means differ: the raw std also counts
    the spread between prompts, so easy and hard prompts together shrink every advantage.
    (B,) → (B,).
    """
    std = rewards.std() if rewards.numel() > 1 else rewards.new_zeros(())
    return _safe_divide(adv, std + eps)


def no_scale(adv: Tensor, rewards: Tensor, group_ids: Tensor, eps: float) -> Tensor:
    """Dr. GRPO: keep the centred reward as it is. (B,) → (B,)."""
    return adv


def leave_one_out(rewards: Tensor, group_ids: Tensor) -> Tensor:
    """RLOO: A_i = r_i - 1/(G-1) sum_{j != i} r_j = G/(G-1) (r_i - mean_g(r)). (B,) → (B,).

    The baseline of row i does not depend on r_i, so the estimator is unbiased. A singleton
    group has no other completion to compare with: its advantage is 0 (verl gives r_i).
    """
    n_groups = int(group_ids.max()) + 1 if group_ids.numel() else 0
    sizes = group_sizes(group_ids, n_groups)[group_ids]
    factor = torch.where(sizes > 1, sizes / (sizes - 1).clamp(min=1), torch.zeros_like(sizes))
    return subtract_group_mean(rewards, group_ids) * factor.to(rewards.dtype)


def no_baseline(rewards: Tensor, group_ids: Tensor) -> Tensor:
    """REINFORCE++ (arXiv:2501.03262): the reward as it is; the batch normalisation that
    follows subtracts the batch mean. (B,) → (B,)."""
    return rewards


BASELINES: dict[str, Callable[[Tensor, Tensor], Tensor]] = names.BASELINE.bind({
    "group_mean": subtract_group_mean,
    "rloo": leave_one_out,
    "none": no_baseline,
}, table="BASELINES")

SCALES: dict[str, Callable[[Tensor, Tensor, Tensor, float], Tensor]] = names.SCALE.bind({
    "group_std": scale_by_group_std,
    "batch_std": scale_by_batch_std,
    "batch_std_raw": scale_by_batch_std_raw,
    "none": no_scale,
}, table="SCALES")


def outcome_advantages(
    rewards: Tensor, group_ids: Tensor, *, baseline: str, scale: str, eps: float = 1e-4
) -> Tensor:
    """Baseline then scale: one advantage per completion. rewards (B,), group_ids (B,) → (B,)."""
    adv = BASELINES[baseline](rewards, group_ids)
    return SCALES[scale](adv, rewards, group_ids, eps)
