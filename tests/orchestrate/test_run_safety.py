"""A run's folder and checkpoints under failure, through the CLI entry point in-process: a
failed start leaves nothing, a live run's folder is refused, a damaged newest checkpoint falls
back, a full disk is one line, checkpoints come at the end (not every step) by default."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import rlvr.train.checkpoint as ckpt
from rlvr.cli.main import main
from rlvr.config import load_config
from rlvr.orchestrate import resume, train
from rlvr.orchestrate.run_folder import RunFolder
from rlvr.train.checkpoint import list_checkpoints

REPO = Path(__file__).resolve().parents[2]
SMALL = ["sampling.prompts_per_step=2", "sampling.group_size=2", "eval.size=0", "log.progress=none"]
KEYS = ("reward/mean", "loss/policy", "train/grad_norm", "response/length_mean")


def config(tmp_path, name, *extra):
    overrides = [f"run.output_dir={tmp_path}", f"run.name={name}", *SMALL, *extra]
    return load_config(REPO / "recipes" / "grpo.toml", overrides)


def cli(capsys, *args) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().err.strip()


def test_a_failed_start_creates_no_run_folder(tmp_path, capsys):
    code, err = cli(capsys, "train", "grpo", "--set", f"run.output_dir={tmp_path}", "--set", "model.path=/nonexistent")
    assert code == 2 and "/nonexistent: model folder not found" in err
    assert list(tmp_path.iterdir()) == []  # before: grpo/ holding only config.toml


def test_a_live_run_folder_is_refused_for_resume_and_for_a_same_name_start(tmp_path, capsys):
    folder = train(config(tmp_path, "live", "train.steps=1")).folder
    holder = RunFolder(folder.path)
    holder.acquire()  # as the process training there would
    try:
        for args in (["train", "--resume", str(folder.path)],
                     ["train", "grpo", "--set", f"run.output_dir={tmp_path}", "--set", "run.name=live"]):
            code, err = cli(capsys, *args)
            assert code == 2 and len(err.splitlines()) == 1
            assert f"{folder.path}: a run is training in this folder now (pid {os.getpid()} on" in err
    finally:
        holder.release()
    assert resume(folder.path, ["train.steps=2"]).steps == 2  # the lock died with its holder


def test_resume_after_a_damaged_newest_checkpoint_continues_the_same_curve(tmp_path):
    every = ["checkpoint.every=1", "checkpoint.keep=2"]
    whole = train(config(tmp_path, "whole", "train.steps=3", *every)).folder.read_metrics()
    folder = train(config(tmp_path, "hurt", "train.steps=3", *every)).folder
    weights = folder.checkpoints / "step_3" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-100])  # before: SafetensorError traceback on resume
    result = resume(folder.path)
    [note] = result.notes
    assert str(weights) in note and "resuming from step_2" in note
    resumed = folder.read_metrics()
    assert [r["step"] for r in resumed] == [1, 2, 3]
    for a, b in zip(whole, resumed):
        for key in KEYS:
            assert a[key] == pytest.approx(b[key], rel=1e-5, abs=1e-7), (a["step"], key)


def test_a_full_disk_stops_the_run_with_one_line_and_resume_continues(tmp_path, capsys, monkeypatch):
    real_save, calls = ckpt.torch.save, []

    def full_after_the_first(*args, **kwargs):
        calls.append(1)
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_save(*args, **kwargs)

    monkeypatch.setattr(ckpt.torch, "save", full_after_the_first)
    code, err = cli(capsys, "train", "grpo", *[f"--set={o}" for o in SMALL], f"--set=run.output_dir={tmp_path}",
                    "--set=train.steps=3", "--set=checkpoint.every=1")
    run = tmp_path / "grpo"
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err
    assert f"{run / 'checkpoints' / 'step_2' / 'state.pt'}: cannot write it (No space left on device)" in err
    assert "step_1, the newest checkpoint, is untouched" in err and f"rlvr train --resume {run}" in err
    assert [p.name for p in (run / "checkpoints").iterdir()] == ["step_1"]
    monkeypatch.setattr(ckpt.torch, "save", real_save)  # space freed
    assert resume(run).steps == 3


def test_by_default_checkpoints_come_at_the_end_and_at_the_time_limit(tmp_path):
    done = train(config(tmp_path, "end", "train.steps=3")).folder
    assert [p.name for p in list_checkpoints(done.checkpoints)] == ["step_3"]
    limited = train(config(tmp_path, "limit", "train.steps=100", "train.time_limit_s=0.01")).folder
    assert [p.name for p in list_checkpoints(limited.checkpoints)] == ["step_1"]  # before: none


def test_ctrl_c_checkpoints_the_finished_step_and_names_the_folder(tmp_path):
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "OMP_NUM_THREADS": "1"}
    run = tmp_path / "c"
    proc = subprocess.Popen([sys.executable, "-m", "rlvr.cli.main", "train", "grpo", *[f"--set={o}" for o in SMALL],
                             f"--set=run.output_dir={tmp_path}", "--set=run.name=c", "--set=train.steps=10000"],
                            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while len(RunFolder(run).read_metrics() if (run / "metrics.jsonl").exists() else []) < 2:
        assert proc.poll() is None and time.time() < deadline, proc.stderr.read() if proc.poll() is not None else ""
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    err = proc.communicate(timeout=120)[1].strip()
    assert proc.returncode == 130, err
    steps = [r["step"] for r in RunFolder(run).read_metrics()]
    assert err.splitlines() == [
        "rlvr: stopping after this step to write a checkpoint (Ctrl-C again: stop now)",
        f"rlvr: interrupted after step {steps[-1]} (checkpoint written); resume with "
        f"`rlvr train --resume {run}`"]  # before: a literal RUN_DIR
    assert [p.name for p in list_checkpoints(run / "checkpoints")] == [f"step_{steps[-1]}"]


def test_a_forked_child_does_not_keep_the_runs_lock(tmp_path):
    """Local rollout workers are forked from the run: once the run lets its folder go, another
    process may take it, though a child it forked still lives."""
    import multiprocessing

    folder = RunFolder(tmp_path / "run")
    folder.acquire()
    ctx = multiprocessing.get_context("fork")
    started = ctx.Event()
    child = ctx.Process(target=_set_and_sleep, args=(started,), daemon=True)
    child.start()
    try:
        assert started.wait(30)  # the child runs (its at-fork hooks have run)
        folder.release()
        other = RunFolder(tmp_path / "run")
        other.acquire()  # refused while the child held a copy of the lock's open file
        other.release()
    finally:
        child.kill()
        child.join()


def _set_and_sleep(event) -> None:
    event.set()
    time.sleep(30)
