"""What the runner refuses of an environment's return values (rlvr.envs.contract): one line
naming the class and the method, instead of a crash deep in the runner or the tokenizer."""

from __future__ import annotations

import pytest

from rlvr.engines.base import SamplingParams
from rlvr.envs import Env, EpisodeRunner, PlainRenderer, StepResult
from rlvr.errors import EnvContractError
from rlvr.types import Sample


class StrStep(Env):
    def reset(self, sample, seed):
        return "go"

    def step(self, action):
        return "ok"  # not a StepResult


class NoneReset(Env):
    def reset(self, sample, seed):
        return None

    def step(self, action):
        return StepResult("", done=True)


class BadReward(StrStep):
    def step(self, action):
        return StepResult("x", reward=None)


class Raises(StrStep):
    def step(self, action):
        raise RuntimeError("boom")


def play(scripted, char_tok, env_class):
    runner = EpisodeRunner(scripted(lambda text: "a"), PlainRenderer(char_tok), SamplingParams(max_new_tokens=4))
    with runner:
        return runner.run(env_class, [Sample("", "")] * 2, [0, 1])


@pytest.mark.parametrize("env_class, message", [
    (StrStep, r"^StrStep.step returned str 'ok'; it must return a rlvr.envs.StepResult"),
    (NoneReset, r"^NoneReset.reset returned NoneType None; it must return the first observation as a str"),
    (BadReward, r"^BadReward.step returned StepResult\(reward=None\): the reward must be a finite number"),
])
def test_a_broken_return_value_stops_with_the_class_and_method(scripted, char_tok, env_class, message):
    with pytest.raises(EnvContractError, match=message):
        play(scripted, char_tok, env_class)


def test_a_step_that_raises_still_ends_only_its_episode(scripted, char_tok):
    episodes = play(scripted, char_tok, Raises)
    assert [ep.stop_reason for ep in episodes] == ["env_error"] * 2
    assert episodes[0].error == "RuntimeError: boom"
