"""env.kind -> the environment a run plays: its factory (one `Env` per episode), the tool
schemas for a chat template, and what to close when the run ends. `EpisodeSource.from_run`
(orchestrate/episode_source.py) builds a run's episodes from it; env.kind = "none" has no
entry (the single-turn `RolloutSource`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rlvr import names
from rlvr.config import Config
from rlvr.envs.base import Env
from rlvr.envs.guess_number import GuessNumberEnv
from rlvr.envs.tool_env import PYTHON_INSTRUCTIONS, ToolEnv, sandbox_python
from rlvr.envs.tools import ToolBox
from rlvr.errors import ConfigError, RewardError
from rlvr.orchestrate.scoring import RewardFn, score_one
from rlvr.rewards.sandbox import Limits, Sandbox, SandboxUnavailable
from rlvr.rewards.verdict import Verdict
from rlvr.types import Rollout


@dataclass(frozen=True)
class EnvSpec:
    make_env: Callable[[], Env]
    tools: list[dict] | None = None  # JSON schemas, for a chat template's `tools=`
    close: Callable[[], None] = lambda: None


class RewardToolEnv(ToolEnv):
    """A `ToolEnv` whose answer is scored by the run's reward function, as a single-turn
    completion would be (the prompt and a dataset's extra columns reach it)."""

    def __init__(self, toolbox: ToolBox, reward_fn: RewardFn, on_error: str, instructions: str):
        super().__init__(toolbox, verifier=None, instructions=instructions)
        self.reward_fn, self.on_error = reward_fn, on_error

    def score(self, answer: str) -> Verdict:
        try:
            return score_one(self.reward_fn, self.sample, Rollout((), (), (), answer, "stop"))
        except RewardError as e:
            if self.on_error == "fail":
                raise  # ends this episode with env_error, counted and logged (docs/environments.md)
            return Verdict(score=0.0, reason=f"error: {e}", flags=("error",))


def _guess_number(config: Config, parts) -> EnvSpec:
    t = config.task  # coherence_env.py: task.kind = "guess_number"
    return EnvSpec(lambda: GuessNumberEnv(t.low, t.high))


def _python_tool(config: Config, parts) -> EnvSpec:
    e = config.env
    try:
        sandbox = Sandbox(Limits(wall_s=e.tool_timeout_s, cpu_s=e.tool_timeout_s), workers=e.sandbox_workers)
    except SandboxUnavailable as err:
        raise ConfigError(f"env.kind = 'python_tool' runs code in the sandbox, which cannot start here: {err}") from None
    toolbox = ToolBox([sandbox_python(sandbox, e.max_output_chars)], parser=e.tool_parser)
    text = PYTHON_INSTRUCTIONS if e.instructions is None else e.instructions
    on_error = config.reward.on_error
    return EnvSpec(lambda: RewardToolEnv(toolbox, parts.reward_fn, on_error, text), toolbox.schemas, sandbox.close)


ENV_BUILDERS: dict[str, Callable[[Config, object], EnvSpec]] = names.ENV_KIND.bind(
    {"guess_number": _guess_number, "python_tool": _python_tool}, without=("none",), table="ENV_BUILDERS")
