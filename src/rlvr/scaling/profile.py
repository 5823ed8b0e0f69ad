"""Penalised profile likelihood of one quantity of the ScaleRL sigmoid (sigmoid.py).

The quantity q is the reward at a target compute, R(C_T) (a forecast), or the asymptote A, B
or C_mid (a comparison). For each value v on a grid, the other parameters are refitted with q
held at v, and

    J(v) = min_theta  sum_i ((R(C_i; theta) - y_i) / s)^2  +  penalty(theta)        (1)

where s is the noise of one point and the penalty is a weak prior that keeps the unidentified
directions finite (a Gaussian-prior profile likelihood, Pawitan 2001, ch. 2.9):

    penalty = (max(0, ln C_mid - ln C_max) / (tau ln 10))^2  +  (ln B / SIGMA_LOG_B)^2

(a midpoint tau decades beyond the data costs one unit of chi^2; B far from 1 costs a little).
The interval at `level` is {v : J(v) - min J <= k chi2_1(level)} (Wilks), k an inflation
calibrated on the tuning half of benchmarks/forecast_curves.py.

How (1) is minimised: exactly, by enumeration. (ln B, ln C_mid) run over a fine grid of
cells; in each cell the curve is linear in (R0, A),

    R(C_i) = R0 (1 - w_i) + v w_i,    w_i = sigma_i / sigma_T (q = R(C_T)),  w_i = sigma_i (q = A),
    sigma_i = expit(B (ln C_i - ln C_mid)),

so the best R0 is a one-dimensional least-squares solution, clipped to the interval where R0
and A stay inside the reward bounds (the constrained optimum of a convex quadratic in one
variable). No local minima, no starting points. Shapes: compute (N,), grid (G,), cells
(n_B, n_C).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit
from scipy.stats import chi2

SIGMA_LOG_B = 2.0
LOG_B_RANGE = (np.log(0.05), np.log(20.0))
N_LOG_B = 48
DECADES = 3.0  # how far beyond the data ln C_mid may go at all
LOG_C_STEP = 0.08  # cell width in ln C_mid


@dataclass(frozen=True)
class Profile:
    """J over a grid of the quantity: values (G,), objective (G,) (inf where no curve reaches)."""

    values: np.ndarray
    objective: np.ndarray

    @property
    def best(self) -> float:
        """The minimiser, refined by a parabola through the lowest grid point and its neighbours."""
        i = int(np.argmin(self.objective))
        if 0 < i < len(self.values) - 1 and np.all(np.isfinite(self.objective[i - 1:i + 2])):
            jl, j0, jr = self.objective[i - 1:i + 2]
            curvature = jl - 2 * j0 + jr
            if curvature > 0:
                step = self.values[i + 1] - self.values[i]
                return float(self.values[i] + 0.5 * step * (jl - jr) / curvature)
        return float(self.values[i])

    def interval(self, level: float, inflation: float) -> tuple[float, float]:
        """{v : J(v) - min J <= inflation chi2_1(level)}, ends interpolated linearly between grid
        points; an end that reaches the grid's edge is the edge (a bound)."""
        threshold = float(np.min(self.objective)) + inflation * chi2.ppf(level, 1)
        inside = np.flatnonzero(self.objective <= threshold)
        lo_i, hi_i = int(inside.min()), int(inside.max())
        return self._edge(lo_i, lo_i - 1, threshold), self._edge(hi_i, hi_i + 1, threshold)

    def _edge(self, inside: int, outside: int, threshold: float) -> float:
        if outside < 0 or outside >= len(self.values) or not np.isfinite(self.objective[outside]):
            return float(self.values[inside])
        j_in, j_out = self.objective[inside], self.objective[outside]
        t = (threshold - j_in) / (j_out - j_in) if j_out > j_in else 0.0
        return float(self.values[inside] + t * (self.values[outside] - self.values[inside]))


@dataclass(frozen=True)
class Problem:
    """The data of (1): ln C (N,), y (N,), noise s, reward bounds, a fixed R0 or None, tau."""

    log_c: np.ndarray
    reward: np.ndarray
    noise: float
    reward_bounds: tuple[float, float]
    r0: float | None
    tau: float

    @property
    def log_c_max(self) -> float:
        return float(self.log_c.max())


@dataclass(frozen=True)
class Cells:
    """The (ln B, ln C_mid) grid: log_b (n_B,), log_c_mid (n_C,), sigma (n_B, n_C, N), penalty (n_B, n_C)."""

    log_b: np.ndarray
    log_c_mid: np.ndarray
    sigma: np.ndarray
    penalty: np.ndarray


