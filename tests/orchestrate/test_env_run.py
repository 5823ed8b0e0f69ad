"""An environment run end to end from its recipe (recipes/env_guess_number.toml) through the
public API, the same loop and producer as single-turn runs: what is trained on, what the run
folder keeps, and that a resume replays the uninterrupted run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rlvr.config import load_config
from rlvr.orchestrate import resume, train

REPO = Path(__file__).resolve().parents[2]
SMALL = ["sampling.prompts_per_step=2", "sampling.group_size=4", "log.progress=none", "checkpoint.every_minutes=0",
         "log.samples_per_step=2"]


def config(tmp_path, name: str, *extra: str):
    return load_config(REPO / "recipes" / "env_guess_number.toml",
                       [f"run.output_dir={tmp_path}", f"run.name={name}", *SMALL, *extra])


def test_observation_tokens_stay_out_of_the_loss(tmp_path, learned_batches):
    rows = train(config(tmp_path, "masked", "train.steps=2")).folder.read_metrics()
    assert [r["step"] for r in rows] == [1, 2]
    observed = 0
    for groups, batch in learned_batches:
        rollouts = [s.rollout for g in groups for s in g]
        for i, r in enumerate(rollouts):  # the batch keeps the groups' order (batch_builder)
            row = batch.completion_mask[i, :len(r.completion_ids)].tolist()
            assert row == [float(m) for m in r.loss_mask]
            assert batch.completion_mask[i, len(r.completion_ids):].sum() == 0
            observed += r.loss_mask.count(0)
    assert observed > 0  # some episode got an observation: the mask had something to do
    # The metrics line counts the tokens the policy sampled, not the observations.
    first_groups, _ = learned_batches[0]
    assert rows[0]["compute/tokens_generated"] == sum(sum(s.rollout.loss_mask) for g in first_groups for s in g)


def test_the_run_folder_keeps_whole_trajectories_and_the_env_metrics(tmp_path):
    folder = train(config(tmp_path, "kept", "train.steps=1")).folder
    [row] = folder.read_metrics()
    for key in ("env/turns_mean", "env/tool_calls_mean", "env/malformed_rate", "env/success_rate",
                "env/stop/max_turns", "env/episodes"):
        assert key in row, key
    assert row["env/episodes"] == 8.0 and 1.0 <= row["env/turns_mean"] <= 5.0
    assert row["env/success_rate"] == row["reward/accuracy"]  # guess-the-number: solved is reward 1
    samples = [json.loads(line) for line in folder.samples.read_text().splitlines()]
    assert samples
    for s in samples:
        ep = s["episode"]
        assert ep["stop_reason"] in ("solved", "max_turns") and len(ep["turns"]) >= 1
        assert s["completion"] == ep["turns"][-1]["action"]
        assert [t["reward"] for t in ep["turns"]] == ep["step_rewards"]
        for t in ep["turns"][:-1]:  # every turn but the last was answered with feedback
            assert "too" in t["observation"] and t["observation_tokens"] > 0
        assert ep["success"] == (ep["stop_reason"] == "solved")


def test_a_killed_run_resumes_to_the_uninterrupted_metrics(tmp_path):
    every = ["checkpoint.every=1", "checkpoint.keep=3", "train.steps=3"]
    whole = train(config(tmp_path, "whole", *every)).folder.read_metrics()
    folder = train(config(tmp_path, "killed", *every)).folder
    shutil.rmtree(folder.checkpoints / "step_3")  # killed during step 3: step 2's checkpoint is the newest
    resumed = resume(folder.path).folder.read_metrics()
    assert [r["step"] for r in resumed] == [1, 2, 3]
    for a, b in zip(whole, resumed):
        for key, value in a.items():
            if key.startswith(("time/", "throughput/")) or key.endswith("_s"):
                continue
            expected = value if value is None else pytest.approx(value, rel=1e-5, abs=1e-7)  # None: no such episode
            assert b[key] == expected, (a["step"], key)
    assert any(r["env/turns_mean"] > 1 for r in whole)


def test_single_turn_tasks_as_one_turn_episodes_train_like_the_single_turn_path(tmp_path):
    """env.kind = "single_turn" plays each arithmetic prompt as a one-turn episode through the
    episode source; the same seed gives the same batches, so the same numbers, as the default
    path (RolloutSource)."""
    small = [f"run.output_dir={tmp_path}", "train.steps=2", "sampling.prompts_per_step=2", "sampling.group_size=4",
             "eval.size=0", "log.progress=none", "checkpoint.every_minutes=0"]
    plain = train(load_config(REPO / "recipes" / "grpo.toml", [*small, "run.name=plain"])).folder.read_metrics()
    episodes = train(load_config(REPO / "recipes" / "grpo.toml", [
        *small, "run.name=episodes", 'env.kind="single_turn"', "env.max_total_tokens=64"])).folder.read_metrics()
    for a, b in zip(plain, episodes):
        assert b["env/turns_mean"] == 1.0 and b["env/stop/answered"] == 1.0
        assert b["env/success_rate"] == a["reward/accuracy"]
        for key, value in a.items():
            if key.startswith(("time/", "throughput/")) or key.endswith("_s"):
                continue
            assert b[key] == pytest.approx(value, rel=1e-6, abs=1e-9), (a["step"], key)
