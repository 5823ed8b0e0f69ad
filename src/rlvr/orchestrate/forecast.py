"""The compute-curve forecast during training (`eval.forecast_every`): refit the sigmoid of
held-out accuracy against cumulative FLOPs and log what it says, or why it says nothing."""

from __future__ import annotations

import numpy as np

from rlvr.scaling.fit import FitError, FitSettings, fit_sigmoid

GAIN = 0.9


def forecast_metrics(rows: list[dict], metric: str = "eval/accuracy") -> tuple[dict[str, float], str]:
    """Metrics and a one-line message from the run's metrics so far (rows of metrics.jsonl)."""
    points = [(r["compute/flops"], r[metric]) for r in rows
              if isinstance(r.get(metric), (int, float)) and isinstance(r.get("compute/flops"), (int, float))]
    if not points:
        return {}, "forecast: no eval points yet"
    compute, reward = (np.array(v, dtype=np.float64) for v in zip(*points))
    try:
        fit = fit_sigmoid(compute, reward, FitSettings(resamples=100))
    except FitError as e:
        return {"forecast/available": 0.0}, f"forecast: not yet ({e})"
    low, high = fit.intervals["A"]
    metrics = {"forecast/available": 1.0, "forecast/A": fit.params["A"], "forecast/A_low": low,
               "forecast/A_high": high, "forecast/B": fit.params["B"], "forecast/C_mid": fit.params["C_mid"]}
    if fit.refusal is not None:
        metrics["forecast/refused"] = 1.0
        return metrics, f"forecast: A = {fit.params['A']:.3f} [{low:.3f}, {high:.3f}], no extrapolation ({fit.refusal})"
    c90 = fit.compute_at(GAIN)[0]
    metrics.update({"forecast/refused": 0.0, "forecast/C_90": c90})
    return metrics, (f"forecast: A = {fit.params['A']:.3f} [{low:.3f}, {high:.3f}], "
                     f"reaches 90% of its gain at C = {c90:.3g} FLOPs")
