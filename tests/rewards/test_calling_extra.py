"""A dataset's extra columns reach the reward functions that name them (rewards/calling.py)."""

from __future__ import annotations

from rlvr.rewards import Verdict
from rlvr.rewards.calling import call_reward, score_of

EXTRA = {"difficulty": 2, "tests": ["assert f(1) == 2"]}


def test_only_named_parameters_get_extra_columns():
    def by_name(response, gold, difficulty):
        return (response, gold, difficulty)

    def positional(r, g, tests=None):
        return (r, g, tests)

    def wide(response, gold, **rest):  # **kwargs gets nothing: see the module docstring
        return rest

    def judge(response, gold, prompt, difficulty):
        return (prompt, difficulty)
    judge.needs_prompt = True

    assert call_reward(by_name, "y", "g", "p", EXTRA) == ("y", "g", 2)
    assert call_reward(positional, "y", "g", "p", EXTRA) == ("y", "g", ["assert f(1) == 2"])
    assert call_reward(wide, "y", "g", "p", EXTRA) == {}
    assert call_reward(judge, "y", "g", "p", EXTRA) == ("p", 2)
    assert call_reward(positional, "y", "g", "p") == ("y", "g", None)  # no extra: as before


def test_score_of_reads_a_verdict_or_a_number():
    assert score_of(Verdict(score=0.5, reason="")) == 0.5 and score_of(1) == 1.0
