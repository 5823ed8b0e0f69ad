"""The run report's metric sections: metrics grouped by meaning, constant and duplicate series
folded into one line each.

A key goes to the first section whose rule matches (SECTIONS; any key naming a KL goes to
"KL"); the async section appears only when the run was asynchronous (some async/* value is
not 0). Within a section, a series that never changes is listed on one "constant" line, and a
series equal at every step to an earlier one is drawn once, titled with both names.
"""

from __future__ import annotations

import html
import math
import re
from collections import defaultdict

from rlvr.evaluate.svg_chart import Chart, Series, svg

SECTIONS = (("reward", ("reward/", "groups/", "adv/")), ("eval", ("eval/",)), ("KL", ()),
            ("policy and clipping", ("policy/", "loss/", "train/")), ("lengths", ("response/",)),
            ("monitors", ("monitor/",)), ("async", ("async/",)),
            ("throughput and compute", ("throughput/", "time/", "compute/")), ("other", ("",)))


def section_of(key: str) -> str:
    """The section a metric key belongs to (module docstring)."""
    if "kl" in re.split(r"[/_]", key.lower()):
        return "KL"
    for name, prefixes in SECTIONS:
        if any(key.startswith(p) for p in prefixes):
            return name
    return "other"


def numeric_series(metrics: list[dict]) -> dict[str, list[tuple[float, float]]]:
    """key -> [(step, value)] for every numeric, finite metric."""
    out: dict = defaultdict(list)
    for row in metrics:
        for key, value in row.items():
            if key != "step" and isinstance(value, (int, float)) and not isinstance(value, bool) \
                    and math.isfinite(value):
                out[key].append((row["step"], float(value)))
    return dict(out)


def is_constant(points: list[tuple[float, float]]) -> bool:
    values = [v for _, v in points]
    return max(values) - min(values) <= 1e-12 * max(1.0, abs(values[0]))


def fold(keys: list[str], all_series: dict) -> tuple[list[tuple[str, float]], list[list[str]]]:
    """(constant (key, value) pairs, groups of keys with identical series, first one drawn)."""
    constant, groups = [], []
    for key in sorted(keys):
        points = all_series[key]
        if is_constant(points):
            constant.append((key, points[0][1]))
            continue
        same = next((g for g in groups if all_series[g[0]] == points), None)
        if same is not None:
            same.append(key)
        else:
            groups.append([key])
    return constant, groups


def is_async(all_series: dict) -> bool:
    return any(v != 0 for key, points in all_series.items() if key.startswith("async/") for _, v in points)


def section_html(name: str, keys: list[str], all_series: dict) -> str:
    """One section: its charts, then one line for its constant series."""
    constant, groups = fold(keys, all_series)
    slug = name.replace(" ", "-").lower()
    charts = "".join(f"<div class='chart'>{svg(Chart(' = '.join(g), [Series(g[0], all_series[g[0]])]), g[0])}</div>"
                     for g in groups)
    parts = [f"<section class='metrics' id='section-{slug}'><h3>{html.escape(name)}</h3>"]
    if charts:
        parts.append(f"<div class='charts'>{charts}</div>")
    if constant:
        listed = ", ".join(f"{html.escape(k)} = {v:.4g}" for k, v in constant)
        parts.append(f"<p class='constant'>constant over the run: {listed}</p>")
    return "".join(parts) + "</section>"


def metric_sections(metrics: list[dict]) -> str:
    """Every section in the order of SECTIONS (async only when async)."""
    all_series = numeric_series(metrics)
    by_section: dict = defaultdict(list)
    for key in all_series:
        by_section[section_of(key)].append(key)
    if not is_async(all_series):
        by_section.pop("async", None)
    return "<h2>Metrics</h2>" + "".join(section_html(name, by_section[name], all_series)
                                        for name, _ in SECTIONS if by_section.get(name))
