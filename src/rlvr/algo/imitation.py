"""VAPO's positive-example LM loss (Yue et al. 2025, arXiv:2504.05118, §4.3, eqs. 9-10):

    L_NLL = -(1 / sum_{o in T} |o|) sum_{o in T} sum_t log pi(a_t | s_t)      (eq. 9)
    L     = L_PPO + mu * L_NLL                           (eq. 10; mu = 0.1 in the paper)

T is the set of the batch's correct samples. The loss imitates them token by token, which
sharpens the policy on what already works when rewards are sparse. `positive_lm_weights` gives
the per-token weights of L_NLL over the full batch, so the term splits exactly over
micro-batches like the aggregation weights do.
"""

from __future__ import annotations

import torch

Tensor = torch.Tensor


def positive_lm_weights(mask: Tensor, rewards: Tensor, threshold: float = 1.0) -> Tensor:
    """(B, T) mask, (B,) verifier rewards → (B, T) weights: 1 / (tokens of the positive samples)
    on each token of a sample whose reward is >= `threshold`, else 0. All zeros when the batch
    has no positive sample (the term then vanishes rather than dividing by zero)."""
    positive = (rewards >= threshold).to(mask.dtype)[:, None] * mask
    return positive / positive.sum().clamp(min=1.0)


def positive_lm_loss(logp: Tensor, weights: Tensor) -> Tensor:
    """L_NLL of a (micro-)batch: -sum(weights * logp). Summed over micro-batches with weights
    from `positive_lm_weights` on the full batch, it is the full-batch L_NLL."""
    return -(weights * logp).sum()
