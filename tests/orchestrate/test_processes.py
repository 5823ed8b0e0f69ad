"""Real processes on one run folder: two same-name runs started together (exactly one trains),
and a kill -9 soak (killed at random moments, during checkpoint writes and during pruning,
then resumed: the curve and the final weights are the uninterrupted run's)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from rlvr.train.checkpoint import list_checkpoints, verify_checkpoint

ENV = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "OMP_NUM_THREADS": "1"}
TINY = ["sampling.prompts_per_step=2", "sampling.group_size=2", "eval.size=0", "log.progress=none"]
KEYS = ("reward/mean", "loss/policy", "train/grad_norm", "response/length_mean", "policy/entropy")


def start(cwd: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "rlvr.cli.main", *args], cwd=cwd, env=ENV,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def train_args(out: Path, name: str, *extra: str) -> list[str]:
    return ["train", "grpo", *[f"--set={o}" for o in (*TINY, f"run.output_dir={out}", f"run.name={name}", *extra)]]


def metrics(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def test_two_same_name_runs_started_together_exactly_one_trains(tmp_path):
    args = train_args(tmp_path, "same", "train.steps=6", "checkpoint.every=1")
    procs = [start(tmp_path, *args), start(tmp_path, *args)]
    errs = [p.communicate(timeout=300)[1].strip() for p in procs]
    codes = sorted(p.returncode for p in procs)
    assert codes == [0, 2], errs
    err = errs[[p.returncode for p in procs].index(2)]
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    # "(pid N)", or "(another process)" when the loser reads the lock file in the instant between
    # the winner's flock and its writing its pid
    assert "a run is training in this folder now (" in err or "already holds a run" in err, err
    # Before the lock: both exited 0 and metrics.jsonl held steps 1,1,2,2,... from two processes.
    assert [r["step"] for r in metrics(tmp_path / "same")] == [1, 2, 3, 4, 5, 6]


def kill_when(proc: subprocess.Popen, ready, timeout: float = 120.0) -> bool:
    """SIGKILL `proc` as soon as `ready()` holds; False when the run ended first."""
    deadline = time.time() + timeout
    while proc.poll() is None and time.time() < deadline:
        if ready():
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            return True
        time.sleep(0.0005)
    return False


def moments(root: Path, rng: random.Random):
    """Kill triggers by turn: mid-write (a temporary folder exists), mid-prune (three final
    names, or a folder renamed away), or a random time (start-up, generation, training)."""
    def names():
        try:
            return os.listdir(root)
        except FileNotFoundError:
            return []

    writing = lambda: any(".tmp" in n for n in names())
    pruning = lambda: sum(n.startswith("step_") for n in names()) > 2 or any(n.startswith(".pruned") for n in names())
    for turn in range(10):
        if turn % 3 == 2:
            at = time.time() + rng.uniform(0.5, 8.0)
            yield "random", lambda: time.time() >= at
        else:
            yield ("write", writing) if turn % 3 == 0 else ("prune", pruning)


@pytest.mark.slow
def test_kill_9_soak_resumes_to_the_uninterrupted_run(tmp_path):
    steps = ["train.steps=14", "checkpoint.every=1", "checkpoint.keep=2"]
    whole = start(tmp_path, *train_args(tmp_path, "whole", *steps))
    assert whole.wait(timeout=600) == 0, whole.stderr.read()
    run = tmp_path / "soak"
    hits = []
    for kind, ready in moments(run / "checkpoints", random.Random(0)):
        fresh = not (run / "config.toml").exists()
        proc = start(tmp_path, *(train_args(tmp_path, "soak", *steps) if fresh else ["train", "--resume", str(run)]))
        if kill_when(proc, ready):
            hits.append(kind)
            # What a kill leaves must never look complete when it is not.
            assert all(verify_checkpoint(p) is None for p in list_checkpoints(run / "checkpoints"))
        else:
            assert proc.returncode == 0, proc.stderr.read()
            break
    last = start(tmp_path, "train", "--resume", str(run))
    assert last.wait(timeout=600) == 0, last.stderr.read()
    assert hits.count("write") >= 3 and len(hits) >= 8, hits
    a, b = metrics(tmp_path / "whole"), metrics(run)
    assert [r["step"] for r in b] == list(range(1, 15))
    for x, y in zip(a, b):
        for key in KEYS:
            assert x[key] == pytest.approx(y[key], rel=1e-6, abs=1e-8), (x["step"], key)
    final_a = load_file(tmp_path / "whole" / "checkpoints" / "step_14" / "model.safetensors")
    final_b = load_file(run / "checkpoints" / "step_14" / "model.safetensors")
    assert final_a.keys() == final_b.keys()
    for key in final_a:
        assert torch.equal(final_a[key], final_b[key]), key
    assert not [n for n in os.listdir(run / "checkpoints") if n.startswith(".")]  # debris cleaned on resume
