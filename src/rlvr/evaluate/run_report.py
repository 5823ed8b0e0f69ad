"""report.html of a training run: one self-contained page, no network resource.

Sections: every metric of metrics.jsonl as an inline SVG line chart, grouped by the prefix
before "/" (the groups of docs/metrics.md: reward, response, policy, eval, monitor, ...);
the reward-vs-compute fit (scaling/) with its refusal when not identified; the monitors'
warnings with the steps they fired at; and a browser over samples.jsonl whose filters (reward
range, flagged only, step, stop reason) run in a script written into the page. An environment
run's row (its `episode`) is shown turn by turn (run_browser.py).
"""

from __future__ import annotations

import html
import json
import math
from collections import defaultdict
from pathlib import Path

from rlvr.errors import RlvrError

STYLE = ("body{font-family:sans-serif;max-width:72em;margin:2em auto;color:#222}"
         ".charts{display:flex;flex-wrap:wrap;gap:8px}.chart{border:1px solid #ddd;padding:4px}"
         "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 6px;font-size:85%;"
         "vertical-align:top;text-align:left}pre{white-space:pre-wrap;margin:0;max-width:50em}"
         ".turn{margin:2px 0}.action{border-left:3px solid #1f77b4;padding-left:4px}"
         ".observation{border-left:3px solid #aaa;padding-left:4px;background:#f4f4f4}.stop{margin:0}")
W, H, PAD = 300, 150, 28


def read_jsonl(path: Path) -> list[dict]:
    """Rows of a jsonl file ([] when absent); a malformed line fails with file:line, except a
    last line cut short by a kill mid-append (a stopped run's folder), which is left out."""
    if not path.is_file():
        return []
    rows, lines = [], path.read_text(encoding="utf-8").splitlines()
    for lineno, line in enumerate(lines, start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                if lineno == len(lines):
                    break
                raise RlvrError(f"{path}:{lineno}: not valid JSON ({e.msg})") from None
    return rows


def series(metrics: list[dict]) -> dict[str, dict[str, list[tuple[float, float]]]]:
    """group -> key -> [(step, value)] for every numeric, finite metric."""
    groups: dict = defaultdict(lambda: defaultdict(list))
    for row in metrics:
        for key, value in row.items():
            if key != "step" and isinstance(value, (int, float)) and math.isfinite(value):
                groups[key.split("/")[0] if "/" in key else "other"][key].append((row["step"], float(value)))
    return groups


def svg_chart(key: str, points: list[tuple[float, float]]) -> str:
    """One line chart as inline SVG: steps on x, the value on y, min and max labelled."""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    sx = lambda x: PAD + (x - x0) / ((x1 - x0) or 1) * (W - 2 * PAD)  # noqa: E731
    sy = lambda y: H - PAD - (y - y0) / ((y1 - y0) or 1) * (H - 2 * PAD)  # noqa: E731
    path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in points)
    dots = "".join(f"<circle cx='{sx(x):.1f}' cy='{sy(y):.1f}' r='1.5'/>" for x, y in points) if len(points) < 60 else ""
    return (f"<div class='chart'><svg class='metric' data-key='{html.escape(key)}' width='{W}' height='{H}' "
            f"xmlns='http://www.w3.org/2000/svg'><text x='4' y='12' font-size='11'>{html.escape(key)}</text>"
            f"<text x='2' y='{PAD}' font-size='9'>{y1:.3g}</text><text x='2' y='{H - PAD}' font-size='9'>{y0:.3g}</text>"
            f"<text x='{PAD}' y='{H - 8}' font-size='9'>step {x0:g}</text>"
            f"<text x='{W - PAD - 40}' y='{H - 8}' font-size='9'>step {x1:g}</text>"
            f"<polyline fill='none' stroke='#1f77b4' stroke-width='1.5' points='{path}'/>{dots}</svg></div>")


def charts_section(metrics: list[dict]) -> str:
    parts = ["<h2>Metrics</h2>"]
    for group, keys in sorted(series(metrics).items()):
        parts.append(f"<h3>{html.escape(group)}</h3><div class='charts'>")
        parts += [svg_chart(key, points) for key, points in sorted(keys.items())]
        parts.append("</div>")
    return "".join(parts)


def fit_section(folder: Path) -> str:
    """The reward-vs-compute sigmoid of eval/accuracy vs tokens, or why there is none."""
    from rlvr.scaling.fit import FitError, FitSettings, fit_sigmoid
    from rlvr.scaling.sources import read_points

    try:
        points = read_points(folder, "tokens")
        fit = fit_sigmoid(points.compute, points.reward, FitSettings(resamples=100))
    except FitError as e:
        return f"<h2>Reward vs compute</h2><p class='fit'>no fit: {html.escape(str(e))}</p>"
    rows = "".join(f"<tr><td>{n}</td><td>{fit.params[n]:.4g}</td><td>[{lo:.4g}, {hi:.4g}]</td></tr>"
                   for n, (lo, hi) in fit.intervals.items())
    verdict = (f"no extrapolation: {fit.refusal}" if fit.refusal else
               "forecast: R(10 x the compute so far) = %.3f [%.3f, %.3f]" % fit.extrapolate(10 * fit.compute_range[1]))
    return (f"<h2>Reward vs compute</h2><p>eval/accuracy vs completion tokens, {fit.n_points} points, "
            f"R(C) = R0 + (A - R0) / (1 + (C_mid / C)^B), 95% bootstrap intervals</p>"
            f"<table><tr><th>param</th><th>value</th><th>interval</th></tr>{rows}</table>"
            f"<p class='fit'>{html.escape(verdict)}</p>")


def monitor_section(metrics: list[dict]) -> str:
    """Steps at which a monitor warned, with the flagged shares of that step."""
    fired = [r for r in metrics if r.get("monitor/warnings")]
    rows = "".join(f"<tr><td>{r['step']}</td><td>{int(r['monitor/warnings'])}</td><td>"
                   + html.escape(", ".join(f"{k} = {v:.3g}" for k, v in sorted(r.items())
                                           if k.endswith("_flagged") and v)) + "</td></tr>" for r in fired)
    return (f"<h2>Monitor warnings</h2><p id='warn-count'>{len(fired)} of {len(metrics)} steps warned</p>"
            f"<table><tr><th>step</th><th>warnings</th><th>flagged shares</th></tr>{rows}</table>")


def write_run_report(folder: Path, out: Path | None = None) -> Path:
    """Write the report of the run folder `folder` (to folder/report.html unless `out`)."""
    from rlvr.evaluate.run_browser import browser_section

    metrics_file = folder / "metrics.jsonl"
    if not metrics_file.is_file():
        raise RlvrError(f"{folder}: no metrics.jsonl (is this a run folder?)")
    metrics = sorted(read_jsonl(metrics_file), key=lambda r: r.get("step", 0))
    samples = read_jsonl(folder / "samples.jsonl")
    out = out or folder / "report.html"
    page = [f"<!doctype html><html><head><meta charset='utf-8'><title>rlvr run {html.escape(folder.name)}</title>"
            f"<style>{STYLE}</style></head><body><h1>rlvr run: {html.escape(folder.name)}</h1>",
            f"<p>{len(metrics)} steps logged, {len(samples)} samples in samples.jsonl</p>",
            charts_section(metrics), fit_section(folder), monitor_section(metrics), browser_section(samples),
            "</body></html>"]
    out.write_text("".join(page), encoding="utf-8")
    return out
