"""The policy objective: one field per axis, applied in one documented order.

    1. log-ratio      rho = RATIO_LEVELS[ratio_level](logp, old_logp, mask)
    2. surrogate      l_t = SURROGATES[surrogate](rho, adv, **surrogate_args)
    3. KL in the loss l_t += kl_coef * KL_ESTIMATORS[kl](logp, ref_logp)   (when kl != "none")
    4. aggregation    L = sum(W * l), with W = AGGREGATIONS[aggregation](mask of the full batch)

The trainer calls `weights` once on the whole batch and `loss` once per micro-batch; it never
knows which paper the objective implements.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from rlvr.algo.aggregation import AGGREGATIONS
from rlvr.algo.kl import KL_ESTIMATORS
from rlvr.algo.ratios import RATIO_LEVELS
from rlvr.algo.surrogates import SURROGATES
from rlvr.types import Batch

Tensor = torch.Tensor


@dataclass(frozen=True)
class Objective:
    ratio_level: str = "token"
    surrogate: str = "ppo_clip"
    surrogate_args: dict[str, float] = field(default_factory=lambda: {"eps_low": 0.2, "eps_high": 0.2})
    aggregation: str = "seq_mean_token_mean"
    aggregation_constant: float = 1.0
    kl: str = "none"
    kl_coef: float = 0.0

    def __post_init__(self) -> None:
        for axis, name, table in (
            ("ratio_level", self.ratio_level, RATIO_LEVELS),
            ("surrogate", self.surrogate, SURROGATES),
            ("aggregation", self.aggregation, AGGREGATIONS),
            ("kl", self.kl, {"none": None, **KL_ESTIMATORS}),
        ):
            if name not in table:
                raise ValueError(f"unknown {axis} {name!r}; choose one of {sorted(table)}")

    @property
    def needs_ref(self) -> bool:
        return self.kl != "none"

    def weights(self, mask: Tensor, group_ids: Tensor) -> Tensor:
        """Aggregation weights (B, T) for the full batch."""
        return AGGREGATIONS[self.aggregation](mask, group_ids, self.aggregation_constant)

    def loss(self, logp: Tensor, batch: Batch, weights: Tensor) -> tuple[Tensor, dict[str, Tensor]]:
        """Scalar loss of a (micro-)batch and its metric sums (each weighted by `weights`, so
        that summing them over micro-batches gives the full-batch mean).

        logp (B, T) with gradient; `weights` (B, T) are this batch's rows of the full weights.
        """
        mask = batch.completion_mask
        # Padding holds arbitrary log-probs; an extreme one would make exp() overflow and
        # inf * 0 = NaN. Replace it by the behaviour log-prob, which every estimator maps to 0.
        logp = torch.where(mask.bool(), logp, batch.old_logp)
        log_ratio = RATIO_LEVELS[self.ratio_level](logp, batch.old_logp, mask)
        per_token, indicators = SURROGATES[self.surrogate](log_ratio, batch.adv, **self.surrogate_args)
        stats = {f"policy/{k}_frac": v for k, v in indicators.items()}
        stats["policy/ratio_mean"] = torch.exp(log_ratio.detach())
        # k3 against the behaviour policy: how far this update has moved (cleanrl's approx_kl).
        stats["policy/approx_kl"] = KL_ESTIMATORS["k3"](logp.detach(), batch.old_logp)
        if self.needs_ref:
            if batch.ref_logp is None:
                raise ValueError(f"kl={self.kl!r} needs ref_logp in the batch")
            ref_logp = torch.where(mask.bool(), batch.ref_logp, logp.detach())
            kl = KL_ESTIMATORS[self.kl](logp, ref_logp)
            per_token = per_token + self.kl_coef * kl
            stats["policy/kl_ref"] = kl.detach()
        loss = (weights * per_token * mask).sum()
        metrics = {k: (weights * v * mask).sum() for k, v in stats.items()}
        return loss, metrics
