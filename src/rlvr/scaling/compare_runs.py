"""`rlvr fit --compare`: which run has the higher asymptote A and which the better efficiency.

Each run's A, B (the steepness in log-compute, ScaleRL's "efficiency") and C_mid (the compute
at half the gain) get a profile-likelihood interval (profile.py) at `level`, from its points
alone, so half-runs get honest, wide intervals instead of a refusal. A verdict names a winner
only when the winner's interval and every other run's interval do not overlap; otherwise it
says the runs are not separated yet (ScaleRL, Khatri et al. 2025, sec. 3: choose recipes by
their fitted A and B on small runs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from rlvr.scaling.predict import ForecastSettings, forecast_grid, problem_of
from rlvr.scaling.profile import parameter_profiles
from rlvr.scaling.sources import CurvePoints

QUANTITIES = {"A": ("higher asymptote", max), "B": ("better efficiency (larger B)", max),
              "C_mid": ("half the gain sooner (smaller C_mid)", min)}


@dataclass(frozen=True)
class RunEstimates:
    """One run's estimates: name → (value, low, high) for A, B and C_mid."""

    name: str
    estimates: dict[str, tuple[float, float, float]]

    def as_dict(self) -> dict:
        return {"name": self.name, **{k: {"value": v[0], "ci": [v[1], v[2]]} for k, v in self.estimates.items()}}


def estimate(points: CurvePoints, settings: ForecastSettings, r0: float | None = None) -> RunEstimates:
    """Profile intervals of A, B and C_mid for one run's points."""
    problem = problem_of(points.compute, points.reward, points.r0 if r0 is None else r0, settings)
    profiles = parameter_profiles(problem, forecast_grid(problem, settings))
    out = {}
    for name, prof in profiles.items():
        low, high = prof.interval(settings.level, settings.inflation)
        best = prof.best if name == "A" else float(prof.values[int(np.argmin(prof.objective))])
        out[name] = (best, low, high)
    return RunEstimates(points.name, out)


def verdicts(runs: Sequence[RunEstimates], level: float) -> list[str]:
    """One line per quantity: the winner, or that the intervals overlap."""
    lines = []
    for name, (what, pick) in QUANTITIES.items():
        winner = pick(runs, key=lambda r: r.estimates[name][0])
        _, w_low, w_high = winner.estimates[name]
        others = [r for r in runs if r is not winner]
        separated = all((w_low > r.estimates[name][2]) if pick is max else (w_high < r.estimates[name][1])
                        for r in others)
        fmt = ".3g" if name == "C_mid" else ".3f"
        values = ", ".join(f"{r.name} {r.estimates[name][0]:{fmt}} [{r.estimates[name][1]:{fmt}}, "
                           f"{r.estimates[name][2]:{fmt}}]" for r in runs)
        verdict = (f"{winner.name}" if separated else
                   f"not separated yet ({winner.name} leads, but the {level:.0%} intervals overlap)")
        lines.append(f"{what}: {verdict}; {name}: {values}")
    return lines
