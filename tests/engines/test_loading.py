"""A model folder whose weights file is truncated, corrupt or non-finite is named in one line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from rlvr.engines.loading import load_model
from rlvr.errors import ModelLoadError

TINY = Path(__file__).resolve().parents[2] / "models" / "tiny-arith"


@pytest.fixture
def folder(tmp_path):
    copy = tmp_path / "model"
    shutil.copytree(TINY, copy)
    return copy


@pytest.mark.parametrize("damage, problem", [
    (lambda raw: raw[:100_000], "incomplete metadata, file not fully covered"),  # an interrupted copy
    (lambda raw: b"\xff" * 8 + raw[8:], "header too large"),  # a header length of 2^64 - 1
    (lambda raw: raw[:8] + b"{not json" + raw[17:], "Error while deserializing header"),
])
def test_corrupt_safetensors_is_named(folder, damage, problem):
    weights = folder / "model.safetensors"
    weights.write_bytes(damage(weights.read_bytes()))
    with pytest.raises(ModelLoadError, match=rf"^{weights}: corrupt or truncated safetensors file \(.*{problem}"):
        load_model(folder)


def test_non_finite_weights_are_refused_naming_the_tensor(folder):
    weights = folder / "model.safetensors"
    tensors = load_file(weights)
    name = sorted(tensors)[2]
    tensors[name] = tensors[name].clone()
    tensors[name].view(-1)[:3] = torch.tensor([float("nan"), float("inf"), 1.0])
    save_file(tensors, weights, metadata={"format": "pt"})
    with pytest.raises(ModelLoadError, match=rf"^{folder}: weight {name} is not finite \(1 NaN, 1 inf of \d+\); "
                                             rf"the checkpoint is corrupt"):
        load_model(folder)
