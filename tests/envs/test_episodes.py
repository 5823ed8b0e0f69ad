"""The episode runner on a scripted engine: batching, masks, every stop reason, failures, speed."""

from __future__ import annotations

import re
import time

import pytest

from rlvr.engines.base import SamplingParams
from rlvr.envs import EpisodeLimits, EpisodeRunner, PlainRenderer, StepResult, episode_metrics
from rlvr.envs.base import Env
from rlvr.envs.guess_number import GuessNumberEnv, guess_number_samples
from rlvr.envs.render import OBS_CLOSE, OBS_OPEN
from rlvr.envs.tool_env import ToolEnv
from rlvr.envs.tools import ToolBox
from rlvr.rewards.exact_verifier import ExactVerifier
from rlvr.types import Sample

PARAMS = SamplingParams(max_new_tokens=32)


def bisect_policy(text: str) -> str:
    """Binary search over the feedback in the transcript (1..100)."""
    low, high = 1, 100
    for guess, side in re.findall(r"(\d+) is too (low|high)", text):
        low, high = (max(low, int(guess) + 1), high) if side == "low" else (low, min(high, int(guess) - 1))
    return str((low + high) // 2)


def run(engine, tok, make_env, samples, limits=EpisodeLimits(), seeds=None):
    with EpisodeRunner(engine, PlainRenderer(tok), PARAMS, limits) as runner:
        return runner.run(make_env, samples, seeds or list(range(len(samples))))


def test_bisection_solves_every_game_with_one_batched_call_a_turn(scripted, char_tok):
    engine = scripted(bisect_policy)
    samples = guess_number_samples(6, seed=1)
    episodes = run(engine, char_tok, GuessNumberEnv, samples, EpisodeLimits(max_turns=8, max_total_tokens=2000))
    assert [ep.stop_reason for ep in episodes] == ["solved"] * 6
    assert [ep.reward for ep in episodes] == [1.0] * 6
    assert [ep.trajectory.turns[-1].action for ep in episodes] == [s.answer for s in samples]
    # One call per turn, holding every episode still live at that turn.
    longest = max(len(ep.trajectory.turns) for ep in episodes)
    assert len(engine.calls) == longest
    live = [sum(len(ep.trajectory.turns) > t for ep in episodes) for t in range(longest)]
    assert [len(rows) for rows in engine.calls] == live
    assert len(engine.calls[0]) == 6


def test_observations_are_masked_and_appended_as_rendered(scripted, char_tok):
    engine = scripted(lambda text: "50")
    [ep] = run(engine, char_tok, GuessNumberEnv, [Sample("guess", "7")], EpisodeLimits(max_turns=3))
    traj, renderer = ep.trajectory, PlainRenderer(char_tok)
    assert ep.stop_reason == "max_turns"
    policy = char_tok("50", add_special_tokens=False)["input_ids"] + [char_tok.eos_token_id]
    obs = renderer.observation_ids("50 is too high: guess lower.", policy[-1])
    # policy, obs, policy, obs, policy: masks 1/0 in blocks, log-probs 0 off the policy tokens.
    assert traj.ids == policy + obs + policy + obs + policy
    assert traj.loss_mask == [1] * len(policy) + [0] * len(obs) + [1] * len(policy) + [0] * len(obs) + [1] * len(policy)
    assert all((lp == -0.5) == bool(m) for lp, m in zip(traj.logprobs, traj.loss_mask))
    assert set(traj.versions) == {3}
    assert char_tok.decode(obs) == f"\n{OBS_OPEN}50 is too high: guess lower.{OBS_CLOSE}\n"
    rollout = traj.to_rollout("50", "stop")
    assert rollout.loss_mask == tuple(traj.loss_mask) and rollout.completion_ids == tuple(traj.ids)
    assert rollout.prompt_ids == tuple(char_tok("guess", add_special_tokens=False)["input_ids"])


def test_max_tokens_cuts_the_turn_to_the_budget(scripted, char_tok):
    engine = scripted(lambda text: "x" * 40)
    [ep] = run(engine, char_tok, GuessNumberEnv, [Sample("guess", "7")], EpisodeLimits(max_total_tokens=20))
    assert ep.stop_reason == "max_tokens"
    assert ep.trajectory.total_tokens == 20 and len(ep.trajectory.ids) == 15  # "guess" is 5 tokens
    assert ep.step_rewards == []  # the cut turn never reached the environment


def test_max_tokens_when_the_observation_would_not_fit(scripted, char_tok):
    engine = scripted(lambda text: "1")
    [ep] = run(engine, char_tok, GuessNumberEnv, [Sample("guess", "7")], EpisodeLimits(max_total_tokens=12))
    assert ep.stop_reason == "max_tokens"
    assert ep.trajectory.loss_mask == [1, 1]  # "1" + EOS; no observation was appended
    assert len(ep.step_rewards) == 1


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first.
        b: the second.
    """
    return a + b


def test_max_tool_calls(scripted, char_tok):
    call = '<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>'
    engine = scripted(lambda text: call + call)
    env = lambda: ToolEnv(ToolBox([add]), ExactVerifier())  # noqa: E731
    [ep] = run(engine, char_tok, env, [Sample("sum?", "3")], EpisodeLimits(max_turns=10, max_tool_calls=5,
                                                                          max_total_tokens=2000))
    assert ep.stop_reason == "max_tool_calls"
    assert ep.tool_calls == 6 and len(ep.trajectory.turns) == 3  # 2 a turn: 2, 4, 6 >= 5
    assert ep.metrics["tool/ok"] == 6


def test_answer_ends_a_tool_episode_with_the_verifiers_reward(scripted, char_tok):
    call = '<tool_call>{"name": "add", "arguments": {"a": 40, "b": 2}}</tool_call>'
    engine = scripted(lambda text: "Answer: 42" if "add: 42" in text else call)
    env = lambda: ToolEnv(ToolBox([add]), ExactVerifier())  # noqa: E731
    [ep] = run(engine, char_tok, env, [Sample("40+2?", "42")], EpisodeLimits(max_total_tokens=2000))
    assert (ep.stop_reason, ep.reward, ep.tool_calls) == ("answered", 1.0, 1)


class SlowEnv(Env):
    def __init__(self, delay: float):
        self.delay = delay

    def reset(self, sample, seed):
        return "go"

    def step(self, action):
        time.sleep(self.delay)
        return StepResult("again")


def test_wall_time_abandons_a_hanging_step(scripted, char_tok):
    engine = scripted(lambda text: "ok")
    t0 = time.perf_counter()
    [ep] = run(engine, char_tok, lambda: SlowEnv(3.0), [Sample("p", "")], EpisodeLimits(wall_s=0.3))
    assert ep.stop_reason == "wall_time"
    assert time.perf_counter() - t0 < 1.5  # it did not wait for the 3 s step


def test_slow_steps_run_in_parallel(scripted, char_tok):
    engine = scripted(lambda text: "ok")
    t0 = time.perf_counter()
    episodes = run(engine, char_tok, lambda: SlowEnv(0.3), [Sample("p", "")] * 8, EpisodeLimits(max_turns=1))
    took = time.perf_counter() - t0
    assert [ep.stop_reason for ep in episodes] == ["max_turns"] * 8
    assert took < 0.3 * 8 / 3, f"8 steps of 0.3 s took {took:.2f} s: not in parallel"


class FlakyEnv(GuessNumberEnv):
    def step(self, action):
        if self.secret == 13:
            raise KeyError("the environment broke")
        return super().step(action)


def test_an_env_that_raises_ends_only_its_own_episode(scripted, char_tok):
    engine = scripted(bisect_policy)
    samples = [Sample("guess", "40"), Sample("guess", "13"), Sample("guess", "77")]
    episodes = run(engine, char_tok, FlakyEnv, samples, EpisodeLimits(max_turns=8, max_total_tokens=2000))
    assert [ep.stop_reason for ep in episodes] == ["solved", "env_error", "solved"]
    assert episodes[1].error == "KeyError: 'the environment broke'"
    metrics = episode_metrics(episodes)
    assert metrics["env/env_errors"] == 1.0 and metrics["env/stop/env_error"] == pytest.approx(1 / 3)


class BrokenReset(GuessNumberEnv):
    def reset(self, sample, seed):
        raise OSError("no database")


def test_a_failed_reset_is_an_env_error_without_a_trajectory(scripted, char_tok):
    engine = scripted(bisect_policy)
    [ep] = run(engine, char_tok, BrokenReset, [Sample("guess", "5")])
    assert (ep.stop_reason, ep.trajectory, ep.error) == ("env_error", None, "OSError: no database")
    assert engine.calls == []


def test_limits_reject_nonsense():
    with pytest.raises(ValueError, match="max_turns"):
        EpisodeLimits(max_turns=0)
    with pytest.raises(ValueError, match="wall_s"):
        EpisodeLimits(wall_s=0)


def test_malformed_and_unknown_calls_are_observations_in_an_episode(scripted, char_tok):
    turns = iter(['<tool_call>{"name": "add", "arguments": {"a": 1</tool_call>',
                  '<tool_call>{"name": "mul", "arguments": {}}</tool_call>',
                  '<tool_call>{"name": "add", "arguments": {"a": 1, "b": 1}}</tool_call>', "Answer: 2"])
    engine = scripted(lambda text: next(turns))
    env = lambda: ToolEnv(ToolBox([add]), ExactVerifier())  # noqa: E731
    [ep] = run(engine, char_tok, env, [Sample("1+1?", "2")], EpisodeLimits(max_total_tokens=2000))
    assert (ep.stop_reason, ep.reward, ep.tool_calls) == ("answered", 1.0, 3)
    shown = [t.observation for t in ep.trajectory.turns[:3]]
    assert shown[0].startswith("error: malformed tool call: not JSON")
    assert shown[1] == "error: unknown tool 'mul'; tools: ['add']" and shown[2] == "add: 2"
    metrics = episode_metrics([ep])
    assert metrics["env/tool/malformed"] == 1 and metrics["env/tool/unknown"] == 1
    assert metrics["env/malformed_rate"] == pytest.approx(1 / 3)
