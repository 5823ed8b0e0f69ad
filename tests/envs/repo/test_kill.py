"""A process killed mid-episode (kill -9 while a run command is inside the sandbox) leaves no copy
of the repository on the host, and the next process plays the episode again from the start."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]  # two fresh interpreters importing rlvr: ~30 s under load

SCRIPT = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
from conftest import calc_row
from rlvr.envs.repo.env import repo_env, task_samples
from rlvr.envs.repo.task import task_from_row
from rlvr.rewards.sandbox import Limits, Sandbox
row = calc_row()
row["repo_tree"]["files"]["calc/marker.py"] = "MARKER = 'rlvr-kill-test-%s'\n" % sys.argv[2]
task = task_from_row(row, "kill")
def call(name, **a): return "<tool_call>" + json.dumps({"name": name, "arguments": a}) + "</tool_call>"
with Sandbox(Limits(wall_s=60, test_wall_s=5), workers=1) as sandbox:
    env = repo_env([task], sandbox)()
    env.reset(task_samples([task])[0], 0)
    print("started", flush=True)
    env.step(call("run", command=sys.argv[3]))
    print("reward", env.step(call("edit", path="calc/ops.py", search="a - b", replace="a + b") + call("submit")).reward, flush=True)
'''


def copies_of(marker: str, since: float) -> list[str]:
    """Files holding `marker` under the temporary folder's entries made or changed since `since`."""
    found, top = [], Path(tempfile.gettempdir())
    fresh = [p for p in top.iterdir() if p.lstat().st_mtime >= since - 1]
    for folder, _, files in (w for p in fresh for w in (os.walk(p) if p.is_dir() else [(str(top), [], [p.name])])):
        for name in files:
            path = Path(folder) / name
            try:
                if marker.encode() in path.read_bytes():
                    found.append(str(path))
            except OSError:
                continue
    return found


def test_a_kill_mid_episode_leaves_no_copy_and_the_episode_replays(tmp_path):
    here, marker, start = str(Path(__file__).parent), f"{os.getpid()}-{time.time_ns()}", time.time()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen([sys.executable, "-c", SCRIPT, here, marker, "cat calc/marker.py; sleep 60"],
                             stdout=subprocess.PIPE, text=True, env=env, start_new_session=True)
    assert child.stdout.readline().strip() == "started"
    time.sleep(2.0)  # the run command is inside the sandbox now, sleeping
    os.killpg(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    time.sleep(0.5)
    assert copies_of(f"rlvr-kill-test-{marker}", start) == []
    again = subprocess.run([sys.executable, "-c", SCRIPT, here, marker, "true"], capture_output=True, text=True,
                           env=env, timeout=120)
    assert "reward 1.0" in again.stdout, again.stderr[-2000:]
    assert copies_of(f"rlvr-kill-test-{marker}", start) == []
