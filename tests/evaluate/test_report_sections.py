"""The run report's sections (report_sections.py) and its y-axes (svg_chart.py)."""

from __future__ import annotations

import pytest

from rlvr.evaluate.report_sections import fold, metric_sections, section_of
from rlvr.evaluate.svg_chart import y_range


def test_float_noise_is_not_magnified():
    low, high = y_range([1.0 - 1e-7, 1.0 + 1e-7])  # an on-policy ratio: 1 up to rounding
    assert high - low == pytest.approx(1e-3)  # NOISE_SPAN x |1|: the 2e-7 wobble is 0.02% of the axis
    assert y_range([0.50, 0.51]) == pytest.approx((0.455, 0.555))  # a share gets at least 0.1 of axis
    assert y_range([0.0, 0.8]) == (0.0, 0.8)  # a real change is drawn at full height
    assert y_range([0.0, 7.45e-9]) == (0.0, 1e-6)  # a policy loss of 0 up to rounding: flat at 0
    assert y_range([0.0, 0.001]) == (0.0, 0.001)  # a small quantity (a KL of 1e-3) keeps its own scale
    assert y_range([0.0, 0.02]) == (0.0, 0.1)  # a share near 0 widened stays above 0


def test_keys_go_to_sections_by_meaning():
    assert [section_of(k) for k in ("reward/mean", "policy/approx_kl", "policy/kl_ref", "reward/kl_penalty_mean",
                                    "policy/clip_low_frac", "response/length_mean", "async/staleness", "eval/pass@4",
                                    "monitor/cot_flagged", "time/step_s", "custom")] == [
        "reward", "KL", "KL", "KL", "policy and clipping", "lengths", "async", "eval", "monitors",
        "throughput and compute", "other"]


def test_constant_and_duplicate_series_fold():
    series = {"a": [(1, 0.5), (2, 0.7)], "b": [(1, 0.5), (2, 0.7)], "c": [(1, 3.0), (2, 3.0)], "d": [(1, 0.0), (2, 1.0)]}
    assert fold(list(series), series) == ([("c", 3.0)], [["a", "b"], ["d"]])


def test_the_async_section_appears_only_in_an_async_run():
    sync = [{"step": s, "async/staleness": 0.0, "reward/mean": s / 2} for s in (1, 2)]
    assert "section-async" not in metric_sections(sync)
    stale = [{"step": s, "async/staleness": float(s), "reward/mean": s / 2} for s in (1, 2)]
    assert "section-async" in metric_sections(stale)
