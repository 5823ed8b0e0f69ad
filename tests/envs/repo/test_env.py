"""env.kind = "repo": tools over the episode's own tree, exact error observations, scoring at the end."""

from __future__ import annotations

import json

import pytest

from rlvr.envs.repo.env import RepoSettings, repo_env, task_samples

pytestmark = pytest.mark.sandbox


def call(name, **arguments):
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


@pytest.fixture
def env(calc_task, sandbox):
    made = repo_env([calc_task], sandbox, RepoSettings(max_turns=6))()
    made.reset(task_samples([calc_task])[0], 0)
    return made


@pytest.mark.parametrize("action, observation", [
    (call("read_file", path="../etc/passwd"), "error: read_file raised ValueError: path '../etc/passwd' is outside the repository ('..')"),
    (call("read_file", path="/etc/passwd"), "error: read_file raised ValueError: path '/etc/passwd' is outside the repository (absolute)"),
    (call("edit", path=".git/config", search="", replace="x"), "error: edit raised ValueError: path '.git/config' is inside .git, which is not part of the repository"),
    ("<tool_call>{bad json", "error: malformed tool call: no closing </tool_call>"),
    (call("edit", path="calc/ops.py", search="a * b", replace="x"), "error: edit raised PatchError: calc/ops.py: the search text does not occur"),
    (call("read_file", path="nope.py"), "error: read_file raised FileNotFoundError: no file nope.py in the repository"),
    (call("apply_patch", patch="--- a/calc/ops.py\n+++ b/calc/ops.py\n@@ -1,2 +1,2 @@\n def nope(a, b):\n-    x\n+    y\n"),
     "error: apply_patch raised PatchError: calc/ops.py: hunk 1 (@@ -1,2 @@) does not apply"),
    (call("frobnicate"), "error: unknown tool 'frobnicate'"),
])
def test_a_bad_call_gets_an_exact_observation_and_the_episode_goes_on(env, action, observation):
    result = env.step(action)
    assert result.observation.startswith(observation) and not result.done
    assert env.work.files == env.task.base  # nothing changed


def test_reading_grepping_editing_and_submitting(env):
    assert env.step(call("read_file", path="calc/ops.py", start=2, end=2)).observation == "read_file: 2:     return a - b"
    assert "calc/ops.py:2:     return a - b" in env.step(call("grep", pattern=r"a - b")).observation
    assert env.step(call("find_files", pattern="test_*.py")).observation == "find_files: tests/test_ops.py"
    env.step(call("edit", path="calc/ops.py", search="a - b", replace="a + b"))
    result = env.step(call("submit"))
    assert result.done and result.stop_reason == "submitted" and result.reward == pytest.approx(1.0)
    assert result.metrics["repo/resolved"] == 1.0 and result.metrics["patch/similarity"] == 1.0


def test_a_command_runs_in_the_sandbox_and_its_file_changes_come_back(env):
    result = env.step(call("run", command="sed -i 's/a - b/a + b/' calc/ops.py && python -m pytest tests; cat /etc/hostname; touch /x"))
    assert "1 passed, 0 failed" in result.observation and "Read-only file system" in result.observation
    assert "a + b" in env.work.files["calc/ops.py"]
    assert env.task.base["calc/ops.py"].count("a - b") == 1  # the task's own tree is another copy


def test_a_unified_diff_edit_applies(env, calc_task):
    env.step(call("apply_patch", patch=calc_task.patch))
    assert env.step("no call: done").stop_reason == "no_tool_call" and env.verdict.resolved


def test_the_last_allowed_turn_submits(env):
    for _ in range(5):
        assert not env.step(call("list_files")).done
    result = env.step(call("list_files"))
    assert result.done and result.stop_reason == "auto_submit" and result.reward == 0.0
