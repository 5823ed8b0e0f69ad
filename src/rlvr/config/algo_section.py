"""[algo]: the objective's axes (ratio level, surrogate, aggregation, KL, advantage, mismatch
correction, entropy control). The options common to an axis stay at the top of [algo]; those
that one kind alone reads are in that kind's table, present exactly when the kind is chosen
(config/kind_tables.py):

    [algo]
    surrogate = "dual_clip"
    advantage = "gae"
    [algo.dual_clip]
    clip_c = 3.0
    [algo.gae]
    lam_critic = 1.0

A run folder written before the tables (flat keys: algo.clip_c) loads through
config/flat_keys.py.
"""

from __future__ import annotations

from typing import Any, Optional

from pydantic import Field, model_validator

from rlvr import names
from rlvr.config.kind_tables import chosen_table, with_kind_tables
from rlvr.config.section import Section


class DualClipOptions(Section):
    """algo.surrogate = "dual_clip" (arXiv:1912.09729)."""

    clip_c: float = Field(ge=0, le=1e6, description="bound on the loss of negative-advantage tokens (> 1)")


class DppoOptions(Section):
    """algo.surrogate = "dppo_tv" / "dppo_kl" (arXiv:2602.04879)."""

    clip_c: float = Field(ge=0, le=1e6, description="the IS-weight cap (> 1; the paper recommends a large one)")


class SapoOptions(Section):
    """algo.surrogate = "sapo" (arXiv:2511.20347)."""

    tau_pos: float = Field(gt=0, le=1000, description="gate temperature for A > 0 (paper: 1.0)")
    tau_neg: float = Field(gt=0, le=1000, description="gate temperature for A <= 0 (paper: 1.05)")


class DroOptions(Section):
    """algo.surrogate = "dro" (verl's dro)."""

    beta: float = Field(gt=0, le=1e6, description="weight of the quadratic log-ratio penalty")


class VespoOptions(Section):
    """algo.surrogate = "vespo": phi(w) = e^lam w^k e^(-lam w) of the sequence ratio w, (k, lam)
    by the sign of A (TRL's defaults: k_pos 2, lambda_pos 3, k_neg 3, lambda_neg 2)."""

    k_pos: float = Field(ge=0, le=1000, description="k for A > 0")
    lambda_pos: float = Field(gt=0, le=1000, description="lambda for A > 0")
    k_neg: float = Field(ge=0, le=1000, description="k for A <= 0")
    lambda_neg: float = Field(gt=0, le=1000, description="lambda for A <= 0")


class ReinforcePPOptions(Section):
    """algo.advantage = "reinforce_pp"."""

    gamma: float = Field(1.0, gt=0, le=1, description="discount of the token returns")


class GaeOptions(Section):
    """algo.advantage = "gae" (PPO, VAPO's decoupled and length-adaptive GAE)."""

    gamma: float = Field(1.0, gt=0, le=1, description="discount of the token returns")
    lam: float = Field(0.95, ge=0, le=1, description="lambda of the policy advantages")
    lam_critic: Optional[float] = Field(None, ge=0, le=1, description="lambda of the critic targets (unset: lam; "
                                                                       "VAPO: 1.0)")
    lam_alpha: Optional[float] = Field(None, gt=0, le=1e6, description="VAPO's length-adaptive lam = 1 - 1/(alpha l)")


class SumNormOptions(Section):
    """algo.aggregation = "seq_mean_token_sum_norm" (Dr. GRPO)."""

    constant: Optional[float] = Field(None, gt=0, le=1e9, description="C, each sequence's token sum over it "
                                                                      "(unset: sampling.max_new_tokens)")


class TisOptions(Section):
    """algo.mismatch = "token_tis" / "sequence_tis": weight by the truncated ratio pi_old / mu."""

    cap: float = Field(2.0, gt=1, le=1e6, description="the ratio's truncation")


class MisOptions(Section):
    """algo.mismatch = "token_mis" / "sequence_mis": drop the tokens / sequences whose ratio
    leaves [low, cap] (IcePop's two-sided mask)."""

    cap: float = Field(2.0, gt=1, le=1e6, description="the ratio's upper bound")
    low: float = Field(0.5, gt=0, lt=1, description="the ratio's lower bound")


class ClipCovOptions(Section):
    """algo.entropy_control = "clip_cov" (Cui et al. 2025): a random `ratio` share of the tokens
    with low < cov < high leaves the loss."""

    ratio: float = Field(2e-4, gt=0, le=1, description="share of the batch's tokens")
    low: float = Field(1.0, ge=-1e6, le=1e6, description="the covariance band's lower end")
    high: float = Field(5.0, ge=-1e6, le=1e6, description="the covariance band's upper end")

    @model_validator(mode="after")
    def _band(self) -> "ClipCovOptions":
        if self.low >= self.high:
            raise ValueError(f"algo.clip_cov.low ({self.low}) must be below algo.clip_cov.high ({self.high})")
        return self


class KlCovOptions(Section):
    """algo.entropy_control = "kl_cov" (Cui et al. 2025): the `ratio` share of the tokens with
    the largest covariance gets + coef * |log pi - log pi_old|."""

    ratio: float = Field(2e-4, gt=0, le=1, description="share of the batch's tokens")
    coef: float = Field(1.0, ge=0, le=1e6, description="weight of the |KL| penalty")


