"""Advantage estimators for outcome rewards, as a chain of small steps.

A group is the G completions of one prompt. GRPO (Shao et al. 2024, arXiv:2402.03300, §4.1.2,
outcome supervision; the advantage that eq. 3 uses) sets, for completion i of group g,

    A_i = (r_i - mean_g(r)) / (std_g(r) + eps)

and gives every token of the completion that advantage. Dr. GRPO (Liu et al. 2025,
arXiv:2503.20783) drops the division; ScaleRL (arXiv:2510.13786) divides by the batch std.
RLOO (Ahmadian et al. 2024, arXiv:2402.14740, §2.3; Kool et al. 2019) uses the mean of the
*other* G - 1 completions as the baseline. REINFORCE++ (arXiv:2501.03262) has no baseline here
(`none`) and normalises token returns over the batch instead (`rlvr.algo.returns`).
OPO (arXiv:2505.23585) weights the group mean by completion length; the pass@k baseline
(arXiv:2503.19595) credits only a group's best completion; GPG (arXiv:2504.02546) rescales the
batch for the rows that carry no signal. Each is written out at its function.

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


def _n_groups(group_ids: Tensor) -> int:
    return int(group_ids.max()) + 1 if group_ids.numel() else 0


def zero_spread(rewards: Tensor, group_ids: Tensor) -> Tensor:
    """(B,) bool: the row's group has all rewards equal (no comparison signal in it)."""
    n_groups = _n_groups(group_ids)
    spread = _group_reduce(rewards, group_ids, n_groups, "amax") - _group_reduce(rewards, group_ids, n_groups, "amin")
    return spread[group_ids] == 0


def subtract_group_mean(rewards: Tensor, group_ids: Tensor, lengths: Tensor | None = None) -> Tensor:
    """The group-mean baseline: r_i - mean_g(r). (B,) → (B,).

    A group of equal rewards gets exactly 0 (a float mean of equal values can be off by an ulp).
    """
    centred = rewards - group_mean(rewards, group_ids)
    return torch.where(zero_spread(rewards, group_ids), torch.zeros_like(centred), centred)


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


def leave_one_out(rewards: Tensor, group_ids: Tensor, lengths: Tensor | None = None) -> Tensor:
    """RLOO: A_i = r_i - 1/(G-1) sum_{j != i} r_j = G/(G-1) (r_i - mean_g(r)). (B,) → (B,).

    The baseline of row i does not depend on r_i, so the estimator is unbiased. A singleton
    group has no other completion to compare with: its advantage is 0 (verl gives r_i).
    """
    n_groups = int(group_ids.max()) + 1 if group_ids.numel() else 0
    sizes = group_sizes(group_ids, n_groups)[group_ids]
    factor = torch.where(sizes > 1, sizes / (sizes - 1).clamp(min=1), torch.zeros_like(sizes))
    return subtract_group_mean(rewards, group_ids) * factor.to(rewards.dtype)


def no_baseline(rewards: Tensor, group_ids: Tensor, lengths: Tensor | None = None) -> Tensor:
    """REINFORCE++ (arXiv:2501.03262): the reward as it is; the batch normalisation that
    follows subtracts the batch mean. (B,) → (B,)."""
    return rewards


def length_weighted(rewards: Tensor, group_ids: Tensor, lengths: Tensor | None = None) -> Tensor:
    """OPO (Hao et al. 2025, arXiv:2505.23585, the optimal baseline for a sequence-level
    policy gradient): b_g = sum_j |y_j| r_j / sum_j |y_j| over the group, A_i = r_i - b_g.
    `lengths` (B,) are the completions' token counts. A singleton group has nothing to compare
    with and gets 0 (verl gives it r_i, a baseline of 0), a group of equal rewards exactly 0.
    Equal lengths give the group mean (GRPO's baseline). (B,) → (B,)."""
    if lengths is None:
        raise ValueError("algo.baseline = 'length_weighted' (OPO) needs the completions' lengths")
    weighted = group_mean(rewards.double() * lengths.double(), group_ids) / group_mean(lengths.double(), group_ids).clamp(min=1e-30)
    centred = (rewards.double() - weighted).to(rewards.dtype)
    single = group_sizes(group_ids, _n_groups(group_ids))[group_ids] < 2
    return torch.where(zero_spread(rewards, group_ids) | single, torch.zeros_like(centred), centred)


