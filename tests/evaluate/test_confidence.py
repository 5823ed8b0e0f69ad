"""Bootstrap intervals over prompts, single and paired."""

from __future__ import annotations

import numpy as np
import pytest

from rlvr.evaluate.confidence import bootstrap_mean, paired_difference


def test_interval_brackets_the_mean_and_is_reproducible():
    values = np.random.default_rng(0).random(200)
    est = bootstrap_mean(values, seed=3)
    assert est.low < est.mean < est.high
    assert est == bootstrap_mean(values, seed=3)
    # ~ normal approximation: mean +- 1.96 sd / sqrt(P)
    half = 1.96 * values.std(ddof=1) / np.sqrt(values.size)
    assert (est.high - est.low) / 2 == pytest.approx(half, rel=0.15)


def test_constant_values_have_a_zero_width_interval():
    est = bootstrap_mean(np.full(10, 0.25))
    assert (est.mean, est.low, est.high) == pytest.approx((0.25, 0.25, 0.25))


def test_paired_interval_is_narrower_than_unpaired_when_models_agree():
    rng = np.random.default_rng(1)
    a = rng.random(300)
    b = np.clip(a + 0.05 + rng.normal(0, 0.02, 300), 0, 1)
    diff = paired_difference(a, b)
    assert 0.03 < diff.low < diff.mean < diff.high < 0.07
    unpaired = bootstrap_mean(b).high - bootstrap_mean(b).low
    assert diff.high - diff.low < unpaired / 5
    with pytest.raises(ValueError, match="one value per prompt"):
        paired_difference(a, b[:-1])
