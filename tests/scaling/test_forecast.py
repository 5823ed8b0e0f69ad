"""Held-out validation, targets, side-by-side comparison and the plot."""

from __future__ import annotations

import numpy as np
import pytest

from rlvr.scaling import FitSettings, sigmoid_reward
from rlvr.scaling.forecast import comparison, forecast_dict, make_forecast
from rlvr.scaling.plot import plot_forecasts
from rlvr.scaling.sources import CurvePoints

QUICK = FitSettings(resamples=60)


def points(name: str, a: float, c_mid: float, high: float = 6, seed: int = 0) -> CurvePoints:
    compute = np.logspace(2, high, 30)
    reward = sigmoid_reward(compute, 0.1, a, 1.5, c_mid) + np.random.default_rng(seed).normal(0, 0.01, 30)
    return CurvePoints(name, compute, reward, "flops", "reward")


def test_holdout_predicts_the_rest_within_its_band():
    forecast = make_forecast(points("run", 0.8, 1e4), QUICK, holdout=0.3, target=1e8)
    record = forecast_dict(forecast)
    assert (record["points"], record["fitted"]) == (30, 21)
    summary = record["held_out"]["summary"]
    # every held-out forecast holds the truth; the calibrated intervals (an upper end up to 0.95:
    # a flatter curve with a higher ceiling fits the first 70% too) are within the 0.1 tolerance
    # for the first two, up to 1.4x the fitted compute
    assert summary["points"] == 9 and summary["refused"] == 7
    assert summary["mean_abs_error"] < 0.02 and summary["inside_band"] == 9
    assert record["target"]["predicted"] == pytest.approx(0.8, abs=0.02)
    assert record["target"]["low"] < 0.8 < record["target"]["high"]
    c90 = record["compute_at_90pct_gain"]
    assert c90["ci"][0] < c90["value"] < c90["ci"][1]  # true 1e4 * 9^(1/1.5) = 4.33e4
    assert c90["value"] == pytest.approx(4.33e4, rel=0.15)


def test_an_unidentified_ceiling_still_forecasts_near_points_and_refuses_far_ones():
    # Up to C_mid / 3: A is not identified. The next held-out points (up to 1.2x the compute) are
    # forecast, the rest (to 3x) get intervals too wide to offer; every interval holds the truth,
    # and 10^4 x further (C = 1e8) is refused too.
    forecast = make_forecast(points("early", 0.8, 1e4, high=4.0), QUICK, holdout=0.25, target=1e8)
    record = forecast_dict(forecast)
    assert record["fit"]["refusal"] and record["target"]["refused"] and "> tolerance 0.1" in record["target"]["refused"]
    assert record["target"]["low"] < 0.8 < record["target"]["high"]
    rows = record["held_out"]["rows"]
    assert len(rows) == 8 and all(r["inside"] for r in rows)
    assert [r["refused"] is None for r in rows] == [True] * 2 + [False] * 6


def test_a_fit_error_is_recorded_not_raised():
    few = CurvePoints("few", np.array([1.0, 2.0, 3.0]), np.array([0.1, 0.2, 0.3]), "flops", "reward")
    forecast = make_forecast(few, QUICK, target=4.0)
    assert forecast.fit is None and "too few points" in forecast.error
    assert forecast_dict(forecast)["error"] == forecast.error
    assert forecast.at_target is not None  # three points are too few for the fit, not for a forecast


def test_side_by_side_names_ceiling_and_speed(tmp_path):
    high = make_forecast(points("high-ceiling", 0.8, 1e4), QUICK)
    fast = make_forecast(points("fast", 0.6, 1e3, seed=1), QUICK)
    lines = comparison([high, fast])
    assert lines[0].startswith("higher ceiling: high-ceiling (A = 0.")
    assert abs(high.fit.params["A"] - 0.8) < 0.02 and abs(fast.fit.params["A"] - 0.6) < 0.02
    assert lines[1].startswith("faster (smaller C_mid): fast (C_mid = ")
    assert not any("not significant" in line for line in lines)
    png = plot_forecasts([high, fast], tmp_path / "fit.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def test_a_run_without_an_identified_ceiling_is_left_out_of_the_verdicts():
    high = make_forecast(points("high-ceiling", 0.8, 1e4), QUICK)
    early = make_forecast(points("early", 0.8, 1e4, high=3.5), QUICK)
    assert early.fit is not None and early.fit.refusal is not None
    assert comparison([high, early]) == ["not compared (no fit, or ceiling not identified): early"]
