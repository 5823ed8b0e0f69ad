"""GenRM judge: P(yes) arithmetic with a scripted backend, and the in-process backend on a real
(tiny, random) model against a direct forward pass. The HTTP backend against a real server is
tested in tests/serve/test_openai_server.py."""

from __future__ import annotations

import math

import pytest
import torch

from rlvr.errors import RewardError
from rlvr.rewards.judge import (
    GenRMJudge,
    JudgeBackend,
    JudgeReward,
    ReasonParams,
    judge_prompt,
    p_yes,
)

L = math.log


class Scripted(JudgeBackend):
    """Returns the given reasonings and, for the i-th verdict text, the i-th top list."""

    def __init__(self, reasonings: list[str], tops: list[list[tuple[str, float]]]):
        self.reasonings, self.tops = reasonings, tops
        self.reason_calls: list[tuple[str, int, ReasonParams]] = []
        self.verdict_texts: list[str] = []

    def reason(self, text, k, params):
        self.reason_calls.append((text, k, params))
        return self.reasonings[:k]

    def next_token_logprobs(self, texts, top):
        self.verdict_texts.extend(texts)
        return self.tops[:len(texts)]


def test_p_yes_normalises_over_yes_and_no_only():
    # yes 0.3, no 0.1, "maybe" 0.6 is ignored: 0.3 / (0.3 + 0.1) = 0.75
    assert p_yes([(" yes", L(0.3)), (" no", L(0.1)), (" maybe", L(0.6))]) == pytest.approx(0.75)
    # prefixes and case count ("Y", "ye" say yes, "n" says no); whitespace says neither:
    # (0.2 + 0.2) / (0.2 + 0.2 + 0.1) = 0.8
    assert p_yes([("Y", L(0.2)), ("ye", L(0.2)), ("n", L(0.1)), (" ", L(0.5))]) == pytest.approx(0.8)
    assert p_yes([("No", L(0.4))]) == 0.0
    assert p_yes([(" ", L(0.9)), ("maybe", L(0.1))]) is None
    assert p_yes([("yesterday", L(0.5)), ("none", L(0.5))]) is None  # not prefixes of yes / no


def test_k_sample_mean_and_what_the_backend_is_asked():
    backend = Scripted(["because A", "because B"],
                       [[(" yes", L(0.3)), (" no", L(0.1))],    # 0.75
                        [(" yes", L(0.1)), (" no", L(0.3))]])   # 0.25
    judge = GenRMJudge(backend, samples=2, params=ReasonParams(16, 0.7))
    verdict = judge.ask("2+2=", "4", "Is it right?", reference="4")
    assert verdict.score == pytest.approx(0.5) and verdict.flags == ()
    head = judge_prompt("2+2=", "4", "Is it right?", "4")
    assert backend.reason_calls == [(head, 2, ReasonParams(16, 0.7, ("Answer:",)))]
    assert backend.verdict_texts == [head + "because A\nAnswer:", head + "because B\nAnswer:"]
    assert "Reference answer:\n4" in head and "Reference" not in judge_prompt("p", "r", "q")


def test_a_sample_without_a_verdict_word_is_flagged_and_left_out():
    backend = Scripted(["a", "b", "c"], [[(" yes", L(0.3)), (" no", L(0.1))],   # 0.75
                                         [("maybe", 0.0)],                       # no verdict
                                         [(" yes", L(0.5)), (" no", L(0.5))]])   # 0.5
    verdict = GenRMJudge(backend, samples=3).ask("p", "r", "q")
    assert verdict.score == pytest.approx((0.75 + 0.5) / 2)
    assert verdict.flags == ("judge_no_verdict",) and "1/3 sample(s) had no yes/no" in verdict.reason


def test_no_sample_with_a_verdict_word_is_an_error_not_a_zero():
    backend = Scripted(["a"], [[("maybe", 0.0), (" ", L(0.5))]])
    with pytest.raises(RewardError, match="none of 1 sample.*'yes' or 'no'"):
        GenRMJudge(backend).ask("p", "r", "q")


def test_no_reasoning_when_max_new_tokens_is_zero():
    backend = Scripted([], [[("yes", L(0.9)), ("no", L(0.1))]] * 2)
    verdict = GenRMJudge(backend, samples=2, params=ReasonParams(0, 1.0), suffix=" A:").ask("p", "r", "q")
    assert backend.reason_calls == [] and verdict.score == pytest.approx(0.9)
    assert backend.verdict_texts == [judge_prompt("p", "r", "q") + " A:"] * 2


def test_judge_reward_needs_the_prompt_and_passes_gold_as_reference():
    backend = Scripted(["x"], [[("yes", L(0.6)), ("no", L(0.4))]])
    reward = JudgeReward(GenRMJudge(backend))
    assert reward.needs_prompt
    with pytest.raises(RewardError, match="needs the prompt"):
        reward("4", "4")
    assert reward("4", "42", prompt="2+2=").score == pytest.approx(0.6)
    assert "Reference answer:\n42" in backend.reason_calls[0][0]


def test_transformers_backend_matches_a_direct_forward(tiny_pair):
    from rlvr.orchestrate.judge_backend import TransformersJudgeBackend

    model, tok = tiny_pair
    backend = TransformersJudgeBackend(model, tok)
    text = "Is 3+4=7? Answer: "
    [top] = backend.next_token_logprobs([text], top=1000)  # more than the vocabulary: all of it
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([tok(text, add_special_tokens=False)["input_ids"]])).logits[0, -1]
    probs = torch.softmax(logits.double(), -1)
    assert len(top) == 128 and [lp for _, lp in top] == sorted((lp for _, lp in top), reverse=True)
    # Character tokenizer: "y"/"Y" say yes, "n"/"N" say no.
    ids = {ch: tok.convert_tokens_to_ids(ch) for ch in "yYnN"}
    yes, no = probs[ids["y"]] + probs[ids["Y"]], probs[ids["n"]] + probs[ids["N"]]
    assert p_yes(top) == pytest.approx(float(yes / (yes + no)), abs=1e-6)
    # Greedy reasoning is the engine's greedy continuation, k times, cut at the stop string.
    texts = backend.reason("12+34=", 2, ReasonParams(4, 0.0, ("Answer:",)))
    assert len(texts) == 2 and texts[0] == texts[1]


def test_transformers_backend_names_an_overlong_verdict_text(tiny_pair):
    from rlvr.orchestrate.judge_backend import TransformersJudgeBackend

    backend = TransformersJudgeBackend(*tiny_pair)  # the shipped model's context is 64
    with pytest.raises(RewardError, match="over the judge model's context of 64"):
        backend.next_token_logprobs(["x" * 100], top=5)
    with pytest.raises(RewardError, match="exceeds the model's context"):
        backend.reason("x" * 60, 1, ReasonParams(8, 0.0))
