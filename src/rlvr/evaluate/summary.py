"""The group-relative metrics of one evaluation, from its graded prompt groups.

Every metric is a mean over prompts of a per-prompt value, reported with a bootstrap interval
over prompts (confidence.py). A sample is *correct* when its verifier score is >= 1.

- pass@k: unbiased estimator from the prompt's n samples (passk.py).
- maj@k: majority vote over extracted answers, ties at their expected score (vote.py).
- best-of-n (log-prob): the sample with the highest mean token log-prob is picked; 1 if it is
  correct. Needs log-probs (always there from an engine; optional in a samples file).
- best-of-n (verifier): a perfect verifier picks a correct sample whenever one exists, so it
  equals pass@n, the oracle ceiling of any reranker.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

import numpy as np

from rlvr.errors import RlvrError
from rlvr.evaluate.confidence import Estimate, bootstrap_mean
from rlvr.evaluate.groups import PromptGroup, counts
from rlvr.evaluate.passk import pass_at_k_per_prompt
from rlvr.evaluate.vote import maj_at_k


class EvalError(RlvrError):
    """An evaluation that cannot be computed as asked (e.g. k larger than the samples)."""


def check_ks(groups: Sequence[PromptGroup], ks: Sequence[int]) -> None:
    """Every k must be >= 1 and at most the smallest group's n; else an EvalError naming it."""
    if not groups:
        raise EvalError("no prompts to evaluate")
    smallest = min(groups, key=lambda g: g.n)
    for k in ks:
        if k < 1:
            raise EvalError(f"k must be >= 1, got {k}")
        if k > smallest.n:
            raise EvalError(f"pass@{k} needs at least {k} samples per prompt; prompt {smallest.prompt!r} "
                            f"({smallest.source}) has {smallest.n}")


def pass_values(groups: Sequence[PromptGroup], k: int) -> np.ndarray:
    """Per-prompt pass@k (P,)."""
    n, c = counts(groups)
    return pass_at_k_per_prompt(n, c, k)


def maj_values(groups: Sequence[PromptGroup], k: int) -> np.ndarray:
    """Per-prompt maj@k (P,), votes scored by correctness (1 if score >= 1)."""
    return np.array([maj_at_k([m.key for m in g.members], [float(m.score >= 1.0) for m in g.members], k)
                     for g in groups], dtype=np.float64)


def best_by_logprob_values(groups: Sequence[PromptGroup]) -> np.ndarray | None:
    """Per-prompt correctness (P,) of the highest-mean-log-prob sample (first one on ties);
    None when any sample lacks a log-prob."""
    if any(m.mean_logprob is None for g in groups for m in g.members):
        return None
    picks = [max(g.members, key=lambda m: m.mean_logprob) for g in groups]
    return np.array([float(m.score >= 1.0) for m in picks], dtype=np.float64)


def oracle_values(groups: Sequence[PromptGroup]) -> np.ndarray:
    """Per-prompt best-of-n with a perfect verifier (P,): 1 if any sample is correct."""
    return np.array([float(g.correct > 0) for g in groups], dtype=np.float64)


def pass_rate_histogram(groups: Sequence[PromptGroup]) -> dict[str, list]:
    """Counts of prompts by pass rate c/n. With one n for all: one bar per c in 0..n; else
    ten bins of width 0.1 (the last one closed)."""
    sizes = {g.n for g in groups}
    rates = np.array([g.pass_rate for g in groups])
    if len(sizes) == 1:
        n = sizes.pop()
        correct = np.array([g.correct for g in groups])
        return {"values": [c / n for c in range(n + 1)],
                "counts": [int((correct == c).sum()) for c in range(n + 1)]}
    hist, edges = np.histogram(rates, bins=10, range=(0.0, 1.0))
    return {"values": [float((a + b) / 2) for a, b in zip(edges[:-1], edges[1:])],
            "counts": [int(h) for h in hist]}


def summarize(groups: Sequence[PromptGroup], ks: Sequence[int], *, seed: int = 0) -> dict:
    """All metrics of one evaluation, as a JSON-ready dict (the `results.json` layout)."""
    check_ks(groups, ks)
    est = lambda values: bootstrap_mean(values, seed=seed).as_dict()  # noqa: E731
    n_max = min(g.n for g in groups)
    by_logprob = best_by_logprob_values(groups)
    return {
        "prompts": len(groups),
        "samples": int(sum(g.n for g in groups)),
        "pass_at_k": {str(k): est(pass_values(groups, k)) for k in ks},
        "maj_at_k": {str(k): est(maj_values(groups, k)) for k in ks},
        "best_of_n": {"n": n_max,
                      "logprob": None if by_logprob is None else est(by_logprob),
                      "verifier": est(oracle_values(groups))},
        "pass_rate_histogram": pass_rate_histogram(groups),
        "per_prompt": [per_prompt_row(g) for g in groups],
    }


def per_prompt_row(group: PromptGroup) -> dict:
    """One prompt's line in results.json: its counts and its most common answer."""
    keys = Counter(m.key for m in group.members if m.key is not None)
    top = keys.most_common(1)[0][0] if keys else None  # first seen wins a tie
    return {"prompt": group.prompt, "gold": group.gold, "source": group.source, "n": group.n,
            "correct": group.correct, "pass_rate": group.pass_rate,
            "distinct_answers": len(keys), "top_answer": top}


def estimate(result: dict, metric: str, k: int | None = None) -> Estimate:
    """Read one metric back from a summary dict as an Estimate (for printing)."""
    entry = result[metric][str(k)] if k is not None else result[metric]
    return Estimate(entry["mean"], *entry["ci"])
