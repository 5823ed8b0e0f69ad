"""The judge metrics on hand-computed cases (the arithmetic is in the comments)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.evaluate import judge_metrics as jm


def test_classification_counts_precision_recall_brier():
    p = np.array([0.9, 0.6, 0.4, 0.5, 0.1])
    y = np.array([1, 0, 1, 1, 0])
    r = jm.classification(p, y, threshold=0.5)
    # decisions [1, 1, 0, 1, 0] (0.5 >= 0.5 is yes): tp = rows 0, 3; fp = row 1; fn = row 2; tn = row 4
    assert r["confusion"] == {"tp": 2, "fp": 1, "fn": 1, "tn": 1}
    assert r["accuracy"]["mean"] == pytest.approx(3 / 5)
    assert r["precision"] == pytest.approx(2 / 3) and r["recall"] == pytest.approx(2 / 3)
    assert r["f1"] == pytest.approx(2 * 2 / (2 * 2 + 1 + 1))
    # Brier: (0.1^2 + 0.6^2 + 0.6^2 + 0.5^2 + 0.1^2) / 5 = 0.99 / 5
    assert r["brier"] == pytest.approx(0.198)
    assert r["majority_baseline"] == pytest.approx(0.6)
    low, high = r["accuracy"]["ci"]
    assert low <= 0.6 <= high


def test_precision_is_undefined_when_the_judge_never_says_yes():
    r = jm.classification(np.array([0.1, 0.2]), np.array([1, 0]), threshold=0.5)
    assert r["precision"] is None and r["recall"] == 0.0


def test_ece_with_five_bins():
    p = np.array([0.1, 0.15, 0.35, 0.8, 0.9, 1.0])
    y = np.array([0, 1, 0, 1, 1, 0])
    r = jm.calibration(p, y, bins=5)
    # bin [0, .2): conf 0.125, freq 0.5, gap 0.375, 2 rows; bin [.2, .4): 0.35 vs 0, 1 row;
    # bin [.8, 1] (1.0 included): conf 0.9, freq 2/3, gap 0.2333, 3 rows
    # ECE = (2 * 0.375 + 1 * 0.35 + 3 * 0.2333) / 6 = 1.8 / 6
    assert r["ece"] == pytest.approx(0.3)
    assert [b["rows"] for b in r["reliability"]] == [2, 1, 3]
    assert r["reliability"][2]["bin"] == [0.8, 1.0]
    assert r["reliability"][2]["fraction_correct"] == pytest.approx(2 / 3)


def test_a_perfectly_calibrated_judge_has_zero_ece():
    # every p is the frequency of correct answers in its bin
    p = np.array([0.25] * 4 + [0.75] * 4)
    y = np.array([1, 0, 0, 0, 1, 1, 1, 0])
    assert jm.calibration(p, y, bins=10)["ece"] == pytest.approx(0.0)


def test_cohen_kappa_by_hand():
    a = np.array([1, 1, 1, 1, 1, 1, 0, 0, 0, 0])  # P(a=1) = 0.6
    b = np.array([1, 1, 1, 0, 0, 0, 0, 0, 0, 1])  # P(b=1) = 0.4
    # p_o = 6/10 (rows 0-2 and 6-8); p_e = 0.6 * 0.4 + 0.4 * 0.6 = 0.48; k = 0.12 / 0.52 = 3/13
    assert jm.cohen_kappa(a, b) == pytest.approx(3 / 13)
    assert jm.cohen_kappa(a, a) == pytest.approx(1.0)
    # total disagreement: p_o = 0, p_e = 0.6 * 0.4 + 0.4 * 0.6 = 0.48, k = -0.48 / 0.52 (-1 needs 50/50 marginals)
    assert jm.cohen_kappa(a, 1 - a) == pytest.approx(-12 / 13)
    assert jm.cohen_kappa(np.ones(4, int), np.ones(4, int)) is None  # p_e = 1: undefined


def test_agreement_reports_both_accuracies():
    judge, verifier, y = np.array([1, 0, 1, 1]), np.array([1, 0, 0, 1]), np.array([1, 0, 0, 0])
    r = jm.agreement(judge, verifier, y)
    assert r["agreement"] == pytest.approx(0.75)
    assert r["judge_accuracy"] == pytest.approx(0.5) and r["verifier_accuracy"] == pytest.approx(0.75)


def test_best_of_n_by_hand():
    groups = [(np.array([0.9, 0.2, 0.4]), np.array([1.0, 0, 0])),  # judge picks the right one: 1
              (np.array([0.7, 0.7, 0.1]), np.array([1.0, 0, 1])),  # tie of a right and a wrong: 0.5
              (np.array([0.3, 0.8]), np.array([0.0, 0]))]  # nothing right: 0
    r = jm.best_of_n(groups)
    assert r["judge_pick"]["mean"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert r["random_pick"]["mean"] == pytest.approx((1 / 3 + 2 / 3 + 0) / 3)
    assert r["oracle"]["mean"] == pytest.approx(2 / 3)
    assert r["gain_over_random"]["mean"] == pytest.approx(0.5 - 1 / 3)
    assert r["groups"] == 3 and r["n"] == [2, 3]


def test_pairwise_position_bias_by_hand():
    p_cf = np.array([0.9, 0.6, 0.5, 0.2])  # P(A better), A = chosen
    p_rf = np.array([0.1, 0.7, 0.5, 0.6])  # P(A better), A = rejected
    r = jm.pairwise(p_cf, p_rf)
    # pair 0 right in both orders (1); pair 1 prefers A both times: a flip (0.5);
    # pair 2 ties both times (0.5, no flip); pair 3 wrong in both orders (0)
    assert r["accuracy"]["mean"] == pytest.approx(0.5)
    assert r["consistent_accuracy"] == pytest.approx(0.25)
    assert r["flip_rate"]["mean"] == pytest.approx(0.25)
    # picks of position A over the 8 judgements: 1, 1, 0.5, 0 | 0, 1, 0.5, 1 -> 5 / 8
    assert r["first_preference"] == pytest.approx(5 / 8)
    assert r["mean_p_first"] == pytest.approx(4.1 / 8)


def test_a_judge_that_always_prefers_position_a_flips_every_pair():
    r = jm.pairwise(np.full(5, 0.8), np.full(5, 0.8))
    assert r["flip_rate"]["mean"] == 1.0 and r["first_preference"] == 1.0
    assert r["accuracy"]["mean"] == 0.5 and r["consistent_accuracy"] == 0.0


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.integers(0, 1)), min_size=1, max_size=40), st.integers(1, 20))
def test_ece_is_a_weighted_mean_of_gaps_in_0_1(rows, bins):
    p = np.array([r[0] for r in rows])
    y = np.array([r[1] for r in rows])
    r = jm.calibration(p, y, bins)
    assert 0.0 <= r["ece"] <= 1.0
    assert sum(b["rows"] for b in r["reliability"]) == len(rows)  # every row lands in one bin
