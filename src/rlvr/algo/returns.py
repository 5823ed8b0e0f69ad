"""Token-level rewards, returns and batch whitening; REINFORCE++ and REINFORCE++-baseline.

An outcome reward lands on the last completion token; a KL placed in the reward
(`rlvr.algo.kl.kl_reward_penalty`) is subtracted token by token. Masked positions inside a
row (tool observations in a multi-turn episode) are transparent: a return passes through
them unchanged and they get 0. Right padding is the special case of a masked suffix.

REINFORCE++ (Hu 2025, arXiv:2501.03262, §3): with token rewards
r_t = 1[t = last] r - beta KL_t, the return G_t = sum_{s >= t} gamma^{s-t} r_s is normalised
over every token of the batch ("global advantage normalisation"):

    A_t = (G_t - mean_batch(G)) / std_batch(G)

REINFORCE++-baseline first subtracts the group mean from r (the prompt-difficulty baseline
GRPO uses) and then applies the same batch normalisation, without GRPO's per-group std.
"""

from __future__ import annotations

import torch

from rlvr.algo.advantages import BASELINES

Tensor = torch.Tensor


def last_token_index(mask: Tensor) -> Tensor:
    """(B, T) → (B,) long: column of the last unmasked token of each row (0 for an empty row)."""
    columns = torch.arange(mask.shape[1], device=mask.device).expand_as(mask)
    return torch.where(mask.bool(), columns, torch.zeros_like(columns)).amax(dim=1)


def outcome_token_rewards(rewards: Tensor, mask: Tensor) -> Tensor:
    """(B,) outcome rewards → (B, T) token rewards, r_i on the last unmasked token of row i and 0
    elsewhere. An empty row gets nothing."""
    token_rewards = torch.zeros(mask.shape, dtype=rewards.dtype, device=mask.device)
    token_rewards.scatter_(1, last_token_index(mask)[:, None], rewards[:, None].to(token_rewards.dtype))
    return token_rewards * mask


def discounted_returns(token_rewards: Tensor, mask: Tensor, gamma: float) -> Tensor:
    """G_t = r_t + gamma G_{t'} with t' the next unmasked column; 0 on masked columns.
    (B, T), (B, T) → (B, T). A reverse scan over T, vectorised over the rows."""
    running = torch.zeros_like(token_rewards[:, 0])
    returns = torch.zeros_like(token_rewards)
    for t in range(token_rewards.shape[1] - 1, -1, -1):
        on = mask[:, t].bool()
        running = torch.where(on, token_rewards[:, t] + gamma * running, running)
        returns[:, t] = torch.where(on, running, torch.zeros_like(running))
    return returns


def masked_whiten(values: Tensor, mask: Tensor, eps: float = 1e-8) -> Tensor:
    """Batch normalisation over the unmasked entries: (v - mean) / sqrt(var + eps), with the
    unbiased variance (n - 1), as verl's `masked_whiten` and OpenRLHF. (B, T) → (B, T), 0 on
    masked entries. Fewer than two entries, or all equal: every entry becomes exactly 0."""
    m = mask.to(values.dtype)
    n = m.sum()
    on = mask.bool()
    spread = torch.where(on, values, -torch.inf).max() - torch.where(on, values, torch.inf).min()
    mean = (values * m).sum() / n.clamp(min=1)
    # Equal values: exactly 0 (a float mean of equal values can be off by an ulp).
    centred = torch.where(spread > 0, (values - mean) * m, torch.zeros_like(values))
    var = (centred**2).sum() / (n - 1).clamp(min=1)
    denom = torch.sqrt(var + eps)
    return centred / torch.where(denom > 0, denom, torch.ones_like(denom))


def reinforce_pp_advantages(
    rewards: Tensor, group_ids: Tensor, mask: Tensor, *, baseline: str = "none",
    kl_penalty: Tensor | None = None, gamma: float = 1.0, eps: float = 1e-8,
) -> Tensor:
    """REINFORCE++ (`baseline="none"`) or REINFORCE++-baseline (`baseline="group_mean"`).

    rewards (B,), group_ids (B,), mask (B, T), kl_penalty (B, T) or None (the per-token
    beta KL_t when the KL is placed in the reward) → advantages (B, T).

    A zero-variance group under `group_mean` contributes zeros before the whitening, which
    then shifts it by minus the batch mean like every other token.
    """
    centred = BASELINES[baseline](rewards, group_ids, mask.sum(1))
    token_rewards = outcome_token_rewards(centred, mask)
    if kl_penalty is not None:
        token_rewards = token_rewards - kl_penalty * mask
    return masked_whiten(discounted_returns(token_rewards, mask, gamma), mask, eps)
