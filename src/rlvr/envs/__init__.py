"""Multi-turn episodes in environments (issue 17; docs/environments.md).

`base` the contract (Env, StepResult, EpisodeLimits), `trajectory` exact token sequences,
`render` turn rendering, `episodes` the batched runner, `tools` tool calls, `scored` episodes
as the loop's scored groups, `credit` per-turn credit; environments: `guess_number`,
`tool_env` (the Python tool), `sql_env`, `one_turn`, `textarena_env` (the optional extra).
"""

from rlvr.envs.base import Env, EnvFault, EpisodeLimits, StepResult
from rlvr.envs.episodes import Episode, EpisodeRunner, episode_metrics
from rlvr.envs.render import ChatRenderer, PlainRenderer, Renderer, renderer_for
from rlvr.envs.tool_env import ToolEnv
from rlvr.envs.tools import PARSERS, Tool, ToolBox, ToolResults, make_tool
from rlvr.envs.trajectory import Trajectory, Turn

__all__ = ["ChatRenderer", "Env", "EnvFault", "Episode", "EpisodeLimits", "EpisodeRunner", "PARSERS", "PlainRenderer", "Renderer",
           "StepResult", "Tool", "ToolBox", "ToolEnv", "ToolResults", "Trajectory", "Turn", "episode_metrics",
           "make_tool", "renderer_for"]
