"""`rlvr fit`: the reward-vs-compute sigmoid of one or more runs (or CSVs), side by side."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # scipy and matplotlib wait until the command runs
    from rlvr.scaling.forecast import Forecast

HELP = "fit R(C) = R0 + (A - R0) / (1 + (C_mid / C)^B) to runs or CSVs, with bootstrap intervals"


def add_parser(sub: argparse._SubParsersAction) -> None:
    fit = sub.add_parser("fit", help=HELP, description=HELP + ". See docs/compute-curve.md.")
    fit.add_argument("inputs", nargs="+", metavar="RUN_DIR_OR_CSV", help="run folders and/or CSV files")
    fit.add_argument("--x", default="tokens", choices=["flops", "tokens", "seconds"], help="compute axis")
    fit.add_argument("--y", help="reward column (default: eval/accuracy in a run, reward in a CSV)")
    fit.add_argument("--target", type=float, help="compute at which to extrapolate the reward")
    fit.add_argument("--holdout", type=float, default=0.0, metavar="FRACTION",
                     help="fit the first 1-FRACTION of the points (by compute), predict the rest")
    fit.add_argument("--r0", type=float, help="fix R0, the reward before training (else fitted)")
    fit.add_argument("--tolerance", type=float, default=0.1, metavar="HALF_WIDTH",
                     help="refuse a forecast (--target, held-out points) only when its interval's half-width "
                     "exceeds HALF_WIDTH reward units (default 0.1)")
    fit.add_argument("--level", type=float, default=0.9, help="coverage of the forecast and --compare intervals "
                     "(default 0.9; calibrated at 0.9, see docs/compute-curve.md)")
    fit.add_argument("--compare", action="store_true",
                     help="compare the inputs: which has the higher asymptote A and the better efficiency (B, "
                     "C_mid), with profile-likelihood intervals")
    fit.add_argument("--max-ci", type=float, default=0.1, metavar="WIDTH",
                     help="call the ceiling A not identified when its interval is wider than WIDTH (default 0.1)")
    fit.add_argument("--max-ci-fraction", type=float, default=0.25, metavar="F",
                     help="... or wider than F x the observed reward range (the same for ln C_mid; default 0.25)")
    fit.add_argument("--resamples", type=int, default=300, help="bootstrap refits (default 300)")
    fit.add_argument("--seed", type=int, default=0)
    fit.add_argument("--out", type=Path, default=Path("fit-results"), help="output folder")


def interval(name: str, value: float, ci: tuple[float, float], fmt: str = ".3f") -> str:
    return f"  {name:<6} {value:{fmt}}  [{ci[0]:{fmt}}, {ci[1]:{fmt}}]"


def describe(forecast: Forecast) -> list[str]:
    """The printed lines of one input."""
    from rlvr.scaling.forecast import forecast_dict

    p, record = forecast.points, forecast_dict(forecast)
    head = f"{p.name}: {len(p.compute)} points ({p.y} vs {p.x})"
    if forecast.n_fitted < len(p.compute):
        head += f", fitted on the first {forecast.n_fitted}, {len(p.compute) - forecast.n_fitted} held out"
    if forecast.fit is None:
        return [head, f"  cannot fit: {forecast.error}"] + target_lines(record) + held_out_lines(record)
    fit = forecast.fit
    lines = [head + f"; {fit.level:.0%} bootstrap intervals"]
    for name in ("R0", "A", "B", "C_mid"):
        fmt = ".3g" if name == "C_mid" else ".3f"
        fixed = "  (fixed)" if name == "R0" and fit.r0_fixed else ""
        lines.append(interval(name, fit.params[name], fit.intervals[name], fmt) + fixed)
    c90 = record["compute_at_90pct_gain"]
    lines.append(f"  90% of the gain A - R0 at C = {c90['value']:.3g} [{c90['ci'][0]:.3g}, {c90['ci'][1]:.3g}]")
    lines += [f"  warning: {w}" for w in fit.warnings]
    if fit.refusal:
        lines.append(f"  ceiling A not identified: {fit.refusal}")
    return lines + target_lines(record) + held_out_lines(record)


def target_lines(record: dict) -> list[str]:
    """The forecast at --target, or why it is refused (its interval is still shown)."""
    if "target" not in record:
        return []
    t = record["target"]
    band = f"{t['predicted']:.3f} [{t['low']:.3f}, {t['high']:.3f}] ({t['level']:.0%} forecast interval)"
    if t["refused"] is None:
        return [f"  R(C = {t['compute']:.3g}) = {band}"]
    return [f"  no forecast at C = {t['compute']:.3g}: {t['refused']}"]


def held_out_lines(record: dict) -> list[str]:
    if "held_out" not in record:
        return []
    lines = ["  held out:  compute      actual  forecast  [interval]"]
    for r in record["held_out"]["rows"]:
        refused = "  (wider than the tolerance: refused)" if r["refused"] else ""
        lines.append(f"    {r['compute']:>16.4g}  {r['actual']:.3f}  {r['predicted']:.3f}  "
                     f"[{r['low']:.3f}, {r['high']:.3f}]{refused}")
    s = record["held_out"]["summary"]
    lines.append(f"  held-out mean |error| {s['mean_abs_error']:.3f} (max {s['max_abs_error']:.3f}); "
                 f"{s['inside_band']}/{s['points']} inside the interval; {s['refused']} refused")
    return lines


def run_fit(args: argparse.Namespace) -> int:
    from rlvr.scaling.fit import FitError, FitSettings
    from rlvr.scaling.forecast import comparison, forecast_dict, make_forecast
    from rlvr.scaling.plot import plot_forecasts
    from rlvr.scaling.predict import ForecastSettings
    from rlvr.scaling.sources import read_points

    settings = FitSettings(r0=args.r0, resamples=args.resamples, seed=args.seed, max_a_ci_width=args.max_ci,
                           max_ci_fraction=args.max_ci_fraction)
    if not 0 < args.level < 1 or not args.tolerance > 0:
        raise FitError(f"--level must be in (0, 1) and --tolerance > 0, got {args.level} and {args.tolerance}")
    forecasting = ForecastSettings(level=args.level, tolerance=args.tolerance)
    points = [read_points(path, args.x, args.y) for path in args.inputs]
    forecasts = [make_forecast(p, settings, holdout=args.holdout, target=args.target, forecasting=forecasting)
                 for p in points]
    for forecast in forecasts:
        print("\n".join(describe(forecast)))
    verdicts = comparison(forecasts)
    compared = compare_lines(forecasts, forecasting, args) if args.compare else None
    for line in verdicts + (compared["verdicts"] if compared else []):
        print(line)
    args.out.mkdir(parents=True, exist_ok=True)
    record = {"inputs": [forecast_dict(f) for f in forecasts], "comparison": verdicts, "compare": compared,
              "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}}
    (args.out / "fit.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    png = plot_forecasts(forecasts, args.out / "fit.png")
    print(f"wrote {args.out / 'fit.json'} and {png}")
    return 2 if any(f.fit is None and (f.at_target is None or f.at_target.refused) for f in forecasts) else 0


def compare_lines(forecasts, forecasting, args: argparse.Namespace) -> dict:
    """--compare: each run's A, B, C_mid with profile intervals (of its fitted points), and verdicts."""
    from dataclasses import replace

    from rlvr.scaling.compare_runs import estimate, verdicts
    from rlvr.scaling.fit import FitError

    if len(forecasts) < 2:
        raise FitError("--compare needs at least two runs or CSVs")
    runs = []
    for f in forecasts:
        fitted = replace(f.points, compute=f.fitted[0], reward=f.fitted[1])
        try:
            runs.append(estimate(fitted, forecasting, args.r0))
        except ValueError as e:
            raise FitError(f"--compare: {f.points.name}: {e}") from None
    return {"runs": [r.as_dict() for r in runs], "verdicts": verdicts(runs, forecasting.level)}
