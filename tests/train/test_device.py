"""Device placement (`model.device`): resolution and errors here; the CUDA run where a GPU is."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from rlvr.config import load_config
from rlvr.engines.loading import resolve_device
from rlvr.errors import ConfigError, ModelLoadError

REPO = Path(__file__).resolve().parents[2]
HAS_CUDA = torch.cuda.is_available()


def test_auto_takes_cuda_only_when_torch_sees_it():
    assert resolve_device("auto") == torch.device("cuda" if HAS_CUDA else "cpu")
    assert resolve_device("cpu") == torch.device("cpu")


@pytest.mark.skipif(HAS_CUDA, reason="this machine has a GPU")
def test_cuda_without_a_gpu_is_a_clear_error():
    with pytest.raises(ModelLoadError, match="no CUDA GPU"):
        resolve_device("cuda:0")


@pytest.mark.parametrize("bad", ["gpu", "cuda:x", "mps"])
def test_unknown_device_names_the_field(tmp_path, bad):
    with pytest.raises(ConfigError, match="model.device"):
        load_config(REPO / "recipes" / "grpo.toml", [f"run.output_dir={tmp_path}", f"model.device={bad}"])


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU (torch.cuda.is_available() is False)")
@pytest.mark.parametrize("recipe", ["grpo", "ppo"])
def test_a_run_trains_on_the_gpu(tmp_path, recipe):
    from rlvr.orchestrate import train
    from rlvr.orchestrate.components import build
    from rlvr.orchestrate.plan import plan_run

    config = load_config(REPO / "recipes" / f"{recipe}.toml", [
        f"run.output_dir={tmp_path}", "model.device=cuda", "train.steps=2", "sampling.prompts_per_step=4",
        "sampling.group_size=4", "eval.size=8", "eval.every=1", "log.progress=none", "algo.mismatch=token_tis"])
    parts = build(plan_run(config), REPO)
    assert next(parts.model.parameters()).is_cuda and parts.engine.generator.device.type == "cuda"
    rows = train(config).folder.read_metrics()
    assert [r["step"] for r in rows] == [1, 2] and all(r["train/grad_norm"] is not None for r in rows)
    # the engine's copy on the GPU samples what the trainer on the GPU computes
    assert all(r["mismatch/kl"] < 1e-4 for r in rows)
