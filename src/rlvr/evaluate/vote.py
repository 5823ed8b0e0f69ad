"""maj@k: majority vote over the extracted final answers of k samples.

Wang et al. 2022 (self-consistency, arXiv:2203.11171). Answers vote by value: plain numbers
are compared as fractions ("0.50", "1/2" and ".5" are one vote), anything else by its text with
whitespace collapsed. A sample with no extractable answer does not vote.

Tie rule: when t answers share the top count, the vote is broken uniformly at random, and
maj@k reports the *expected* score of that draw, i.e. the mean score of the t tied answers.
So a 2-2 tie between the right and a wrong answer scores 0.5, never 0 or 1 depending on the
order of the samples.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Sequence

from rlvr.rewards.math.verifier import as_fraction


def answer_key(answer: str | None) -> str | None:
    """The voting key of an extracted answer: a number's value, else its text; None stays None."""
    if answer is None:
        return None
    value = as_fraction(answer)
    return str(value) if value is not None else " ".join(answer.split())


def majority_score(keys: Sequence[str | None], scores: Sequence[float]) -> float:
    """Expected score of the majority answer of one vote (ties broken uniformly at random).

    keys: (k,) voting keys (None: no answer, no vote); scores: (k,) verifier scores in [0, 1].
    An answer's score is the mean score of the samples that gave it. No votes at all → 0.
    """
    votes = Counter(key for key in keys if key is not None)
    if not votes:
        return 0.0
    top = max(votes.values())
    tied = [key for key, count in votes.items() if count == top]
    score_of: dict[str, list[float]] = defaultdict(list)
    for key, score in zip(keys, scores):
        if key is not None:
            score_of[key].append(score)
    return sum(sum(score_of[key]) / len(score_of[key]) for key in tied) / len(tied)


def maj_at_k(keys: Sequence[str | None], scores: Sequence[float], k: int) -> float:
    """maj@k of one prompt from its n >= k samples.

    The n samples are cut, in order, into floor(n / k) disjoint blocks of k; maj@k is the mean
    of `majority_score` over the blocks. Each block is k i.i.d. samples, so this is an unbiased
    estimate of the k-sample vote; samples after the last full block are not used.
    keys, scores: (n,).
    """
    n = len(keys)
    if len(scores) != n:
        raise ValueError(f"keys and scores differ in length ({n} vs {len(scores)})")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got k={k}, n={n}")
    blocks = [(keys[s:s + k], scores[s:s + k]) for s in range(0, n - k + 1, k)]
    return sum(majority_score(kb, sb) for kb, sb in blocks) / len(blocks)
