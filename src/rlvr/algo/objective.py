"""The policy objective: one field per axis, applied in one documented order.

    1. log-ratio      rho = RATIO_LEVELS[ratio_level](logp, old_logp, mask)
    2. surrogate      l_t = SURROGATES[surrogate](rho, adv, mask, old_logp, **surrogate_args), times the
                      batch's engine-mismatch weight w_t when it has one (algo/engine_mismatch.py)
                      and, with `off_policy_delta`, the off-policy sequence mask M_i
                      (algo/off_policy.py)
    3. KL in the loss l_t += kl_coef * KL_ESTIMATORS[kl](logp, ref_logp), clamped to +-kl_clamp
                      (only when kl_placement == "loss"; "reward" puts it in the advantages,
                      see `rlvr.algo.kl.kl_reward_penalty`)
    4. entropy bonus  l_t -= entropy_coef * H_t   (H_t with gradient, from the trainer)
    5. aggregation    L = sum(W * l), with W = AGGREGATIONS[aggregation](mask of the full batch)
    6. imitation      L += positive_lm_coef * L_NLL of the correct samples (VAPO, see
                      `rlvr.algo.imitation`; its weights come with the batch)

The trainer calls `weights` once on the whole batch and `loss` once per micro-batch; it never
knows which paper the objective implements. Which combinations of axes cannot mean what they
say is decided once, from the config, at load (config/coherence_run.py); built directly from
Python, an Objective checks only that each axis names a known choice and that
`surrogate_args` are the surrogate's declared parameters (rlvr/names.py SURROGATE_PARAMS).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from rlvr import names
from rlvr.algo.aggregation import AGGREGATIONS
from rlvr.algo.entropy_control import COV_SELECTIONS
from rlvr.algo.imitation import positive_lm_loss
from rlvr.algo.kl import KL_ESTIMATORS, kl_estimate
from rlvr.algo.off_policy import off_policy_sequence_mask
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
    # Dr. GRPO's C; required by (and only read by) seq_mean_token_sum_norm.
    aggregation_constant: float | None = None
    kl: str = "none"
    kl_coef: float = 0.0
    kl_placement: str = "loss"
    kl_clamp: float | None = None
    entropy_coef: float = 0.0
    positive_lm_coef: float = 0.0
    off_policy_delta: float | None = None
    # Clip-Cov / KL-Cov (algo/entropy_control.py): act on the batch's `cov_select` tokens.
    entropy_control: str = "none"
    kl_cov_coef: float = 1.0

    def __post_init__(self) -> None:
        for registry, name in ((names.RATIO_LEVEL, self.ratio_level), (names.SURROGATE, self.surrogate),
                               (names.AGGREGATION, self.aggregation), (names.KL, self.kl),
                               (names.KL_PLACEMENT, self.kl_placement),
                               (names.ENTROPY_CONTROL, self.entropy_control)):
            if name not in registry.names:
                axis = registry.key.removeprefix("algo.")
                raise ValueError(f"unknown {axis} {name!r}; choose one of {sorted(registry.names)}")
        params, given = names.SURROGATE_PARAMS[self.surrogate], sorted(self.surrogate_args)
        if given != sorted(params):  # the call itself would fail, later, inside the loss
            raise ValueError(f"surrogate {self.surrogate!r} takes surrogate_args {sorted(params)}, got {given}")

    @property
    def needs_ref(self) -> bool:
        return self.kl != "none"

    @property
    def needs_entropy_grad(self) -> bool:
        return self.entropy_coef != 0.0

    def weights(self, mask: Tensor, group_ids: Tensor) -> Tensor:
        """Aggregation weights (B, T) for the full batch."""
        constant = 1.0 if self.aggregation_constant is None else self.aggregation_constant
        return AGGREGATIONS[self.aggregation](mask, group_ids, constant)

    def loss(self, logp: Tensor, batch: Batch, weights: Tensor,
             entropy: Tensor | None = None) -> tuple[Tensor, dict[str, Tensor]]:
        """Scalar loss of a (micro-)batch and its metric sums (each weighted by `weights`, so
        that summing them over micro-batches gives the full-batch mean).

        logp (B, T) with gradient; `weights` (B, T) are this batch's rows of the full weights;
        entropy (B, T) of the policy at each position, with gradient when `entropy_coef` != 0.
        """
        mask = batch.completion_mask
        # Padding holds arbitrary log-probs; an extreme one would make exp() overflow and
        # inf * 0 = NaN. Replace it by the behaviour log-prob, which every estimator maps to 0.
        logp = torch.where(mask.bool(), logp, batch.old_logp)
        log_ratio = RATIO_LEVELS[self.ratio_level](logp, batch.old_logp, mask)
        per_token, indicators = SURROGATES[self.surrogate](log_ratio, batch.adv, mask, batch.old_logp,
                                                               **self.surrogate_args)
        if batch.is_weight is not None:  # engine/trainer mismatch: weights the policy term only
            per_token = per_token * batch.is_weight
        if self.off_policy_delta is not None:
            keep = off_policy_sequence_mask(logp, batch.old_logp, batch.adv, mask, self.off_policy_delta)
            per_token = per_token * keep
            indicators = {**indicators, "off_policy_masked": (1.0 - keep).expand_as(mask)}
        per_token, indicators = self._entropy_control(per_token, indicators, logp, batch)
        stats = {f"policy/{k}_frac": v for k, v in indicators.items()}
        stats["policy/ratio_mean"] = torch.exp(log_ratio.detach())
        # cleanrl's approx_kl, (r - 1) - log r with r = pi / pi_old: k3 of KL(pi_old || pi),
        # unbiased under the behaviour policy's samples (arguments in that order on purpose).
        stats["policy/approx_kl"] = KL_ESTIMATORS["k3"](batch.old_logp, logp.detach())
        if self.needs_ref and batch.ref_logp is not None:
            ref_logp = torch.where(mask.bool(), batch.ref_logp, logp.detach())
            kl = kl_estimate(self.kl, logp, ref_logp, self.kl_clamp)
            if self.kl_placement == "loss":
                per_token = per_token + self.kl_coef * kl
            stats["policy/kl_ref"] = kl.detach()
        elif self.needs_ref and self.kl_placement == "loss":
            raise ValueError(f"kl={self.kl!r} needs ref_logp in the batch")
        if entropy is not None:
            entropy = torch.where(mask.bool(), entropy, torch.zeros_like(entropy))
            if self.entropy_coef:
                per_token = per_token - self.entropy_coef * entropy
            stats["policy/entropy"] = entropy.detach()
        elif self.entropy_coef:
            raise ValueError(f"entropy_coef={self.entropy_coef} needs the per-token entropy")
        loss = (weights * per_token * mask).sum()
        metrics = {k: (weights * v * mask).sum() for k, v in stats.items()}
        if self.positive_lm_coef:
            if batch.lm_weight is None:
                raise ValueError(f"positive_lm_coef={self.positive_lm_coef} needs lm_weight in the batch")
            nll = positive_lm_loss(logp, batch.lm_weight * mask)
            loss = loss + self.positive_lm_coef * nll
            metrics["loss/positive_lm"] = nll.detach()
        return loss, metrics

    def _entropy_control(self, per_token: Tensor, indicators: dict, logp: Tensor, batch: Batch):
        """Clip-Cov: the selected tokens leave the policy term, except those the surrogate has
        clipped (`clip_low` / `clip_high`: they keep their clipped loss, as in verl, where a
        clipped token is never a candidate). KL-Cov: they get + kl_cov_coef * |log pi - log pi_old|
        (Cui et al. 2025, arXiv:2505.22617, §4)."""
        if self.entropy_control == "none":
            return per_token, indicators
        if batch.cov_select is None:
            raise ValueError(f"entropy_control={self.entropy_control!r} needs cov_select in the batch")
        select = batch.cov_select
        if self.entropy_control == "clip_cov":
            for name in ("clip_low", "clip_high"):
                if name in indicators:
                    select = select * (1.0 - indicators[name])
            per_token = per_token * (1.0 - select)
        else:
            per_token = per_token + self.kl_cov_coef * (logp - batch.old_logp).abs() * select
        return per_token, {**indicators, "cov_selected": select}
