"""A single-turn task as a one-turn environment: the first observation is the task's prompt,
the policy's one turn is scored by `score(sample, text)` (a run passes its reward stack,
rlvr.orchestrate.env_choice) and the episode ends, "answered". Through the episode source it
gives what the single-turn path gives (tests/orchestrate/test_env_run.py compares the two
runs), so one producer path can serve both."""

from __future__ import annotations

from collections.abc import Callable

from rlvr.envs.base import Env, StepResult
from rlvr.rewards.verdict import Verdict
from rlvr.types import Sample

Score = Callable[[Sample, str], Verdict]


class OneTurnEnv(Env):
    def __init__(self, score: Score):
        self.score = score
        self.sample: Sample | None = None

    def reset(self, sample: Sample, seed: int) -> str:
        self.sample = sample
        return sample.prompt

    def step(self, action: str) -> StepResult:
        verdict = self.score(self.sample, action)
        metrics = {"answer/reward_errors": 1.0} if "error" in verdict.flags else {}
        return StepResult("", reward=float(verdict.score), done=True, stop_reason="answered", metrics=metrics)
