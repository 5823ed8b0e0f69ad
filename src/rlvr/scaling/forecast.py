"""A fit put to use: forecasts at a target, held-out validation, several runs side by side.

Forecasts (a `--target`, each held-out point) come from predict.py: the penalised profile
likelihood of R(C) at that compute, with a calibrated interval, refused only when the interval
is wider than the caller's tolerance. The sigmoid fit (fit.py) and its bootstrap describe the
curve seen so far; whether its ceiling A is identified (identify.py) is reported, but no longer
decides whether a forecast is given. Held-out validation: the points are sorted by compute, the
first (1 - holdout) share is fitted and each remaining point is forecast from it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from rlvr.scaling.fit import FitError, FitSettings, fit_sigmoid
from rlvr.scaling.predict import ForecastSettings, Prediction, predict
from rlvr.scaling.sigmoid_fit import SigmoidFit
from rlvr.scaling.sources import CurvePoints

GAIN_FRACTION = 0.9  # "reaches 90% of its gain at C = ..."
NOT_SIGNIFICANT = "; the intervals overlap, so not significant"


@dataclass(frozen=True)
class Forecast:
    """One input's fit (or the reason there is none), its forecasts at the target and at the
    held-out points (None where fewer than 2 points were fitted)."""

    points: CurvePoints  # all points, fitted and held out
    n_fitted: int
    fit: SigmoidFit | None
    error: str | None
    target: float | None
    at_target: Prediction | None = None
    held_out_predictions: tuple[Prediction, ...] = ()

    @property
    def fitted(self) -> tuple[np.ndarray, np.ndarray]:
        return self.points.compute[:self.n_fitted], self.points.reward[:self.n_fitted]

    @property
    def held_out(self) -> tuple[np.ndarray, np.ndarray]:
        return self.points.compute[self.n_fitted:], self.points.reward[self.n_fitted:]


def make_forecast(points: CurvePoints, settings: FitSettings, *, holdout: float = 0.0,
                  target: float | None = None, forecasting: ForecastSettings = ForecastSettings()) -> Forecast:
    """Fit the first (1 - holdout) share of the points and forecast the target and the rest;
    a FitError becomes `error`, not a crash (the forecasts need only two points)."""
    if not 0 <= holdout < 1:
        raise FitError(f"--holdout must be in [0, 1), got {holdout}")
    n_fitted = len(points.compute) - int(round(holdout * len(points.compute)))
    if points.r0 is not None and settings.r0 is None:
        settings = replace(settings, r0=points.r0)
    compute, reward = points.compute[:n_fitted], points.reward[:n_fitted]
    fit, error = None, None
    try:
        fit = fit_sigmoid(compute, reward, settings)
    except FitError as e:
        error = str(e)
    if n_fitted < 2:
        return Forecast(points, n_fitted, fit, error, target)
    ask = lambda c: predict(compute, reward, float(c), forecasting, settings.r0)  # noqa: E731
    return Forecast(points, n_fitted, fit, error, target, ask(target) if target is not None else None,
                    tuple(ask(c) for c in points.compute[n_fitted:]))


def holdout_rows(forecast: Forecast) -> list[dict]:
    """Per held-out point: compute, actual, the forecast with its interval, whether it was
    offered (within the tolerance), and whether the actual value lies inside the interval."""
    rows = []
    for prediction, actual in zip(forecast.held_out_predictions, forecast.held_out[1]):
        rows.append({**prediction.as_dict(), "actual": float(actual),
                     "inside": bool(prediction.low <= actual <= prediction.high)})
    return rows


def holdout_summary(rows: list[dict]) -> dict | None:
    """Mean / max absolute error and interval coverage over the held-out points, and how many
    forecasts were refused (interval wider than the tolerance; their errors still count)."""
    if not rows:
        return None
    errors = [abs(r["predicted"] - r["actual"]) for r in rows]
    return {"points": len(rows), "mean_abs_error": float(np.mean(errors)), "max_abs_error": float(np.max(errors)),
            "inside_band": sum(r["inside"] for r in rows), "refused": sum(r["refused"] is not None for r in rows)}


def forecast_dict(forecast: Forecast) -> dict:
    """The JSON record of one input (fit.json)."""
    p = forecast.points
    out: dict = {"name": p.name, "x": p.x, "y": p.y, "points": len(p.compute), "fitted": forecast.n_fitted,
                 "error": forecast.error}
    if forecast.at_target is not None:
        out["target"] = forecast.at_target.as_dict()
    if forecast.fit is not None:
        out["fit"] = forecast.fit.as_dict()
        value, low, high = forecast.fit.compute_at(GAIN_FRACTION)
        out["compute_at_90pct_gain"] = {"value": value, "ci": [low, high]}
    rows = holdout_rows(forecast)
    if rows:
        out["held_out"] = {"rows": rows, "summary": holdout_summary(rows)}
    return out


def comparison(forecasts: Sequence[Forecast]) -> list[str]:
    """Side-by-side verdicts: which run has the higher ceiling, which gets there with less compute.
    A verdict whose intervals overlap says so instead of naming a winner."""
    if len(forecasts) < 2:
        return []
    ok = [f for f in forecasts if f.fit is not None and f.fit.refusal is None]
    left_out = [f.points.name for f in forecasts if f not in ok]
    lines = [f"not compared (no fit, or ceiling not identified): {', '.join(left_out)}"] if left_out else []
    if len(ok) < 2:
        return lines
    by_a = sorted(ok, key=lambda f: -f.fit.params["A"])
    best, second = by_a[0], by_a[1]
    overlap = best.fit.intervals["A"][0] <= second.fit.intervals["A"][1]
    lines.append(f"higher ceiling: {best.points.name} (A = {best.fit.params['A']:.3f} vs "
                 f"{second.fit.params['A']:.3f})" + (NOT_SIGNIFICANT if overlap else ""))
    by_c = sorted(ok, key=lambda f: f.fit.params["C_mid"])
    fast, slow = by_c[0], by_c[1]
    overlap = fast.fit.intervals["C_mid"][1] >= slow.fit.intervals["C_mid"][0]
    lines.append(f"faster (smaller C_mid): {fast.points.name} (C_mid = {fast.fit.params['C_mid']:.3g} vs "
                 f"{slow.fit.params['C_mid']:.3g})" + (NOT_SIGNIFICANT if overlap else ""))
    return lines
