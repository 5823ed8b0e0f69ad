"""A single-turn task as a one-turn environment: the first observation is the task's prompt,
the policy's one turn is scored by the reward stack and the episode ends, "answered".

Training (`env.kind = "single_turn"`) does not play it through the episode runner: the run's
`OneTurnSource` (orchestrate/one_turn_source.py) generates and scores with the single-turn code
(`RolloutSource`), and `one_turn_episode` describes each scored rollout as the episode it
is, so that the run keeps the episode records and `env/*` metrics. One generation and one
scoring path serve both, and they cannot drift (docs/environments.md, "One path for
single-turn tasks"). `OneTurnEnv` is what an evaluation on episodes plays
(orchestrate/episode_eval.py, `rlvr eval` of an environment run)."""

from __future__ import annotations

from collections.abc import Callable

from rlvr.envs.base import STOP_MAX_TOKENS, Env, StepResult
from rlvr.envs.episodes import Episode
from rlvr.envs.trajectory import Trajectory, Turn
from rlvr.rewards.verdict import Verdict
from rlvr.types import Sample, Scored

Score = Callable[[Sample, str], Verdict]
STOP_ANSWERED = "answered"


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
        return StepResult("", reward=float(verdict.score), done=True, stop_reason=STOP_ANSWERED, metrics=metrics)


def one_turn_episode(scored: Scored, seed: int, cut: bool) -> Episode:
    """The one-turn episode that `scored` is: its prompt, its one policy turn and reward,
    stop reason "answered", or "max_tokens" when the turn was `cut` at env.max_total_tokens
    (the environment never answered it: no step reward), as the episode runner records one."""
    r = scored.rollout
    n = len(r.completion_ids)
    versions = list(r.token_versions) or [r.policy_version] * n
    trajectory = Trajectory(list(r.prompt_ids), list(r.completion_ids), [1] * n, list(r.logprobs), versions)
    trajectory.turns.append(Turn(r.text, n, "", 0, 0.0 if cut else scored.reward, 0, r.finish_reason))
    return Episode(scored.sample, seed, trajectory=trajectory, step_rewards=[] if cut else [scored.reward],
                   stop_reason=STOP_MAX_TOKENS if cut else STOP_ANSWERED)
