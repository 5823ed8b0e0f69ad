"""Critic losses and the explained-variance metric (PPO, VAPO).

Per-token losses (B, T), aggregated by the caller with the same `AGGREGATIONS` weights as the
policy loss, so that micro-batching stays exact. Value pretraining (VAPO) is a loop that
trains the critic alone on Monte-Carlo returns (lam = 1) of a fixed policy with `value_mse`
until `explained_variance` is high; it needs no other function.
"""

from __future__ import annotations

from typing import Callable

import torch

from rlvr import names

Tensor = torch.Tensor
ValueLoss = Callable[..., tuple[Tensor, dict[str, Tensor]]]


def value_mse(values: Tensor, old_values: Tensor, returns: Tensor) -> tuple[Tensor, dict[str, Tensor]]:
    """0.5 (V_t - R_t)^2, unclipped (value pretraining). (B, T) each → (B, T)."""
    return 0.5 * (values - returns) ** 2, {}


def clipped_value_loss(
    values: Tensor, old_values: Tensor, returns: Tensor, *, clip_eps: float
) -> tuple[Tensor, dict[str, Tensor]]:
    """PPO's clipped value loss (as in OpenAI baselines' ppo2; arXiv:1707.06347 §5 with the
    clip of the PPO implementations):

        loss_t = 0.5 max((V_t - R_t)^2, (clip(V_t, V_old_t - eps, V_old_t + eps) - R_t)^2)

    values (with gradient), old_values (the critic at rollout time), returns (B, T) →
    (B, T), and `value_clip` marking tokens where the clipped term is the larger one.
    """
    clipped = old_values + (values - old_values).clamp(-clip_eps, clip_eps)
    unclipped_sq = (values - returns) ** 2
    clipped_sq = (clipped - returns) ** 2
    loss = 0.5 * torch.maximum(unclipped_sq, clipped_sq)
    return loss, {"value_clip": (clipped_sq > unclipped_sq).to(values.dtype)}


VALUE_LOSSES: dict[str, ValueLoss] = names.VALUE_LOSS.bind({
    "mse": value_mse,
    "clipped": clipped_value_loss,
}, table="VALUE_LOSSES")


def explained_variance(values: Tensor, returns: Tensor, mask: Tensor) -> Tensor:
    """1 - Var(R - V) / Var(R) over the unmasked tokens (cleanrl's definition): 1 is a perfect
    critic, 0 no better than a constant, negative worse. (B, T) each → scalar; NaN when the
    returns have no variance (undefined; the run folder writes it as null)."""
    m = mask.to(returns.dtype)
    n = m.sum().clamp(min=1)

    def var(x: Tensor) -> Tensor:
        mean = (x * m).sum() / n
        return (((x - mean) * m) ** 2).sum() / n

    var_returns = var(returns.detach())
    residual = var((returns - values).detach())
    nan = torch.full_like(var_returns, float("nan"))
    return torch.where(var_returns > 0, 1 - residual / torch.where(var_returns > 0, var_returns, 1), nan)
