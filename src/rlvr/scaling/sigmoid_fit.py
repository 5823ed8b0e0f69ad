"""The result of a sigmoid fit: parameters, bootstrap draws, and whether it may extrapolate."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from rlvr.errors import RlvrError
from rlvr.scaling.identify import refusal_reasons
from rlvr.scaling.sigmoid import compute_at_gain, sigmoid_reward

PARAMS = ("R0", "A", "B", "C_mid")


class ExtrapolationRefused(RlvrError):
    """The fit does not identify the ceiling, so a prediction beyond the data would be a guess."""


@dataclass(frozen=True)
class SigmoidFit:
    """A fitted R(C) = R0 + (A - R0) / (1 + (C_mid / C)^B).

    params: the least-squares (R0, A, B, C_mid); draws: (M, 4) bootstrap refits in that order;
    intervals: percentile interval of each parameter at `level`; refusal: None when the
    ceiling is identified, else the one-line reason why extrapolation is refused.
    """

    params: dict[str, float]
    draws: np.ndarray
    intervals: dict[str, tuple[float, float]]
    bootstrap_failures: int
    r0_fixed: bool
    n_points: int
    compute_range: tuple[float, float]
    rmse: float
    level: float
    warnings: tuple[str, ...]
    refusal: str | None

    @classmethod
    def build(cls, params: np.ndarray, draws: np.ndarray, failures: int, *, r0_fixed: bool, compute: np.ndarray,
              reward: np.ndarray, rmse: float, at_bound: tuple[str, ...], level: float, max_a_ci_width: float,
              max_ci_fraction: float) -> "SigmoidFit":
        """Assemble the result and decide, once, whether extrapolation is allowed (identify.py)."""
        alpha = (1 - level) / 2
        intervals = {name: (float(np.quantile(draws[:, i], alpha)), float(np.quantile(draws[:, i], 1 - alpha)))
                     if len(draws) else (float("nan"), float("nan")) for i, name in enumerate(PARAMS)}
        named = dict(zip(PARAMS, (float(v) for v in params)))
        fit = cls(named, draws, intervals, failures, r0_fixed, len(compute),
                  (float(compute.min()), float(compute.max())), rmse, level, (), None)
        refusal = refusal_reasons(fit, at_bound, failures, float(np.ptp(reward)), float(np.ptp(np.log(compute))),
                                  max_a_ci_width, max_ci_fraction)
        return dataclasses.replace(fit, warnings=fit_warnings(fit), refusal=refusal)

    def predict(self, compute) -> np.ndarray:
        """R(C) of the least-squares fit at compute (N,) → (N,)."""
        p = self.params
        return sigmoid_reward(compute, p["R0"], p["A"], p["B"], p["C_mid"])

    def band(self, compute) -> tuple[np.ndarray, np.ndarray]:
        """Pointwise percentile band of R(C) over the bootstrap draws: (low (N,), high (N,))."""
        compute = np.asarray(compute, dtype=np.float64)
        curves = np.array([sigmoid_reward(compute, *d) for d in self.draws])  # (M, N)
        alpha = (1 - self.level) / 2
        return np.quantile(curves, alpha, axis=0), np.quantile(curves, 1 - alpha, axis=0)

    def extrapolate(self, target: float) -> tuple[float, float, float]:
        """(R(target), low, high); raises ExtrapolationRefused when the ceiling is not identified."""
        if self.refusal is not None and target > self.compute_range[1]:
            raise ExtrapolationRefused(f"not extrapolating to C = {target:.3g}: {self.refusal}")
        low, high = self.band([target])
        return float(self.predict([target])[0]), float(low[0]), float(high[0])

    def compute_at(self, fraction: float) -> tuple[float, float, float]:
        """Compute at which a `fraction` of the gain A - R0 is reached, with its interval."""
        value = compute_at_gain(fraction, self.params["B"], self.params["C_mid"])
        draws = [compute_at_gain(fraction, b, c) for b, c in self.draws[:, 2:]]
        alpha = (1 - self.level) / 2
        return value, float(np.quantile(draws, alpha)), float(np.quantile(draws, 1 - alpha))

    def as_dict(self) -> dict:
        """JSON-ready summary (no bootstrap draws)."""
        return {"params": self.params, "intervals": {k: list(v) for k, v in self.intervals.items()},
                "level": self.level, "r0_fixed": self.r0_fixed, "n_points": self.n_points,
                "compute_range": list(self.compute_range), "rmse": self.rmse,
                "bootstrap_resamples": len(self.draws), "bootstrap_failures": self.bootstrap_failures,
                "warnings": list(self.warnings), "refusal": self.refusal}


def fit_warnings(fit: SigmoidFit) -> tuple[str, ...]:
    """Things worth saying about a fit that do not, alone, stop it extrapolating."""
    if fit.params["C_mid"] > fit.compute_range[1]:
        return (f"C_mid = {fit.params['C_mid']:.3g} lies beyond the data (max {fit.compute_range[1]:.3g}): "
                f"the upper half of the curve is extrapolated",)
    return ()
