"""Per-token policy surrogates (losses to minimise), before aggregation.

Each takes the log-ratio (B, T) and the advantages (B, T) and returns the per-token loss
(B, T) and a dict of (B, T) 0/1 indicators for the metrics (which tokens were clipped).
"""

from __future__ import annotations

from typing import Callable

import torch

Tensor = torch.Tensor
Surrogate = Callable[..., tuple[Tensor, dict[str, Tensor]]]


def ppo_clip(
    log_ratio: Tensor, adv: Tensor, *, eps_low: float, eps_high: float
) -> tuple[Tensor, dict[str, Tensor]]:
    """PPO's clipped surrogate (Schulman et al. 2017, eq. 7) with decoupled bounds (DAPO).

        loss_t = -min(r_t A_t, clip(r_t, 1 - eps_low, 1 + eps_high) A_t)

    With eps_low == eps_high this is PPO / GRPO; DAPO's clip-higher raises eps_high.
    `clip_low` marks tokens whose ratio fell below 1 - eps_low with A < 0 (gradient cut),
    `clip_high` those above 1 + eps_high with A > 0.
    """
    ratio = torch.exp(log_ratio)
    clipped = torch.clamp(ratio, 1.0 - eps_low, 1.0 + eps_high)
    loss = -torch.minimum(ratio * adv, clipped * adv)
    indicators = {
        "clip_low": ((ratio < 1.0 - eps_low) & (adv < 0)).to(adv.dtype),
        "clip_high": ((ratio > 1.0 + eps_high) & (adv > 0)).to(adv.dtype),
    }
    return loss, indicators


SURROGATES: dict[str, Surrogate] = {
    "ppo_clip": ppo_clip,
}
