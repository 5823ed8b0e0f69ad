"""benchmarks/forecast_curves.py: the split keeps the held-out curves out of the tuning, every
shape is made, the cuts keep what they say, and (slow) the held-out figures of
docs/compute-curve.md: 90% intervals cover the final value at least 85% of the time."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import forecast_curves  # noqa: E402
import forecast_shapes  # noqa: E402


def test_the_tuning_and_held_out_sets_share_no_curve_and_no_recipe():
    sets = forecast_curves.split()
    tuning, held = sets["tuning"], sets["held_out"]
    assert not {c.name for c in tuning} & {c.name for c in held}
    recipes = [{c.name.split("/")[1] for c in s if c.kind == "recorded"} for s in (tuning, held)]
    assert recipes[0] and recipes[1] and not recipes[0] & recipes[1]
    synthetic = [c for c in held if c.kind != "recorded"]
    assert len(synthetic) == forecast_curves.SYNTHETIC and {c.kind for c in synthetic} == set(forecast_shapes.SHAPES)
    assert len([c for c in held if c.kind == "recorded"]) >= 20  # the recipes table's runs


def test_cuts_keep_the_share_of_compute():
    curve = forecast_shapes.Curve("c", "sigmoid", np.arange(1, 9) * 10.0, np.linspace(0.1, 0.8, 8), None)
    compute, reward = forecast_shapes.truncate(curve, 0.5)
    assert compute.tolist() == [10.0, 20.0, 30.0, 40.0] and reward[-1] == pytest.approx(0.4)
    assert forecast_shapes.truncate(curve, 0.1) is None  # fewer than 2 points: dropped


@pytest.mark.slow
def test_held_out_coverage_and_usefulness():
    cases = forecast_curves.cases(forecast_curves.split()["held_out"])
    settings = forecast_curves.ForecastSettings()
    result = forecast_curves.score(cases, forecast_curves.profiles(cases, settings), settings)
    assert result["coverage"] >= 0.85
    assert result["useful"] >= 0.1 and result["half_within_005"] >= 0.6  # docs/compute-curve.md: 0.148, 0.691
