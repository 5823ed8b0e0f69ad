"""Entropy control by covariance: Clip-Cov and KL-Cov (Cui et al. 2025, "The Entropy Mechanism
of Reinforcement Learning for Reasoning Language Models", arXiv:2505.22617).

The paper finds that policy entropy falls in proportion to the covariance between a token's
log-prob and its advantage, and that a few tokens with very large covariance drive the
collapse. Both methods act on those tokens only:

    cov_t = (A_t - mean(A)) (log pi_t - mean(log pi))         over the batch's valid tokens

    Clip-Cov: pick, at random, ratio * N tokens whose cov lies in (low, high) among those PPO
              has not clipped; they leave the loss (no gradient).
    KL-Cov:   pick the ratio * N tokens of largest cov; they get + coef * |log pi_t - log pi_old_t|.
              Ties at the k-th place go to the earliest tokens in row-major (b, t) order.

The selection is made once on the full batch from the behaviour log-probs, which equal the
current ones at the first update: every micro-batch then sees the same selection, so
micro-batching stays exact (verl selects per micro-batch from the current log-probs; on the
first update of a one-micro-batch step the two agree). At a ratio of 1 no token is clipped, so
the candidate set is verl's; at a later update a selected token that PPO has since clipped keeps
its clipped loss (`Objective`), as verl's never makes such a token a candidate. `clipped`
(`ppo_clipped`) gives verl's per-micro-batch rule exactly, for callers that select from the
current log-probs. Returns (B, T) 0/1 selections, no gradient.
"""

from __future__ import annotations

from typing import Callable

import torch

from rlvr import names

Tensor = torch.Tensor


def token_covariance(adv: Tensor, logp: Tensor, mask: Tensor) -> Tensor:
    """(B, T) → (B, T): the centred product over the valid tokens; 0 on padding."""
    valid = mask.bool()
    n = mask.sum().clamp(min=1)
    centred_adv = adv - (adv * mask).sum() / n
    centred_logp = logp - (logp * mask).sum() / n
    return torch.where(valid, centred_adv * centred_logp, torch.zeros_like(adv))


def _count(mask: Tensor, ratio: float) -> int:
    return max(int(ratio * int(mask.sum())), 1)


def ppo_clipped(log_ratio: Tensor, adv: Tensor, mask: Tensor, eps_low: float, eps_high: float) -> Tensor:
    """(B, T) bool: the valid tokens whose PPO loss is the clipped one, -A clip(r) > -A r (verl's
    `clip_by_origin`; the same tokens as `ppo_clip`'s clip_low | clip_high indicators)."""
    ratio = torch.exp(log_ratio)
    clipped = -adv * torch.clamp(ratio, 1.0 - eps_low, 1.0 + eps_high) > -adv * ratio
    return clipped & mask.bool()


def kl_cov_select(adv: Tensor, logp: Tensor, mask: Tensor, *, ratio: float, **_: object) -> Tensor:
    """The `ratio` share (at least one) of valid tokens with the largest covariance.

    Deterministic on ties: a stable descending sort, so among equal covariances the earliest
    tokens in row-major (b, t) order are taken (`torch.topk` leaves that order unspecified, and
    it differs with the tensor's size)."""
    with torch.no_grad():
        cov = token_covariance(adv, logp, mask).masked_fill(~mask.bool(), float("-inf")).flatten()
        k = min(_count(mask, ratio), int(mask.sum()))
        select = torch.zeros_like(cov)
        select[torch.sort(cov, descending=True, stable=True).indices[:k]] = 1.0
        return select.view_as(mask)


def clip_cov_select(adv: Tensor, logp: Tensor, mask: Tensor, *, ratio: float, low: float, high: float,
                    generator: torch.Generator | None = None, clipped: Tensor | None = None) -> Tensor:
    """A random `ratio` share (at least one) of the valid tokens whose covariance is in (low, high),
    leaving out the (B, T) `clipped` tokens (verl: PPO already cut their gradient)."""
    with torch.no_grad():
        cov = token_covariance(adv, logp, mask)
        candidates = (cov > low) & (cov < high) & mask.bool()
        if clipped is not None:
            candidates = candidates & ~clipped.bool()
        candidates = torch.nonzero(candidates)
        select = torch.zeros_like(mask)
        if len(candidates):
            picked = candidates[torch.randperm(len(candidates), generator=generator)[:_count(mask, ratio)]]
            select[picked[:, 0], picked[:, 1]] = 1.0
        return select


COV_SELECTIONS: dict[str, Callable[..., Tensor]] = names.ENTROPY_CONTROL.bind(
    {"clip_cov": clip_cov_select, "kl_cov": kl_cov_select}, without=("none",), table="COV_SELECTIONS")
