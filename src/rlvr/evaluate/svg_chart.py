"""Inline SVG line charts for the run report: several series, a shaded band, interval bars.

The y-axis never magnifies float noise: it spans at least NOISE_SPAN of the values' magnitude
(a ratio that stays 1 +- 1e-7 is drawn as a flat line at 1, not as full-height zigzags) and at
least ABS_NOISE_SPAN (a policy loss of 0 to 7e-9 is flat at 0), and a reward-like series in
[0, 1] keeps at least 0.1 of axis so that a 0.01 wobble looks small.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

NOISE_SPAN = 1e-3  # relative: variation below this share of |y| is float noise
ABS_NOISE_SPAN = 1e-6  # absolute: a loss of 0 +- 1e-9 is rounding left by a cancellation
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b")


@dataclass(frozen=True)
class Series:
    """One line: points [(x, y)], its legend name, colour, dashed or not."""

    name: str
    points: list[tuple[float, float]]
    colour: str = COLOURS[0]
    dashed: bool = False


@dataclass(frozen=True)
class Chart:
    """A chart: series, an optional band [(x, low, high)] and interval bars [(x, y, low, high)]."""

    title: str
    series: list[Series]
    x_label: str = "step"
    band: list[tuple[float, float, float]] = field(default_factory=list)
    bars: list[tuple[float, float, float, float]] = field(default_factory=list)
    width: int = 300
    height: int = 150
    note: str = ""


def y_range(values: list[float]) -> tuple[float, float]:
    """(low, high) of the y-axis: the data's range, widened to the minimum spans of the docstring."""
    low, high = min(values), max(values)
    magnitude = max(abs(low), abs(high))
    minimum = max(NOISE_SPAN * magnitude, ABS_NOISE_SPAN)
    if 0 <= low and high <= 1 and high - low < 0.1 and magnitude > 1e-3:
        minimum = 0.1
    if high - low < minimum:
        centre = (low + high) / 2
        low, high = centre - minimum / 2, centre + minimum / 2
        if 0 <= min(values) and low < 0:  # a share stays above 0
            low, high = 0.0, minimum
    return low, high


def svg(chart: Chart, data_key: str = "") -> str:
    """The chart as one <svg>; data_key goes into data-key (the report's tests read it)."""
    pad, w, h = 34, chart.width, chart.height
    xs = [x for s in chart.series for x, _ in s.points] + [b[0] for b in chart.bars] + [b[0] for b in chart.band]
    ys = ([y for s in chart.series for _, y in s.points] + [v for b in chart.bars for v in b[2:]]
          + [v for b in chart.band for v in b[1:]])
    x0, x1 = min(xs), max(xs)
    y0, y1 = y_range(ys)
    sx = lambda x: pad + (x - x0) / ((x1 - x0) or 1) * (w - 2 * pad)  # noqa: E731
    sy = lambda y: h - pad - (y - y0) / ((y1 - y0) or 1) * (h - 2 * pad)  # noqa: E731
    parts = [f"<svg class='metric' data-key='{html.escape(data_key or chart.title)}' width='{w}' height='{h}' "
             f"xmlns='http://www.w3.org/2000/svg'><text x='4' y='12' font-size='11'>{html.escape(chart.title)}</text>",
             f"<text x='2' y='{pad}' font-size='9'>{y1:.4g}</text><text x='2' y='{h - pad}' font-size='9'>{y0:.4g}</text>",
             f"<text x='{pad}' y='{h - 8}' font-size='9'>{html.escape(chart.x_label)} {x0:.4g}</text>",
             f"<text x='{w - pad - 60}' y='{h - 8}' font-size='9'>{x1:.4g}</text>"]
    if chart.band:
        outline = [(sx(x), sy(hi)) for x, _, hi in chart.band] + [(sx(x), sy(lo)) for x, lo, _ in reversed(chart.band)]
        parts.append(f"<polygon class='band' fill='#1f77b4' fill-opacity='0.15' stroke='none' "
                     f"points='{' '.join(f'{a:.1f},{b:.1f}' for a, b in outline)}'/>")
    for s in chart.series:
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in s.points)
        dash = " stroke-dasharray='4 3'" if s.dashed else ""
        parts.append(f"<polyline fill='none' stroke='{s.colour}' stroke-width='1.5'{dash} points='{path}'/>")
        if len(s.points) < 60:
            parts += [f"<circle cx='{sx(x):.1f}' cy='{sy(y):.1f}' r='1.5' fill='{s.colour}'/>" for x, y in s.points]
    for x, y, lo, hi in chart.bars:
        parts.append(f"<g class='interval'><line x1='{sx(x):.1f}' x2='{sx(x):.1f}' y1='{sy(lo):.1f}' y2='{sy(hi):.1f}' "
                     f"stroke='#d62728' stroke-width='2'/><circle cx='{sx(x):.1f}' cy='{sy(y):.1f}' r='3.5' "
                     f"fill='#d62728'/></g>")
    parts += legend(chart.series, w)
    return "".join(parts) + "</svg>"


def legend(series: list[Series], width: int) -> list[str]:
    """Legend entries in the top right corner, one a line, when there is more than one series."""
    if len(series) < 2:
        return []
    return [f"<text x='{width - 150}' y='{24 + 11 * i}' font-size='9' fill='{s.colour}'>{html.escape(s.name)}</text>"
            for i, s in enumerate(series)]
