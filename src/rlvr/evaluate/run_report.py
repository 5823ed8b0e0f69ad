"""report.html of a training run: one self-contained page, no network resource.

Order: the headline (run_headline.py: reward and held-out eval against step and compute, the
fit and its forecast interval drawn); the monitors' warnings (one line when none fired); every
metric of metrics.jsonl as inline SVG charts in sections by meaning, constant and duplicate
series folded (report_sections.py, svg_chart.py); the fit's parameters; and a browser over
samples.jsonl whose filters (reward range, flagged only, step, stop reason) run in a script
written into the page. An environment run's row (its `episode`) is shown turn by turn
(run_browser.py).
"""

from __future__ import annotations

import html
import json
from pathlib import Path

from rlvr.errors import RlvrError

STYLE = ("body{font-family:sans-serif;max-width:72em;margin:2em auto;color:#222}"
         ".charts{display:flex;flex-wrap:wrap;gap:8px}.chart{border:1px solid #ddd;padding:4px}"
         "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 6px;font-size:85%;"
         "vertical-align:top;text-align:left}pre{white-space:pre-wrap;margin:0;max-width:50em}"
         ".turn{margin:2px 0}.action{border-left:3px solid #1f77b4;padding-left:4px}"
         ".observation{border-left:3px solid #aaa;padding-left:4px;background:#f4f4f4}.stop{margin:0}")


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


def fit_section(folder: Path) -> str:
    """The parameters of the reward-vs-compute sigmoid of eval/accuracy vs tokens (drawn in the
    headline), or why there is none."""
    from rlvr.scaling.fit import FitError, FitSettings, fit_sigmoid
    from rlvr.scaling.sources import read_points

    try:
        points = read_points(folder, "tokens")
        fit = fit_sigmoid(points.compute, points.reward, FitSettings(resamples=100))
    except FitError as e:
        return f"<h2>Reward vs compute</h2><p class='fit'>no fit: {html.escape(str(e))}</p>"
    rows = "".join(f"<tr><td>{n}</td><td>{fit.params[n]:.4g}</td><td>[{lo:.4g}, {hi:.4g}]</td></tr>"
                   for n, (lo, hi) in fit.intervals.items())
    ceiling = f"ceiling A not identified: {fit.refusal}" if fit.refusal else "ceiling A identified"
    return (f"<h2>Reward vs compute</h2><p>eval/accuracy vs completion tokens, {fit.n_points} points, "
            f"R(C) = R0 + (A - R0) / (1 + (C_mid / C)^B), 95% bootstrap intervals</p>"
            f"<table><tr><th>param</th><th>value</th><th>interval</th></tr>{rows}</table>"
            f"<p class='ceiling'>{html.escape(ceiling)}</p>")


def monitor_section(metrics: list[dict]) -> str:
    """Steps at which a monitor warned, with the flagged shares of that step."""
    fired = [r for r in metrics if r.get("monitor/warnings")]
    rows = "".join(f"<tr><td>{r['step']}</td><td>{int(r['monitor/warnings'])}</td><td>"
                   + html.escape(", ".join(f"{k} = {v:.3g}" for k, v in sorted(r.items())
                                           if k.endswith("_flagged") and v)) + "</td></tr>" for r in fired)
    count = f"<p id='warn-count'>{len(fired)} of {len(metrics)} steps warned</p>"
    if not fired:  # no table under "0 of N steps warned"
        return f"<h2>Monitor warnings</h2>{count}"
    return (f"<h2>Monitor warnings</h2>{count}"
            f"<table><tr><th>step</th><th>warnings</th><th>flagged shares</th></tr>{rows}</table>")


def emulated_section(metrics: list[dict]) -> str:
    """The flag of a run whose environment a model emulated (env/emulated; rlvr.envs.emulated)."""
    steps = sum(1 for r in metrics if r.get("env/emulated"))
    if not steps:
        return ""
    return (f"<p id='emulated' class='ceiling'>Emulated environment: in {steps} of {len(metrics)} steps the "
            "observations and rewards came from a language model given the environment's spec "
            "(env.kind = 'emulated'), not from the environment itself. Its fidelity: "
            "<code>rlvr env check REAL --against EMULATED</code> (docs/env-openenv.md).</p>")


def write_run_report(folder: Path, out: Path | None = None) -> Path:
    """Write the report of the run folder `folder` (to folder/report.html unless `out`)."""
    from rlvr.evaluate.report_sections import metric_sections, numeric_series
    from rlvr.evaluate.run_browser import browser_section
    from rlvr.evaluate.run_headline import headline_section

    metrics_file = folder / "metrics.jsonl"
    if not metrics_file.is_file():
        raise RlvrError(f"{folder}: no metrics.jsonl (is this a run folder?)")
    metrics = sorted(read_jsonl(metrics_file), key=lambda r: r.get("step", 0))
    samples = read_jsonl(folder / "samples.jsonl")
    out = out or folder / "report.html"
    page = [f"<!doctype html><html><head><meta charset='utf-8'><title>rlvr run {html.escape(folder.name)}</title>"
            f"<style>{STYLE}</style></head><body><h1>rlvr run: {html.escape(folder.name)}</h1>",
            f"<p>{len(metrics)} steps logged, {len(samples)} samples in samples.jsonl</p>", emulated_section(metrics),
            headline_section(folder, numeric_series(metrics)), monitor_section(metrics), metric_sections(metrics),
            fit_section(folder), browser_section(samples),
            "</body></html>"]
    out.write_text("".join(page), encoding="utf-8")
    return out
