"""Python's `random` and numpy's global generator are seeded from run.seed and carried by the
checkpoint (issue 26): a reward function that draws from them gives the same rewards in two
runs, and a resumed run draws what the uninterrupted one drew."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from rlvr.config import load_config
from rlvr.orchestrate import resume, train

REPO = Path(__file__).resolve().parents[2]
SMALL = ["sampling.prompts_per_step=2", "sampling.group_size=2", "eval.size=0", "log.progress=none",
         "log.samples_per_step=0"]


def noisy_reward(response: str, gold: str) -> float:
    return (random.random() + float(np.random.rand())) / 2


def run(tmp_path, name, *extra):
    config = load_config(REPO / "recipes" / "grpo.toml", [f"run.output_dir={tmp_path}", f"run.name={name}", *SMALL, *extra])
    return train(config, reward_fn=noisy_reward).folder


def rewards(folder) -> list[float]:
    return [row["reward/mean"] for row in folder.read_metrics()]


def test_a_reward_using_random_and_numpy_repeats_and_resumes_exactly(tmp_path):
    random.seed(1), np.random.seed(1)  # whatever ran before in this process
    whole = rewards(run(tmp_path, "a", "train.steps=3"))
    random.seed(2), np.random.seed(2)
    assert rewards(run(tmp_path, "b", "train.steps=3")) == whole  # before: different draws each run
    assert rewards(run(tmp_path, "c", "train.steps=3", "run.seed=5")) != whole
    cut = run(tmp_path, "d", "train.steps=2")
    random.seed(3), np.random.seed(3)  # a resume is a new process
    assert rewards(resume(cut.path, ["train.steps=3"], reward_fn=noisy_reward).folder) == whole
