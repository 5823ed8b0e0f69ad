"""Every shipped recipe trains end to end on the tiny model (a few steps), with its own metrics."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlvr.config import load_config
from rlvr.orchestrate import train

REPO = Path(__file__).resolve().parents[2]
RECIPES = sorted(p.stem for p in (REPO / "recipes").glob("*.toml"))
EXPECTED = {  # metrics only some recipes log
    "dapo": ["groups/dropped", "sampling/extra_rounds", "reward/overlong_penalty_mean"],
    "scalerl": ["groups/dropped", "curriculum/retired", "policy/weight_clip_high_frac"],
    "cispo": ["policy/weight_clip_high_frac"],
    "grpo": ["policy/kl_ref"],
    "reinforce_pp": ["reward/kl_penalty_mean"],
    "ppo": ["critic/value_loss", "critic/explained_variance", "reward/kl_penalty_mean"],
    "vapo": ["critic/value_loss", "critic/explained_variance", "critic/pretraining"],
}


@pytest.mark.parametrize("name", RECIPES)
def test_recipe_trains(tmp_path, name):
    config = load_config(REPO / "recipes" / f"{name}.toml", [
        f"run.output_dir={tmp_path}", "train.steps=2", "sampling.prompts_per_step=4", "sampling.group_size=4",
        "eval.size=0", "log.progress=none", "train.time_limit_s=600"])
    rows = train(config).folder.read_metrics()
    assert [r["step"] for r in rows] == [1, 2]
    for r in rows:
        if r.get("critic/pretraining") != 1.0:  # VAPO's first steps train only the critic
            assert r["loss/policy"] is not None and r["train/grad_norm"] is not None
        for key in EXPECTED.get(name, []):
            assert key in r, (name, key)


def test_positive_lm_loss_reaches_the_metrics(tmp_path):
    config = load_config(REPO / "recipes" / "dapo.toml", [
        f"run.output_dir={tmp_path}", "train.steps=2", "sampling.prompts_per_step=4", "sampling.group_size=4",
        "eval.size=0", "log.progress=none", "algo.positive_lm_coef=0.1", "sampling.zero_variance=keep"])
    rows = train(config).folder.read_metrics()
    assert all(r["loss/positive_lm"] >= 0 for r in rows)


def test_recipe_list_covers_the_family():
    assert {"ppo", "grpo", "dr_grpo", "dapo", "gspo", "cispo", "vapo", "scalerl", "rloo", "reinforce_pp"} <= set(RECIPES)


def test_critic_recipe_resumes_with_its_critic(tmp_path):
    from rlvr.orchestrate import resume

    config = load_config(REPO / "recipes" / "ppo.toml", [
        f"run.output_dir={tmp_path}", "train.steps=2", "sampling.prompts_per_step=2", "sampling.group_size=4",
        "eval.size=0", "log.progress=none"])
    first = train(config)
    result = resume(first.folder.path, ["train.steps=3"])
    rows = result.folder.read_metrics()
    assert [r["step"] for r in rows] == [1, 2, 3] and "critic/value_loss" in rows[-1]
