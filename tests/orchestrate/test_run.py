"""Run-level behaviour through the library API: TensorBoard, the time limit, the run folder."""

from __future__ import annotations

from pathlib import Path

from rlvr.config import load_config
from rlvr.orchestrate import train

REPO = Path(__file__).resolve().parents[2]
SMALL = ["sampling.prompts_per_step=2", "sampling.group_size=2", "eval.size=0", "log.progress=none"]


def test_tensorboard_gets_the_metrics(tmp_path):
    config = load_config(REPO / "recipes" / "grpo.toml",
                         [f"run.output_dir={tmp_path}", "train.steps=2", "log.tensorboard=true", *SMALL])
    train(config)
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(tmp_path / "grpo" / "tensorboard"))
    events.Reload()
    assert [e.step for e in events.Scalars("reward/mean")] == [1, 2]


def test_time_limit_stops_training_early(tmp_path):
    config = load_config(REPO / "recipes" / "grpo.toml",
                         [f"run.output_dir={tmp_path}", "train.steps=1000", "train.time_limit_s=0.01", *SMALL])
    result = train(config)
    assert result.steps == 1  # the limit is checked between steps
    assert len(result.folder.read_metrics()) == 1
