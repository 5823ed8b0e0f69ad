"""pass@k (Chen et al. 2021, arXiv:2107.03374, eq. 1) against brute-force enumeration."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.evaluate.passk import pass_at_k, pass_at_k_per_prompt

FAST = settings(max_examples=80, deadline=None)


def brute_force(n: int, c: int, k: int) -> Fraction:
    """Share of the k-subsets of n samples (the first c correct) that hold a correct one."""
    subsets = list(itertools.combinations(range(n), k))
    return Fraction(sum(any(i < c for i in s) for s in subsets), len(subsets))


@FAST
@given(st.integers(1, 10).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_matches_enumeration_over_all_k_subsets(nck):
    n, c, k = nck
    assert pass_at_k(n, c, k) == pytest.approx(float(brute_force(n, c, k)), abs=1e-12)


def test_hand_case():
    # n=5, c=2, k=2: 1 - C(3,2)/C(5,2) = 1 - 3/10 = 0.7
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)
    assert pass_at_k(5, 0, 3) == 0.0
    assert pass_at_k(5, 3, 3) == 1.0  # n - c = 2 < k: every 3-subset holds a correct sample
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)  # pass@1 = c / n


def test_large_n_stays_finite_and_exact():
    # math.comb(2000, 100) has ~190 digits; the product form must not overflow.
    n, c, k = 2000, 37, 100
    exact = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
    assert pass_at_k(n, c, k) == pytest.approx(float(exact), rel=1e-9)


def test_per_prompt_vector_and_errors():
    out = pass_at_k_per_prompt(np.array([4, 4, 8]), np.array([0, 4, 2]), 1)
    assert out.tolist() == pytest.approx([0.0, 1.0, 0.25])
    with pytest.raises(ValueError, match="1 <= k <= n"):
        pass_at_k(3, 1, 4)
    with pytest.raises(ValueError, match="0 <= c <= n"):
        pass_at_k(3, 4, 1)
