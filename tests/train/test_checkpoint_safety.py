"""Checkpoint files: verified against their manifest, pruned without a partial final name,
a full disk is one line that names the file and leaves the previous checkpoint as it was."""

from __future__ import annotations

import copy
import errno
import json
import shutil

import pytest

import rlvr.train.checkpoint as ckpt
from rlvr.train.checkpoint import (CheckpointError, CheckpointSchedule, clean_temporaries, list_checkpoints,
                                   newest_intact, save_checkpoint, verify_checkpoint)


def saved(root, model, steps, keep=2):
    for step in steps:
        save_checkpoint(root, step, model, {"value": step}, keep=keep)
    return list_checkpoints(root)


def test_a_fresh_checkpoint_verifies_and_a_changed_byte_does_not(tiny_model, tmp_path):
    [path] = saved(tmp_path, tiny_model, [1])
    assert (path / "manifest.json").is_file() and verify_checkpoint(path) is None
    weights = path / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF  # same size, one flipped byte
    weights.write_bytes(bytes(data))
    assert "model.safetensors: its sha256 differs" in verify_checkpoint(path)
    weights.write_bytes(bytes(data[:-100]))
    assert f"{weights}: {len(data) - 100} bytes, manifest.json says {len(data)}" == verify_checkpoint(path)


def test_damaged_newest_falls_back_to_the_older_intact_one(tiny_model, tmp_path):
    step_2, step_3 = saved(tmp_path, tiny_model, [1, 2, 3])
    (step_3 / "model.safetensors").write_bytes(b"torn")
    chosen, notes = newest_intact(tmp_path)
    assert chosen == step_2
    [note] = notes
    assert str(step_3 / "model.safetensors") in note and "resuming from step_2" in note
    # Moved aside: pruning and the next resume no longer see it, a person still can.
    assert [p.name for p in list_checkpoints(tmp_path)] == ["step_2"] and (tmp_path / "damaged_step_3").is_dir()


def test_no_intact_checkpoint_refuses_instead_of_starting_over(tiny_model, tmp_path):
    [step_1] = saved(tmp_path, tiny_model, [1], keep=1)
    (step_1 / "state.pt").unlink()
    with pytest.raises(CheckpointError, match="no intact checkpoint to resume from: .*state.pt: missing"):
        newest_intact(tmp_path)
    assert step_1.is_dir()  # left where it was


def test_checkpoint_without_a_manifest_is_checked_by_opening_its_files(tiny_model, tmp_path):
    """Written by rlvr before manifests: trusted when its safetensors headers cover the files
    and state.pt loads; a truncated one falls back like a damaged one."""
    step_1, step_2 = saved(tmp_path, tiny_model, [1, 2])
    for path in (step_1, step_2):
        (path / "manifest.json").unlink()
    assert newest_intact(tmp_path) == (step_2, [])
    weights = step_2 / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-64])
    chosen, [note] = newest_intact(tmp_path)
    assert chosen == step_1 and "incomplete metadata" in note and str(weights) in note
    state = step_1 / "state.pt"
    state.write_bytes(state.read_bytes()[:1000])
    with pytest.raises(CheckpointError, match="state.pt: cannot be loaded"):
        newest_intact(tmp_path)


class Killed(BaseException):
    """Stands for kill -9: nothing after it runs."""