def best_of_group(rewards: Tensor, group_ids: Tensor, lengths: Tensor | None = None) -> Tensor:
    """Pass@k with k = the group size (Tang et al. 2025, arXiv:2503.19595; verl's grpo_passk):
    the objective is the group's best reward, and its leave-one-out gradient credits only the
    best completion, A = r_max - r_second (the best of the others); every other row gets 0.
    A tie for best gives r_max - r_second = 0: the group is silent. A singleton group has no
    other completion: 0 (verl refuses it). (B,) → (B,)."""
    n_groups, rows = _n_groups(group_ids), torch.arange(len(rewards))
    top = _group_reduce(rewards, group_ids, n_groups, "amax")
    candidates = torch.where(rewards == top[group_ids], rows, len(rewards))
    best = torch.full((n_groups,), len(rewards)).scatter_reduce(0, group_ids, candidates, "amin")
    is_best = rows == best[group_ids]
    second = _group_reduce(torch.where(is_best, float("-inf"), rewards), group_ids, n_groups, "amax")
    credit = torch.where(is_best, rewards - second[group_ids], torch.zeros_like(rewards))
    return torch.where(torch.isfinite(credit), credit, torch.zeros_like(credit))  # singletons: -inf second


def _group_reduce(values: Tensor, group_ids: Tensor, n_groups: int, how: str) -> Tensor:
    start = float("-inf") if how == "amax" else float("inf")
    return torch.full((n_groups,), start, dtype=values.dtype).scatter_reduce(0, group_ids, values, how)


BASELINES: dict[str, Callable[..., Tensor]] = names.BASELINE.bind({
    "group_mean": subtract_group_mean,
    "rloo": leave_one_out,
    "length_weighted": length_weighted,
    "passk": best_of_group,
    "none": no_baseline,
}, table="BASELINES")

def scale_by_signal_fraction(adv: Tensor, rewards: Tensor, group_ids: Tensor, eps: float) -> Tensor:
    """GPG's accurate gradient estimation (Chu et al. 2025, arXiv:2504.02546, §3): rows of a
    group whose rewards are all equal have A = 0 yet count in the batch mean, shrinking the
    gradient; multiply by alpha = B / (B - M), M the rows of such groups. A batch with no signal
    at all is returned as it is (all zeros). verl's `gpg` counts the rows with a nonzero *raw
    reward* for B - M instead (the two agree only when exactly those rows carry signal).
    (B,) → (B,)."""
    valid = int((~zero_spread(rewards, group_ids)).sum())
    return adv * (len(rewards) / valid) if valid else adv


SCALES: dict[str, Callable[[Tensor, Tensor, Tensor, float], Tensor]] = names.SCALE.bind({
    "group_std": scale_by_group_std,
    "batch_std": scale_by_batch_std,
    "batch_std_raw": scale_by_batch_std_raw,
    "gpg": scale_by_signal_fraction,
    "none": no_scale,
}, table="SCALES")


def outcome_advantages(
    rewards: Tensor, group_ids: Tensor, *, baseline: str, scale: str, eps: float = 1e-4,
    lengths: Tensor | None = None,
) -> Tensor:
    """Baseline then scale: one advantage per completion. rewards (B,), group_ids (B,),
    lengths (B,) the completions' token counts (read by the length-weighted baseline) → (B,)."""
    adv = BASELINES[baseline](rewards, group_ids, lengths)
    return SCALES[scale](adv, rewards, group_ids, eps)
