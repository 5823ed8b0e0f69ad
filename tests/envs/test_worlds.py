"""Generated tool worlds (rlvr.envs.worlds): the three shipped worlds, the reward on the true
state, seeded instances of controlled difficulty, bad specs refused at their line, a run."""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

import pytest

from rlvr.cli.main import main
from rlvr.config import load_config
from rlvr.envs.worlds import WORLDS, SpecError
from rlvr.envs.worlds.check import check_spec, search
from rlvr.envs.worlds.env import WorldEnv
from rlvr.errors import ConfigError
from rlvr.orchestrate.world_choice import world_env
from rlvr.types import Sample

sys.path.insert(0, str(Path(__file__).parent))
import bad_worlds  # noqa: E402

BAD = Path(bad_worlds.__file__).read_text().splitlines()


def line_of(text: str) -> int:
    return next(i for i, line in enumerate(BAD, start=1) if text in line)


def call(tool_name: str, args: dict) -> str:
    return f'<tool_call>{json.dumps({"name": tool_name, "arguments": args})}</tool_call>'


def solve(env: WorldEnv) -> list[str]:
    """The fewest calls to the goal, found by the spec's own search and replayed as text."""
    from collections import deque
    from rlvr.envs.worlds.spec import apply, calls, key

    inst = env.instance
    frontier, seen = deque([(inst.state, [])]), {key(inst.state)}
    while frontier:
        state, path = frontier.popleft()
        if inst.goal(state):
            return [call(t.name, a) for t, a in path]
        for t, a in calls(env.spec, inst.domain):
            after, _ = apply(t, state, a)
            if after is not None and key(after) not in seen:
                seen.add(key(after))
                frontier.append((after, path + [(t, a)]))
    raise AssertionError("no solution")


@pytest.mark.parametrize("name", sorted(WORLDS))
def test_the_goal_is_checked_on_the_true_state_not_on_the_answer(name):
    sample = Sample("any row", "1", "row#1")
    env = WorldEnv(WORLDS[name], difficulty=2)
    env.reset(sample, seed=0)
    goal_text = env.instance.prompt.split("Goal: ")[1].split("\n")[0]
    claimed = env.step(f"done: the state is now {goal_text}")  # says the goal holds; did nothing
    assert claimed.done and claimed.reward == 0.0
    env = WorldEnv(WORLDS[name], difficulty=2)
    env.reset(sample, seed=0)
    for action in solve(env):
        out = env.step(action)
        assert not out.done and "error" not in out.observation, out.observation
    assert env.step("done").reward == 1.0


@pytest.mark.parametrize("name", sorted(WORLDS))
def test_instances_are_seeded_by_the_row_and_harder_with_difficulty(name):
    spec = WORLDS[name]
    check_spec(spec)
    prompts = []
    for row in ("a", "a", "b"):
        env = WorldEnv(spec)
        prompts.append(env.reset(Sample(row, ""), seed=7))
    assert prompts[0] == prompts[1] != prompts[2]
    shortest = {d: [search(spec, spec.tasks[0].make(random.Random(s), d, spec), d) for s in range(12)] for d in (1, 3)}
    assert all(1 <= n <= d for d, ns in shortest.items() for n in ns), shortest  # never 0, never over d
    assert sum(shortest[3]) > sum(shortest[1])


def test_distractors_and_noise():
    env = WorldEnv(WORLDS["ledger"], distractors=2, noise=1.0)
    env.reset(Sample("r", ""), seed=0)
    names = [s["function"]["name"] for s in env.tool_schemas()]
    assert names == ["transfer", "balance", "get_weather", "get_time"]
    assert all(s["type"] == "function" and "parameters" in s["function"] for s in env.tool_schemas())
    before = json.dumps(env.state)
    out = env.step(solve(env)[0])
    assert out.observation == "transfer: (no response)" and json.dumps(env.state) != before  # lost, still applied


@pytest.mark.parametrize("spec, where, says", [
    ("UNKNOWN_STATE_TYPE", 'WorldSpec("bad1"', "state field 'n' has unknown type 'integer'"),
    ("UNKNOWN_ARG_TYPE", 'tool("add"', "argument 'k' has unknown type 'float'"),
    ("BREAKS_SCHEMA", 'tool("name"', "its effect on {} sets n = 'one', not a int"),
    ("UNREACHABLE", 'NEVER = task("negative"', "no sequence of at most 2 tool calls reaches the goal"),
])
def test_a_bad_spec_is_refused_naming_its_line(spec, where, says):
    with pytest.raises(SpecError, match=rf"^bad_worlds.py:{line_of(where)}: .*{re.escape(says)}"):
        check_spec(getattr(bad_worlds, spec))
    section = load_config(None, ['env.kind="world"', f'env.world="bad_worlds:{spec}"']).env
    with pytest.raises(ConfigError, match=rf"^env.world = 'bad_worlds:{spec}': bad_worlds.py:{line_of(where)}"):
        world_env(section)


def test_a_world_trains_and_evaluates_through_the_cli(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    common = ["--set", 'env.kind="world"', "--set", 'env.world="ledger"', "--set", 'model.path="models/tiny-env"',
              "--set", "env.max_total_tokens=256", "--set", "sampling.max_new_tokens=48", "--set", "train.steps=2",
              "--set", "sampling.prompts_per_step=2", "--set", "sampling.group_size=2", "--set", "eval.size=0",
              "--set", "log.progress='none'", "--set", "checkpoint.every_minutes=0"]
    assert main(["train", "demo", *common]) == 0
    run = next((tmp_path / "runs").iterdir())
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2] and all(r["env/episodes"] == 4 for r in rows)
    assert main(["eval", str(run / "checkpoints/step_2"), "--temperature", "0", "--limit", "3", "--out", "ev"]) == 0
    assert len(json.loads((tmp_path / "ev/results.json").read_text())["model"]["per_task"]) == 3


def test_the_tutorial_shows_a_whole_world_in_under_50_lines():
    page = (Path(__file__).resolve().parents[2] / "docs" / "environments-tutorial.md").read_text()
    source = Path(sys.modules["rlvr.envs.worlds.calendar"].__file__)
    assert source.read_text() in page and len(source.read_text().splitlines()) < 50
