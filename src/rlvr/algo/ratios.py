"""Importance ratios between the current policy and the behaviour policy, per level.

Each function takes log-probs (B, T) of the current policy `logp` (with gradient), of the
behaviour policy `old_logp` (no gradient), and the completion mask (B, T), and returns the
log-ratio (B, T) used by the surrogate. Masked positions return 0 (ratio 1).
"""

from __future__ import annotations

from typing import Callable

import torch

Tensor = torch.Tensor


def token_log_ratio(logp: Tensor, old_logp: Tensor, mask: Tensor) -> Tensor:
    """PPO / GRPO: log r_{i,t} = log pi(y_t | ...) - log pi_old(y_t | ...)."""
    return (logp - old_logp) * mask


RATIO_LEVELS: dict[str, Callable[[Tensor, Tensor, Tensor], Tensor]] = {
    "token": token_log_ratio,
}
