"""CoT-pass@k (Wen et al. 2025, arXiv:2506.14245): the unbiased pass@k estimator applied to D,
the samples right in answer AND reasoning. Constructed cases, hand-computed values, invariants."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.evaluate.cot_pass import CotJudgement, compare_cot, cot_counts, judgement, summarize_cot
from rlvr.evaluate.summary import EvalError
from tests.evaluate.helpers import group

FAST = settings(max_examples=60, deadline=None)
RIGHT, WRONG = CotJudgement(1.0, True), CotJudgement(0.0, False)


def one_prompt(answers_right: list[bool], reasoning_right: list[bool]):
    g = group("q", "7", ["7" if a else "8" for a in answers_right])
    return [g], [tuple(RIGHT if r else WRONG for r in reasoning_right)]


@pytest.mark.parametrize("answer, reasoning, pass1, cot1", [
    (True, False, 1.0, 0.0),   # right answer by wrong reasoning: pass@k counts it, CoT-pass@k does not
    (False, True, 0.0, 0.0),   # right reasoning, wrong answer: neither counts it
    (True, True, 1.0, 1.0),
    (False, False, 0.0, 0.0),
])
def test_the_four_constructed_cases(answer, reasoning, pass1, cot1):
    groups, judged = one_prompt([answer], [reasoning])
    out = summarize_cot(groups, judged, [1])
    assert out["pass_at_k"]["1"]["mean"] == pass1 and out["cot_pass_at_k"]["1"]["mean"] == cot1
    cell = f"answer_{'right' if answer else 'wrong'}_reasoning_{'right' if reasoning else 'wrong'}"
    assert out["samples"] == {**dict.fromkeys(out["samples"], 0), cell: 1}


def test_hand_computed_n4_c2_d1():
    # n = 4 samples: answers right, right, wrong, wrong; reasoning right, wrong, right, wrong.
    # c = 2, D = 1 (only the first sample is right in both).
    #   pass@1 = c/n = 1/2;        CoT-pass@1 = D/n = 1/4
    #   pass@2 = 1 - C(2,2)/C(4,2) = 1 - 1/6 = 5/6;   CoT-pass@2 = 1 - C(3,2)/C(4,2) = 1 - 3/6 = 1/2
    groups, judged = one_prompt([True, True, False, False], [True, False, True, False])
    assert cot_counts(groups, judged)[1].tolist() == [1]
    out = summarize_cot(groups, judged, [1, 2])
    assert out["pass_at_k"]["1"]["mean"] == pytest.approx(1 / 2)
    assert out["cot_pass_at_k"]["1"]["mean"] == pytest.approx(1 / 4)
    assert out["pass_at_k"]["2"]["mean"] == pytest.approx(5 / 6)
    assert out["cot_pass_at_k"]["2"]["mean"] == pytest.approx(1 / 2)
    assert out["pass_minus_cot"]["2"]["mean"] == pytest.approx(5 / 6 - 1 / 2)
    assert out["samples"] == {"answer_right_reasoning_right": 1, "answer_right_reasoning_wrong": 1,
                              "answer_wrong_reasoning_right": 1, "answer_wrong_reasoning_wrong": 1}


def brute_force(both: list[bool], k: int) -> Fraction:
    """Share of the k-subsets of the samples that hold one right in answer and reasoning."""
    subsets = list(itertools.combinations(range(len(both)), k))
    return Fraction(sum(any(both[i] for i in s) for s in subsets), len(subsets))


samples = st.lists(st.tuples(st.booleans(), st.floats(0, 1)), min_size=1, max_size=8)


@FAST
@given(st.lists(samples, min_size=1, max_size=5), st.floats(0, 1), st.data())
def test_cot_pass_is_at_most_pass_and_matches_enumeration(prompts, threshold, data):
    groups = [group(f"q{i}", "1", ["1" if a else "0" for a, _ in rows]) for i, rows in enumerate(prompts)]
    judged = [tuple(judgement(p, threshold) for _, p in rows) for rows in prompts]
    k = data.draw(st.integers(1, min(len(rows) for rows in prompts)))
    out = summarize_cot(groups, judged, [k])
    cot, plain = out["cot_pass_at_k"][str(k)]["mean"], out["pass_at_k"][str(k)]["mean"]
    assert cot <= plain + 1e-12 and out["pass_minus_cot"][str(k)]["ci"][0] >= -1e-12
    exact = sum(brute_force([a and p >= threshold for a, p in rows], k) for rows in prompts) / len(prompts)
    assert cot == pytest.approx(float(exact), abs=1e-12)


def test_reasoning_judged_right_everywhere_gives_pass_at_k():
    groups = [group("a", "1", ["1", "0", "1"]), group("b", "2", ["0", "0", "2"])]
    out = summarize_cot(groups, [(RIGHT,) * 3] * 2, [1, 2, 3])
    assert out["cot_pass_at_k"] == out["pass_at_k"]


def test_threshold_decides_and_is_inclusive():
    assert judgement(0.5, 0.5).right and not judgement(0.49, 0.5).right


def test_misaligned_judgements_are_refused():
    groups, judged = one_prompt([True, True], [True, True])
    with pytest.raises(EvalError, match="1 CoT judgements for 2 samples"):
        summarize_cot(groups, [judged[0][:1]], [1])
    with pytest.raises(EvalError, match="for 2 prompts, but 1"):
        summarize_cot(groups, judged * 2, [1])


def test_compare_is_b_minus_a_paired():
    # A: the answer right in both samples, reasoning right in none → CoT-pass@1 = 0.
    # B: the same answers, reasoning right in one of two → CoT-pass@1 = 1/2. B - A = +1/2.
    groups, judged_a = one_prompt([True, True], [False, False])
    _, judged_b = one_prompt([True, True], [True, False])
    diff = compare_cot(groups, judged_a, groups, judged_b, [1, 2])
    assert diff["1"]["mean"] == pytest.approx(0.5) and diff["2"]["mean"] == pytest.approx(1.0)


def test_the_judge_reads_the_think_block_with_the_gold_as_reference():
    from rlvr.evaluate.cot_judge import COT_QUESTION, judge_groups

    seen = []

    def judge(prompt, reasoning, question, reference):
        seen.append((prompt, reasoning, question, reference))
        return 0.7

    g = group("What is 7*8?", "56", ["56"])
    g = type(g)(g.prompt, g.gold, g.source, (type(g.members[0])("<think>7*8=56</think> so 56", 1.0, "56", "56"),))
    assert judge_groups([g], judge, 0.5) == [(CotJudgement(0.7, True),)]
    assert seen == [("What is 7*8?", "7*8=56", COT_QUESTION, "56")]


def test_a_judge_answer_outside_0_1_names_the_sample():
    from rlvr.errors import RewardError
    from rlvr.evaluate.cot_judge import judge_groups

    with pytest.raises(RewardError, match=r"test:q \(sample 2\): the judge returned 1.5"):
        judge_groups([group("q", "1", ["1", "2"])], lambda p, r, q, ref: 0.2 if r == "1" else 1.5, 0.5)
