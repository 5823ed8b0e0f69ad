"""`judge_bench.benchmark` with function judges and with a GenRM judge on a fake backend."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rlvr.errors import DatasetError, RewardError
from rlvr.evaluate.baseline_judges import arithmetic_check, checked_equations, longer_is_better
from rlvr.evaluate.judge_bench import PAIR_QUESTION, benchmark, pair_text, scored_rows, split_pair
from rlvr.evaluate.judge_data import load_judge_set, shipped_set
from rlvr.rewards import MathVerifier
from rlvr.rewards.judge import GenRMJudge, JudgeBackend, ReasonParams

ROWS = [
    {"prompt": "2+2=", "response": "4", "label": 1, "gold": "4"},
    {"prompt": "2+2=", "response": "5", "label": 0, "gold": "4"},
    {"prompt": "3+3=", "response": "6", "label": 1, "gold": "6"},
    {"prompt": "3+3=", "response": "7", "label": 0, "gold": "6"},
    {"prompt": "2+2=", "chosen": "4", "rejected": "5"},
    {"prompt": "3+3=", "chosen": "6", "rejected": "7"},
]


@pytest.fixture
def small(tmp_path):
    path = tmp_path / "small.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return load_judge_set(path)


def always_first(prompt, response, question, reference):
    """Says yes to every response, and prefers whichever response is shown first."""
    return 0.9 if question == PAIR_QUESTION else 0.8


def test_an_always_yes_position_biased_judge(small):
    r, p, pairs = benchmark(small, always_first, verifier=MathVerifier())
    assert p.tolist() == [0.8] * 4
    assert r["pointwise"]["accuracy"]["mean"] == 0.5 and r["pointwise"]["precision"] == 0.5
    assert r["pointwise"]["ece"] == pytest.approx(0.3)  # one bin: |0.5 - 0.8|
    assert r["verifier_agreement"]["kappa"] == pytest.approx(0.0)  # p_o = p_e = 0.5
    assert r["best_of_n"]["judge_pick"]["mean"] == 0.5  # a tie over both: the random pick
    assert r["pairwise"]["flip_rate"]["mean"] == 1.0 and r["pairwise"]["first_preference"] == 1.0


def test_the_arithmetic_baseline_is_right_on_the_demo_task(small):
    r, _, _ = benchmark(small, arithmetic_check, verifier=MathVerifier())
    assert r["pointwise"]["accuracy"]["mean"] == 1.0 and r["verifier_agreement"]["kappa"] == 1.0
    assert r["best_of_n"]["gain_over_random"]["mean"] == 0.5
    assert r["pairwise"]["consistent_accuracy"] == 1.0 and r["pairwise"]["flip_rate"]["mean"] == 0.0


def test_baseline_judges_by_hand():
    assert checked_equations("3 * 12 = 36. 36 + 9 = 45. 38 - 9 = 28") == (2, 1)
    assert arithmetic_check("", "3 * 12 = 36. 36 - 9 = 28", "q", "") == pytest.approx(2 / 4)
    assert longer_is_better("", pair_text("abc", "a"), PAIR_QUESTION, "") == pytest.approx(3 / 4)
    assert split_pair(pair_text("x\ny", "z")) == ("x\ny", "z")


def test_a_judge_that_is_not_a_probability_is_refused_with_the_row(small):
    with pytest.raises(RewardError, match=r"small.jsonl:1: the judge returned 1.5"):
        benchmark(small, lambda *a: 1.5)


def test_scores_mode_needs_the_columns_and_rereads_saved_scores(small, tmp_path):
    with pytest.raises(DatasetError, match=r"small.jsonl:1: no 'judge_p_yes'"):
        benchmark(small, None)
    r, p, pairs = benchmark(small, arithmetic_check)
    saved = tmp_path / "scored.jsonl"
    saved.write_text("".join(json.dumps(row) + "\n" for row in scored_rows(small, p, pairs)))
    again, _, _ = benchmark(load_judge_set(saved), None)
    assert again["pointwise"] == r["pointwise"] and again["pairwise"] == r["pairwise"]


class KeywordBackend(JudgeBackend):
    """Says yes (logprob 0 for ' yes') when the text's response part holds `right`, else no;
    records every verdict text it was asked about."""

    def __init__(self, right: str):
        self.right, self.texts = right, []

    def reason(self, text, k, params):
        return [""] * k

    def next_token_logprobs(self, texts, top):
        self.texts += texts
        out = []
        for text in texts:
            shown = text.split("Response:\n", 1)[1].split("\nQuestion:", 1)[0]
            first = shown.split("\nResponse B:\n")[0]
            yes = self.right in first
            out.append([(" yes", np.log(0.9 if yes else 0.1)), (" no", np.log(0.1 if yes else 0.9))])
        return out


def test_a_genrm_judge_sees_each_pair_in_both_orders(small):
    backend = KeywordBackend("4")
    judge = GenRMJudge(backend, params=ReasonParams(max_new_tokens=0))
    r, p, pairs = benchmark(small, lambda *a: judge.ask(*a).score)
    assert p.tolist() == pytest.approx([0.9, 0.1, 0.1, 0.1])
    assert pairs[0].tolist() == pytest.approx([0.9, 0.1]) and pairs[1].tolist() == pytest.approx([0.1, 0.1])
    pair_texts = [t for t in backend.texts if PAIR_QUESTION in t]
    assert len(pair_texts) == 4
    assert "Response A:\n4\nResponse B:\n5" in pair_texts[0] and "Response A:\n5\nResponse B:\n4" in pair_texts[1]


def test_the_shipped_set_runs_with_the_baselines():
    data = load_judge_set(shipped_set())
    arithmetic, _, _ = benchmark(data, arithmetic_check, verifier=MathVerifier())
    length, _, _ = benchmark(data, longer_is_better, verifier=MathVerifier())
    assert arithmetic["best_of_n"]["groups"] == 20 and arithmetic["pairwise"]["pairs"] == 20
    # re-checking the working beats counting characters on best-of-N
    assert arithmetic["best_of_n"]["judge_pick"]["mean"] > length["best_of_n"]["judge_pick"]["mean"]
