"""Step rewards of the built-in game (GuessNumberEnv's `closeness`) and the hybrid rule
(rlvr.envs.scored.EpisodeScoring) that combines them with the terminal reward."""

from __future__ import annotations

import pytest

from rlvr.envs.guess_number import GuessNumberEnv
from rlvr.envs.scored import EpisodeScoring
from rlvr.types import Sample


def test_a_wrong_guess_earns_its_closeness():
    env = GuessNumberEnv(1, 20, closeness=0.2)
    env.reset(Sample("", "15"), 0)
    # |10 - 15| = 5 of a range of 19: 0.2 * (1 - 5/19); |1 - 15| = 14: 0.2 * (1 - 14/19)
    assert env.step("10").reward == pytest.approx(0.2 * 14 / 19)
    assert env.step("1").reward == pytest.approx(0.2 * 5 / 19)
    assert env.step("15").reward == 1.0  # the terminal reward is not shaped


def test_no_closeness_no_step_reward():
    env = GuessNumberEnv(1, 20)
    env.reset(Sample("", "15"), 0)
    assert env.step("14").reward == 0.0


def test_the_hybrid_rule_weights_the_earlier_step_rewards():
    # r = (0.1, 0.3, 1.0), step_weight 0.5: 1.0 + 0.5 * (0.1 + 0.3) = 1.2
    assert EpisodeScoring(0.5).reward([0.1, 0.3, 1.0]) == pytest.approx(1.2)