# axis -> kind -> the options table that kind alone reads (a kind absent here has none)
ALGO_TABLES: dict[str, dict[str, type[Section]]] = {
    "surrogate": {"dual_clip": DualClipOptions, "dppo_tv": DppoOptions, "dppo_kl": DppoOptions,
                  "sapo": SapoOptions, "dro": DroOptions, "vespo": VespoOptions},
    "advantage": {"reinforce_pp": ReinforcePPOptions, "gae": GaeOptions},
    "aggregation": {"seq_mean_token_sum_norm": SumNormOptions},
    "mismatch": {"token_tis": TisOptions, "sequence_tis": TisOptions, "token_mis": MisOptions,
                 "sequence_mis": MisOptions},
    "entropy_control": {"clip_cov": ClipCovOptions, "kl_cov": KlCovOptions},
}
TABLE_AXIS = {kind: axis for axis, kinds in ALGO_TABLES.items() for kind in kinds}
ALL_TABLES = {kind: cls for kinds in ALGO_TABLES.values() for kind, cls in kinds.items()}


class AlgoSection(Section):
    advantage: names.ADVANTAGE.literal() = "group"
    baseline: names.BASELINE.literal() = "group_mean"
    scale: names.SCALE.literal() = "group_std"
    adv_eps: float = Field(1e-4, ge=0, le=1)
    ratio_level: names.RATIO_LEVEL.literal() = "token"
    surrogate: names.SURROGATE.literal() = "ppo_clip"
    # the clip range of every surrogate that clips (names.SURROGATE_PARAMS)
    eps_low: float = Field(0.2, ge=0, le=10)
    eps_high: float = Field(0.2, ge=0, le=100)
    aggregation: names.AGGREGATION.literal() = "seq_mean_token_mean"
    kl: names.KL.literal() = "none"
    kl_coef: float = Field(0.0, ge=0, le=1000)
    kl_placement: names.KL_PLACEMENT.literal() = "loss"
    kl_clamp: Optional[float] = Field(None, gt=0, le=1e6)
    entropy_coef: float = Field(0.0, ge=0, le=1000)
    # VAPO positive-example LM loss: + mu * NLL of the completions whose reward is 1.
    positive_lm_coef: float = Field(0.0, ge=0, le=1000)
    # Engine/trainer mismatch: recompute pi_old with the trainer and weight each token's policy
    # term by the truncated ratio pi_old / mu (token_tis) or its sequence product (sequence_tis);
    # token_mis / sequence_mis drop (weight 0) the tokens / sequences whose ratio leaves their
    # table's [low, cap] and keep the ratio of the others (IcePop's two-sided mask).
    mismatch: names.MISMATCH.literal() = "none"
    # DeepSeek-V3.2's off-policy sequence mask: a negative-advantage sequence whose mean
    # log(pi_old / pi) exceeds this is left out of the loss. None = off. Any finite value, as
    # TRL's off_policy_mask_threshold: below 0 it also drops negatives the policy moved towards.
    off_policy_delta: Optional[float] = Field(None, ge=-1e6, le=1e6)
    # Sampling-mask replay: the policy's log-probs renormalised over the top-k / top-p set the
    # engine drew each token from, so pi / pi_old compares the distributions really sampled.
    sampling_mask: names.SAMPLING_MASK.literal() = "none"
    # Entropy control by covariance (Cui et al. 2025), options in [algo.clip_cov] / [algo.kl_cov].
    entropy_control: names.ENTROPY_CONTROL.literal() = "none"
    # Each kind's own options (ALGO_TABLES), set exactly when that kind is chosen.
    dual_clip: Optional[DualClipOptions] = None
    dppo_tv: Optional[DppoOptions] = None
    dppo_kl: Optional[DppoOptions] = None
    sapo: Optional[SapoOptions] = None
    dro: Optional[DroOptions] = None
    vespo: Optional[VespoOptions] = None
    reinforce_pp: Optional[ReinforcePPOptions] = None
    gae: Optional[GaeOptions] = None
    seq_mean_token_sum_norm: Optional[SumNormOptions] = None
    token_tis: Optional[TisOptions] = None
    sequence_tis: Optional[TisOptions] = None
    token_mis: Optional[MisOptions] = None
    sequence_mis: Optional[MisOptions] = None
    clip_cov: Optional[ClipCovOptions] = None
    kl_cov: Optional[KlCovOptions] = None

    @model_validator(mode="before")
    @classmethod
    def _kind_tables(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        current = {axis: data.get(axis, cls.model_fields[axis].default) for axis in ALGO_TABLES}
        reader = {kind: f"algo.{axis} = {kind!r} (not {current[axis]!r})" for kind, axis in TABLE_AXIS.items()}
        chosen = [v for v in current.values() if isinstance(v, str)]
        return with_kind_tables("algo", data, ALL_TABLES, chosen, reader)

    def options(self, axis: str) -> Any:
        """The options table of the kind chosen on `axis` ("surrogate", "advantage", ...), None
        when that kind has none: `algo.options("advantage").lam` with advantage = "gae"."""
        return chosen_table(self, ALGO_TABLES[axis], getattr(self, axis))
