"""Fit the ScaleRL sigmoid (sigmoid.py) to (compute, reward) points, with honest uncertainty.

Method:
1. Checks: finite points, compute > 0, at least p + 2 points for p free parameters (4, or 3
   with R0 fixed), and a monotone trend (Spearman rank test, p < `trend_p`); a flat curve
   has nothing to fit and is refused with a FitError.
2. Bounded least squares (scipy.optimize.curve_fit, method "trf") in ln C, from a grid of
   starting points (midpoint at quantiles of the data and beyond, B in {0.5, 1, 2, 4});
   the lowest residual sum of squares wins. Bounds: A, R0 in [0, 1] when every reward is in
   [0, 1] (else the data range widened by its span), B in [0.05, 20], ln C_mid within three
   decades of the data.
3. Residual bootstrap (Efron & Tibshirani 1993, sec. 9.5): y* = R_hat + r*, r* drawn with
   replacement from the residuals scaled by sqrt(N / (N - p)), refitted `resamples` times;
   percentile intervals at `level`. Refits that fail to converge are counted, not hidden.
4. Identification (identify.py): the ceiling A is only trusted when no parameter sits on its
   bound and the intervals of A and ln C_mid are narrow, both in absolute terms and as a
   fraction of the observed range. Otherwise the fit is still reported, but `refusal` says
   why and what more compute would identify it, and `extrapolate` raises instead of answering.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy.optimize import OptimizeWarning, curve_fit
from scipy.stats import spearmanr

from rlvr.errors import RlvrError
from rlvr.scaling.sigmoid import log_sigmoid_reward
from rlvr.scaling.sigmoid_fit import SigmoidFit

B_BOUNDS = (0.05, 20.0)
DECADES = 3.0  # how far beyond the data ln C_mid may go


class FitError(RlvrError):
    """The points cannot support a sigmoid fit (too few, flat, malformed)."""


@dataclass(frozen=True)
class FitSettings:
    """How to fit. `r0`: a fixed R0 (None: fitted); `max_a_ci_width`: the widest interval of A,
    in reward units, at which extrapolation is still offered; `max_ci_fraction`: the widest
    interval of A (of ln C_mid) as a fraction of the observed reward (ln-compute) range."""

    r0: float | None = None
    level: float = 0.95
    resamples: int = 300
    seed: int = 0
    max_a_ci_width: float = 0.1
    max_ci_fraction: float = 0.25
    trend_p: float = 0.05


def check_points(compute: np.ndarray, reward: np.ndarray, n_params: int, trend_p: float) -> None:
    """FitError unless the points are finite, compute > 0, numerous enough, and not flat."""
    if compute.shape != reward.shape or compute.ndim != 1:
        raise FitError(f"compute and reward must be two 1-d arrays of one length, got {compute.shape}, {reward.shape}")
    if not (np.all(np.isfinite(compute)) and np.all(np.isfinite(reward))):
        raise FitError("compute and reward must be finite numbers")
    if np.any(compute <= 0):
        raise FitError("compute must be > 0 at every fitted point (a point at 0 sets R0 instead)")
    need = n_params + 2
    if len(np.unique(compute)) < need:
        raise FitError(f"too few points: {len(np.unique(compute))} distinct compute values, need at least "
                       f"{need} to fit {n_params} parameters with noise to spare")
    if np.ptp(reward) == 0:
        raise FitError(f"flat curve: every reward is {reward[0]:g}; there is no trend to fit")
    rho, p_value = spearmanr(compute, reward)
    if not p_value < trend_p:
        raise FitError(f"flat curve: no monotone trend of reward with compute (Spearman rho = {rho:.2f}, "
                       f"p = {p_value:.2f} >= {trend_p}); more compute or less noise is needed before a fit")


def parameter_bounds(log_c: np.ndarray, reward: np.ndarray, r0_fixed: bool) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds of theta = ([R0,] A, B, ln C_mid), see the module docstring."""
    if reward.min() >= 0 and reward.max() <= 1:
        low_r, high_r = 0.0, 1.0
    else:
        span = float(np.ptp(reward))
        low_r, high_r = float(reward.min()) - span, float(reward.max()) + span
    spread = DECADES * np.log(10.0)
    low = [low_r, B_BOUNDS[0], log_c.min() - spread]
    high = [high_r, B_BOUNDS[1], log_c.max() + spread]
    if not r0_fixed:
        low, high = [low_r] + low, [high_r] + high
    return np.array(low), np.array(high)


