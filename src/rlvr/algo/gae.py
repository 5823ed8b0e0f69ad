"""Generalised advantage estimation with a critic (PPO) and VAPO's two changes to it.

GAE (Schulman et al. 2016, arXiv:1506.02438, eq. 16), token by token with V(after the
last token) = 0:

    delta_t = r_t + gamma V_{t+1} - V_t
    A_t     = sum_{l >= 0} (gamma lam)^l delta_{t+l}  =  delta_t + gamma lam A_{t+1}

VAPO (Yue et al. 2025, arXiv:2504.05118, sections on value-model bias and on heterogeneous
sequence lengths):

- decoupled GAE: the critic's targets use lam_critic = 1 (the Monte-Carlo return, no reward
  decay through a biased critic over thousands of tokens), the policy's advantages a smaller
  lam_policy (lower variance);
- length-adaptive GAE: lam_policy = 1 - 1/(alpha l) per sequence of length l, so that
  the sum of the weights, 1/(1 - lam) = alpha l, grows with the sequence (alpha = 0.05).

Masked positions inside a row (tool observations) are transparent, as in verl: the next
value and the running advantage pass through them, and they get 0.
"""

from __future__ import annotations

import torch

Tensor = torch.Tensor


def gae_advantages(
    token_rewards: Tensor, values: Tensor, mask: Tensor, *, gamma: float, lam: float | Tensor
) -> Tensor:
    """A_t by the backward recursion above. token_rewards, values, mask (B, T); lam a float or a
    (B,) tensor (one lambda per row) → advantages (B, T), 0 on masked positions.

    A reverse scan over T, vectorised over the rows (the recursion is sequential in t).
    Returns for a critic are `gae_advantages(...) + values` (with the critic's lambda).
    """
    b, t_max = token_rewards.shape
    lam_rows = torch.as_tensor(lam, dtype=values.dtype).expand(b)
    next_value = torch.zeros(b, dtype=values.dtype)
    running = torch.zeros(b, dtype=values.dtype)
    adv = torch.zeros_like(values)
    for t in range(t_max - 1, -1, -1):
        on = mask[:, t].bool()
        delta = token_rewards[:, t] + gamma * next_value - values[:, t]
        running = torch.where(on, delta + gamma * lam_rows * running, running)
        next_value = torch.where(on, values[:, t], next_value)
        adv[:, t] = torch.where(on, running, torch.zeros_like(running))
    return adv


def length_adaptive_lambda(lengths: Tensor, alpha: float) -> Tensor:
    """VAPO's length-adaptive lam_policy = 1 - 1/(alpha l). (B,) lengths → (B,) lambdas.

    Clamped to [0, 1]: a sequence shorter than 1/alpha tokens (20 at alpha = 0.05) would get a
    negative lambda, which is not a GAE weight; it gets 0 (the one-step TD advantage).
    """
    lengths = lengths.to(torch.float64)
    lam = 1.0 - 1.0 / (alpha * lengths.clamp(min=1e-12))
    return lam.clamp(0.0, 1.0)


def decoupled_gae(
    token_rewards: Tensor, values: Tensor, mask: Tensor, *, gamma: float,
    lam_policy: float | Tensor, lam_critic: float,
) -> tuple[Tensor, Tensor]:
    """VAPO's decoupled GAE: (policy advantages with lam_policy, critic targets
    V + A^{lam_critic}). Inputs (B, T); lam_policy a float or (B,) → two (B, T) tensors, 0 on
    masked positions. With lam_policy == lam_critic this is PPO's GAE."""
    adv = gae_advantages(token_rewards, values, mask, gamma=gamma, lam=lam_policy)
    critic_adv = gae_advantages(token_rewards, values, mask, gamma=gamma, lam=lam_critic)
    return adv, (critic_adv + values) * mask
