"""env.kind -> the environment a run plays: its factory (one `Env` per episode), the tool
schemas for a chat template, and what to close when the run ends. `EpisodeSource.from_run`
(orchestrate/episode_source.py) builds a run's episodes from it; env.kind = "none" has no
entry (the single-turn `RolloutSource`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rlvr import names
from rlvr.config import Config
from rlvr.envs.base import Env
from rlvr.envs.guess_number import GuessNumberEnv
from rlvr.envs.one_turn import OneTurnEnv
from rlvr.envs.sql_env import SQL_INSTRUCTIONS, sql_env
from rlvr.envs.tool_env import PYTHON_INSTRUCTIONS, ToolEnv, sandbox_python
from rlvr.envs.tools import ToolBox
from rlvr.errors import ConfigError, RewardError
from rlvr.orchestrate.parts import ModelParts
from rlvr.orchestrate.paths import resolve_path
from rlvr.orchestrate.env_factory import checked_factory
from rlvr.orchestrate.scoring import RewardFn, score_one
from rlvr.rewards.sandbox import Limits, Sandbox, SandboxUnavailable
from rlvr.rewards.verdict import Verdict
from rlvr.types import Rollout, Sample


@dataclass(frozen=True)
class EnvSpec:
    make_env: Callable[[], Env]
    tools: list[dict] | None = None  # JSON schemas, for a chat template's `tools=`
    close: Callable[[], None] = lambda: None
    # After each step's episodes: metrics to log, or a run-stopping error (rlvr.envs.fault_rate).
    after_batch: Callable[[list], dict[str, float]] = lambda episodes: {}


def reward_scorer(reward_fn: RewardFn, on_error: str) -> Callable[[Sample, str], Verdict]:
    """The run's reward function scoring an answer as a single-turn completion would be scored
    (the prompt and a dataset's extra columns reach it)."""

    def score(sample: Sample, answer: str) -> Verdict:
        try:
            return score_one(reward_fn, sample, Rollout((), (), (), answer, "stop"))
        except RewardError as e:
            if on_error == "fail":
                raise  # ends this episode with env_error, counted and logged (docs/environments.md)
            return Verdict(score=0.0, reason=f"error: {e}", flags=("error",))

    return score


class RewardToolEnv(ToolEnv):
    """A `ToolEnv` whose answer is scored by the run's reward stack (`reward_scorer`)."""

    def __init__(self, toolbox: ToolBox, score: Callable[[Sample, str], Verdict], instructions: str):
        super().__init__(toolbox, verifier=None, instructions=instructions)
        self.score_sample = score

    def score(self, answer: str) -> Verdict:
        return self.score_sample(self.sample, answer)


def _guess_number(config: Config, parts: ModelParts) -> EnvSpec:
    t = config.task  # coherence_env.py: task.kind = "guess_number"
    return EnvSpec(lambda: GuessNumberEnv(t.low, t.high, config.env.closeness))


def _python_tool(config: Config, parts: ModelParts) -> EnvSpec:
    e = config.env
    try:
        sandbox = Sandbox(Limits(wall_s=e.tool_timeout_s, cpu_s=e.tool_timeout_s), workers=e.sandbox_workers)
    except SandboxUnavailable as err:
        raise ConfigError(f"env.kind = 'python_tool' runs code in the sandbox, which cannot start here: {err}") from None
    toolbox = ToolBox([sandbox_python(sandbox, e.max_output_chars)], parser=e.tool_parser)
    text = PYTHON_INSTRUCTIONS if e.instructions is None else e.instructions
    score = reward_scorer(parts.reward_fn, config.reward.on_error)
    return EnvSpec(lambda: RewardToolEnv(toolbox, score, text), toolbox.schemas, sandbox.close)


def _sql(config: Config, parts: ModelParts) -> EnvSpec:
    e, repo = config.env, Path(__file__).resolve().parents[3]  # a recipe's relative paths: as model.path's
    db = resolve_path(e.db_path, repo)
    if not db.is_file():
        raise ConfigError(f"env.db_path = {e.db_path!r}: no such file (looked in the working directory and {repo})")
    text = SQL_INSTRUCTIONS if e.instructions is None else e.instructions
    make = sql_env(db, parser=e.tool_parser, max_rows=e.max_rows, timeout_s=e.query_timeout_s, instructions=text)
    return EnvSpec(make, make().toolbox.schemas)


def _single_turn(config: Config, parts: ModelParts) -> EnvSpec:
    score = reward_scorer(parts.reward_fn, config.reward.on_error)
    return EnvSpec(lambda: OneTurnEnv(score))


def _textarena(config: Config, parts: ModelParts) -> EnvSpec:
    from rlvr.envs.textarena_env import textarena_env  # the optional extra, imported only when asked

    e = config.env
    return EnvSpec(textarena_env(e.game, dict(e.options), bracket_actions=e.bracket_actions))


def _custom(config: Config, parts: ModelParts) -> EnvSpec:
    make, probe = checked_factory(config.env.factory, dict(config.env.options))  # orchestrate/env_factory.py
    return EnvSpec(make, probe.tool_schemas())


def _repo(config: Config, parts: ModelParts) -> EnvSpec:
    from rlvr.orchestrate.repo_env_choice import repo_spec  # its own module (issue 24)

    return EnvSpec(*repo_spec(config, parts))


def _world(config: Config, parts: ModelParts) -> EnvSpec:
    from rlvr.orchestrate.world_choice import world_env  # the world modules load only when asked

    return EnvSpec(*world_env(config.env))


def _openenv(config: Config, parts: ModelParts) -> EnvSpec:
    from rlvr.orchestrate.remote_env_choice import openenv_spec  # openenv-core loads only when asked

    return EnvSpec(**openenv_spec(config.env))


def _emulated(config: Config, parts: ModelParts) -> EnvSpec:
    from rlvr.orchestrate.remote_env_choice import emulated_spec

    return EnvSpec(**emulated_spec(config.env))


ENV_BUILDERS: dict[str, Callable[[Config, ModelParts], EnvSpec]] = names.ENV_KIND.bind(
    {"guess_number": _guess_number, "python_tool": _python_tool, "sql": _sql,
     "single_turn": _single_turn, "textarena": _textarena, "custom": _custom, "repo": _repo,
     "world": _world, "openenv": _openenv, "emulated": _emulated},
    without=("none",), table="ENV_BUILDERS")
