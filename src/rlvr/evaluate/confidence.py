"""Confidence intervals over prompts: percentile bootstrap of a mean of per-prompt values.

A benchmark score is the mean of per-prompt values v_1..v_P (a pass@k estimate, a maj@k vote,
a 0/1 best-of-n pick). Prompts are the unit of resampling: B resamples of P prompts drawn
with replacement give B means, and the interval is their (alpha/2, 1 - alpha/2) quantiles
(Efron & Tibshirani 1993, ch. 13). The interval therefore covers the variation from *which*
prompts were drawn plus the sampling noise inside each prompt's estimate.

For two models on the same prompts, the paired interval resamples the per-prompt
differences d_p = v^B_p - v^A_p, which is much narrower than two independent intervals when
the models agree on most prompts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Estimate:
    """A mean over prompts and its bootstrap interval."""

    mean: float
    low: float
    high: float

    def as_dict(self) -> dict[str, float | list[float]]:
        return {"mean": self.mean, "ci": [self.low, self.high]}

    def __str__(self) -> str:
        return f"{self.mean:.3f} [{self.low:.3f}, {self.high:.3f}]"


def bootstrap_mean(values: np.ndarray, *, level: float = 0.95, resamples: int = 2000,
                   seed: int = 0) -> Estimate:
    """Mean of values (P,) with a percentile-bootstrap interval at `level` over the P prompts."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"need a non-empty 1-d array of per-prompt values, got shape {values.shape}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    rng = np.random.default_rng(seed)
    index = rng.integers(0, values.size, size=(resamples, values.size))  # (B, P)
    means = values[index].mean(axis=1)  # (B,)
    alpha = (1.0 - level) / 2
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return Estimate(float(values.mean()), float(low), float(high))


def paired_difference(values_a: np.ndarray, values_b: np.ndarray, *, level: float = 0.95,
                      resamples: int = 2000, seed: int = 0) -> Estimate:
    """Mean of v_b - v_a over the same P prompts (both (P,)), with a paired bootstrap interval."""
    values_a, values_b = np.asarray(values_a, float), np.asarray(values_b, float)
    if values_a.shape != values_b.shape:
        raise ValueError(f"paired values need one value per prompt on both sides, got "
                         f"{values_a.shape} and {values_b.shape}")
    return bootstrap_mean(values_b - values_a, level=level, resamples=resamples, seed=seed)
