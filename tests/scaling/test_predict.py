"""Forecasts with calibrated intervals (scaling/predict.py, scaling/profile.py) on hand-made curves."""

from __future__ import annotations

import numpy as np
import pytest

from rlvr.scaling import sigmoid_reward
from rlvr.scaling.fit import FitSettings, fit_sigmoid
from rlvr.scaling.predict import ForecastSettings, point_noise, predict
from rlvr.scaling.profile import Profile

COMPUTE = np.arange(1, 31) * 100.0  # evaluated every 100 units of compute, as eval.every makes it


def noisy(r0, a, b, c_mid, sd, seed, compute=COMPUTE):
    return sigmoid_reward(compute, r0, a, b, c_mid) + np.random.default_rng(seed).normal(0, sd, len(compute))


def test_profile_interval_of_a_quadratic_is_the_wilks_interval():
    # J(v) = ((v - 0.5) / 0.01)^2: J - min <= chi2_1(0.9) = 2.7055 <=> |v - 0.5| <= 0.01 * sqrt(2.7055) = 0.016448
    grid = np.linspace(0, 1, 2001)
    prof = Profile(grid, ((grid - 0.5) / 0.01) ** 2)
    low, high = prof.interval(0.9, 1.0)
    assert low == pytest.approx(0.5 - 0.016448, abs=2e-4) and high == pytest.approx(0.5 + 0.016448, abs=2e-4)
    assert prof.interval(0.9, 4.0)[1] == pytest.approx(0.5 + 2 * 0.016448, abs=2e-4)  # k = 4 doubles it
    assert Profile(grid[::100], ((grid[::100] - 0.52) / 0.1) ** 2).best == pytest.approx(0.52, abs=1e-9)


def test_profile_reaching_the_bound_ends_at_the_bound():
    grid = np.linspace(0, 1, 11)
    prof = Profile(grid, np.where(grid >= 0.6, 0.0, 100.0))  # flat from 0.6 up: the data cannot tell
    low, high = prof.interval(0.9, 1.0)
    assert high == 1.0 and 0.5 < low < 0.6


def test_point_noise_pools_successive_differences_with_the_prior():
    # diffs 0.1, -0.1: sum of squares 0.02 / (2 * 2) = 0.005; (3 * 0.02^2 + 2 * 0.005) / 5 = 0.00224
    assert point_noise(np.array([0.0, 0.1, 0.0]), 0.02) == pytest.approx(np.sqrt(0.00224))


def test_profile_minimum_is_the_least_squares_forecast():
    y = noisy(0.2, 0.7, 1.5, 800, 0.01, 0)
    fit = fit_sigmoid(COMPUTE, y, FitSettings(r0=0.2, resamples=5))
    p = predict(COMPUTE, y, 6000.0, r0=0.2)
    assert p.value == pytest.approx(float(fit.predict([6000.0])[0]), abs=0.01)
    assert p.refused is None and p.low < 0.7 < p.high


def test_half_runs_get_forecasts_that_cover_the_final_value():
    # 30 sigmoid runs (A 0.5-0.9, B 1-3, C_mid at 0.2-0.5 of the run), noise 0.01, cut at half.
    # The defaults are calibrated on a mixture in which 30% of the curves break the sigmoid after
    # the cut, so on clean curves the intervals are wide (half-widths 0.07-0.18): all 30 cover,
    # 24 point forecasts are within 0.05, but only about a quarter are offered at tolerance 0.1.
    rng = np.random.default_rng(7)
    covered, close, offered = 0, 0, 0
    for seed in range(30):
        r0, a, b, c_mid = 0.2, rng.uniform(0.5, 0.9), rng.uniform(1, 3), rng.uniform(0.2, 0.5) * COMPUTE[-1]
        y = noisy(r0, a, b, c_mid, 0.01, seed)
        p = predict(COMPUTE[:15], y[:15], float(COMPUTE[-1]), r0=r0)
        covered += p.low <= y[-1] <= p.high
        close += abs(p.value - y[-1]) <= 0.05
        offered += p.refused is None
    assert covered >= 28 and close >= 22 and offered >= 5


def test_an_early_rise_gets_a_wide_interval_and_a_tight_tolerance_refuses():
    y = noisy(0.1, 0.8, 1.5, 1e4, 0.01, 3, compute=np.logspace(2, 3.5, 20))  # up to C_mid / 3
    p = predict(np.logspace(2, 3.5, 20), y, 1e6, r0=0.1)
    assert p.low < 0.8 < p.high and p.high - p.low > 0.3 and p.refused and "tolerance 0.1" in p.refused
    tight = predict(COMPUTE, noisy(0.2, 0.7, 1.5, 800, 0.01, 0), 6000.0, ForecastSettings(tolerance=0.01), r0=0.2)
    assert tight.refused and "> tolerance 0.01" in tight.refused


def test_a_plateau_forecasts_its_level_with_r0_fitted():
    y = noisy(0.3, 0.6, 2.0, 300, 0.01, 4)
    p = predict(COMPUTE[:15], y[:15], float(COMPUTE[-1]))
    assert p.refused is None and abs(p.value - 0.6) < 0.03 and p.low <= y[-1] <= p.high


def test_a_forecast_needs_two_points():
    with pytest.raises(ValueError, match="at least 2 points"):
        predict([100.0], [0.3], 1000.0)


@pytest.mark.parametrize("r0", [0.2, None])
def test_enumerated_profile_equals_a_direct_loop_with_the_prior(r0):
    """forecast_profile's moments and clipping against the definition (profile.py eq. 1), cell by
    cell on a coarse grid: min over R0 of the squared residuals over s^2, plus the prior."""
    from scipy.special import expit

    from rlvr.scaling.profile import Cells, Problem, cells_of, forecast_profile

    compute, y = np.array([100.0, 200.0, 300.0, 400.0]), np.array([0.25, 0.4, 0.47, 0.5])
    problem = Problem(np.log(compute), y, 0.02, (0.0, 1.0), r0, 0.25)
    full = cells_of(problem)
    cells = Cells(full.log_b[::6], full.log_c_mid[::8], full.sigma[::6, ::8], full.penalty[::6, ::8])
    log_t, v = np.log(800.0), 0.55
    r0_grid = np.array([r0]) if r0 is not None else np.linspace(0, 1, 4001)
    best = np.inf
    for i, lb in enumerate(cells.log_b):
        for j, lcm in enumerate(cells.log_c_mid):
            b = np.exp(lb)
            sig, sig_t = expit(b * (problem.log_c - lcm)), expit(b * (log_t - lcm))
            a = r0_grid + (v - r0_grid) / sig_t  # R(C_T) held at v
            curves = r0_grid[:, None] + (a - r0_grid)[:, None] * sig[None, :]
            sse = np.where((a >= 0) & (a <= 1), np.sum((curves - y) ** 2, axis=1) / 0.02 ** 2, np.inf)
            # the prior: a midpoint beyond the data, in units of tau decades, and ln B / 2
            prior = (max(0.0, lcm - np.log(400.0)) / (0.25 * np.log(10))) ** 2 + (lb / 2) ** 2
            best = min(best, float(sse.min()) + prior)
    got = forecast_profile(problem, np.array([v]), log_t, cells).objective[0]
    assert np.isfinite(best) and got == pytest.approx(best, rel=1e-3, abs=1e-3)
