"""[env] / [task] kind = "repo": the sections load, pair up, and build a run's environment."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from rlvr.config import load_config
from rlvr.errors import ConfigError

REPO = ['env.kind="repo"', 'task.kind="repo"', "eval.size=0", "env.max_total_tokens=4096"]


def test_the_sections_load_and_pair_up():
    config = load_config(None, [*REPO, "env.similarity_weight=0.2", "task.test_size=3"])
    assert (config.env.kind, config.env.similarity_weight, config.task.test_size) == ("repo", 0.2, 3)
    with pytest.raises(ConfigError, match="task.kind = 'repo' rows are repositories to fix: they need env.kind = 'repo'"):
        load_config(None, ['task.kind="repo"', "eval.size=0"])
    with pytest.raises(ConfigError, match="plays task.kind = 'repo' games, not task.kind = 'arithmetic'"):
        load_config(None, ['env.kind="repo"', "eval.size=0", "env.max_total_tokens=4096"])


@pytest.mark.sandbox
def test_the_run_builds_the_environment_over_the_shipped_tasks(sandbox):
    from rlvr.envs.repo.env import task_samples
    from rlvr.orchestrate.env_choice import ENV_BUILDERS
    from rlvr.tasks.registry import load_splits

    config = load_config(None, [*REPO, "task.train_size=2", "task.test_size=2"])
    train, test = load_splits(config.task)
    assert len(train) == len(test) == 2 and test[0].answer.startswith(("calendar_math", "roman", "wordwrap"))
    spec = ENV_BUILDERS["repo"](config, SimpleNamespace())
    try:
        env = spec.make_env()
        first = env.reset(test[0], 0)
        assert "Issue:" in first and {s["function"]["name"] for s in spec.tools} >= {"read_file", "edit", "run", "submit"}
        assert env.step("no call").stop_reason == "no_tool_call" and not env.verdict.resolved
        assert task_samples([env.task])[0].answer == test[0].answer
    finally:
        spec.close()
