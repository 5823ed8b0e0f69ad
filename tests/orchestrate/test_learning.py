"""GRPO on the shipped model raises held-out accuracy: a short check always, the demo's claim
in a `slow` test."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from rlvr.config import load_config
from rlvr.orchestrate import train

REPO = Path(__file__).resolve().parents[2]


def test_a_short_grpo_run_raises_held_out_accuracy(tmp_path):
    # 60 steps of the demo recipe (~15 s here); the demo itself gains ~35 points in 800.
    config = load_config(REPO / "recipes" / "demo.toml", [
        f"run.output_dir={tmp_path}", "train.steps=60", "train.time_limit_s=600",
        "eval.every=0", "log.progress=none", "task.test_size=200"])
    result = train(config, eval_full=True)
    assert result.steps == 60
    assert result.accuracy_after - result.accuracy_before >= 0.08, (result.accuracy_before, result.accuracy_after)


@pytest.mark.slow
def test_demo_gains_25_points_within_5_minutes():
    proc = subprocess.run([sys.executable, "-m", "rlvr.cli.main", "demo", "--set", "log.progress=plain",
                           "--set", f"run.output_dir={REPO / 'runs'}"],
                          cwd=REPO, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    m = re.search(r"held-out greedy accuracy: ([\d.]+)% -> ([\d.]+)% .* ([\d.]+) min of training", proc.stdout)
    assert m, proc.stdout
    before, after, minutes = map(float, m.groups())
    assert minutes <= 5.0
    assert after - before >= 25.0, proc.stdout
