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
    fit.add_argument("--max-ci", type=float, default=0.1, metavar="WIDTH",
                     help="refuse to extrapolate when the interval of A is wider than WIDTH (default 0.1)")
    fit.add_argument("--max-ci-fraction", type=float, default=0.25, metavar="F",
                     help="refuse when the interval of A (of ln C_mid) is wider than F x the observed reward "
                     "(ln-compute) range (default 0.25)")
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
        return [head, f"  cannot fit: {forecast.error}"]
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
        lines.append(f"  no extrapolation: {fit.refusal}")
    if "target" in record:
        t = record["target"]
        lines.append(f"  R(C = {t['compute']:.3g}) = {t['predicted']:.3f} [{t['low']:.3f}, {t['high']:.3f}]"
                     if "predicted" in t else f"  {t['refused']}")
    lines += held_out_lines(record)
    return lines


def held_out_lines(record: dict) -> list[str]:
    if "held_out" not in record:
        return []
    lines = ["  held out:  compute      actual  predicted  [band]"]
    for r in record["held_out"]["rows"]:
        if "predicted" in r:
            pred = f"{r['predicted']:.3f}  [{r['low']:.3f}, {r['high']:.3f}]"
        else:
            guess = r["unidentified"]
            pred = f"refused  (the unidentified fit would say {guess[0]:.3f} [{guess[1]:.3f}, {guess[2]:.3f}])"
        lines.append(f"    {r['compute']:>16.4g}  {r['actual']:.3f}  {pred}")
    s = record["held_out"]["summary"]
    whose = " of the unidentified guesses" if s["refused"] else ""
    lines.append(f"  held-out mean |error|{whose} {s['mean_abs_error']:.3f} (max {s['max_abs_error']:.3f}); "
                 f"{s['inside_band']}/{s['points']} inside the band")
    return lines


def run_fit(args: argparse.Namespace) -> int:
    from rlvr.scaling.fit import FitSettings
    from rlvr.scaling.forecast import comparison, forecast_dict, make_forecast
    from rlvr.scaling.plot import plot_forecasts
    from rlvr.scaling.sources import read_points

    settings = FitSettings(r0=args.r0, resamples=args.resamples, seed=args.seed, max_a_ci_width=args.max_ci,
                           max_ci_fraction=args.max_ci_fraction)
    points = [read_points(path, args.x, args.y) for path in args.inputs]
    forecasts = [make_forecast(p, settings, holdout=args.holdout, target=args.target) for p in points]
    for forecast in forecasts:
        print("\n".join(describe(forecast)))
    verdicts = comparison(forecasts)
    for line in verdicts:
        print(line)
    args.out.mkdir(parents=True, exist_ok=True)
    record = {"inputs": [forecast_dict(f) for f in forecasts], "comparison": verdicts,
              "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}}
    (args.out / "fit.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    png = plot_forecasts(forecasts, args.out / "fit.png")
    print(f"wrote {args.out / 'fit.json'} and {png}")
    return 2 if any(f.fit is None for f in forecasts) else 0
