"""[env]: the environment that plays each task as a multi-turn episode (issue 17;
docs/environments.md), and the [task] kinds that only environments need so far.

[env] is keyed on `kind` like [task]: "none" (the default) is the single-turn path, unchanged;
each environment's section carries the shared episode limits, the hybrid reward rule
(`step_weight`), the credit rule (`credit`, `turn_discount`) and its own options. The
cross-field rules (which engines, producers and evaluations an environment run supports) are
in config/coherence_env.py.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

from pydantic import Discriminator, Field, Tag

from rlvr import names
from rlvr.config.episode_section import EpisodeSection
from rlvr.config.section import Section
from rlvr.config.sections_remote_env import EmulatedEnvSection, OpenEnvSection
from rlvr.config.sections_repo import RepoEnv


class NoEnv(Section):
    """No environment: every task is one prompt and one completion."""

    kind: Literal["none"] = "none"


class GuessNumberEnv(EpisodeSection):
    """Guess-the-number with higher/lower feedback; the secret is the task's answer
    (task.kind = "guess_number"). Reward 1 and stop reason `solved` on the right guess."""

    kind: Literal["guess_number"] = "guess_number"
    closeness: float = Field(0.0, ge=0, le=1000, description="a wrong guess's step reward: closeness * (1 - |guess - "
                                                    "secret| / (high - low)); 0: none")


class PythonToolEnv(EpisodeSection):
    """The policy may call `python(code)`, run in the reward stack's sandbox, then answers; the
    answer (a turn without a call) is scored by [reward] against the task's gold."""

    kind: Literal["python_tool"] = "python_tool"
    tool_parser: names.TOOL_PARSER.literal() = Field("json_tags", description="how tool calls are read from a turn")
    tool_timeout_s: float = Field(5.0, gt=0, le=3600, description="wall-clock seconds of one python(code) run")
    sandbox_workers: int = Field(2, ge=1, le=1024, description="python(code) runs at once")
    max_output_chars: int = Field(1000, ge=1, le=10_000_000,
                                  description="what a run prints is cut to this many characters")
    instructions: Optional[str] = Field(None, description="text put before each task's prompt (unset: how to "
                                                          "call the tool, docs/environments.md)")


class SqlEnv(EpisodeSection):
    """The policy may call `sql(query)` on a SQLite database (read-only), then answers; a
    task's gold answer is a SQL query, and the answer scores 1 when it states that query's
    result (rlvr.envs.sql_env; docs/environments.md)."""

    kind: Literal["sql"] = "sql"
    db_path: str = Field(min_length=1, description="the SQLite database file (opened read-only)")
    tool_parser: names.TOOL_PARSER.literal() = Field("json_tags", description="how tool calls are read from a turn")
    max_rows: int = Field(20, ge=1, le=1_000_000, description="rows a query shows at most")
    query_timeout_s: float = Field(2.0, gt=0, le=3600, description="a query running longer is aborted")
    instructions: Optional[str] = Field(None, description="text put before each question (unset: how to call "
                                                          "the tool and answer)")


class SingleTurnEnv(EpisodeSection):
    """Each task as a one-turn episode: its prompt, one policy turn scored by [reward], done
    (`answered`). Generated and scored by the single-turn source's code, so any single-turn
    option applies (orchestrate/one_turn_source.py); the budget is `max_total_tokens`."""

    kind: Literal["single_turn"] = "single_turn"


class TextArenaEnv(EpisodeSection):
    """One single-player textarena game (extra `envs`, textarena 0.7.4) per episode, seeded by
    its task (task.kind = "textarena"); the game's final reward is the episode's
    (rlvr.envs.textarena_env; docs/environments.md, "External environments")."""

    kind: Literal["textarena"] = "textarena"
    game: str = Field(min_length=1, description="the textarena id, e.g. 'GuessTheNumber-v0' (only games checked "
                                                "to run offline: rlvr.envs.textarena_env.OFFLINE_GAMES)")
    options: dict[str, Union[int, float, str, bool]] = Field({}, description="keyword arguments of the game's "
                                                                           "constructor, over the id's own")
    bracket_actions: bool = Field(True, description="an action with no [ ] is sent as [action] (textarena's "
                                                    "ActionFormattingWrapper)")


class CustomEnv(EpisodeSection):
    """Your own environment: an `rlvr.envs.Env` subclass, or a function returning one, named by
    its import path and called with `options` once per episode (orchestrate/env_factory.py;
    docs/environments.md). It plays any task kind; its `step` rewards are the episode's."""

    kind: Literal["custom"] = "custom"
    factory: str = Field(min_length=1, description="'package.module:ClassOrFunction' returning an rlvr.envs.Env; "
                                                   "importable where the run runs (as reward.function)")
    options: dict[str, Any] = Field({}, description="keyword arguments of every factory call")


class WorldEnvSection(EpisodeSection):
    """A generated tool world (rlvr.envs.worlds; docs/environments-reference.md, "Tool worlds"):
    each task row seeds one instance of the world; reward 1 when its goal holds on the true
    state at the turn without a tool call."""

    kind: Literal["world"] = "world"
    world: str = Field(min_length=1, description="a world of rlvr.envs.worlds.WORLDS (ledger, files, calendar), "
                                                 "or 'package.module:SPEC' naming a WorldSpec")
    difficulty: int = Field(1, ge=1, le=8, description="tool calls the task generator applies to make the goal")
    distractors: int = Field(0, ge=0, le=4, description="extra tools that change nothing")
    noise: float = Field(0.0, ge=0, le=1, description="chance that a call's observation is lost ('(no response)')")


ENV_SECTIONS: dict[str, type[Section]] = names.ENV_KIND.bind({
    "none": NoEnv, "guess_number": GuessNumberEnv, "python_tool": PythonToolEnv, "sql": SqlEnv,
    "single_turn": SingleTurnEnv, "textarena": TextArenaEnv, "custom": CustomEnv, "repo": RepoEnv,
    "world": WorldEnvSection, "openenv": OpenEnvSection, "emulated": EmulatedEnvSection,
}, table="ENV_SECTIONS")


def env_section_kind(value: Any) -> str:
    return value.get("kind", "none") if isinstance(value, dict) else getattr(value, "kind", "none")


EnvSection = Annotated[Union[tuple(Annotated[cls, Tag(kind)] for kind, cls in ENV_SECTIONS.items())],
                       Discriminator(env_section_kind)]


class GuessNumberTask(Section):
    """Seeded guess-the-number games: each task's gold answer is its secret in low .. high."""

    kind: Literal["guess_number"] = "guess_number"
    seed: int = Field(0, ge=0, le=2**63 - 1, description="seed of the secrets")
    train_size: int = Field(1000, gt=0, le=1_000_000, description="training games")
    test_size: int = Field(100, gt=0, le=1_000_000, description="held-out games")
    low: int = Field(1, ge=-10**9, le=10**9, description="the smallest secret")
    high: int = Field(100, ge=-10**9, le=10**9, description="the largest secret")


class TextArenaTask(Section):
    """Game seeds: each task is one seed of env.game (env.kind = "textarena"), so the G
    episodes of a task play the same game. Seeds are distinct; games may still repeat where a
    game has few instances (GuessTheNumber-v0 has 20 secrets)."""

    kind: Literal["textarena"] = "textarena"
    seed: int = Field(0, ge=0, le=2**63 - 1, description="seed of the game seeds")
    train_size: int = Field(1000, gt=0, le=1_000_000, description="training games")
    test_size: int = Field(100, gt=0, le=1_000_000, description="held-out games")
