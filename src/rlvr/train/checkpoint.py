"""Checkpoints written atomically and verified before they are trusted.

`checkpoints/step_N/` holds the model (safetensors, or the adapters under LoRA), the run's
tokenizer with its chat template (so that a full-weights checkpoint is a plain Hugging Face model
folder; checkpoints of older rlvr have none and still verify and resume), `state.pt`
(optimizer, RNG states, step, data position and any other loop state) and, written last,
`manifest.json` with every file's size and sha256. The folder is written under a temporary
name (`.step_N.tmpPID`) and renamed, so a final name means a complete checkpoint; pruning
renames a folder away (`.pruned_step_N`) before deleting it, so a kill during the deletion
never leaves a final name over a partial folder. Temporaries of a killed process are removed
by `clean_temporaries` when the next process takes the run folder's lock.

A full disk (or any failed write) raises a one-line `CheckpointError` naming the file and the
space needed; the temporary folder is removed and the previous checkpoints are untouched.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import pickle
import re
import shutil
import time
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from transformers import PreTrainedModel

from rlvr.errors import RlvrError
from rlvr.train.checkpoint_verify import MANIFEST, verify_checkpoint
from rlvr.train.rng import rng_state, set_rng_state

STEP_DIR = re.compile(r"^step_(\d+)$")
DEBRIS = re.compile(r"^\.(step_\d+\.tmp\d+|pruned_step_\d+(\.\d+)?)$")  # a killed save or prune
MIB = 1 << 20

__all__ = ["CheckpointError", "CheckpointSchedule", "clean_temporaries", "list_checkpoints", "load_state", "read_state",
           "newest_intact", "save_checkpoint", "verify_checkpoint"]


class CheckpointError(RlvrError):
    """A checkpoint could not be written (full disk, permissions); the previous ones are intact."""


class CheckpointSchedule:
    """When to checkpoint: after `every_steps` steps or `every_s` wall seconds since the last
    checkpoint, whichever comes first (None disables that trigger). The loop adds one at the
    end of training, at a time limit and on Ctrl-C."""

    def __init__(self, every_steps: int | None, every_s: float | None, step: int = 0, clock=time.monotonic):
        self.every_steps, self.every_s, self.clock = every_steps, every_s, clock
        self.written(step)

    def written(self, step: int) -> None:
        self.last_step, self.last_time = step, self.clock()

    def due(self, step: int) -> bool:
        by_steps = self.every_steps is not None and step - self.last_step >= self.every_steps
        by_time = self.every_s is not None and self.clock() - self.last_time >= self.every_s
        return _all_ranks_agree(step > self.last_step and (by_steps or by_time))


def _all_ranks_agree(due: bool) -> bool:
    """Under torch.distributed (FSDP) one rank's clock may pass the minute mark a step before
    another's, and the save is a collective: take the decision of any rank for all of them."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return due
    device = f"cuda:{torch.cuda.current_device()}" if dist.get_backend() == "nccl" else "cpu"
    flag = torch.tensor([int(due)], device=device)
    dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    return bool(flag.item())


def save_checkpoint(root: Path, step: int, model: PreTrainedModel, state: dict[str, Any], keep: int,
                    weights: dict[str, torch.Tensor] | None = None, tokenizer=None) -> Path:
    """Write `root/step_{step}` atomically and delete all but the newest `keep`. `weights`, when
    given, are saved in place of the model's own state dict (the gathered shards under FSDP);
    `tokenizer`, when given, is saved beside them (its files go into the manifest like any)."""
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:  # FileExistsError: a file where the folder belongs
        raise CheckpointError(f"{root}: cannot hold checkpoints ({short(e)}); the run stopped") from None
    final = root / f"step_{step}"
    tmp = root / f".step_{step}.tmp{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    needed = space_needed(root, model, state, weights)
    refuse_if_no_room(root, final, needed)
    phase = final / "the weights (*.safetensors)"
    try:
        model.save_pretrained(tmp, safe_serialization=True, state_dict=weights)
        if tokenizer is not None:
            phase = final / "the tokenizer (tokenizer*.json)"
            tokenizer.save_pretrained(tmp)
        phase = final / "state.pt"
        # Through a file object, a full disk is an OSError, not torch's "unexpected pos ... vs ...".
        with open(tmp / "state.pt", "wb") as f:
            torch.save({**state, "step": step, "rng": rng_state()}, f)
        phase = final / MANIFEST
        write_manifest(tmp, step)
    except BaseException as e:  # a Ctrl-C, the watchdog, or a failed write: no temporary is left
        shutil.rmtree(tmp, ignore_errors=True)
        # torch's writer reports a full disk as RuntimeError "unexpected pos"
        if not isinstance(e, (OSError, SafetensorError, RuntimeError)):
            raise
        raise CheckpointError(f"{phase}: cannot write it ({short(e)}); the checkpoint needs about "
                              f"{needed / MIB:.1f} MiB, {free_bytes(root) / MIB:.1f} MiB are free. "
                              f"{untouched(root)}") from None
    replace_atomically(tmp, final)
    for old in list_checkpoints(root)[:-keep]:
        remove_atomically(old)
    return final