def test_a_kill_while_pruning_leaves_no_final_name_over_a_partial_folder(tiny_model, tmp_path, monkeypatch):
    saved(tmp_path, tiny_model, [1, 2])
    real_rmtree = shutil.rmtree

    def killed_midway(path, ignore_errors=False):
        if not path.exists():  # the save's clearing of a stale temporary
            return
        next(p for p in sorted(path.iterdir()) if p.name.endswith(".safetensors")).unlink()
        raise Killed

    monkeypatch.setattr(ckpt.shutil, "rmtree", killed_midway)
    with pytest.raises(Killed):
        save_checkpoint(tmp_path, 3, tiny_model, {"value": 3}, keep=2)  # prunes step_1
    monkeypatch.setattr(ckpt.shutil, "rmtree", real_rmtree)
    assert [p.name for p in list_checkpoints(tmp_path)] == ["step_2", "step_3"]
    assert all(verify_checkpoint(p) is None for p in list_checkpoints(tmp_path))
    assert clean_temporaries(tmp_path) == [".pruned_step_1"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["step_2", "step_3"]


def test_temporaries_of_killed_saves_are_cleaned(tmp_path):
    for name in (".step_9.tmp123", ".pruned_step_4", "step_5", "damaged_step_6"):
        (tmp_path / name).mkdir()
    assert clean_temporaries(tmp_path) == [".pruned_step_4", ".step_9.tmp123"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["damaged_step_6", "step_5"]


def enospc(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_full_disk_names_the_file_and_leaves_the_previous_checkpoint(tiny_model, tmp_path, monkeypatch):
    [step_1] = saved(tmp_path, tiny_model, [1])
    before = {p.name: p.read_bytes() for p in step_1.iterdir()}
    monkeypatch.setattr(ckpt.torch, "save", enospc)
    with pytest.raises(CheckpointError) as caught:
        save_checkpoint(tmp_path, 2, tiny_model, {"value": 2}, keep=1)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'step_2' / 'state.pt'}: cannot write it (No space left on device)")
    size = sum(len(b) for b in before.values()) / 2**20
    assert f"needs about {size:.1f} MiB" in message and "step_1, the newest checkpoint, is untouched" in message
    assert "\n" not in message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["step_1"]  # no temporary left
    assert {p.name: p.read_bytes() for p in step_1.iterdir()} == before


def test_too_little_free_space_refuses_before_writing(tiny_model, tmp_path, monkeypatch):
    saved(tmp_path, tiny_model, [1])
    monkeypatch.setattr(ckpt, "free_bytes", lambda root: 1000)
    with pytest.raises(CheckpointError, match=r"step_2: not written: it needs about .* MiB and .* has 0.0 MiB free"):
        save_checkpoint(tmp_path, 2, tiny_model, {"value": 2}, keep=1)
    assert [p.name for p in tmp_path.iterdir()] == ["step_1"]


def test_schedule_by_steps_or_minutes_whichever_first():
    now = [0.0]
    by_steps = CheckpointSchedule(every_steps=3, every_s=None, clock=lambda: now[0])
    assert [by_steps.due(s) for s in (1, 2, 3)] == [False, False, True]
    by_time = CheckpointSchedule(every_steps=None, every_s=600, clock=lambda: now[0])
    assert not by_time.due(1)
    now[0] = 600.0
    assert by_time.due(2)
    by_time.written(2)
    assert not by_time.due(2) and not by_time.due(3)  # the clock restarts at each checkpoint


def test_every_minutes_zero_turns_the_clock_off():
    from rlvr.config import load_config
    from rlvr.train.checkpoint import CheckpointSchedule

    k = load_config(None, ["checkpoint.every_minutes=0"]).checkpoint
    clock = iter(range(0, 10**9, 10**6)).__next__  # a million seconds a call
    schedule = CheckpointSchedule(k.every, k.every_minutes * 60 if k.every_minutes else None, clock=clock)
    assert not any(schedule.due(step) for step in range(1, 50))


def test_the_tokenizer_is_saved_and_its_files_are_in_the_manifest(tiny_model, tokenizer, tmp_path):
    tokenizer = copy.deepcopy(tokenizer)  # the session's shared tokenizer keeps no template
    tokenizer.chat_template = "{% for m in messages %}[{{ m['content'] }}]{% endfor %}"
    path = save_checkpoint(tmp_path, 1, tiny_model, {}, keep=1, tokenizer=tokenizer)
    listed = json.loads((path / "manifest.json").read_text())["files"]
    saved_files = {p.name for p in path.iterdir() if p.name.startswith(("tokenizer", "special_tokens", "chat_template"))}
    assert "tokenizer_config.json" in saved_files and saved_files <= set(listed)
    tokenizer_json = path / "tokenizer.json"
    assert tokenizer_json.name in listed and verify_checkpoint(path) is None
    tokenizer_json.write_text(tokenizer_json.read_text().replace('"<', '"<X', 1))  # one token renamed
    assert verify_checkpoint(path).startswith(f"{tokenizer_json}: ")
