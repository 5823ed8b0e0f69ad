"""Training through a real vLLM (CPU in `make test-vllm`): the demo recipe in async mode with
staleness 1 runs end to end through the `rlvr` command, every step's rollouts sampled by vLLM
with the weights pushed after each step, then resumes from its checkpoint; a run whose engine
core is killed stops with one line and resumes from its last checkpoint."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlvr.engines.vllm_engine import vllm_unavailable_reason
from tests.engines.vllm_processes import engine_cores

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.vllm, pytest.mark.skipif(vllm_unavailable_reason() is not None,
                                                   reason=vllm_unavailable_reason() or "")]
ENV = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "PYTHONPATH": str(REPO / "src")}
VLLM_ARGS = ["--set", "model.engine=vllm", "--set", "model.vllm.compile=false", "--set", "model.vllm.cpu_kv_cache_gib=0.25",
             "--set", "eval.every=0", "--set", "run.stall_timeout_s=240"]


def train(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rlvr.cli.main", "train", *args], cwd=REPO, env=ENV,
                          capture_output=True, text=True, timeout=900)


def saved_steps(run_dir: Path) -> list[int]:
    return [int(p.name.split("_")[1]) for p in (run_dir / "checkpoints").glob("step_*") if p.name[5:].isdigit()]


def test_async_demo_through_vllm_trains_and_resumes(tmp_path):
    common = ["--set", f"run.output_dir={tmp_path}", "--set", "run.name=v", *VLLM_ARGS,
              "--set", "orchestrate.mode=async", "--set", "orchestrate.max_staleness=1", "--set", "checkpoint.every=2"]
    first = train(tmp_path, "demo", *common, "--set", "train.steps=3")
    assert first.returncode == 0, first.stderr[-3000:]
    again = train(tmp_path, "--resume", str(tmp_path / "v"), "--set", "train.steps=5")
    assert again.returncode == 0, again.stderr[-3000:]
    lines = [json.loads(x) for x in (tmp_path / "v" / "metrics.jsonl").read_text().splitlines()]
    steps = [m["step"] for m in lines if "reward/mean" in m]
    assert steps == sorted(set(steps)) and steps[-1] == 5 and len(steps) >= 5
    assert all(m.get("async/staleness", 0) <= 1 for m in lines) and any("async/staleness" in m for m in lines)


def test_a_killed_engine_core_stops_the_run_in_one_line_and_it_resumes(tmp_path):
    """vLLM's engine core killed mid-run: the run ends within a bound (no hang) with one line
    naming the fault and `--resume`, and resuming continues from the last checkpoint."""
    run_dir, cmd = tmp_path / "k", [sys.executable, "-m", "rlvr.cli.main", "train", "demo", *VLLM_ARGS,
                                    "--set", f"run.output_dir={tmp_path}", "--set", "run.name=k",
                                    "--set", "checkpoint.every=1", "--set", "train.steps=5000",
                                    "--set", "train.time_limit_s=3000"]
    proc = subprocess.Popen(cmd, cwd=REPO, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 600
        # any step >= 2: checkpoint.keep = 2 deletes step_2 once step_4 is saved, and a fast
        # machine can do both between two polls
        while not saved_steps(run_dir) or max(saved_steps(run_dir)) < 2:
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()[-3000:]
            time.sleep(0.05)
        cores = engine_cores(proc.pid)
        assert cores, proc.pid
        t0 = time.monotonic()
        for p in cores:
            p.kill()
        _, err = proc.communicate(timeout=400)  # the watchdog's bound: run.stall_timeout_s = 240
        assert time.monotonic() - t0 < 400
    finally:
        proc.kill()
    assert proc.returncode == 2, err[-3000:]
    said = [line for line in err.splitlines() if line.startswith("rlvr: error:")]
    assert len(said) == 1 and "Traceback" not in err, err[-3000:]
    assert re.fullmatch(r"rlvr: error: vLLM's engine core died during .*--resume RUN_DIR`", said[0])
    kept = max(saved_steps(run_dir))
    again = train(tmp_path, "--resume", str(run_dir), "--set", f"train.steps={kept + 1}")
    assert again.returncode == 0, again.stderr[-3000:]
    lines = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in lines if "reward/mean" in m][-1] == kept + 1
