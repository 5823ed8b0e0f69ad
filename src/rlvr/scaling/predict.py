"""A forecast of the reward at a target compute, with a calibrated interval (profile.py).

    value  = argmin_v J(v)                      the penalised fit's R(C_T)
    [lo_m, hi_m] = profile interval at `level`  uncertainty of the curve at C_T
    half-widths widened in quadrature by  z * s  (the noise of the one measurement at C_T) and
    delta * ln(C_T / C_max)  (model discrepancy: real curves are not exact sigmoids, and the
    error grows with the distance extrapolated), then clipped to the reward bounds.

The noise s of one point is model-free, from successive differences (von Neumann 1941),
pooled with a prior value so that a curve of a few points is not trusted to be noiseless:

    s_diff^2 = sum_i (y_{i+1} - y_i)^2 / (2 (N - 1)),
    s^2 = (NU0 * s0^2 + (N - 1) * s_diff^2) / (NU0 + N - 1).

The forecast is refused only when the interval's half-width exceeds the caller's
`tolerance`. The constants (tau, k, delta, s0) were tuned on the tuning half of
benchmarks/forecast_curves.py and are checked on its held-out half (docs/compute-curve.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from rlvr.scaling.profile import Problem, Profile, forecast_profile

NU0 = 3.0  # weight of the prior noise s0, in points


@dataclass(frozen=True)
class ForecastSettings:
    """How to forecast. `tolerance`: the widest half-width of the interval at which a forecast
    is still given; `level`: the interval's coverage; the rest are calibrated constants."""

    level: float = 0.9
    tolerance: float = 0.1
    # Tuned by `python benchmarks/forecast_curves.py --tune` on its tuning set (docs/compute-curve.md);
    # the search tried tau 0.25-1, k 1.5-4, delta 0-0.1, s0 0.02-0.03 and chose delta = 0.
    tau: float = 0.25  # decades: scale of the prior on a midpoint beyond the data
    inflation: float = 2.0  # k in profile.py's threshold
    discrepancy: float = 0.0  # delta, reward units per e-fold of extrapolation
    noise_prior: float = 0.03  # s0
    grid: int = 101


@dataclass(frozen=True)
class Prediction:
    """R(target) = value within [low, high] at `level`; `refused` says why it is not offered."""

    target: float
    value: float
    low: float
    high: float
    level: float
    noise: float
    refused: str | None

    def as_dict(self) -> dict:
        return {"compute": self.target, "predicted": self.value, "low": self.low, "high": self.high,
                "level": self.level, "noise": self.noise, "refused": self.refused}


def point_noise(reward: np.ndarray, prior: float) -> float:
    """s of the module docstring, for reward (N,)."""
    n = len(reward)
    diff_sq = float(np.sum(np.diff(reward) ** 2)) / (2 * (n - 1)) if n > 1 else 0.0
    return float(np.sqrt((NU0 * prior ** 2 + (n - 1) * diff_sq) / (NU0 + n - 1)))


def reward_bounds(reward: np.ndarray) -> tuple[float, float]:
    """[0, 1] when every reward is in [0, 1], else the data range widened by its span."""
    if reward.min() >= 0 and reward.max() <= 1:
        return 0.0, 1.0
    span = float(np.ptp(reward)) or 1.0
    return float(reward.min()) - span, float(reward.max()) + span


def problem_of(compute, reward, r0: float | None, settings: ForecastSettings) -> Problem:
    compute, reward = np.asarray(compute, dtype=np.float64), np.asarray(reward, dtype=np.float64)
    if len(compute) < 2 or np.any(compute <= 0) or not np.all(np.isfinite(reward)):
        raise ValueError("a forecast needs at least 2 points with compute > 0 and finite rewards")
    return Problem(np.log(compute), reward, point_noise(reward, settings.noise_prior), reward_bounds(reward),
                   r0, settings.tau)


def forecast_grid(problem: Problem, settings: ForecastSettings) -> np.ndarray:
    return np.linspace(*problem.reward_bounds, settings.grid)


def predict(compute, reward, target: float, settings: ForecastSettings = ForecastSettings(),
            r0: float | None = None) -> Prediction:
    """The forecast of R(target) from points compute (N,), reward (N,); see the module docstring."""
    problem = problem_of(compute, reward, r0, settings)
    prof = forecast_profile(problem, forecast_grid(problem, settings), float(np.log(target)))
    return prediction_from(prof, problem, target, settings)


def prediction_from(prof: Profile, problem: Problem, target: float, settings: ForecastSettings) -> Prediction:
    """The interval of the module docstring from a forecast profile; refused past the tolerance."""
    low_r, high_r = problem.reward_bounds
    value = prof.best
    lo_m, hi_m = prof.interval(settings.level, settings.inflation)
    z = float(norm.ppf(0.5 + settings.level / 2))
    extra = (z * problem.noise) ** 2 + (settings.discrepancy * max(0.0, np.log(target) - problem.log_c_max)) ** 2
    low = max(low_r, value - float(np.sqrt((value - lo_m) ** 2 + extra)))
    high = min(high_r, value + float(np.sqrt((hi_m - value) ** 2 + extra)))
    half = (high - low) / 2
    refused = None
    if half > settings.tolerance:
        refused = (f"the {settings.level:.0%} interval at C = {target:.3g} is [{low:.3f}, {high:.3f}], half-width "
                   f"{half:.3f} > tolerance {settings.tolerance:g}; more points (or less noise) would narrow it")
    return Prediction(float(target), value, low, high, settings.level, problem.noise, refused)
