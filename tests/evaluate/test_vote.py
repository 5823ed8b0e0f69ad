"""maj@k: majority over extracted answers, with ties scored at their expected value."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.evaluate.vote import answer_key, maj_at_k, majority_score

FAST = settings(max_examples=80, deadline=None)


def test_clear_majority_wins():
    assert majority_score(["5", "5", "6"], [1.0, 1.0, 0.0]) == 1.0
    assert majority_score(["6", "5", "6"], [0.0, 1.0, 0.0]) == 0.0


def test_tie_scores_the_mean_of_the_tied_answers_in_any_order():
    keys, scores = ["5", "6", "5", "6"], [1.0, 0.0, 1.0, 0.0]  # 2-2 tie, right vs wrong: 1/2
    for order in itertools.permutations(range(4)):
        assert majority_score([keys[i] for i in order], [scores[i] for i in order]) == 0.5
    # three-way tie, one right: 1/3
    assert majority_score(["1", "2", "3"], [0.0, 1.0, 0.0]) == pytest.approx(1 / 3)
    # a tie between two wrong answers is 0; a pair beats singletons, right or wrong
    assert majority_score(["1", "2", "7"], [0.0, 0.0, 1.0]) == pytest.approx(1 / 3)
    assert majority_score(["1", "2", "3", "3"], [0.0, 0.0, 1.0, 1.0]) == 1.0
    assert majority_score(["1", "1", "3"], [0.0, 0.0, 1.0]) == 0.0
    assert majority_score(["1", "1", "2", "2", "3"], [0.0, 0.0, 0.0, 0.0, 1.0]) == 0.0


def test_no_answer_does_not_vote():
    assert majority_score([None, None, "7"], [0.0, 0.0, 1.0]) == 1.0
    assert majority_score([None, None], [0.0, 0.0]) == 0.0


def test_numbers_vote_by_value():
    assert answer_key("0.50") == answer_key("1/2") == answer_key(" 1/2 ")
    assert answer_key("x + 1") == answer_key("x  +   1")
    assert answer_key(None) is None


def test_maj_at_k_averages_disjoint_blocks_in_order():
    keys = ["5", "6", "5", "5", "6", "6"]
    scores = [1.0, 0.0, 1.0, 1.0, 0.0, 0.0]
    # k=2 blocks: (5,6) tie -> 0.5, (5,5) -> 1, (6,6) -> 0; mean 0.5
    assert maj_at_k(keys, scores, 2) == pytest.approx(0.5)
    # k=4: one block (5,6,5,5) -> 1; the last two samples are not used
    assert maj_at_k(keys, scores, 4) == 1.0
    with pytest.raises(ValueError, match="1 <= k <= n"):
        maj_at_k(keys, scores, 7)


votes = st.lists(st.sampled_from(["g", "a", "b", None]), min_size=2, max_size=12)


@FAST
@given(votes)
def test_maj_at_1_and_maj_at_2_equal_the_pass_rate(keys):
    # With correctness a function of the answer, maj@1 is the pass rate, and under the random
    # tie-break a 2-vote of two answered samples is right exactly as often as one sample:
    # maj@2 = pass@1 on its blocks. (An unanswered sample abstains, so (g, None) scores 1.)
    scores = [float(k == "g") for k in keys]
    assert maj_at_k(keys, scores, 1) == pytest.approx(sum(scores) / len(keys))
    answered = [k if k is not None else "a" for k in keys]
    used = 2 * (len(keys) // 2)
    assert maj_at_k(answered, scores, 2) == pytest.approx(sum(scores[:used]) / used)
    assert 0.0 <= maj_at_k(keys, scores, len(keys)) <= 1.0
    assert maj_at_k(["g", None], [1.0, 0.0], 2) == 1.0
