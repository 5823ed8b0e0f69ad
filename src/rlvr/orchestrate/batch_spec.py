"""The batch chain's options (orchestrate/batch_builder.py), as plain frozen values: one small
spec per step that has options, and `BatchSpec` holding them all, read from the config.

Torch-free, so that the run plan (orchestrate/plan.py) can hold a `BatchSpec` without loading
what it plans. Each name is checked against its axis's registry (rlvr/names.py), the one list
of the names the chain's tables (`ADVANTAGES`, `MISMATCH_CORRECTIONS`, ...) are bound to.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from rlvr import names
from rlvr.config import Config
from rlvr.config.algo_section import AlgoSection
from rlvr.registry import Registry


def check_name(registry: Registry, value: str) -> None:
    if value not in registry.names:
        raise ValueError(f"{registry.key} = {value!r}: expected one of {', '.join(sorted(registry.names))}")


@dataclass(frozen=True)
class MismatchSpec:
    """`algo.mismatch`, `mismatch_cap`, `mismatch_low` (`rlvr.algo.engine_mismatch`)."""

    kind: str = "none"
    cap: float = 2.0
    low: float = 0.5

    def __post_init__(self) -> None:
        check_name(names.MISMATCH, self.kind)


@dataclass(frozen=True)
class KLSpec:
    """`algo.kl` (estimator), `kl_coef`, `kl_placement`, `kl_clamp` (`rlvr.algo.kl`)."""

    estimator: str = "none"
    coef: float = 0.0
    placement: str = "loss"
    clamp: Optional[float] = None

    def __post_init__(self) -> None:
        check_name(names.KL, self.estimator)
        check_name(names.KL_PLACEMENT, self.placement)


@dataclass(frozen=True)
class AdvantageSpec:
    """`algo.advantage` (kind) and the options its estimators read."""

    kind: str = "group"
    baseline: str = "group_mean"
    scale: str = "group_std"
    eps: float = 1e-4
    gamma: float = 1.0
    lam: float = 0.95
    lam_critic: Optional[float] = None  # None: lam
    lam_alpha: Optional[float] = None  # VAPO's length-adaptive lam when set

    def __post_init__(self) -> None:
        check_name(names.ADVANTAGE, self.kind)
        check_name(names.BASELINE, self.baseline)
        check_name(names.SCALE, self.scale)


@dataclass(frozen=True)
class CovSpec:
    """`algo.entropy_control` (kind), `cov_ratio`, `cov_low`, `cov_high` (Cui et al. 2025)."""

    kind: str = "none"
    ratio: float = 2e-4
    low: float = 1.0
    high: float = 5.0

    def __post_init__(self) -> None:
        check_name(names.ENTROPY_CONTROL, self.kind)


@dataclass(frozen=True)
class BatchSpec:
    """Exactly the options the chain reads, grouped by the step that reads them."""

    max_new_tokens: int = 8  # sampling.max_new_tokens: the budget of the overlong shaping
    overlong_cache: Optional[int] = None  # sampling.overlong_cache
    temperature: float = 1.0  # sampling.temperature: of the trainer's and the reference's log-probs
    mask_truncated: bool = False  # sampling.mask_truncated
    positive_lm_coef: float = 0.0  # algo.positive_lm_coef: only whether it is 0 matters here
    sampling_mask: str = "none"  # algo.sampling_mask: "replay" needs the rollouts' kept sets
    mismatch: MismatchSpec = field(default_factory=MismatchSpec)
    kl: KLSpec = field(default_factory=KLSpec)
    advantage: AdvantageSpec = field(default_factory=AdvantageSpec)
    cov: CovSpec = field(default_factory=CovSpec)

    @classmethod
    def from_config(cls, config: Config) -> "BatchSpec":
        s, a = config.sampling, config.algo
        return cls(max_new_tokens=s.max_new_tokens, overlong_cache=s.overlong_cache, temperature=s.temperature,
                   mask_truncated=s.mask_truncated, positive_lm_coef=a.positive_lm_coef,
                   sampling_mask=a.sampling_mask,
                   mismatch=MismatchSpec(a.mismatch, **table_args(a, "mismatch")),
                   kl=KLSpec(a.kl, coef=a.kl_coef, placement=a.kl_placement, clamp=a.kl_clamp),
                   advantage=AdvantageSpec(a.advantage, baseline=a.baseline, scale=a.scale, eps=a.adv_eps,
                                           **table_args(a, "advantage")),
                   cov=CovSpec(a.entropy_control, **{k: v for k, v in table_args(a, "entropy_control").items()
                                                     if k != "coef"}))  # kl_cov's coef is the objective's


def table_args(algo: AlgoSection, axis: str) -> dict:
    """The options of the kind chosen on `axis` ([algo.gae] ...), none for a kind without a
    table (the spec's defaults then, never read)."""
    options = algo.options(axis)
    return {} if options is None else options.model_dump()
