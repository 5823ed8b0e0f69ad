"""Is the ceiling identified? The one decision that lets a sigmoid fit extrapolate.

A fit of the early rise alone can look precise and still be wrong: a steep sigmoid that
levels off just past the last point fits the onset as well as the true, later bend, and its
bootstrap interval is narrow because every refit makes the same mistake. So extrapolation is
refused (the fit is "not identified") when any of these holds:

- a parameter sits on its bound (the optimiser wanted to go further: the data do not pin
  it down). A or R0 on a bound the data themselves reach (accuracy at 1.0, a floor at 0) is a
  real plateau and does not count;
- the interval of A is wider than `max_a_ci_width` reward units, or wider than
  `max_ci_fraction` of the observed reward range (max - min of the fitted points): a ceiling
  known only to within a large share of the rise seen so far is a guess;
- the interval of ln C_mid is wider than `max_ci_fraction` of the observed ln-compute range;
- more than half of the bootstrap refits failed.

Each refusal says what would identify the ceiling: when the midpoint may lie beyond the
data, how much more compute the run needs (up to the upper end of C_mid's interval, so that
the points pass the bend); when the midpoint is inside the data, less noise (more eval
prompts) or more points past it.
"""

from __future__ import annotations

import numpy as np


def what_would_identify(c_mid_interval: tuple[float, float], compute_max: float, c_mid_at_bound: bool) -> str:
    """The one clause of a refusal that says what more data would identify the ceiling."""
    high = c_mid_interval[1]
    if c_mid_at_bound or not np.isfinite(high):
        return ("more compute would identify it: the midpoint C_mid is not bounded by the data at all, so "
                "continue the run by at least 10x and refit")
    if high > compute_max:
        return (f"more compute would identify it: continue to C ~ {high:.3g} ({high / compute_max:.1f}x the "
                f"compute so far, the upper end of C_mid's interval) so that the points pass the bend")
    return ("the midpoint is inside the data, so more compute alone may not help: less noise (more eval "
            "prompts) or more points past C_mid would identify it")


def interval_reasons(intervals: dict, level: float, reward_span: float, log_c_span: float,
                     max_a_ci_width: float, max_ci_fraction: float) -> list[str]:
    """Reasons from intervals that are too wide (see the module docstring)."""
    reasons = []
    low, high = intervals["A"]
    limit = min(max_a_ci_width, max_ci_fraction * reward_span)
    if not high - low <= limit:
        reasons.append(f"the ceiling is not identified yet: the {level:.0%} interval of A is [{low:.3f}, {high:.3f}], "
                       f"wider than {limit:.3g} (the smaller of {max_a_ci_width:g} and {max_ci_fraction:g} x the "
                       f"observed reward range {reward_span:.3f})")
    c_low, c_high = intervals["C_mid"]
    width = np.log(c_high) - np.log(c_low) if c_low > 0 else np.inf
    if not width <= max_ci_fraction * log_c_span:
        reasons.append(f"the midpoint is not identified: the {level:.0%} interval of C_mid is [{c_low:.3g}, "
                       f"{c_high:.3g}], wider than {max_ci_fraction:g} of the observed compute range in log scale")
    return reasons


def refusal_reasons(fit, at_bound: tuple[str, ...], failures: int, reward_span: float, log_c_span: float,
                    max_a_ci_width: float, max_ci_fraction: float) -> str | None:
    """The reason to refuse extrapolation, ending with what would identify it; None: allowed."""
    reasons = []
    total = failures + len(fit.draws)
    if total and failures > total / 2:
        reasons.append(f"{failures} of {total} bootstrap refits did not converge")
    reasons += interval_reasons(fit.intervals, fit.level, reward_span, log_c_span, max_a_ci_width, max_ci_fraction)
    for name in at_bound:
        reasons.append(f"{name} sits on its bound, so the data do not determine it")
    if not reasons:
        return None
    return "; ".join(reasons) + "; " + what_would_identify(fit.intervals["C_mid"], fit.compute_range[1],
                                                          "ln C_mid" in at_bound)
