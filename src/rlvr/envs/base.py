"""The environment contract: an `Env` plays one episode; `EpisodeLimits` bound it.

An `Env` is single-use: `reset(sample, seed)` once, then `step(action)` until a `StepResult`
says `done` (or the episode runner ends the episode at a limit). Everything an episode needs
lives on the instance; the runner (`rlvr.envs.episodes`) makes one instance per episode with a
factory, so that episodes never share state and may step in parallel threads.

Text in, text out: the environment sees the policy's action as text and answers with an
observation as text. Turning text into tokens is the runner's and the renderer's job
(`rlvr.envs.render`), so that the trajectory keeps the exact ids the policy sampled.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field

from rlvr.types import Sample

# Why an episode ended. The environment's own reasons (it set done=True) are its choice of
# name ("solved", "answered", ...); these are the runner's.
STOP_DONE = "done"  # the environment said done without naming a reason
STOP_MAX_TURNS = "max_turns"
STOP_MAX_TOKENS = "max_tokens"
STOP_MAX_TOOL_CALLS = "max_tool_calls"
STOP_WALL_TIME = "wall_time"
STOP_ENV_ERROR = "env_error"
RUNNER_STOP_REASONS = (STOP_MAX_TURNS, STOP_MAX_TOKENS, STOP_MAX_TOOL_CALLS, STOP_WALL_TIME, STOP_ENV_ERROR)


class EnvFault(Exception):
    """The environment's infrastructure failed, not the policy: a remote server down, slow or
    answering garbage (rlvr.envs.openenv_env, rlvr.envs.emulated). Raised from `reset` or
    `step`, it ends only that episode, with `stop_reason` (e.g. "openenv_timeout"); the runner
    counts it in `faults/<stop_reason>` and the episode is not trained on (rlvr.envs.scored)."""

    def __init__(self, stop_reason: str, message: str):
        super().__init__(message)
        self.stop_reason = stop_reason


@dataclass(frozen=True)
class StepResult:
    """What the environment answers to one action.

    Attributes:
        observation: text shown to the policy before its next turn ("" when done).
        reward: this step's reward (a step reward; the terminal one is the last step's).
        done: the episode is over.
        stop_reason: why it is over, when done (default "done").
        metrics: numbers to sum over the episode (e.g. {"tool/malformed": 1.0}).
        tool_calls: how many tool calls this action made (counted against the limit).
    """

    observation: str
    reward: float = 0.0
    done: bool = False
    stop_reason: str | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    tool_calls: int = 0


class Env(abc.ABC):
    """One episode of an environment. Subclasses implement `reset` and `step`; an instance is
    used for exactly one episode (the runner calls the factory once per episode and `reset`
    once per instance)."""

    @abc.abstractmethod
    def reset(self, sample: Sample, seed: int) -> str:
        """Start the episode for task `sample`; `seed` fixes all of its randomness. Returns
        the first observation (the prompt of the first turn)."""

    @abc.abstractmethod
    def step(self, action: str) -> StepResult:
        """Answer the policy's action (its turn's text, stop strings and EOS excluded)."""

    def tool_schemas(self) -> list[dict] | None:
        """The JSON schemas of the tools this environment offers, for a chat template's
        `tools=` (rlvr.envs.render); None: no tools (the default). Read once per run, from
        one instance, so every episode of a run must offer the same tools."""
        return None

    def close(self) -> None:
        """Release what the episode holds (a remote session); the runner calls it once each
        episode has ended, whatever ended it. Must return promptly. Nothing by default."""

    def task_generator(self):
        """A `rlvr.envs.generator.TaskGenerator` making fresh tasks by feature, for
        env.curriculum = "failures" (read once per run, from one instance); None: the
        failure pool replays the failed rows (the default)."""
        return None

    def report(self) -> dict:
        """Plain JSON data an evaluation keeps with the finished episode's record, beyond its
        trajectory (e.g. a repository episode's diff); {} by default."""
        return {}


@dataclass(frozen=True)
class EpisodeLimits:
    """Bounds on one episode; each ends it with its own stop reason, never a hang.

    Attributes:
        max_turns: policy turns ("max_turns" once that many ended without done).
        max_total_tokens: the whole trajectory, prompt included ("max_tokens": the policy's
            turn is cut to fit, or the observation would not fit).
        max_tool_calls: tool calls over the episode ("max_tool_calls" once that many were made
            and the episode is not done).
        wall_s: seconds from reset ("wall_time"; a step still running then is abandoned: its
            thread cannot be killed, but the episode no longer waits for it).
    """

    max_turns: int = 4
    max_total_tokens: int = 512
    max_tool_calls: int = 8
    wall_s: float = 60.0

    def __post_init__(self) -> None:
        for name in ("max_turns", "max_total_tokens", "max_tool_calls"):
            if getattr(self, name) < 1:
                raise ValueError(f"EpisodeLimits.{name} must be >= 1, got {getattr(self, name)}")
        if not self.wall_s > 0:
            raise ValueError(f"EpisodeLimits.wall_s must be positive, got {self.wall_s}")
