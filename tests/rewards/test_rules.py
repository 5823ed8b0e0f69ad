"""Rule-based rewards: one judge question per rule, each rule's P(yes) kept, reward = mean."""

from __future__ import annotations

import math

import pytest

from rlvr.errors import RewardError
from rlvr.rewards.judge import GenRMJudge, JudgeBackend
from rlvr.rewards.rules import RulesReward, rule_question


class ByRule(JudgeBackend):
    """P(yes) chosen by which rule the judge's text asks about."""

    def __init__(self, answers: dict[str, float]):
        self.answers, self.seen = answers, []

    def reason(self, text, k, params):
        return ["thinking"] * k

    def next_token_logprobs(self, texts, top):
        self.seen.extend(texts)
        ps = [next(p for rule, p in self.answers.items() if rule_question(rule) in t) for t in texts]
        return [[(" yes", math.log(p)), (" no", math.log(1 - p))] for p in ps]


def test_each_rule_is_a_component_and_the_reward_is_their_mean():
    backend = ByRule({"Be polite.": 0.9, "Use no digits.": 0.2, "Answer in English.": 0.7})
    reward = RulesReward(GenRMJudge(backend, samples=2), ["Be polite.", "Use no digits.", "Answer in English."])
    v = reward("Thank you! It is 46.", "", prompt="What is 12+34?")
    assert v.components == pytest.approx({"rule_1": 0.9, "rule_2": 0.2, "rule_3": 0.7})
    assert v.score == pytest.approx((0.9 + 0.2 + 0.7) / 3)  # 0.6
    assert len(backend.seen) == 6  # 3 rules x 2 samples
    assert all("Task:\nWhat is 12+34?" in t and "Reference" not in t for t in backend.seen)
    assert "'Use no digits.': 0.20" in v.reason


def test_flags_of_a_rule_reach_the_verdict():
    class HalfSilent(ByRule):
        def next_token_logprobs(self, texts, top):
            out = super().next_token_logprobs(texts, top)
            return [out[0], [("maybe", 0.0)]]  # the second sample gives no verdict word

    v = RulesReward(GenRMJudge(HalfSilent({"R": 0.4}), samples=2), ["R"])("x", "", prompt="p")
    assert v.score == pytest.approx(0.4) and v.flags == ("judge_no_verdict",)


def test_bad_rules_and_missing_prompt():
    judge = GenRMJudge(ByRule({}))
    with pytest.raises(ValueError, match="non-empty list"):
        RulesReward(judge, [])
    with pytest.raises(ValueError, match="non-empty list"):
        RulesReward(judge, ["ok", "  "])
    with pytest.raises(RewardError, match="needs the prompt"):
        RulesReward(judge, ["ok"])("x", "")


def test_rules_config_needs_rules():
    from rlvr.config import load_config

    with pytest.raises(Exception, match="needs reward.rules"):
        load_config(None, ["reward.verifier=rules"])
