"""End to end through the `rlvr` command on the shipped tiny model."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FAST = ["--set", "train.steps=4", "--set", "sampling.prompts_per_step=4", "--set", "sampling.group_size=4",
        "--set", "eval.every=2", "--set", "eval.size=16", "--set", "log.progress=plain",
        "--set", "checkpoint.every=1"]  # the tests below look at (and kill between) every step's checkpoint


def rlvr(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "rlvr.cli.main", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    if check and proc.returncode != 0:
        raise AssertionError(f"rlvr {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc


def metrics(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def test_train_writes_the_run_folder(tmp_path):
    rlvr("train", "grpo", *FAST, "--set", f"run.output_dir={tmp_path}", "--set", "run.name=r", cwd=tmp_path)
    run = tmp_path / "r"
    rows = metrics(run)
    assert [r["step"] for r in rows] == [1, 2, 3, 4]
    for key in ("reward/mean", "reward/std", "reward/accuracy", "response/length_mean", "policy/clip_low_frac",
                "policy/approx_kl", "policy/entropy", "train/grad_norm", "throughput/tokens_per_s",
                "time/generate_s", "time/backward_s"):
        assert key in rows[0], key
    assert "eval/accuracy" in rows[1] and "eval/accuracy" not in rows[0]
    flops = [r["compute/flops"] for r in rows]
    assert flops[0] > 0 and all(b > a for a, b in zip(flops, flops[1:]))
    samples = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    assert samples and {"prompt", "completion", "reward", "reason"} <= set(samples[0])
    assert (run / "config.toml").read_text().count("[train]") == 1
    assert [p.name for p in sorted((run / "checkpoints").iterdir())] == ["step_3", "step_4"]
    assert (run / "reward_curve.png").stat().st_size > 1000
    again = rlvr("train", "grpo", *FAST, "--set", f"run.output_dir={tmp_path}", "--set", "run.name=r",
                 cwd=tmp_path, check=False)
    assert again.returncode == 2 and "already holds a run" in again.stderr


def test_resume_after_kill_9_continues_the_same_curve(tmp_path):
    common = [*FAST, "--set", "train.steps=6", "--set", f"run.output_dir={tmp_path}"]
    rlvr("train", "grpo", *common, "--set", "run.name=whole", cwd=tmp_path)
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "rlvr.cli.main", "train", "grpo", *common,
                             "--set", "run.name=killed"], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run = tmp_path / "killed"
    deadline = time.time() + 240
    while not (run / "checkpoints" / "step_3").exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    rlvr("train", "--resume", str(run), cwd=tmp_path)
    whole, resumed = metrics(tmp_path / "whole"), metrics(run)
    assert [r["step"] for r in resumed] == [1, 2, 3, 4, 5, 6]
    for a, b in zip(whole, resumed):
        for key in ("reward/mean", "loss/policy", "train/grad_norm", "response/length_mean"):
            assert a[key] == pytest.approx(b[key], rel=1e-5, abs=1e-7), (a["step"], key)


@pytest.mark.parametrize("args, message", [
    (["train", "grpo", "--set", "train.lrr=1"], "unknown key 'train.lrr' (did you mean 'train.lr'?)"),
    (["train", "grpo", "--set", "model.path=/nonexistent"], "/nonexistent: model folder not found"),
    (["train", "nope"], "nope: no such recipe file or name"),
    (["train", "--resume", "nowhere"], "nowhere: no config.toml here, so there is no run to resume"),
    (["train", "grpo", "--set", "task.kind=jsonl", "--set", "task.train_path=missing.jsonl"],
     "missing.jsonl: dataset file not found"),
    (["train", "grpo", "--set", "train.lr=inf"], "--set: train.lr: Input should be a finite number (got inf)"),
    (["train", "grpo", "--set", "sampling.temperature=1e-300"], "sampling.temperature: Input should be greater"),
    (["train", "grpo", "--set", "task.test_size=9000"], "task.test_size = 9000 leaves no training problem"),
    (["train", "grpo", "--set", "sampling.prompts_per_step=8", "--set", "task.kind=jsonl",
      f"--set=task.train_path={REPO}/tests/cli/data/four_prompts.jsonl"],
     "sampling.prompts_per_step = 8 is above the 4 training prompts"),
])
def test_bad_input_is_one_clear_line(tmp_path, args, message):
    proc = rlvr(*args, "--set", f"run.output_dir={tmp_path}", cwd=tmp_path, check=False)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_corrupt_model_folder(tmp_path):
    bad = tmp_path / "model"
    bad.mkdir()
    (bad / "config.json").write_text("{not json")
    (bad / "model.safetensors").write_bytes(b"junk")
    (bad / "tokenizer.json").write_text("{also not json")
    proc = rlvr("train", "grpo", "--set", f"model.path={bad}", "--set", f"run.output_dir={tmp_path}", cwd=tmp_path, check=False)
    assert proc.returncode == 2
    assert f"{bad}: cannot load the tokenizer" in proc.stderr or f"{bad}: cannot load the model" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_corrupt_or_truncated_safetensors_is_named_in_one_line(tmp_path):
    bad = tmp_path / "model"
    bad.mkdir()
    for f in (REPO / "models" / "tiny-arith").iterdir():
        (bad / f.name).write_bytes(f.read_bytes())
    weights = bad / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: 100_000])  # an interrupted copy
    proc = rlvr("train", "grpo", "--set", f"model.path={bad}", "--set", f"run.output_dir={tmp_path}",
                cwd=tmp_path, check=False)
    assert proc.returncode == 2
    assert f"rlvr: error: {weights}: corrupt or truncated safetensors file" in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_a_config_error_is_reported_before_torch_is_imported(tmp_path):
    # Before: main imported transformers and the training stack first (5-10 s on this machine).
    probe = ("import sys, time; t0 = time.perf_counter(); from rlvr.cli.main import main; "
             "rc = main(['train', 'grpo', '--set', 'bad.key=1']); "
             "print('torch' in sys.modules, 'transformers' in sys.modules, rc, time.perf_counter() - t0)")
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    proc = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    torch_loaded, transformers_loaded, rc, seconds = proc.stdout.split()
    assert "unknown key 'bad'" in proc.stderr
    assert (torch_loaded, transformers_loaded, rc) == ("False", "False", "2")
    assert float(seconds) < 5  # typically 0.3 s; loose, for a loaded 2-core machine


def test_help_and_recipes_list():
    out = rlvr("--help", cwd=REPO).stdout
    assert "rlvr demo" in out and "--resume" in out
    listing = rlvr("recipes", cwd=REPO).stdout
    assert "grpo" in listing and "arXiv:2402.03300" in listing
    shown = rlvr("recipes", "show", "grpo", cwd=REPO).stdout
    assert "[algo]" in shown and 'scale = "group_std"' in shown
