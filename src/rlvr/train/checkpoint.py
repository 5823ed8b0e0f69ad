"""Checkpoints written atomically: a folder is complete when it has its final name.

`checkpoints/step_N/` holds the model (safetensors), `state.pt` (optimizer, RNG states, step,
data position and any other loop state). It is written under a temporary name and renamed,
so a `kill -9` at any moment leaves either the whole checkpoint or none of it.
"""

from __future__ import annotations

import os
import random
import re
import shutil
from pathlib import Path
from typing import Any

import torch
from transformers import PreTrainedModel

STEP_DIR = re.compile(r"^step_(\d+)$")


def rng_state() -> dict[str, Any]:
    return {"python": random.getstate(), "torch": torch.get_rng_state()}


def set_rng_state(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    torch.set_rng_state(state["torch"])


def save_checkpoint(root: Path, step: int, model: PreTrainedModel, state: dict[str, Any], keep: int,
                    weights: dict[str, torch.Tensor] | None = None) -> Path:
    """Write `root/step_{step}` atomically and delete all but the newest `keep`. `weights`, when
    given, are saved in place of the model's own state dict (the gathered shards under FSDP)."""
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"step_{step}"
    tmp = root / f".step_{step}.tmp{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp, safe_serialization=True, state_dict=weights)
    torch.save({**state, "step": step, "rng": rng_state()}, tmp / "state.pt")
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)
    for old in list_checkpoints(root)[:-keep]:
        shutil.rmtree(old, ignore_errors=True)
    return final


def list_checkpoints(root: Path) -> list[Path]:
    """Complete checkpoints, oldest first."""
    if not root.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in root.iterdir() if (m := STEP_DIR.match(p.name))]
    return [p for _, p in sorted(found)]


def load_state(path: Path) -> dict[str, Any]:
    """The loop state of a checkpoint; also restores the global RNG states."""
    state = torch.load(path / "state.pt", weights_only=False)
    set_rng_state(state["rng"])
    return state
