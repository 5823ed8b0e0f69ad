"""The eval report's pass@k plot draws CoT-pass@k when a reasoning judge was given."""

from __future__ import annotations

from rlvr.evaluate.report import plot_curves


def curve(values):
    return {str(k): {"mean": v, "ci": [v - 0.05, v + 0.05]} for k, v in zip((1, 2, 4), values)}


def test_cot_pass_at_k_is_a_curve_of_the_plot():
    result = {"pass_at_k": curve([0.5, 0.6, 0.7]), "maj_at_k": curve([0.5, 0.55, 0.6])}
    fig = plot_curves([("A", result)])
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["A pass@k", "A maj@k"]
    result["cot"] = {"cot_pass_at_k": curve([0.3, 0.4, 0.45])}
    fig = plot_curves([("A", result)])
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["A pass@k", "A maj@k", "A CoT-pass@k"]
    cot_line = fig.axes[0].containers[-1].lines[0]  # the last errorbar's data line
    assert list(cot_line.get_ydata()) == [0.3, 0.4, 0.45]
