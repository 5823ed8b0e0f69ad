"""A resumed run continues the learning-rate schedule where the checkpoint left it, also from a
checkpoint written before schedules existed (its state has no "lr_schedule")."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

from rlvr.config import load_config
from rlvr.orchestrate import resume, train
from rlvr.train.checkpoint import write_manifest

REPO = Path(__file__).resolve().parents[2]
SCHEDULED = ["train.steps=4", "train.lr=1e-3", "train.lr_schedule=cosine", "train.warmup_steps=1",
             "checkpoint.every=2", "checkpoint.keep=2", "sampling.prompts_per_step=2", "sampling.group_size=2",
             "eval.size=0", "log.progress=none"]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    root = tmp_path_factory.mktemp("sched")
    return train(load_config(REPO / "recipes" / "grpo.toml", [f"run.output_dir={root}", *SCHEDULED])).folder


def resumed_from_step_2(folder, tmp_path: Path, drop_schedule_state: bool) -> list[dict]:
    copy = tmp_path / "copy"
    shutil.copytree(folder.path, copy)
    shutil.rmtree(copy / "checkpoints" / "step_4")
    if drop_schedule_state:  # as an older rlvr wrote it
        state = torch.load(copy / "checkpoints" / "step_2" / "state.pt", weights_only=False)
        del state["lr_schedule"]
        torch.save(state, copy / "checkpoints" / "step_2" / "state.pt")
        write_manifest(copy / "checkpoints" / "step_2", 2)
    return resume(copy).folder.read_metrics()


@pytest.mark.parametrize("drop_schedule_state", [False, True], ids=["saved_position", "old_checkpoint"])
def test_resume_continues_the_schedule(uninterrupted, tmp_path, drop_schedule_state):
    # N = 4, W = 1: k = 0 -> 0; k = 1..3 -> (1 + cos(pi (k - 1) / 3)) / 2 = 1, 0.75, 0.25
    whole = [r["train/lr"] for r in uninterrupted.read_metrics()]
    assert whole == pytest.approx([0.0, 1e-3, 0.75e-3, 0.25e-3], rel=1e-9)
    rows = resumed_from_step_2(uninterrupted, tmp_path, drop_schedule_state)
    assert [r["step"] for r in rows] == [1, 2, 3, 4]
    assert [r["train/lr"] for r in rows] == whole
