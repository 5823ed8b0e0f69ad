"""fit.png: points, fitted sigmoid with its bootstrap band, and the extrapolation, per input.

Solid line: the fit over the fitted compute range, with its bootstrap band. Dashed line: the
fitted curve beyond it (up to the target or the held-out points). Error bars: the forecasts
(predict.py) at the target (a star) and at the held-out points, with their calibrated
intervals; a refused forecast (interval wider than the tolerance) is drawn hollow and grey.
Filled markers: fitted points; open markers: held-out points.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import matplotlib

matplotlib.use("Agg")  # no display on servers and CI
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from rlvr.scaling.forecast import Forecast  # noqa: E402

COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")


def curve_range(forecast: Forecast) -> tuple[float, float, float]:
    """(lowest compute, end of the fitted range, end of the drawn range) for one input."""
    fit_c, _ = forecast.fitted
    ends = [float(forecast.points.compute.max())] + ([forecast.target] if forecast.target else [])
    return float(fit_c.min()), float(fit_c.max()), max(ends)


def draw_one(ax, forecast: Forecast, colour: str) -> None:
    """Points, fit, band and (when allowed) the extrapolation of one input."""
    name = forecast.points.name
    ax.plot(*forecast.fitted, "o", color=colour, ms=4, label=f"{name}: fitted points")
    held_c, held_r = forecast.held_out
    if len(held_c):
        ax.plot(held_c, held_r, "o", mfc="none", color=colour, ms=5, label=f"{name}: held out")
    draw_predictions(ax, forecast, colour)
    fit = forecast.fit
    if fit is None:
        return
    low, fit_end, end = curve_range(forecast)
    inside = np.geomspace(low, fit_end, 200)
    ax.plot(inside, fit.predict(inside), "-", color=colour,
            label=f"{name}: fit A={fit.params['A']:.3f} B={fit.params['B']:.2f} C_mid={fit.params['C_mid']:.3g}")
    ax.fill_between(inside, *fit.band(inside), color=colour, alpha=0.2, lw=0)
    if end > fit_end:
        beyond = np.geomspace(fit_end, end, 100)
        ax.plot(beyond, fit.predict(beyond), "--", color=colour, lw=1, label=f"{name}: fitted curve, extended")


def draw_predictions(ax, forecast: Forecast, colour: str) -> None:
    """Error bars of the forecasts at the held-out points and the target."""
    shown = list(forecast.held_out_predictions) + ([forecast.at_target] if forecast.at_target else [])
    for p in shown:
        is_target = p is forecast.at_target
        face = colour if p.refused is None else "grey"
        ax.errorbar([p.target], [p.value], yerr=[[p.value - p.low], [p.high - p.value]], fmt="*" if is_target else "_",
                    color=face, ms=12 if is_target else 8, capsize=3, lw=1, alpha=1.0 if p.refused is None else 0.5)
    if shown:
        ax.plot([], [], "_", color=colour, label=f"{forecast.points.name}: forecasts, {shown[0].level:.0%} intervals")


def plot_forecasts(forecasts: Sequence[Forecast], out: Path) -> Path:
    """Draw every input on one log-compute axis and save the PNG to `out`."""
    fig, ax = plt.subplots(figsize=(8, 4.8))
    for colour, forecast in zip(COLOURS * 4, forecasts):
        draw_one(ax, forecast, colour)
    first = forecasts[0].points
    ax.set_xscale("log")
    ax.set_xlabel("compute" if first.x == "compute" else f"compute ({first.x})")
    ax.set_ylabel(first.y)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="lower right")
    refused = [f.points.name for f in forecasts if f.at_target is not None and f.at_target.refused]
    if refused:
        ax.set_title(f"no forecast for {', '.join(refused)}: interval wider than the tolerance", fontsize=9)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out
