"""The headline of the run report: what the run reached and where it is going, first on the page.

Two charts and one sentence:
- reward and held-out eval against the step: the training reward (`reward/mean`, else
  `reward/accuracy`), `eval/accuracy`, and the sampled eval metrics when logged (`eval/pass@k`,
  `eval/cot_pass@k`: CoT-pass@k, docs/evaluation.md);
- `eval/accuracy` against compute (completion tokens), with the ScaleRL sigmoid fit and its
  bootstrap band over the data, and the forecast at twice the compute so far with its
  calibrated 90% interval (scaling/predict.py), or the reason there is none.
"""

from __future__ import annotations

import html
import re

import numpy as np

from rlvr.evaluate.svg_chart import COLOURS, Chart, Series, svg

FORECAST_FACTOR = 2.0  # forecast at this multiple of the compute so far
HEADLINE_W, HEADLINE_H = 460, 240
EVAL_EXTRA = re.compile(r"^eval/(cot_)?pass@\d+$")


def step_chart(all_series: dict) -> Chart | None:
    """Reward and eval metrics against the step; None when the run logged neither."""
    reward = next((k for k in ("reward/mean", "reward/accuracy") if k in all_series), None)
    keys = ([reward] if reward else []) + [k for k in ("eval/accuracy",) if k in all_series]
    keys += sorted(k for k in all_series if EVAL_EXTRA.match(k))
    if not keys:
        return None
    series = [Series(k, all_series[k], COLOURS[i % len(COLOURS)], dashed=k.startswith("eval/cot"))
              for i, k in enumerate(keys)]
    return Chart("reward and held-out eval vs step", series, "step", width=HEADLINE_W, height=HEADLINE_H)


def compute_chart(folder) -> tuple[Chart | None, str]:
    """eval/accuracy vs completion tokens with the fit and the forecast; (None, why) without points."""
    from rlvr.scaling.fit import FitError, FitSettings, fit_sigmoid
    from rlvr.scaling.predict import ForecastSettings, predict
    from rlvr.scaling.sources import read_points

    try:
        points = read_points(folder, "tokens")
    except FitError as e:
        return None, f"no compute curve: {e}"
    measured = Series("eval/accuracy", list(zip(points.compute.tolist(), points.reward.tolist())))
    chart = Chart("eval/accuracy vs compute (completion tokens)", [measured], "tokens", width=HEADLINE_W,
                  height=HEADLINE_H)
    notes = []
    try:
        fit = fit_sigmoid(points.compute, points.reward, FitSettings(resamples=100))
        grid = np.linspace(points.compute.min(), points.compute.max() * FORECAST_FACTOR, 60)
        low, high = fit.band(grid[grid <= points.compute.max()])
        chart.series.append(Series(f"fit A={fit.params['A']:.3f} B={fit.params['B']:.2f}",
                                   list(zip(grid.tolist(), fit.predict(grid).tolist())), COLOURS[1], dashed=True))
        chart.band.extend(zip(grid.tolist(), low.tolist(), high.tolist()))
    except FitError as e:
        notes.append(f"no sigmoid fit: {e}")
    if len(points.compute) >= 2:
        target = float(points.compute.max()) * FORECAST_FACTOR
        settings = ForecastSettings()
        p = predict(points.compute, points.reward, target, settings)
        chart.bars.append((target, p.value, p.low, p.high))
        notes.insert(0, f"forecast at {FORECAST_FACTOR:g}x the compute so far (C = {target:.3g}): "
                        f"{p.value:.3f} [{p.low:.3f}, {p.high:.3f}], {p.level:.0%} interval"
                        + (f"; wider than the tolerance {settings.tolerance:g} (rlvr fit --tolerance), so not a usable "
                           f"forecast yet" if p.refused else ""))
    return chart, "; ".join(notes)


def headline_sentence(all_series: dict) -> str:
    """The last and best eval/accuracy and the last training reward."""
    parts = []
    if "eval/accuracy" in all_series:
        points = all_series["eval/accuracy"]
        best = max(points, key=lambda p: p[1])
        parts.append(f"eval/accuracy {points[-1][1]:.3f} at step {points[-1][0]:g} (best {best[1]:.3f} at step "
                     f"{best[0]:g}, first {points[0][1]:.3f})")
    for key in ("reward/mean", "reward/accuracy"):
        if key in all_series:
            parts.append(f"{key} {all_series[key][-1][1]:.3f} at the last step")
            break
    return "; ".join(parts) or "this run logged no reward and no eval"


def headline_section(folder, all_series: dict) -> str:
    """The headline block (id 'headline'), placed first on the page."""
    charts = []
    by_step = step_chart(all_series)
    if by_step is not None:
        charts.append(f"<div class='chart'>{svg(by_step, 'headline/step')}</div>")
    by_compute, note = compute_chart(folder)
    if by_compute is not None:
        charts.append(f"<div class='chart'>{svg(by_compute, 'headline/compute')}</div>")
    return (f"<section id='headline'><p class='headline'>{html.escape(headline_sentence(all_series))}</p>"
            f"<div class='charts'>{''.join(charts)}</div>"
            f"<p class='fit'>{html.escape(note)}</p></section>")
