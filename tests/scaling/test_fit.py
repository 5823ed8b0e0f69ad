"""The ScaleRL sigmoid fit (arXiv:2510.13786, eq. 1): recovery of known parameters from noisy
synthetic curves, and the failure modes (too few points, flat, no curvature yet)."""

from __future__ import annotations

import numpy as np
import pytest

from rlvr.scaling import ExtrapolationRefused, FitError, FitSettings, compute_at_gain, fit_sigmoid, sigmoid_reward

TRUE = {"R0": 0.1, "A": 0.8, "B": 1.5, "C_mid": 1e4}
QUICK = FitSettings(resamples=60)


def synthetic(seed: int, low: float = 2, high: float = 6, points: int = 30, noise: float = 0.01):
    """Points on the true curve, log-spaced compute 10^low .. 10^high, Gaussian noise of sd `noise`."""
    compute = np.logspace(low, high, points)
    rng = np.random.default_rng(seed)
    return compute, sigmoid_reward(compute, *TRUE.values()) + rng.normal(0, noise, points)


def test_curve_by_hand():
    # At C_mid half of the gain: 0.1 + 0.7 / 2 = 0.45; one decade later with B = 1.5:
    # 0.1 + 0.7 / (1 + 10^-1.5) = 0.1 + 0.7 / 1.031623 = 0.1 + 0.678543 = 0.778543
    assert sigmoid_reward([1e4, 1e5], *TRUE.values()) == pytest.approx([0.45, 0.778543], abs=1e-6)
    assert compute_at_gain(0.5, 1.5, 1e4) == pytest.approx(1e4)
    assert compute_at_gain(0.9, 1.0, 1e4) == pytest.approx(9e4)  # C_mid * 9^(1/B)
    assert np.isfinite(sigmoid_reward([1e-30, 1e30], 0.1, 0.8, 20.0, 1e4)).all()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_recovers_known_parameters_within_tolerance(seed):
    # Stated tolerances for 30 points over 4 decades, noise sd 0.01 (about a 2,000-prompt eval):
    # A within 0.02, B within 15%, C_mid within 12% (0.05 in log10), R0 within 0.03.
    fit = fit_sigmoid(*synthetic(seed), QUICK)
    p = fit.params
    assert abs(p["A"] - TRUE["A"]) < 0.02
    assert abs(p["B"] / TRUE["B"] - 1) < 0.15
    assert abs(np.log10(p["C_mid"] / TRUE["C_mid"])) < 0.05
    assert abs(p["R0"] - TRUE["R0"]) < 0.03
    assert fit.refusal is None and fit.rmse < 0.015
    low, high = fit.intervals["A"]
    assert low < p["A"] < high and high - low < 0.05
    value, low, high = fit.extrapolate(1e8)
    assert low <= value <= high and abs(value - 0.8) < 0.02


def test_fixed_r0_and_a_falling_curve():
    compute, reward = synthetic(3)
    fit = fit_sigmoid(compute, reward, FitSettings(r0=0.1, resamples=30))
    assert fit.r0_fixed and fit.params["R0"] == 0.1 and abs(fit.params["A"] - 0.8) < 0.02
    falling = fit_sigmoid(compute, 1.0 - reward, QUICK)  # R0 = 0.9 falling to A = 0.2
    assert abs(falling.params["A"] - 0.2) < 0.02 and abs(falling.params["R0"] - 0.9) < 0.03


def test_too_few_points():
    compute, reward = synthetic(0, points=5)
    with pytest.raises(FitError, match="too few points: 5 distinct compute values, need at least 6"):
        fit_sigmoid(compute, reward, QUICK)
    with pytest.raises(FitError, match="compute must be > 0"):
        fit_sigmoid(np.r_[0.0, compute], np.r_[0.1, reward], QUICK)
    with pytest.raises(FitError, match="finite"):
        fit_sigmoid(compute, np.r_[reward[:-1], np.nan], QUICK)


def test_flat_curve_is_refused():
    compute = np.logspace(2, 6, 30)
    noise = np.random.default_rng(0).normal(0, 0.01, 30)
    with pytest.raises(FitError, match="flat curve: no monotone trend"):
        fit_sigmoid(compute, 0.5 + noise, QUICK)
    with pytest.raises(FitError, match="flat curve: every reward is 0.5"):
        fit_sigmoid(compute, np.full(30, 0.5), QUICK)


def test_no_curvature_yet_fits_but_refuses_to_extrapolate():
    # Only the early rise (up to C_mid / 3): the ceiling is not in the data.
    compute, reward = synthetic(0, low=2, high=np.log10(TRUE["C_mid"] / 3), points=20)
    fit = fit_sigmoid(compute, reward, QUICK)
    assert fit.refusal is not None and "ceiling is not identified" in fit.refusal
    with pytest.raises(ExtrapolationRefused, match="not extrapolating to C = 1e\\+06"):
        fit.extrapolate(1e6)
    inside, low, high = fit.extrapolate(float(compute[10]))  # interpolation is still answered
    assert low <= inside <= high


def test_the_interval_threshold_is_what_stops_a_wrong_ceiling():
    # The same early-only points with the check switched off: the fit answers, and its
    # ceiling is far from the true 0.8. This is the wild extrapolation the default refuses.
    compute, reward = synthetic(0, low=2, high=np.log10(TRUE["C_mid"] / 3), points=20)
    loose = fit_sigmoid(compute, reward, FitSettings(resamples=60, max_a_ci_width=2.0, max_ci_fraction=np.inf))
    assert loose.refusal is None
    assert abs(loose.params["A"] - TRUE["A"]) > 0.3
