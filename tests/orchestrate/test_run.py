"""Run-level behaviour through the library API: TensorBoard, the time limit, the run folder."""

from __future__ import annotations

from pathlib import Path

import pytest

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


def test_pass_at_k_during_training_and_best_checkpoint(tmp_path):
    overrides = [f"run.output_dir={tmp_path}", "train.steps=4", "train.lr=1e-4", "sampling.prompts_per_step=2",
                 "sampling.group_size=2", "log.progress=none", "eval.every=2", "eval.size=8", "eval.samples=4",
                 "eval.k=[1, 4]", "eval.keep_best=eval/pass@4"]
    rows = train(load_config(REPO / "recipes" / "grpo.toml", overrides)).folder.read_metrics()
    evals = [r for r in rows if "eval/pass@1" in r]
    assert [r["step"] for r in evals] == [2, 4]
    for r in evals:
        assert 0 <= r["eval/pass@1"] <= r["eval/pass@4"] <= 1
    best = max(evals, key=lambda r: r["eval/pass@4"])  # the first one on ties
    kept = list((tmp_path / "grpo" / "best_checkpoint").iterdir())
    assert [p.name for p in kept] == [f"step_{best['step']}"]
    # Training samples are untouched by the evaluation's draws.
    plain = train(load_config(REPO / "recipes" / "grpo.toml", [
        *overrides[:-3], "eval.samples=0", "run.name=plain"])).folder.read_metrics()
    assert [r["reward/mean"] for r in plain] == [r["reward/mean"] for r in rows]


def test_forecast_during_training_logs_a_fit_or_a_reason(tmp_path):
    overrides = [f"run.output_dir={tmp_path}", "train.steps=6", "train.lr=1e-4", "sampling.prompts_per_step=2",
                 "sampling.group_size=2", "log.progress=none", "eval.every=1", "eval.size=8", "eval.forecast_every=3"]
    rows = train(load_config(REPO / "recipes" / "grpo.toml", overrides)).folder.read_metrics()
    assert [("forecast/available" in r) for r in rows] == [False, False, True, False, False, True]
    for r in rows:
        if r.get("forecast/available") == 1.0:
            assert r["forecast/A_low"] <= r["forecast/A"] <= r["forecast/A_high"]


def test_forecast_recovers_a_synthetic_curve():
    import numpy as np

    from rlvr.orchestrate.forecast import forecast_metrics
    from rlvr.scaling.sigmoid import sigmoid_reward

    compute = np.geomspace(1e9, 1e13, 24)
    acc = sigmoid_reward(compute, 0.2, 0.8, 1.2, 3e10) + np.random.default_rng(0).normal(0, 0.005, 24)
    metrics, message = forecast_metrics([{"compute/flops": c, "eval/accuracy": a} for c, a in zip(compute, acc)])
    assert abs(metrics["forecast/A"] - 0.8) < 0.03 and metrics["forecast/refused"] == 0.0
    assert "reaches 90% of its gain" in message


def test_monitors_report_each_step_and_warn_on_code_patterns(tmp_path):
    from rlvr.orchestrate.run import new_run_folder, open_loop
    from rlvr.types import Rollout, Sample, Scored

    config = load_config(REPO / "recipes" / "grpo.toml", [f"run.output_dir={tmp_path}", "train.steps=1", *SMALL])
    loop = open_loop(config, new_run_folder(config), resume=False)
    row = loop.train_step()
    assert "monitor/samples" in row and row["monitor/warnings"] == 0.0
    hack = Rollout((1,), (2, 3), (-0.1, -0.1), "import sys; sys.exit(0)", "stop")
    scored = [Scored(Sample("p", "1"), hack, 1.0, "ok"), Scored(Sample("p", "1"), hack, 0.0, "no")]
    metrics = loop.watch(scored)
    assert metrics["monitor/warnings"] >= 1 and any("exit" in w for w in loop.warnings)


def test_mismatch_correction_is_near_identity_in_process(tmp_path):
    config = load_config(REPO / "recipes" / "grpo.toml", [f"run.output_dir={tmp_path}", "train.steps=2", *SMALL,
                                                          "algo.mismatch=token_tis"])
    rows = train(config).folder.read_metrics()
    for r in rows:  # the in-process engine and the trainer compute the same distribution
        assert r["mismatch/kl"] < 1e-5 and abs(r["mismatch/weight_mean"] - 1) < 1e-3


def test_resume_with_an_rng_state_from_another_device_names_the_problem(tmp_path):
    """A checkpoint made on a GPU (a 16-byte CUDA generator state) resumed on the CPU."""
    import torch

    from rlvr.errors import ConfigError
    from rlvr.orchestrate import resume
    from rlvr.train.checkpoint import list_checkpoints, load_state, write_manifest

    config = load_config(REPO / "recipes" / "grpo.toml", [
        f"run.output_dir={tmp_path}", "train.steps=1", "sampling.prompts_per_step=2", "sampling.group_size=2",
        "eval.size=0", "log.progress=none"])
    folder = train(config).folder
    [checkpoint] = list_checkpoints(folder.checkpoints)
    state_file = checkpoint / "state.pt"
    state = load_state(checkpoint)
    state["engine_rng"] = torch.zeros(16, dtype=torch.uint8)
    torch.save(state, state_file)
    write_manifest(checkpoint, 1)  # an intact checkpoint, as a GPU run would have written it
    with pytest.raises(ConfigError, match="another device"):
        resume(folder.path, ["train.steps=2"])
