"""fit.png: points, fitted sigmoid with its bootstrap band, and the extrapolation, per input.

Solid line: the fit over the fitted compute range. Dashed line and lighter band: the
extrapolation beyond it (up to the target or the held-out points), drawn only when the fit
identifies its ceiling. Filled markers: fitted points; open markers: held-out points.
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
    fit = forecast.fit
    if fit is None:
        return
    low, fit_end, end = curve_range(forecast)
    inside = np.geomspace(low, fit_end, 200)
    ax.plot(inside, fit.predict(inside), "-", color=colour,
            label=f"{name}: fit A={fit.params['A']:.3f} B={fit.params['B']:.2f} C_mid={fit.params['C_mid']:.3g}")
    ax.fill_between(inside, *fit.band(inside), color=colour, alpha=0.2, lw=0)
    if fit.refusal is None and end > fit_end:
        beyond = np.geomspace(fit_end, end, 100)
        ax.plot(beyond, fit.predict(beyond), "--", color=colour, label=f"{name}: extrapolation")
        ax.fill_between(beyond, *fit.band(beyond), color=colour, alpha=0.1, lw=0)
    held_end = float(held_c.max()) if len(held_c) else fit_end
    if fit.refusal is not None and held_end > fit_end:
        beyond = np.geomspace(fit_end, held_end, 100)
        ax.plot(beyond, fit.predict(beyond), ":", color="grey", lw=1,
                label=f"{name}: unidentified, not a forecast (held-out check only)")
    if forecast.target is not None and fit.refusal is None:
        ax.plot([forecast.target], fit.predict([forecast.target]), "*", color=colour, ms=12)


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
    refused = [f.points.name for f in forecasts if f.fit is not None and f.fit.refusal is not None]
    if refused:
        ax.set_title(f"no extrapolation for {', '.join(refused)}: ceiling not identified", fontsize=9)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out
