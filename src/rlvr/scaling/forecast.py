"""A fit put to use: held-out validation, extrapolation to a target, several runs side by side.

Held-out validation: the points are sorted by compute, the first (1 - holdout) share is fitted
and the rest is predicted; each held-out point gets its prediction, the bootstrap band, and
whether the actual value fell inside it. When the fit refuses to extrapolate (the ceiling
is not identified), held-out points beyond the fitted range get no prediction.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from rlvr.scaling.fit import FitError, FitSettings, fit_sigmoid
from rlvr.scaling.sigmoid_fit import ExtrapolationRefused, SigmoidFit
from rlvr.scaling.sources import CurvePoints

GAIN_FRACTION = 0.9  # "reaches 90% of its gain at C = ..."
NOT_SIGNIFICANT = "; the intervals overlap, so not significant"


@dataclass(frozen=True)
class Forecast:
    """One input's fit (or the reason there is none), its held-out points and its target."""

    points: CurvePoints  # all points, fitted and held out
    n_fitted: int
    fit: SigmoidFit | None
    error: str | None
    target: float | None

    @property
    def fitted(self) -> tuple[np.ndarray, np.ndarray]:
        return self.points.compute[:self.n_fitted], self.points.reward[:self.n_fitted]

    @property
    def held_out(self) -> tuple[np.ndarray, np.ndarray]:
        return self.points.compute[self.n_fitted:], self.points.reward[self.n_fitted:]


def make_forecast(points: CurvePoints, settings: FitSettings, *, holdout: float = 0.0,
                  target: float | None = None) -> Forecast:
    """Fit the first (1 - holdout) share of the points; a FitError becomes `error`, not a crash."""
    if not 0 <= holdout < 1:
        raise FitError(f"--holdout must be in [0, 1), got {holdout}")
    n_fitted = len(points.compute) - int(round(holdout * len(points.compute)))
    if points.r0 is not None and settings.r0 is None:
        settings = replace(settings, r0=points.r0)
    try:
        fit = fit_sigmoid(points.compute[:n_fitted], points.reward[:n_fitted], settings)
    except FitError as e:
        return Forecast(points, n_fitted, None, str(e), target)
    return Forecast(points, n_fitted, fit, None, target)


def predict_or_refuse(fit: SigmoidFit, compute: float) -> dict:
    """{"predicted", "low", "high"} at one compute; or, when the fit refuses to extrapolate,
    {"refused": reason, "unidentified": [value, low, high]}: what the unidentified curve would
    say, kept only so that a held-out check can show how far off such a guess is."""
    try:
        value, low, high = fit.extrapolate(compute)
    except ExtrapolationRefused as e:
        band = fit.band([compute])
        guess = [float(fit.predict([compute])[0]), float(band[0][0]), float(band[1][0])]
        return {"refused": str(e), "unidentified": guess}
    return {"predicted": value, "low": low, "high": high}


def holdout_rows(forecast: Forecast) -> list[dict]:
    """Per held-out point: compute, actual, and prediction with band (or the refusal), and
    whether the actual value lies inside the band (of the unidentified guess when refused)."""
    if forecast.fit is None:
        return []
    rows = []
    for c, actual in zip(*forecast.held_out):
        row = {"compute": float(c), "actual": float(actual), **predict_or_refuse(forecast.fit, float(c))}
        _, low, high = guess_of(row)
        row["inside"] = bool(low <= actual <= high)
        rows.append(row)
    return rows


def guess_of(row: dict) -> tuple[float, float, float]:
    """(value, low, high) of a row: the prediction, or the unidentified guess when refused."""
    return (row["predicted"], row["low"], row["high"]) if "predicted" in row else tuple(row["unidentified"])


def holdout_summary(rows: list[dict]) -> dict | None:
    """Mean / max absolute error and band coverage over the held-out points; `refused` says the
    numbers are those of the unidentified guess (the fit itself declined to predict)."""
    if not rows:
        return None
    errors = [abs(guess_of(r)[0] - r["actual"]) for r in rows]
    return {"points": len(rows), "mean_abs_error": float(np.mean(errors)), "max_abs_error": float(np.max(errors)),
            "inside_band": sum(r["inside"] for r in rows), "refused": sum("refused" in r for r in rows)}


def forecast_dict(forecast: Forecast) -> dict:
    """The JSON record of one input (fit.json)."""
    p = forecast.points
    out: dict = {"name": p.name, "x": p.x, "y": p.y, "points": len(p.compute), "fitted": forecast.n_fitted,
                 "error": forecast.error}
    if forecast.fit is None:
        return out
    fit = forecast.fit
    out["fit"] = fit.as_dict()
    value, low, high = fit.compute_at(GAIN_FRACTION)
    out["compute_at_90pct_gain"] = {"value": value, "ci": [low, high]}
    if forecast.target is not None:
        out["target"] = {"compute": forecast.target, **predict_or_refuse(fit, forecast.target)}
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