def cells_of(problem: Problem) -> Cells:
    """The enumeration grid of the module docstring, with each cell's prior penalty."""
    log_b = np.linspace(*LOG_B_RANGE, N_LOG_B)
    spread = DECADES * np.log(10.0)
    low, high = problem.log_c.min() - spread, problem.log_c_max + spread
    log_c_mid = np.linspace(low, high, int(np.ceil((high - low) / LOG_C_STEP)) + 1)
    b = np.exp(log_b)[:, None, None]
    sigma = expit(b * (problem.log_c[None, None, :] - log_c_mid[None, :, None]))
    beyond = np.maximum(0.0, log_c_mid - problem.log_c_max) / (problem.tau * np.log(10.0))
    penalty = beyond[None, :] ** 2 + (log_b[:, None] / SIGMA_LOG_B) ** 2
    return Cells(log_b, log_c_mid, sigma, penalty)


@dataclass(frozen=True)
class Moments:
    """Sums over the points of each cell that make the SSE of R0 (1 - w) + v w a quadratic in
    (R0, v): with u = 1 - w, S_uu, S_uw, S_ww, S_uy, S_wy (each (n_B, n_C)) and S_yy."""

    uu: np.ndarray
    uw: np.ndarray
    ww: np.ndarray
    uy: np.ndarray
    wy: np.ndarray
    yy: float

    @classmethod
    def of(cls, w: np.ndarray, y: np.ndarray) -> "Moments":
        u = 1.0 - w
        return cls(np.sum(u * u, -1), np.sum(u * w, -1), np.sum(w * w, -1), u @ y, w @ y, float(y @ y))


def cell_objective(problem: Problem, m: Moments, value: float, r0_range: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """min over R0 in [r0_range] of sum_i ((R0 (1 - w_i) + value w_i - y_i) / s)^2 in every cell,
    from the moments m; inf where that range is empty (or excludes a fixed R0) → (n_B, n_C)."""
    low, high = r0_range
    if problem.r0 is not None:
        r0 = np.full(m.uu.shape, problem.r0)
    else:
        r0 = np.clip((m.uy - value * m.uw) / np.maximum(m.uu, 1e-300), low, high)
    sse = (r0 * r0 * m.uu + value * value * m.ww + m.yy + 2 * r0 * value * m.uw - 2 * r0 * m.uy
           - 2 * value * m.wy)
    feasible = (low <= high) & (r0 >= low - 1e-12) & (r0 <= high + 1e-12)
    feasible &= np.isfinite(sse)  # a midpoint so far out that w overflows: no curve through the data
    return np.where(feasible, np.maximum(sse, 0.0) / problem.noise ** 2, np.inf)


def r0_range_for_forecast(problem: Problem, value: float, sigma_t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """R0 such that R0 and A = (value - R0 (1 - sigma_T)) / sigma_T lie in the reward bounds."""
    low_r, high_r = problem.reward_bounds
    one_minus = np.maximum(1.0 - sigma_t, 1e-300)
    low = np.maximum(low_r, (value - high_r * sigma_t) / one_minus)
    high = np.minimum(high_r, (value - low_r * sigma_t) / one_minus)
    return low, high


def forecast_profile(problem: Problem, grid: np.ndarray, log_c_target: float, cells: Cells | None = None) -> Profile:
    """J(v) of (1) for q = R(C_T), v over grid (G,)."""
    cells = cells or cells_of(problem)
    sigma_t = expit(np.exp(cells.log_b)[:, None] * (log_c_target - cells.log_c_mid[None, :]))  # (n_B, n_C)
    m = Moments.of(cells.sigma / np.maximum(sigma_t, 1e-12)[..., None], problem.reward)
    objective = np.empty(len(grid))
    for i, value in enumerate(grid):
        j = cell_objective(problem, m, float(value), r0_range_for_forecast(problem, float(value), sigma_t))
        objective[i] = float(np.min(j + cells.penalty))
    return Profile(np.asarray(grid, dtype=np.float64), objective)


def parameter_profiles(problem: Problem, a_grid: np.ndarray, cells: Cells | None = None) -> dict[str, Profile]:
    """Profiles of A (over a_grid), B and C_mid (over the cells' grid), from one pass over A."""
    cells = cells or cells_of(problem)
    low_r, high_r = problem.reward_bounds
    bounds = (np.full(cells.penalty.shape, low_r), np.full(cells.penalty.shape, high_r))
    m = Moments.of(cells.sigma, problem.reward)
    full = np.stack([cell_objective(problem, m, float(a), bounds) + cells.penalty for a in a_grid])
    return {"A": Profile(np.asarray(a_grid, dtype=np.float64), full.min(axis=(1, 2))),
            "B": Profile(np.exp(cells.log_b), full.min(axis=(0, 2))),
            "C_mid": Profile(np.exp(cells.log_c_mid), full.min(axis=(0, 1)))}
