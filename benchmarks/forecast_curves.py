"""The forecast benchmark: does `rlvr fit` forecast the final value of runs it has not seen?

    OMP_WAIT_POLICY=PASSIVE python benchmarks/forecast_curves.py            # held-out check
    OMP_WAIT_POLICY=PASSIVE python benchmarks/forecast_curves.py --tune     # refit the constants

Curves (forecast_shapes.py): the recorded runs of the recipes table and synthetic sigmoids,
plateaus, late rises and collapses. Each is cut at 25%, 50% and 75% of its final compute and
the forecast of its final value (scaling/predict.py) is compared with what happened.

Split, fixed before any tuning: recorded runs of the recipes at even positions in the sorted
list of recipe names and synthetic seed 1 are the tuning set; the other recipes and synthetic
seed 2 are held out. `--tune` searches the calibrated constants (tau, noise prior, inflation,
discrepancy) on the tuning set only: the setting with the most useful half-runs among those
whose 90% intervals cover at least COVERAGE_GOAL (0.88) of tuning cases. The held-out figures (docs/compute-curve.md)
come from the default run, which never looks at the tuning set.

Figures: coverage (share of 90% intervals holding the final value, every cut, offered or not),
usefulness (share of half-runs offered at tolerance 0.1 with |forecast - final| <= 0.05), and
the same usefulness for the ScaleRL least-squares fit with the refusal rule it replaces
(`--baseline`: extrapolate only when the ceiling is identified).
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from forecast_shapes import Curve, recorded_curves, synthetic_curves, truncate  # noqa: E402

from rlvr.scaling.predict import ForecastSettings, forecast_grid, prediction_from, problem_of  # noqa: E402
from rlvr.scaling.profile import forecast_profile  # noqa: E402

SHARES = (0.25, 0.5, 0.75)
SYNTHETIC = 150  # curves per set
# Tuning asks 0.88 of a nominal 90% interval: the floor is 0.85 on the held-out set, and
# asking the full 0.9 on tuning curves costs half of the usable half-runs (the collapses and late
# rises, 30% of the synthetic curves, cannot be foreseen from a half-run).
COVERAGE_GOAL = 0.88


def split() -> dict[str, list[Curve]]:
    """{"tuning": [...], "held_out": [...]} as the module docstring fixes it."""
    recorded = recorded_curves()
    recipes = sorted({c.name.split("/")[1] for c in recorded})
    tuning_recipes = set(recipes[::2])
    return {"tuning": [c for c in recorded if c.name.split("/")[1] in tuning_recipes] + synthetic_curves(SYNTHETIC, 1),
            "held_out": [c for c in recorded if c.name.split("/")[1] not in tuning_recipes]
            + synthetic_curves(SYNTHETIC, 2)}


def cases(curves: list[Curve]) -> list[tuple[Curve, float, np.ndarray, np.ndarray]]:
    """(curve, share, compute, reward) for every cut that keeps at least 2 points."""
    out = []
    for curve, share in itertools.product(curves, SHARES):
        cut = truncate(curve, share)
        if cut is not None:
            out.append((curve, share, *cut))
    return out


def profiles(all_cases, settings: ForecastSettings) -> list:
    """(problem, profile) of each case: the costly part, shared by every inflation and discrepancy."""
    out = []
    for curve, _, compute, reward in all_cases:
        problem = problem_of(compute, reward, curve.r0, settings)
        out.append((problem, forecast_profile(problem, forecast_grid(problem, settings),
                                              float(np.log(curve.compute[-1])))))
    return out


def by_tolerance(all_cases, profs, settings: ForecastSettings) -> dict:
    """Usefulness of the half-runs at several tolerances (the user's flag), same intervals."""
    return {str(t): score(all_cases, profs, dataclasses.replace(settings, tolerance=t))["useful"]
            for t in (0.05, 0.1, 0.15, 0.2)}


def score(all_cases, profs, settings: ForecastSettings) -> dict:
    """Coverage, usefulness and widths of one setting over the cases."""
    rows = []
    for (curve, share, _, _), (problem, prof) in zip(all_cases, profs):
        p = prediction_from(prof, problem, float(curve.compute[-1]), settings)
        final = float(curve.reward[-1])
        rows.append((share, curve.kind, p.low <= final <= p.high, abs(p.value - final), p.refused is None,
                     (p.high - p.low) / 2))
    return summarise(rows)


def summarise(rows) -> dict:
    half = [r for r in rows if r[0] == 0.5]
    out = {"cases": len(rows), "coverage": float(np.mean([r[2] for r in rows])),
           "half_runs": len(half), "useful": float(np.mean([r[4] and r[3] <= 0.05 for r in half])),
           "half_offered": float(np.mean([r[4] for r in half])),
           "half_within_005": float(np.mean([r[3] <= 0.05 for r in half])),
           "median_half_width": float(np.median([r[5] for r in rows]))}
    for key, select in (("share", 0), ("kind", 1)):
        for value in sorted({r[select] for r in rows}):
            sub = [r for r in rows if r[select] == value]
            out[f"coverage[{value}]"] = float(np.mean([r[2] for r in sub]))
            out[f"n[{value}]"] = len(sub)
    return out


def tune(all_cases) -> tuple[ForecastSettings, dict]:
    """The most useful setting whose tuning coverage is at least 0.9 (module docstring)."""
    best, best_key = None, None
    for tau, prior in itertools.product((0.25, 0.5, 1.0), (0.02, 0.03)):
        base = ForecastSettings(tau=tau, noise_prior=prior)
        profs = profiles(all_cases, base)
        for inflation, disc in itertools.product((1.5, 2.0, 2.5, 3.0, 4.0), (0.0, 0.02, 0.05, 0.1)):
            settings = dataclasses.replace(base, inflation=inflation, discrepancy=disc)
            result = score(all_cases, profs, settings)
            key = (result["coverage"] >= COVERAGE_GOAL, result["useful"], -result["median_half_width"])
            if best_key is None or key > best_key:
                best, best_key = (settings, result), key
            print(f"tau {tau} prior {prior} k {inflation} delta {disc}: coverage {result['coverage']:.3f} "
                  f"useful {result['useful']:.3f} median half-width {result['median_half_width']:.3f}", flush=True)
    return best


def baseline(all_cases) -> dict:
    """Half-runs the identified-ceiling rule extrapolates: share within 0.05 (useful), share
    extrapolated at all, and share extrapolated but off by more than 0.1 (confidently wrong)."""
    from rlvr.scaling.fit import FitError, FitSettings, fit_sigmoid
    from rlvr.scaling.sigmoid_fit import ExtrapolationRefused

    errors = []
    for curve, share, compute, reward in all_cases:
        if share != 0.5:
            continue
        try:
            fit = fit_sigmoid(compute, reward, FitSettings(r0=curve.r0, resamples=100))
            errors.append(abs(fit.extrapolate(float(curve.compute[-1]))[0] - float(curve.reward[-1])))
        except (FitError, ExtrapolationRefused):
            errors.append(np.nan)
    errors = np.array(errors)
    return {"useful": float(np.mean(errors <= 0.05)), "extrapolated": float(np.mean(np.isfinite(errors))),
            "wrong_by_0.1": float(np.mean(errors > 0.1))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tune", action="store_true", help="search the constants on the tuning set")
    parser.add_argument("--baseline", action="store_true", help="also score the refusal rule it replaces")
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = parser.parse_args()
    sets = {name: cases(curves) for name, curves in split().items()}
    settings = ForecastSettings()
    record: dict = {}
    if args.tune:
        settings, record["tuning"] = tune(sets["tuning"])
        print(f"tuned: {settings}")
    record["settings"] = dataclasses.asdict(settings)
    held_profiles = profiles(sets["held_out"], settings)
    record["held_out"] = score(sets["held_out"], held_profiles, settings)
    record["held_out"]["useful_by_tolerance"] = by_tolerance(sets["held_out"], held_profiles, settings)
    if args.baseline:
        record["held_out"]["baseline"] = baseline(sets["held_out"])
    print(json.dumps(record, indent=1))
    if args.out:
        args.out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
