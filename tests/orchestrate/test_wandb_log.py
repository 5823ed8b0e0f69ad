"""`log.wandb = true` in offline mode: the W&B run is written into the run folder with the
metrics' own names (docs/metrics.md), and a resume continues the same W&B run id."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlvr.config import load_config
from rlvr.orchestrate import resume, train

pytest.importorskip("wandb", reason="wandb is not installed (optional extra `wandb`)")

REPO = Path(__file__).resolve().parents[2]
SMALL = ["train.steps=2", "sampling.prompts_per_step=2", "sampling.group_size=2", "eval.size=0",
         "log.progress=none", "log.wandb=true"]


def offline_runs(folder: Path) -> list[Path]:
    return sorted((folder / "wandb").glob("offline-run-*"))


def test_offline_wandb_writes_the_run_into_the_run_folder_and_resume_keeps_its_id(tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "online")  # the recipe's offline mode wins over the environment
    folder = train(load_config(REPO / "recipes" / "grpo.toml", [f"run.output_dir={tmp_path}", *SMALL])).folder
    run_id = (folder.path / "wandb_id").read_text()
    [first] = offline_runs(folder.path)
    assert first.name.endswith(f"-{run_id}")
    records = (first / f"run-{run_id}.wandb").read_bytes()  # protobuf records: the keys appear as written
    for key in ("reward/mean", "train/grad_norm", "loss/policy", "time/step_s"):
        assert key.encode() in records, key
    resume(folder.path, ["train.steps=3"])
    assert (folder.path / "wandb_id").read_text() == run_id
    assert [p.name.rsplit("-", 1)[1] for p in offline_runs(folder.path)] == [run_id, run_id]
