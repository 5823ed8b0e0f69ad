"""The Ray backend on a local cluster: rollout actors, weights through the object store, and a
worker that dies is replaced with its work redone (same result, nothing counted twice)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed (optional extra `ray`)")

from rlvr.config import load_config  # noqa: E402
from rlvr.orchestrate.run import new_run_folder, open_loop  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SMALL = ["sampling.prompts_per_step=4", "sampling.group_size=4", "eval.size=0", "log.progress=none",
         "train.steps=4", "train.lr=1e-4", "orchestrate.backend=ray", "orchestrate.rollout_workers=2"]


@pytest.fixture(scope="module")
def cluster():
    """Use the running cluster (.ci/run starts one), else start one for these tests."""
    started = False
    try:
        ray.init(address="auto", log_to_driver=False)
    except ConnectionError:
        ray_bin = shutil.which("ray") or str(Path(os.sys.executable).parent / "ray")
        subprocess.run([ray_bin, "start", "--head", "--num-cpus=2", "--include-dashboard=false",
                        "--disable-usage-stats"], check=True, capture_output=True, timeout=120)
        started = True
        ray.init(address="auto", log_to_driver=False)
    yield
    ray.shutdown()
    if started:
        subprocess.run([ray_bin, "stop", "--force"], capture_output=True, timeout=120)


def steps(tmp_path, name, n, kill_after=None):
    config = load_config(REPO / "recipes" / "grpo.toml", [f"run.output_dir={tmp_path}", f"run.name={name}", *SMALL])
    loop = open_loop(config, new_run_folder(config), resume=False)
    rows, versions = [], []
    for i in range(n):
        if i == kill_after:
            pid = ray.get(loop.parts.engine.workers[0].pid.remote())
            os.kill(pid, signal.SIGKILL)
        produced = loop.producer.next(loop.step + 1)
        versions.append({s.rollout.policy_version for g in produced.groups for s in g})
        rows.append(loop.consume(produced))
    return rows, versions


def test_dead_worker_is_replaced_and_its_work_redone(cluster, tmp_path):
    whole, versions = steps(tmp_path, "whole", 4)
    killed, _ = steps(tmp_path, "killed", 4, kill_after=2)
    # Every batch came from the weights of the step before it: they reached the workers.
    assert versions == [{0}, {1}, {2}, {3}]
    assert [r["engine/worker_restarts"] for r in whole] == [0, 0, 0, 0]
    assert killed[-1]["engine/worker_restarts"] == 1
    for a, b in zip(whole, killed):
        for key in ("reward/mean", "loss/policy", "response/length_mean", "train/grad_norm"):
            assert a[key] == b[key], (a["step"], key)
