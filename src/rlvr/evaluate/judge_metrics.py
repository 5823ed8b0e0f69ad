"""How good is a judge: the metrics of `rlvr eval-judge`, pure functions of scores and labels.

Notation: p_i in [0, 1] the judge's P(yes) for row i, y_i in {0, 1} its gold label, a decision
yhat_i = [p_i >= threshold]. Every mean over rows comes with the percentile-bootstrap interval
of `confidence.py` (rows are the unit of resampling; groups or pairs where the metric is per
group or pair).

- Calibration (Guo et al. 2017, "On Calibration of Modern Neural Networks", eq. 3): B equal
  bins of [0, 1] (p = 1 goes in the last), ECE = sum_b (n_b / N) |mean(y in b) - mean(p in b)|.
- Agreement with a verifier: Cohen's kappa (Cohen 1960), k = (p_o - p_e) / (1 - p_e), with p_o
  the observed agreement and p_e = P(judge 1) P(verifier 1) + P(judge 0) P(verifier 0).
- Position bias (pairs judged in both orders; Zheng et al. 2023, "Judging LLM-as-a-Judge",
  sec. 3.3): see `pairwise`.
- Best-of-N: see `best_of_n`.
"""

from __future__ import annotations

import numpy as np

from rlvr.evaluate.confidence import bootstrap_mean, paired_difference


def classification(p: np.ndarray, y: np.ndarray, threshold: float, seed: int = 0) -> dict:
    """Accuracy (with CI), precision, recall, F1, the confusion counts and the majority-class
    baseline of the decisions p >= threshold against labels y (both (N,))."""
    pred = (p >= threshold).astype(int)
    tp, fp = int(((pred == 1) & (y == 1)).sum()), int(((pred == 1) & (y == 0)).sum())
    fn, tn = int(((pred == 0) & (y == 1)).sum()), int(((pred == 0) & (y == 0)).sum())
    precision = tp / (tp + fp) if tp + fp else None  # no "yes" said: undefined, not 0
    recall = tp / (tp + fn) if tp + fn else None
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else None
    return {"rows": int(y.size), "accuracy": bootstrap_mean(pred == y, seed=seed).as_dict(),
            "majority_baseline": float(max(y.mean(), 1 - y.mean())),
            "precision": precision, "recall": recall, "f1": f1,
            "confusion": {"tp": tp, "fp": fp, "fn": fn, "tn": tn},
            "brier": float(((p - y) ** 2).mean())}


def calibration(p: np.ndarray, y: np.ndarray, bins: int) -> dict:
    """ECE over `bins` equal-width bins and the reliability table (one entry per non-empty bin)."""
    if bins < 1:
        raise ValueError(f"bins must be >= 1, got {bins}")
    index = np.minimum((p * bins).astype(int), bins - 1)  # (N,); p = 1.0 joins the last bin
    table, ece = [], 0.0
    for b in range(bins):
        inside = index == b
        n = int(inside.sum())
        if n == 0:
            continue
        confidence, frequency = float(p[inside].mean()), float(y[inside].mean())
        ece += n / p.size * abs(frequency - confidence)
        table.append({"bin": [b / bins, (b + 1) / bins], "rows": n,
                      "mean_p_yes": confidence, "fraction_correct": frequency})
    return {"bins": bins, "ece": ece, "reliability": table}


def cohen_kappa(a: np.ndarray, b: np.ndarray) -> float | None:
    """Cohen's kappa of two 0/1 raters a, b (N,); None when p_e = 1 (both raters constant and
    equal: agreement by chance alone is certain, kappa is undefined)."""
    observed = float((a == b).mean())
    chance = float(a.mean() * b.mean() + (1 - a.mean()) * (1 - b.mean()))
    if chance >= 1.0:
        return None
    return (observed - chance) / (1.0 - chance)


def agreement(judge_pred: np.ndarray, verifier_pred: np.ndarray, y: np.ndarray) -> dict:
    """Judge vs verifier decisions (N,) on the rows that have a verifier, and the verifier's own
    accuracy against the labels (the baseline a judge is set beside)."""
    return {"rows": int(y.size), "agreement": float((judge_pred == verifier_pred).mean()),
            "kappa": cohen_kappa(judge_pred, verifier_pred),
            "verifier_accuracy": float((verifier_pred == y).mean()),
            "judge_accuracy": float((judge_pred == y).mean())}


def _side(p: np.ndarray) -> np.ndarray:
    """+1 when P(A better) > 0.5, -1 when < 0.5, 0 for exactly 0.5 (no preference)."""
    return np.sign(p - 0.5)


def pairwise(p_chosen_first: np.ndarray, p_rejected_first: np.ndarray, seed: int = 0) -> dict:
    """Pairs (P,) judged in both orders; p = P(yes: A is better than B).

    With s1 = side(p_chosen_first) and s2 = -side(p_rejected_first), +1 meaning "prefers the
    chosen": one judgement scores 1 for +1, 0.5 for a tie, 0 for -1. accuracy = the mean over
    both orders; consistent_accuracy = both orders prefer the chosen; flip_rate = the share of
    pairs whose preference changes with the order (s1 != s2); first_preference = the share of
    the 2P judgements that prefer position A (ties 0.5), 0.5 for an unbiased judge;
    mean_p_first = the mean P(A better) over the 2P judgements.
    """
    s1, s2 = _side(p_chosen_first), -_side(p_rejected_first)  # (P,)
    per_pair = ((s1 + 1) / 2 + (s2 + 1) / 2) / 2
    first = np.concatenate([(_side(p_chosen_first) + 1) / 2, (_side(p_rejected_first) + 1) / 2])
    return {"pairs": int(s1.size), "accuracy": bootstrap_mean(per_pair, seed=seed).as_dict(),
            "consistent_accuracy": float(((s1 == 1) & (s2 == 1)).mean()),
            "flip_rate": bootstrap_mean((s1 != s2).astype(float), seed=seed).as_dict(),
            "first_preference": float(first.mean()),
            "mean_p_first": float(np.concatenate([p_chosen_first, p_rejected_first]).mean())}


def best_of_n(groups: list[tuple[np.ndarray, np.ndarray]], seed: int = 0) -> dict:
    """Groups of N >= 2 responses to one prompt, each (scores (N,), labels (N,)).

    Per group: judge = the mean label of the responses with the top score (a tie is broken
    uniformly at random, so its expected value); random = the mean label (a random pick's
    expected correctness); oracle = the max label (any correct). gain = judge - random, with a
    paired interval over groups.
    """
    judge = np.array([y[s == s.max()].mean() for s, y in groups])  # (G,)
    random = np.array([y.mean() for _, y in groups])
    oracle = np.array([y.max() for _, y in groups], dtype=float)
    return {"groups": len(groups), "n": sorted({int(s.size) for s, _ in groups}),
            "judge_pick": bootstrap_mean(judge, seed=seed).as_dict(),
            "random_pick": bootstrap_mean(random, seed=seed).as_dict(),
            "oracle": bootstrap_mean(oracle, seed=seed).as_dict(),
            "gain_over_random": paired_difference(random, judge, seed=seed).as_dict()}
