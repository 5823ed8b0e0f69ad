"""env.kind = "repo" -> its EnvSpec: the sandbox, the tasks of both splits (validated at load),
the episode factory (rlvr.envs.repo.env). A table entry of orchestrate/env_choice.py."""

from __future__ import annotations

from pathlib import Path

from rlvr.config import Config
from rlvr.envs.repo.env import INSTRUCTIONS, RepoSettings, repo_env
from rlvr.envs.repo.load import load_repo_tasks
from rlvr.envs.repo.located import INSTRUCTIONS as LOCATED, NotLocatable, locate
from rlvr.envs.tools import ToolBox
from rlvr.envs.repo.tools import WorkTree
from rlvr.errors import ConfigError
from rlvr.orchestrate.paths import resolve_path
from rlvr.rewards.sandbox import Limits, Sandbox, SandboxUnavailable
from rlvr.tasks.repo_tasks import repo_paths


def repo_settings(config: Config) -> RepoSettings:
    e = config.env
    return RepoSettings(max_turns=e.max_turns, max_tool_calls=e.max_tool_calls, partial=e.partial_credit,
                        similarity_weight=e.similarity_weight, run_timeout_s=e.run_timeout_s,
                        max_output=e.max_output_chars, parser=e.tool_parser,
                        instructions=e.instructions if e.instructions is not None
                        else LOCATED if e.observation == "located" else INSTRUCTIONS, observation=e.observation)


def repo_spec(config: Config, parts):
    """(make_env, tool schemas, close) of an env.kind = 'repo' run, for env_choice's EnvSpec."""

    e, t, repo = config.env, config.task, Path(__file__).resolve().parents[3]
    limits = Limits(wall_s=max(60.0, e.run_timeout_s + 5), test_wall_s=e.test_wall_s, cpu_s=max(e.run_timeout_s, e.test_wall_s))
    try:
        sandbox = Sandbox(limits, workers=e.sandbox_workers)
    except SandboxUnavailable as err:
        raise ConfigError(f"env.kind = 'repo' runs commands and tests in the sandbox, which cannot start here: {err}") from None
    train, test = repo_paths(t.train_path, t.test_path, lambda p: resolve_path(p, repo))
    checker = sandbox if e.validate_tasks else None
    tasks = [*load_repo_tasks(train, checker)[:t.train_size], *load_repo_tasks(test, checker)[:t.test_size]]
    if e.observation == "located":
        for task in tasks:  # refused at load, by instance id, not at the task's first episode
            try:
                locate(task)
            except NotLocatable as err:
                raise ConfigError(str(err)) from None
    schemas = ToolBox(WorkTree({}, sandbox).tools(e.observation == "located")).schemas
    return repo_env(tasks, sandbox, repo_settings(config)), schemas, sandbox.close  # EnvSpec's fields
