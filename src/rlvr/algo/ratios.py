"""Importance ratios between the current policy and the behaviour policy, per level.

Each function takes log-probs (B, T) of the current policy `logp` (with gradient), of the
behaviour policy `old_logp` (no gradient), and the completion mask (B, T), and returns the
log-ratio (B, T) used by the surrogate. Masked positions return 0 (ratio 1).

The three levels differ in value and in gradient (d log_ratio_{i,t} / d logp_{i,u}):

    token           value log r_{i,t}          gradient 1 if u == t else 0
    sequence        value log s_i (row mean)   gradient 1/|y_i| for every token u of row i
    sequence_token  value log s_i              gradient 1 if u == t else 0
    sequence_sum    value log S_i (row sum)    gradient 1 for every token u of row i
"""

from __future__ import annotations

from typing import Callable

import torch

from rlvr import names

Tensor = torch.Tensor
_MAX_SEQUENCE_LOG_RATIO = 20.0


def token_log_ratio(logp: Tensor, old_logp: Tensor, mask: Tensor) -> Tensor:
    """PPO / GRPO: log r_{i,t} = log pi(y_t | ...) - log pi_old(y_t | ...)."""
    return (logp - old_logp) * mask


def sequence_log_ratio(logp: Tensor, old_logp: Tensor, mask: Tensor) -> Tensor:
    """GSPO (Zheng et al. 2025, arXiv:2507.18071, §4.1 eq. 7): the length-normalised sequence ratio

        s_i = (pi(y_i | x) / pi_old(y_i | x)) ^ (1/|y_i|) = exp(1/|y_i| sum_t log r_{i,t})

    broadcast to every token of row i. A fully masked row gets 0 (its length is clamped to 1).
    Each token's gradient is 1/|y_i| of the row's, so the surrogate clips whole sequences.
    """
    lengths = mask.sum(dim=1, keepdim=True).clamp(min=1)
    per_row = ((logp - old_logp) * mask).sum(dim=1, keepdim=True) / lengths
    return per_row * mask


def sequence_token_log_ratio(logp: Tensor, old_logp: Tensor, mask: Tensor) -> Tensor:
    """GSPO-token (arXiv:2507.18071, §4.3): s_{i,t} = sg[s_i] * pi(y_t) / sg[pi(y_t)].

    In logs: log s_{i,t} = sg(log s_i) + logp_t - sg(logp_t). The value (and so the clipping
    decision) is the sequence ratio s_i; the gradient is a token's own, so per-token
    advantages keep their credit assignment. With A_{i,t} = A_i it is numerically the same
    objective and gradient as `sequence` under per-sequence aggregation (the paper's remark).
    """
    seq = sequence_log_ratio(logp.detach(), old_logp, mask)
    return (seq + logp - logp.detach()) * mask


def sequence_sum_log_ratio(logp: Tensor, old_logp: Tensor, mask: Tensor) -> Tensor:
    """RLOO as TRL implements it (Ahmadian et al. 2024, arXiv:2402.14740, §2.3; TRL
    `RLOOTrainer`): one un-normalised ratio per sequence,

        S_i = pi(y_i | x) / pi_old(y_i | x) = exp(sum_t log r_{i,t}),

    broadcast to every token of row i, so the surrogate clips whole sequences. With
    `seq_mean_token_mean` aggregation each row contributes its one clipped term once, the
    per-row loss averaged over rows (TRL's `per_sequence_loss.mean()`). Unlike `sequence`
    (GSPO) the log-ratio is not divided by the length: a long sequence's ratio leaves the
    clip range sooner.
    """
    per_row = ((logp - old_logp) * mask).sum(dim=1, keepdim=True)
    # A row sum drifts past float32's exp range (~88) long before a token does: 400 tokens 0.25
    # apart is 100. Beyond +-20 (verl's safety bound) every clip has long cut the gradient, so
    # the clamp changes no update and keeps exp() finite (0 * inf would be a NaN gradient).
    return per_row.clamp(-_MAX_SEQUENCE_LOG_RATIO, _MAX_SEQUENCE_LOG_RATIO) * mask


RATIO_LEVELS: dict[str, Callable[[Tensor, Tensor, Tensor], Tensor]] = names.RATIO_LEVEL.bind({
    "token": token_log_ratio,
    "sequence": sequence_log_ratio,
    "sequence_token": sequence_token_log_ratio,
    "sequence_sum": sequence_sum_log_ratio,
}, table="RATIO_LEVELS")
