"""The tool-use demo: scripts/make_tool_model.py, models/tiny-tool, recipes/env_python_demo.toml,
`rlvr demo --env python` and its greedy before/after figure (rlvr.cli.demo_env.greedy_success)."""

from __future__ import annotations

import json
import sys
import random
from collections import Counter
from pathlib import Path

import pytest

from rlvr.config import load_config
from rlvr.envs import EpisodeLimits, PlainRenderer
from rlvr.cli.demo_env import greedy_success
from rlvr.envs.render import renderer_for
from rlvr.orchestrate.episode_eval import EpisodeEvaluator
from rlvr.envs.tool_env import ToolEnv, sandbox_python
from rlvr.envs.tools import ToolBox, make_tool
from rlvr.rewards.exact_verifier import ExactVerifier
from rlvr.rewards.sandbox import Limits, Sandbox, bwrap_unavailable
from rlvr.types import Sample
from tests.script_loader import load_script

REPO = Path(__file__).resolve().parents[2]
RECIPE = REPO / "recipes" / "env_python_demo.toml"
WHY_NOT = bwrap_unavailable()
needs_bwrap = pytest.mark.skipif(WHY_NOT is not None, reason=f"bubblewrap cannot sandbox here: {WHY_NOT}")




mtm = load_script("make_tool_model")


def test_the_recipe_plays_the_split_and_prompt_the_model_was_made_for():
    c = load_config(RECIPE)
    assert c.model.path == "models/tiny-tool" and c.env.kind == "python_tool"
    assert c.env.instructions == mtm.INSTRUCTIONS
    assert {k: getattr(c.task, k) for k in mtm.TASK} == mtm.TASK
    card = json.loads((REPO / "models" / "tiny-tool" / "rlvr_model_card.json").read_text())
    assert card["context"] == mtm.CONTEXT >= c.env.max_total_tokens
    assert card["instructions"] == mtm.INSTRUCTIONS
    assert c.train.time_limit_s <= 600  # the target: the gain within 10 minutes


def test_the_teacher_mixes_right_calls_wrong_calls_and_head_answers_by_the_first_operand():
    rng = random.Random(0)
    counts = {True: Counter(), False: Counter()}
    for a in (20, 31, 23, 47):  # ends in 0 / 1: SURE, else SLOPPY
        sample = Sample(f"{a}*58=", str(a * 58))
        for _ in range(2000):
            turn = mtm.teacher_first_turn(sample, rng)
            kind = "right" if f"print({a}*58)" in turn else "wrong" if f"print({a}+58)" in turn else "head"
            assert kind != "head" or turn == sample.answer
            counts[a % 10 in (0, 1)][kind] += 1
    for sure, mix in ((True, mtm.SURE), (False, mtm.SLOPPY)):
        total = sum(counts[sure].values())
        for kind, p in zip(("right", "wrong", "head"), mix):
            assert abs(counts[sure][kind] / total - p) < 0.03, (sure, kind)


def test_a_teacher_episode_trains_only_on_the_policy_turns(char_tok):
    box = ToolBox([make_tool(mtm.offline_python, name="python")])
    renderer, sample = PlainRenderer(char_tok), Sample("23*47=", "1081")
    rng = random.Random(3)
    while True:  # the first seed whose episode makes a call
        ids, labels = mtm.episode(box, renderer, sample, rng)
        if "tool_call" in char_tok.decode(ids):
            break
    trained = char_tok.decode([i for i, l in zip(ids, labels) if l != -100], skip_special_tokens=True)
    shown = char_tok.decode(ids, skip_special_tokens=True)
    assert "<obs>python: " in shown and "<obs>" not in trained and mtm.INSTRUCTIONS not in trained
    answer = shown.rsplit("</obs>\n", 1)[1]
    assert trained.endswith(answer) and answer in ("1081", "70")  # the copied output of * or +


@pytest.mark.sandbox
@needs_bwrap
@pytest.mark.parametrize("code", ["print(23*47)", "print(99+10)", "print(10*10)"])
def test_the_stand_in_tool_prints_what_the_sandboxed_python_prints(code):
    with Sandbox(Limits(wall_s=5, cpu_s=5), workers=1) as sandbox:
        assert sandbox_python(sandbox)(code) == mtm.offline_python(code)
    with pytest.raises(ValueError, match="only print"):
        mtm.offline_python("import os")