def starting_points(log_c: np.ndarray, reward: np.ndarray, r0_fixed: bool, bounds) -> list[np.ndarray]:
    """A grid of starts: A at the best observed reward, R0 at the worst (or at the first for a
    falling curve), ln C_mid at data quantiles and one decade beyond, B in {0.5, 1, 2, 4}."""
    rising = spearmanr(log_c, reward)[0] >= 0
    order = np.argsort(log_c)
    a0, r00 = (reward.max(), reward.min()) if rising else (reward.min(), reward.max())
    mids = list(np.quantile(log_c, [0.2, 0.5, 0.8])) + [log_c.max() + np.log(10.0)]
    starts = []
    for mid in mids:
        for b in (0.5, 1.0, 2.0, 4.0):
            theta = [a0, b, mid] if r0_fixed else [r00 if rising else reward[order[0]], a0, b, mid]
            starts.append(np.clip(theta, bounds[0] + 1e-9, bounds[1] - 1e-9))
    return starts


def model_of(r0: float | None):
    """The curve_fit model: f(ln C, [R0,] A, B, ln C_mid)."""
    if r0 is None:
        return lambda x, r0_, a, b, lcm: log_sigmoid_reward(x, r0_, a, b, lcm)
    return lambda x, a, b, lcm: log_sigmoid_reward(x, r0, a, b, lcm)


def least_squares(log_c, reward, starts, bounds, r0: float | None) -> np.ndarray | None:
    """Best theta over the starting points, by residual sum of squares; None if none converged."""
    model, best, best_sse = model_of(r0), None, np.inf
    for start in starts:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", OptimizeWarning)
                theta, _ = curve_fit(model, log_c, reward, p0=start, bounds=bounds, method="trf", maxfev=4000)
        except RuntimeError:  # no convergence from this start: the other starts decide
            continue
        sse = float(np.sum((model(log_c, *theta) - reward) ** 2))
        if sse < best_sse:
            best, best_sse = theta, sse
    return best


def full_params(theta: np.ndarray, r0: float | None) -> np.ndarray:
    """theta ([R0,] A, B, ln C_mid) → (R0, A, B, C_mid)."""
    r0_, a, b, lcm = theta if r0 is None else (r0, *theta)
    return np.array([r0_, a, b, np.exp(lcm)])


def bootstrap(log_c, reward, theta, bounds, r0: float | None, settings: FitSettings) -> tuple[np.ndarray, int]:
    """Residual bootstrap → (M, 4) parameter draws (R0, A, B, C_mid) and the count of failed refits."""
    model = model_of(r0)
    fitted = model(log_c, *theta)
    residuals = (reward - fitted) * np.sqrt(len(reward) / (len(reward) - len(theta)))
    rng = np.random.default_rng(settings.seed)
    draws, failures = [], 0
    for _ in range(settings.resamples):
        again = least_squares(log_c, fitted + rng.choice(residuals, size=len(reward)), [theta], bounds, r0)
        if again is None:
            failures += 1
        else:
            draws.append(full_params(again, r0))
    return np.array(draws).reshape(-1, 4), failures


def names_at_bound(theta: np.ndarray, bounds, reward: np.ndarray, rmse: float) -> tuple[str, ...]:
    """Parameters of theta on a bound. A or R0 on a bound that the data themselves reach (within
    two RMSE, e.g. accuracy near 1.0, a floor at 0) is a real plateau and is not listed."""
    names = ("R0", "A", "B", "ln C_mid")[4 - len(theta):]
    found = []
    for name, value, low, high in zip(names, theta, *bounds):
        for edge in (low, high):
            if np.isclose(value, edge, atol=1e-3, rtol=1e-4):
                reached = np.min(np.abs(reward - edge)) <= 2 * rmse
                if not (name in ("A", "R0") and reached):
                    found.append(name)
    return tuple(found)


def fit_sigmoid(compute, reward, settings: FitSettings = FitSettings()) -> SigmoidFit:
    """Fit R(C) to points compute (N,), reward (N,); see the module docstring for the method."""
    compute, reward = np.asarray(compute, dtype=np.float64), np.asarray(reward, dtype=np.float64)
    n_params = 3 if settings.r0 is not None else 4
    check_points(compute, reward, n_params, settings.trend_p)
    log_c = np.log(compute)
    bounds = parameter_bounds(log_c, reward, settings.r0 is not None)
    theta = least_squares(log_c, reward, starting_points(log_c, reward, settings.r0 is not None, bounds),
                          bounds, settings.r0)
    if theta is None:
        raise FitError("the least-squares fit did not converge from any starting point")
    draws, failures = bootstrap(log_c, reward, theta, bounds, settings.r0, settings)
    rmse = float(np.sqrt(np.mean((model_of(settings.r0)(log_c, *theta) - reward) ** 2)))
    at_bound = names_at_bound(theta, bounds, reward, rmse)
    return SigmoidFit.build(full_params(theta, settings.r0), draws, failures, r0_fixed=settings.r0 is not None,
                            compute=compute, reward=reward, rmse=rmse, at_bound=tuple(at_bound), level=settings.level,
                            max_a_ci_width=settings.max_a_ci_width, max_ci_fraction=settings.max_ci_fraction)
