"""Training through a real vLLM (CPU in `make test-vllm`): the demo recipe in async mode with
staleness 1 runs end to end through the `rlvr` command, every step's rollouts sampled by vLLM
with the weights pushed after each step, then resumes from its checkpoint."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rlvr.engines.vllm_engine import vllm_unavailable_reason

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.vllm, pytest.mark.skipif(vllm_unavailable_reason() is not None,
                                                   reason=vllm_unavailable_reason() or "")]


def train(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "PYTHONPATH": str(REPO / "src")}
    return subprocess.run([sys.executable, "-m", "rlvr.cli.main", "train", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=900)


def test_async_demo_through_vllm_trains_and_resumes(tmp_path):
    common = ["--set", f"run.output_dir={tmp_path}", "--set", "run.name=v", "--set", "model.engine=vllm",
              "--set", "model.vllm.compile=false", "--set", "model.vllm.cpu_kv_cache_gib=0.25",
              "--set", "orchestrate.mode=async", "--set", "orchestrate.max_staleness=1",
              "--set", "eval.every=0", "--set", "checkpoint.every=2"]
    first = train(tmp_path, "demo", *common, "--set", "train.steps=3")
    assert first.returncode == 0, first.stderr[-3000:]
    again = train(tmp_path, "--resume", str(tmp_path / "v"), "--set", "train.steps=5")
    assert again.returncode == 0, again.stderr[-3000:]
    lines = [json.loads(x) for x in (tmp_path / "v" / "metrics.jsonl").read_text().splitlines()]
    steps = [m["step"] for m in lines if "reward/mean" in m]
    assert steps == sorted(set(steps)) and steps[-1] == 5 and len(steps) >= 5
    assert all(m.get("async/staleness", 0) <= 1 for m in lines) and any("async/staleness" in m for m in lines)