def test_greedy_success_counts_answered_right_and_plays_at_temperature_0(scripted):
    """Task 0 is solved through the tool, task 1 adds instead, task 2 answers from its head (wrong)."""

    def policy(text: str) -> str:
        if "<obs>python: " in text:
            return text.rsplit("<obs>python: ", 1)[1].split("\n")[0]
        a, b = text.rsplit("\n", 1)[1].rstrip("=").split("*")
        return {"12": mtm.tool_call(f"print({a}*{b})"), "13": mtm.tool_call(f"print({a}+{b})")}.get(a, "999")

    engine = scripted(policy)
    box = ToolBox([make_tool(mtm.offline_python, name="python")])
    tasks = [Sample("12*34=", "408"), Sample("13*34=", "442"), Sample("14*34=", "476")]
    seen = []
    generate = engine.generate_ids
    engine.generate_ids = lambda rows, params: seen.append(params.temperature) or generate(rows, params)
    evaluator = EpisodeEvaluator(lambda: ToolEnv(box, ExactVerifier(), mtm.INSTRUCTIONS), renderer_for(engine.tokenizer),
                                 EpisodeLimits(max_turns=3, max_total_tokens=256))
    score = greedy_success(evaluator, engine, tasks, max_new_tokens=80)
    assert score.success == pytest.approx(1 / 3) and score.tool_calls_mean == pytest.approx(2 / 3)
    assert score.stop_reasons == {"answered": 3} and set(seen) == {0.0}
    assert "1 of" not in score.line() and score.line().startswith("33.3% of 3 held-out tasks solved")


def test_the_model_script_is_deterministic_from_its_seed(tmp_path, monkeypatch):
    made = []
    for name in ("a", "b"):
        monkeypatch.setattr(sys, "argv", ["make_tool_model.py", "--out", str(tmp_path / name), "--steps", "2",
                                          "--batch", "4"])
        mtm.main()
        made.append((tmp_path / name / "model.safetensors").read_bytes())
    assert made[0] == made[1]
    monkeypatch.setattr(sys, "argv", ["make_tool_model.py", "--out", str(tmp_path / "c"), "--steps", "2",
                                      "--batch", "4", "--seed", "1"])
    mtm.main()
    assert (tmp_path / "c" / "model.safetensors").read_bytes() != made[0]


def test_the_demo_command_takes_env_python_and_plain_demo_is_unchanged():
    from rlvr.cli.main import parser

    assert parser().parse_args(["demo"]).env is None
    assert parser().parse_args(["demo", "--env", "python"]).env == "python"
    with pytest.raises(SystemExit):
        parser().parse_args(["demo", "--env", "chess"])


@pytest.mark.sandbox
@needs_bwrap
def test_two_steps_of_the_demo_recipe_play_tool_calls_and_show_their_output(tmp_path):
    from rlvr.orchestrate import train

    config = load_config(RECIPE, [f"run.output_dir={tmp_path}", "train.steps=2", "sampling.prompts_per_step=4",
                                  "sampling.group_size=4", "log.progress=none", "log.samples_per_step=16"])
    folder = train(config).folder
    rows = folder.read_metrics()
    assert [r["step"] for r in rows] == [1, 2]
    assert all(r["env/tool_calls_mean"] > 0 and r["loss/policy"] is not None for r in rows)
    episodes = [json.loads(line)["episode"] for line in (folder.path / "samples.jsonl").read_text().splitlines()]
    calls = [ep for ep in episodes if ep["tool_calls"] > 0]
    assert calls and all(ep["turns"][0]["observation"].startswith("python: ") for ep in calls)
    assert all(ep["turns"][0]["observation_tokens"] > 0 for ep in calls)
    assert all(ep["stop_reason"] == "answered" for ep in calls)  # the call, then the answer


@pytest.mark.slow
@pytest.mark.sandbox
@needs_bwrap
def test_the_demo_gains_25_points_of_greedy_success_within_10_minutes(tmp_path, capsys):
    from rlvr.cli.main import main

    assert main(["demo", "--env", "python", "--set", f"run.output_dir={tmp_path}"]) == 0
    summary = json.loads(next(tmp_path.glob("*/demo_env.json")).read_text())
    assert summary["train_seconds"] <= 600
    assert summary["success_after"] - summary["success_before"] >= 0.25, summary