def write_manifest(folder: Path, step: int) -> None:
    """Sizes and sha256 of every file, synced to disk, then the manifest itself (last, renamed)."""
    files = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(MANIFEST)):
        with open(path, "rb") as f:
            digest = hashlib.file_digest(f, "sha256").hexdigest()
            os.fsync(f.fileno())
        files[path.relative_to(folder).as_posix()] = {"bytes": path.stat().st_size, "sha256": digest}
    partial = folder / (MANIFEST + ".tmp")
    with open(partial, "w", encoding="utf-8") as f:
        json.dump({"format": 1, "step": step, "files": files}, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.replace(partial, folder / MANIFEST)


def replace_atomically(tmp: Path, final: Path) -> None:
    """Rename `tmp` to `final`; an existing `final` (a rerun of that step) is renamed away first."""
    if final.exists():
        remove_atomically(final)
    os.replace(tmp, final)
    sync_dir(final.parent)


def remove_atomically(folder: Path) -> None:
    """Rename away, then delete: a kill mid-deletion leaves debris, never a partial `step_N`."""
    away = folder.parent / f".pruned_{folder.name}"
    if away.exists():
        away = folder.parent / f".pruned_{folder.name}.{os.getpid()}"
        shutil.rmtree(away, ignore_errors=True)
    os.replace(folder, away)
    shutil.rmtree(away, ignore_errors=True)


def sync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def clean_temporaries(root: Path) -> list[str]:
    """Delete what killed saves and prunes left in `root` (call it with the run's lock held, so
    that no live process is writing them). Returns the names removed."""
    if not root.is_dir():
        return []
    debris = sorted(p for p in root.iterdir() if DEBRIS.match(p.name))
    for path in debris:
        shutil.rmtree(path, ignore_errors=True)
    return [p.name for p in debris]


def space_needed(root: Path, model: PreTrainedModel, state: dict[str, Any],
                 weights: dict[str, torch.Tensor] | None) -> int:
    """Bytes the new checkpoint will take: the newest one's size on disk when there is one (the
    same model and optimizer), else the tensors' bytes in memory (an upper bound under LoRA,
    where only the adapters are saved)."""
    found = list_checkpoints(root)
    if found:
        return sum(p.stat().st_size for p in found[-1].rglob("*") if p.is_file())
    tensors = list((weights if weights is not None else model.state_dict()).values()) + list(tensors_in(state))
    return sum(t.numel() * t.element_size() for t in tensors)


def tensors_in(value: Any):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from tensors_in(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from tensors_in(v)


def refuse_if_no_room(root: Path, final: Path, needed: int) -> None:
    free = free_bytes(root)
    if free < needed:
        raise CheckpointError(f"{final}: not written: it needs about {needed / MIB:.1f} MiB and {root} has "
                              f"{free / MIB:.1f} MiB free ({os.strerror(errno.ENOSPC)}). {untouched(root)}")


def free_bytes(root: Path) -> int:
    return shutil.disk_usage(root).free


def untouched(root: Path) -> str:
    found = list_checkpoints(root)
    where = f"{found[-1].name}, the newest checkpoint, is untouched" if found else "no checkpoint was written yet"
    return f"The run stopped; {where}: free space, then `rlvr train --resume {root.parent}`"


def short(error: BaseException) -> str:
    return error.strerror if isinstance(error, OSError) and error.strerror else str(error).splitlines()[0]


def list_checkpoints(root: Path) -> list[Path]:
    """Checkpoints by their final names, oldest first (verify one before trusting it)."""
    if not root.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in root.iterdir() if (m := STEP_DIR.match(p.name))]
    return [p for _, p in sorted(found)]


def newest_intact(root: Path, move_damaged: bool = True) -> tuple[Path | None, list[str]]:
    """The newest checkpoint that passes `verify_checkpoint` (None when there is none), and a
    line for each damaged newer one, which is renamed to `damaged_step_N` (with `move_damaged`)
    so that pruning and later resumes skip it and a person can look at it. When checkpoints
    exist and none is intact, a CheckpointError: starting over would discard the run's curve."""
    found, notes, damaged = list_checkpoints(root), [], []
    for path in reversed(found):
        problem = verify_checkpoint(path) or trial_load(path)
        if problem is None:
            for bad, why in damaged:
                away = move_aside(bad) if move_damaged else bad
                notes.append(f"{why}; resuming from {path.name}, the newest intact checkpoint "
                             f"({bad.name} moved to {away.name})")
            return path, notes
        damaged.append((path, problem))
    if damaged:
        raise CheckpointError(f"{root}: no intact checkpoint to resume from: "
                              + "; ".join(why for _, why in damaged))
    return None, notes


def trial_load(path: Path) -> str | None:
    """Only for a checkpoint without a manifest (an older rlvr's): does its state.pt load?"""
    if (path / MANIFEST).is_file():
        return None
    try:
        torch.load(path / "state.pt", weights_only=False, map_location="cpu")
    except (RuntimeError, EOFError, OSError, pickle.UnpicklingError) as e:
        return f"{path / 'state.pt'}: cannot be loaded ({short(e)})"
    return None


def move_aside(path: Path) -> Path:
    away, n = path.parent / f"damaged_{path.name}", 1
    while away.exists():
        away, n = path.parent / f"damaged_{path.name}.{n}", n + 1
    os.replace(path, away)
    return away


def read_state(path: Path) -> dict[str, Any]:
    """A checkpoint's saved state as it is, restoring nothing (`load_state` restores the RNGs)."""
    return torch.load(path / "state.pt", weights_only=False)


def load_state(path: Path, seed: int = 0) -> dict[str, Any]:
    """The loop state of a checkpoint; also restores the global RNG states (train/rng.py;
    `seed` seeds numpy's where an older checkpoint lacks its state)."""
    state = torch.load(path / "state.pt", weights_only=False)
    set_rng_state(state["rng"], seed)
    return state
