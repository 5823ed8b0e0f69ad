"""A user's reward code never ends a run silently or with success: SystemExit from a reward
function is a reward error like any other (`reward.on_error`), naming the module and function,
and a reward module that fails at import (a raise, a syntax error, sys.exit) is one error line
naming the module."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rlvr.config import load_config
from rlvr.errors import ConfigError, RewardError
from rlvr.orchestrate import train
from rlvr.orchestrate.scoring import import_function, score_groups
from rlvr.types import Rollout, Sample

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
import exiting_rewards  # noqa: E402

SAMPLE = Sample("1+1=", "2", source="data.jsonl:4")
ROLLOUT = Rollout((1,), (2,), (-0.1,), "2", "stop")


@pytest.mark.parametrize("fn, code", [(exiting_rewards.exits_zero, "0"), (exiting_rewards.exits_three, "3")])
def test_system_exit_in_a_reward_fails_naming_module_and_function(fn, code):
    with pytest.raises(RewardError, match=rf"reward function exiting_rewards\.{fn.__name__} raised "
                                          rf"SystemExit\({code}\).*sample data\.jsonl:4"):
        score_groups(fn, [SAMPLE], [[ROLLOUT]], on_error="fail")


def test_system_exit_with_on_error_zero_scores_zero_and_is_counted():
    groups, counts = score_groups(exiting_rewards.exits_three, [SAMPLE], [[ROLLOUT, ROLLOUT]], on_error="zero")
    assert [s.reward for s in groups[0]] == [0.0, 0.0]
    assert counts["reward/errors"] == 2 and "SystemExit(3)" in groups[0][0].reason


@pytest.mark.parametrize("source, problem", [
    ("import sys\nsys.exit(0)\n", r"importing 'bad_reward_mod' raised SystemExit\(0\)"),
    ("raise RuntimeError('no config file')\n", r"importing 'bad_reward_mod' raised RuntimeError: no config file"),
    ("def reward(r, g)\n    return 1.0\n", r"'bad_reward_mod' has a syntax error at .*bad_reward_mod\.py:1"),
])
def test_a_reward_module_that_fails_at_import_is_one_error_naming_it(tmp_path, monkeypatch, source, problem):
    (tmp_path / "bad_reward_mod.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "bad_reward_mod", raising=False)
    with pytest.raises(ConfigError, match=r"reward\.function = 'bad_reward_mod:reward': " + problem):
        import_function("bad_reward_mod:reward")


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_run_whose_reward_calls_sys_exit_stops_with_a_reward_error(tmp_path, mode):
    config = load_config(REPO / "recipes" / "grpo.toml", [
        f"run.output_dir={tmp_path}", "run.name=run", "sampling.prompts_per_step=2", "sampling.group_size=2",
        "eval.size=0", "log.progress=none", "train.steps=2", f"orchestrate.mode={mode}",
        "reward.function=exiting_rewards:exits_zero"])
    with pytest.raises(RewardError, match=r"exiting_rewards\.exits_zero raised SystemExit\(0\)"):
        train(config)


def test_a_run_with_on_error_zero_survives_a_reward_that_sometimes_exits(tmp_path):
    config = load_config(REPO / "recipes" / "grpo.toml", [
        f"run.output_dir={tmp_path}", "run.name=run", "sampling.prompts_per_step=2", "sampling.group_size=2",
        "eval.size=0", "log.progress=none", "train.steps=2", "reward.on_error=zero",
        "reward.function=exiting_rewards:exits_on_the_second_call"])
    train(config)
    lines = (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()
    assert len(lines) == 2 and all('"reward/errors": 2' in line for line in lines)
