"""The located tier (env.observation = "located"): the observation, the fix tool, the recipe."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlvr.config import load_config
from rlvr.envs.repo.env import RepoSettings, repo_env, task_samples
from rlvr.envs.repo.located import INSTRUCTIONS, NotLocatable, fix_line, locate, located_observation, token_fix
from rlvr.envs.repo.patches import diff_trees
from rlvr.envs.repo.task import task_from_row

from .conftest import BUGGY, GOOD, calc_row

REPO = Path(__file__).resolve().parents[3]
RECIPE = REPO / "recipes" / "env_repo_located.toml"


def call(name, **arguments):
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


def test_the_observation_names_the_file_line_and_text_but_not_the_fix(calc_task):
    where = locate(calc_task)
    assert (where.path, where.line, where.text, where.fixed) == ("calc/ops.py", 2, "    return a - b", "    return a + b")
    assert located_observation(calc_task) == f"{INSTRUCTIONS}calc/ops.py line 2: return a - b\n"
    assert token_fix(where) == ("-", "+")


def test_a_task_whose_fix_is_not_one_replaced_line_is_refused_by_id():
    added = {**GOOD, "calc/ops.py": GOOD["calc/ops.py"] + "\n\ndef two():\n    return 2\n"}
    task = task_from_row(calc_row(instance_id="calc-9", patch=diff_trees(BUGGY, added)), "test")
    with pytest.raises(NotLocatable, match="task calc-9: .* removes 1 and adds 5"):
        locate(task)


@pytest.mark.parametrize("line, old, new, error", [
    (1, "<", "<=", None), (1, "=", "!", "occurs 0 times"), (1, "1", "2", "occurs 2 times"), (3, "x", "y", "has no line 3"),
    (2, "n_2", "m", None), (2, "n", "m", "occurs 0 times")])
def test_fix_replaces_exactly_one_whole_token(line, old, new, error):
    text = "if a[1] < b[1] <= c:\n    return n.x + n_2\n"
    if error:
        with pytest.raises(ValueError, match=error):
            fix_line(text, line, old, new, "m.py")
    else:
        fixed = fix_line(text, line, old, new, "m.py").splitlines()[line - 1]
        assert fixed.count(new) >= 1 and fixed != text.splitlines()[line - 1]
        assert fixed in ("if a[1] <= b[1] <= c:", "    return n.x + m")


@pytest.mark.sandbox
def test_a_located_episode_is_scored_by_the_hidden_tests_and_cached(calc_task, sandbox):
    make = repo_env([calc_task], sandbox, RepoSettings(max_turns=1, observation="located", instructions=INSTRUCTIONS))
    results = []
    for action in (call("fix", old="-", new="+"),
                   call("fix", old="-", new="*"),
                   call("fix", old="-", new="+")):
        env = make()
        assert env.reset(task_samples([calc_task])[0], 0).endswith("calc/ops.py line 2: return a - b\n")
        assert list(env.toolbox.tools) == ["fix", "submit"]
        results.append(env.step(action))
    assert [r.reward for r in results] == [1.0, 0.0, 1.0] and all(r.stop_reason == "auto_submit" for r in results)
    assert results[0].metrics["repo/resolved"] == 1.0 and len(env.verdicts) == 2  # the third was the first's verdict


def test_the_recipe_plays_the_located_tier_the_model_was_made_for():
    c = load_config(RECIPE)
    assert c.env.kind == "repo" and c.env.observation == "located" and c.model.path == "models/tiny-repo"
    card = json.loads((REPO / "models" / "tiny-repo" / "rlvr_model_card.json").read_text())
    assert card["context"] >= c.env.max_total_tokens and card["instructions"] == INSTRUCTIONS
    assert c.train.time_limit_s <= 900  # the target: the gain within 15 minutes
    for split in ("train", "test"):  # the held-out split by module holds in the tier's files
        rows = [json.loads(line) for line in (REPO / getattr(c.task, f"{split}_path")).read_text().splitlines()]
        modules = {r["module"] for r in rows}
        assert modules == ({"calendar_math", "roman", "wordwrap"} if split == "test" else modules - {"calendar_math", "roman", "wordwrap"})


@pytest.mark.sandbox
def test_one_step_of_the_recipe_plays_fix_calls_on_the_training_tasks(tmp_path, sandbox):
    from rlvr.orchestrate import train

    config = load_config(RECIPE, [f"run.output_dir={tmp_path}", "train.steps=1", "sampling.prompts_per_step=2",
                                  "sampling.group_size=2", "log.progress=none", "log.samples_per_step=4"])
    folder = train(config).folder
    rows = folder.read_metrics()
    assert [r["step"] for r in rows] == [1] and rows[0]["loss/policy"] is not None
    episodes = [json.loads(line)["episode"] for line in (folder.path / "samples.jsonl").read_text().splitlines()]
    assert episodes and all(ep["stop_reason"] in ("auto_submit", "no_tool_call") for ep in episodes)


def _resolved(folder: Path) -> tuple[float, int]:
    repo = json.loads((folder / "results.json").read_text())["model"]
    return repo["repo"]["resolved_at_1"]["mean"], repo["tasks"]


@pytest.mark.slow  # ~25 min on 2 loaded cores: eval, 15 min of RL, eval
@pytest.mark.sandbox
def test_rl_gains_15_points_of_held_out_resolved_rate_within_15_minutes(tmp_path, sandbox):
    """The demo's claim (docs/env-repo.md): rlvr eval on the 54 held-out tasks, 4 samples each,
    before and after the recipe's training (at most 900 s)."""
    from rlvr.cli.main import main

    before, after = tmp_path / "before", tmp_path / "after"
    eval_args = ["--recipe", str(RECIPE), "--n", "4", "--temperature", "1.0", "--seed", "0"]
    assert main(["eval", str(REPO / "models" / "tiny-repo"), *eval_args, "--out", str(before)]) == 0
    assert main(["train", str(RECIPE), "--set", f"run.output_dir={tmp_path / 'run'}", "--set", "log.progress=none"]) == 0
    final = max((tmp_path / "run").glob("*/checkpoints/step_*"), key=lambda p: int(p.name.split("_")[1]))
    assert main(["eval", str(final), *eval_args, "--out", str(after)]) == 0
    (rate_before, n), (rate_after, _) = _resolved(before), _resolved(after)
    assert n == 54 and rate_after - rate_before >= 0.15, (rate_before, rate_after)
