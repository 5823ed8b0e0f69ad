"""Evaluation on episodes through the run's runner (rlvr.orchestrate.episode_eval) on a scripted
engine: k episodes a task in seed order, pass@k / histogram / disagreement of hand-made games,
turns counted, and an environment that raises counted as a failure with its stop reason."""

from __future__ import annotations

import re

import pytest

from rlvr.engines.base import SamplingParams
from rlvr.envs import EpisodeLimits, PlainRenderer, StepResult
from rlvr.envs.base import Env
from rlvr.envs.guess_number import GuessNumberEnv
from rlvr.evaluate.episodes_eval import disagreeing_tasks, sampled_metrics, summarize_episodes
from rlvr.orchestrate.episode_eval import EVAL_SEED_BASE, EpisodeEvaluator, eval_seeds
from rlvr.types import Sample

PARAMS = SamplingParams(max_new_tokens=8)


def evaluator(tok, make_env, max_turns: int = 1) -> EpisodeEvaluator:
    return EpisodeEvaluator(make_env, PlainRenderer(tok), EpisodeLimits(max_turns=max_turns, max_total_tokens=400))


def scripted_guesses(guesses: list[str]):
    """A policy that answers the rows of the first turn with `guesses` in order (row order is
    task 0's k episodes, then task 1's, ...)."""
    queue = iter(guesses)
    return lambda text: next(queue)


def test_k_episodes_a_task_give_the_hand_computed_pass_at_k_histogram_and_disagreements(scripted, char_tok):
    # Four games (secrets 3, 5, 7, 9), k = 4 episodes each, one guess each (max_turns = 1):
    # a never right (c = 0), b once (c = 1), c twice (c = 2), d always (c = 4).
    tasks = [Sample(f"game {s}", str(s), f"g/{name}") for name, s in zip("abcd", (3, 5, 7, 9))]
    guesses = ["1"] * 4 + ["5", "1", "1", "1"] + ["7", "7", "1", "1"] + ["9"] * 4
    played = evaluator(char_tok, GuessNumberEnv).play(scripted(scripted_guesses(guesses)), tasks, 4, PARAMS, seed=0)
    assert [t.successes() for t in played] == [0, 1, 2, 4]
    s = summarize_episodes(played, (1, 2, 4))
    # pass@2 = mean of 1 - C(4 - c, 2) / C(4, 2) = (0 + 1/2 + 5/6 + 1) / 4 = 7/12; pass@1 = 7/16.
    assert s["pass_at_k"]["2"]["mean"] == pytest.approx(7 / 12)
    assert s["success_at_1"]["mean"] == pytest.approx(7 / 16)
    assert s["histogram"] == {"0": 1, "1": 1, "2": 1, "3": 0, "4": 1}
    assert [r["source"] for r in disagreeing_tasks(played)] == ["g/c", "g/b"]
    # The failed ones hit the runner's turn limit; the solved ones the environment's own reason.
    assert s["stop_reasons"] == {"max_turns": pytest.approx(9 / 16), "solved": pytest.approx(7 / 16)}
    assert s["turns_mean"] == 1.0
    # Episode i of the flat list (task i // 4) played with seed EVAL_SEED_BASE + i.
    assert [o.record["seed"] for t in played for o in t.outcomes] == eval_seeds(0, 16)
    assert eval_seeds(2, 1) == [EVAL_SEED_BASE + 2 * 1_000_003]


def test_turns_are_counted_over_a_multi_turn_episode(scripted, char_tok):
    def policy(text: str) -> str:  # a wrong first guess, then the secret read off the prompt
        return re.search(r"game (\d+):", text).group(1) if "too low" in text else "1"

    played = evaluator(char_tok, GuessNumberEnv, max_turns=3).play(
        scripted(policy), [Sample("game 6: ", "6", "g/6")], 2, PARAMS, seed=0)
    s = summarize_episodes(played, (1, 2))
    assert s["turns_mean"] == 2.0 and s["success_at_1"]["mean"] == 1.0
    assert [len(o.record["turns"]) for o in played[0].outcomes] == [2, 2]


class FlakyEnv(Env):
    """Solved by "ok"; its step raises on "boom"; with prompt "dead" its reset raises."""

    def reset(self, sample: Sample, seed: int) -> str:
        if sample.prompt == "dead":
            raise RuntimeError("cannot start")
        return sample.prompt

    def step(self, action: str) -> StepResult:
        if action == "boom":
            raise ValueError("the environment broke")
        return StepResult("", reward=1.0, done=True, stop_reason="solved")


def test_an_environment_that_raises_is_a_failure_with_its_stop_reason(scripted, char_tok):
    tasks = [Sample("play", "", "t/step"), Sample("dead", "", "t/reset")]
    # Task t/step: episodes "ok", "boom" (its step raises); task t/reset: its reset raises twice.
    played = evaluator(char_tok, FlakyEnv).play(scripted(scripted_guesses(["ok", "boom"])), tasks, 2, PARAMS, seed=0)
    step_task, reset_task = played
    assert [o.success() for o in step_task.outcomes] == [True, False]
    assert step_task.outcomes[1].stop_reason == "env_error"
    assert step_task.outcomes[1].error == "ValueError: the environment broke"
    assert [o.stop_reason for o in reset_task.outcomes] == ["env_error"] * 2
    assert reset_task.outcomes[0].turns == 0 and reset_task.outcomes[0].record["error"] == "RuntimeError: cannot start"
    s = summarize_episodes(played, (1, 2))
    assert s["env_errors"] == 3 and s["stop_reasons"]["env_error"] == pytest.approx(3 / 4)
    assert s["success_at_1"]["mean"] == pytest.approx((1 / 2 + 0) / 2)
    assert sampled_metrics(played, (2,))["eval/pass@2"] == pytest.approx(1 / 2)
